// The `hived` phase: the HiveD ConfigMap, HiveD, its inspect API Service, one
// kube-scheduler per VC with HiveD as its extender.
#include "deploy/openpai.h"
#include "deploy/phases/workloads.h"
#include "util/strings.h"

namespace pai::deploy {
namespace phases {

namespace {

class HivedPhase : public WorkloadsPhase {
 public:
  explicit HivedPhase(const InstallSettings& s) : WorkloadsPhase("hived", s) {}
  bool wanted() const override {
    return s_.openpai.enabled && s_.openpai.hived_enabled && !s_.openpai.hived_config.empty();
  }
  util::Result<void> components(const HostSpec& master, std::vector<Component>& out) override {
    auto v = base_values(master);
    const auto& o = s_.openpai;
    std::string config = hived_config_file(o);
    v["config"] = indent_text(config, 4);
    v["config_hash"] = config_hash(config);
    Component hs;
    if (util::Result<void> s =
            render("hivedscheduler (ConfigMap, StatefulSet hivedscheduler-hs, Service)",
                   {"hived-configmap.yaml", "hivedscheduler.yaml"}, v, hs);
        !s.ok())
      return s;
    hs.workloads = {{"statefulset", "hivedscheduler-hs"}};
    out.push_back(std::move(hs));
    for (const auto& vc : o.vcs) {
      // One master: HiveD (host network, pinned to the masters) answers on its
      // address. Several: HiveD runs on whichever master Kubernetes put it, and
      // moves when that master is lost: the VC schedulers reach it through its
      // Service.
      auto sc = render_scheduler_config(
          s_.templates_dir, o, vc,
          s_.highly_available() ? "hivedscheduler-service." + o.ns + ".svc" : master.address);
      if (!sc) return sc.error();
      auto vv = v;
      vv["vc"] = vc;
      vv["scheduler"] = vc_scheduler_name(vc);
      vv["scheduler_config"] = indent_text(*sc, 4);
      Component c;
      if (util::Result<void> s =
              render("the kube-scheduler of VC " + vc + " (" + vv["scheduler"] + ")",
                     {"hivedscheduler-vc.yaml"}, vv, c);
          !s.ok())
        return s;
      c.workloads = {{"statefulset", vv["scheduler"]}};
      out.push_back(std::move(c));
    }
    return {};
  }
};

}  // namespace

bool hived_wanted(const InstallSettings& s) {
  return HivedPhase(s).wanted();
}

util::Result<std::vector<Component>> hived_components(const InstallSettings& s,
                                                      const HostSpec& master) {
  std::vector<Component> out;
  if (auto made = HivedPhase(s).components(master, out); !made) return made.error();
  return out;
}

}  // namespace phases

std::unique_ptr<Phase> make_hived_phase(const InstallSettings& s) {
  return std::make_unique<phases::HivedPhase>(s);
}

}  // namespace pai::deploy
