// The `verify` phase: every node Ready, every GPU node with its GPUs allocatable.
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

// Every node Ready, every GPU node with its GPUs allocatable.
class VerifyPhase : public Phase, public ReadsAhead {
 public:
  explicit VerifyPhase(const InstallSettings& s)
      : Phase("verify",
              {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = true}),
        s_(s) {}
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, cluster_objects_script()});
  }
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    auto listed = nodes_of(h);
    if (!listed) return listed.error();
    const nlohmann::json& nodes = *listed;
    const auto by_name = nodes_by_name(nodes);
    for (auto* host : h.run().hosts) {
      const auto& spec = host->spec();
      auto it = by_name.find(spec.name);
      const nlohmann::json* n = it == by_name.end() ? nullptr : it->second;
      bool ready = false;
      int64_t gpus = 0;
      if (n && n->contains("status")) {
        const auto& st = (*n)["status"];
        if (st.contains("conditions") && st["conditions"].is_array())
          for (const auto& c : st["conditions"])
            if (c.value("type", "") == "Ready") ready = c.value("status", "") == "True";
        if (st.contains("allocatable") && st["allocatable"].contains("nvidia.com/gpu"))
          gpus = util::parse_int(st["allocatable"].value("nvidia.com/gpu", "0")).value_or(0);
      }
      if (!ready) needs.push_back("wait for node " + spec.name + " to be Ready");
      if (has_gpu(spec) && gpus != spec.gpus)
        needs.push_back("wait for " + std::to_string(spec.gpus) + " allocatable GPUs on " +
                        spec.name + " (now " + std::to_string(gpus) + ")");
    }
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    std::vector<std::string> left;
    poll(h.run().clock, s_.wait_s, 1000, [&] {
      left.clear();
      return observe(h, left).ok() && left.empty();
    });
    if (!left.empty())
      return util::Error{"after " + std::to_string(s_.wait_s) + " s: " + util::join(left, "; "),
                         "look at the node's kubelet and containerd (journalctl -u kubelet) "
                         "and at the device plugin's pod on it"};
    return {};
  }

 private:
  const InstallSettings& s_;
};

}  // namespace

std::unique_ptr<Phase> make_verify_phase(const InstallSettings& s) {
  return std::make_unique<VerifyPhase>(s);
}

}  // namespace pai::deploy::phases
