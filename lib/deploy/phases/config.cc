// The `config` phase: the cluster files pushed to the cluster (the ConfigMap and
// the Secret pai-configuration) when they differ from what it holds.
#include <algorithm>

#include "deploy/cluster_files.h"
#include "deploy/openpai.h"
#include "deploy/phases/common.h"

namespace pai::deploy {
namespace phases {

namespace {

class ConfigPhase : public Phase, public ReadsAhead {
 public:
  explicit ConfigPhase(const InstallSettings& s)
      : Phase("config",
              {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = true}),
        s_(s) {}
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    if (!s_.cluster_files.empty()) out.push_back({&h, namespace_secrets_script(s_), true});
  }
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    if (s_.cluster_files.empty()) return {};
    // The read the openpai phase makes too (its Secret and these files, one
    // kubectl run).
    auto r = h.observe_sh(namespace_secrets_script(s_), 120000, true);
    if (!r.ok()) return command_failure("reading the cluster files on the cluster", r);
    ClusterFiles remote = parse_cluster_files(r.out);
    std::fill(r.out.begin(), r.out.end(), '\0');
    for (const auto& [name, content] : current_files()) {
      auto it = remote.find(name);
      if (it == remote.end())
        needs.push_back("push " + name + " (not on the cluster yet)");
      else if (it->second != content)
        needs.push_back("push " + name + " (changed)");
    }
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    auto ns = render_template(s_.templates_dir, "namespace.yaml", {{"ns", s_.openpai.ns}});
    if (!ns) return ns.error();
    std::string body = *ns + "\n---\n" + cluster_files_manifest(current_files(), s_.openpai.ns);
    auto r = h.sh(std::string("set -e\n") + kKubectl +
                      " apply --server-side --field-manager=paictl --force-conflicts -f - "
                      ">/dev/null",
                  body, 120000);
    std::fill(body.begin(), body.end(), '\0');
    if (!r.ok() || r.exit_status != 0) return command_failure("pushing the cluster files", r);
    return {};
  }

 private:
  // The files as they are now: the openpai phase before this one may have
  // written a new admin password into services-configuration.yaml.
  ClusterFiles current_files() const {
    const std::string& f = s_.openpai.services_file;
    auto slash = f.rfind('/');
    if (f.empty() || slash == std::string::npos) return s_.cluster_files;
    auto now = read_cluster_files(f.substr(0, slash));
    return !now.ok() || now->empty() ? s_.cluster_files : *now;
  }

  const InstallSettings& s_;
};

}  // namespace

}  // namespace phases

std::unique_ptr<Phase> make_config_phase(const InstallSettings& s) {
  return std::make_unique<phases::ConfigPhase>(s);
}

}  // namespace pai::deploy
