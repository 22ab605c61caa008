// The `mark` phase: the host recorded as part of this cluster, and its state
// before install kept for reset.
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

// Records on the host which cluster installed it, so a re-run knows what it left.
class MarkPhase : public KeyValuePhase {
 public:
  explicit MarkPhase(const InstallSettings& s) : KeyValuePhase("mark"), s_(s) {}
  std::string script() const {
    return same_file_test("marked", std::string(kStateDir) + "/cluster", s_.cluster_name + "\n") +
           "true\n";
  }
  std::string what() const override { return "the install marker"; }
  std::string observation(const HostRun&) const override { return script(); }
  util::Result<void> needs_from(HostRun&, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    if (!kv.count("marked"))
      needs.push_back("record the host as part of cluster " + s_.cluster_name + " (" +
                      std::string(kStateDir) + "/cluster)");
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    // What was there before install, so that reset puts back exactly that.
    std::string d = kStateDir;
    return run_last_step(
        h, "recording the host's state before install",
        "mkdir -p " + d + "\n" + "[ -f " + d +
            "/packages.before ] || dpkg-query -W -f '${Package}\\n' > " + d +
            "/packages.before 2>/dev/null || true\n" + "[ -f " + d +
            "/modules.before ] || { lsmod | awk 'NR>1{print $1}' > " + d + "/modules.before; }\n" +
            "[ -f " + d +
            "/sysctl.before ] || { for k in net.ipv4.ip_forward; do echo \"$k=$(sysctl -n $k)\"; "
            "done > " +
            d + "/sysctl.before; }\n" + write_file(d + "/cluster", s_.cluster_name + "\n"));
  }

 private:
  const InstallSettings& s_;
};

}  // namespace

std::unique_ptr<Phase> make_mark_phase(const InstallSettings& s) {
  return std::make_unique<MarkPhase>(s);
}

}  // namespace pai::deploy::phases
