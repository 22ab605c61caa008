// The `kernel` phase: the overlay and br_netfilter modules loaded and kept
// loaded, and the sysctls Kubernetes needs set and kept.
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

const std::string kKernelModules = "overlay\nbr_netfilter\n";
const std::string kKernelSysctls =
    "net.bridge.bridge-nf-call-iptables = 1\nnet.bridge.bridge-nf-call-ip6tables = 1\n"
    "net.ipv4.ip_forward = 1\n";

class KernelPhase : public KeyValuePhase {
 public:
  KernelPhase() : KeyValuePhase("kernel") {}
  static std::string script() {
    // One sysctl call for the three keys ("key = value" lines; a key the
    // kernel lacks is left out).
    // The loaded modules from /proc/modules, which lsmod prints.
    return std::string(
               "if [ -r /proc/modules ]; then while read -r m rest; do case $m in overlay | "
               "br_netfilter) echo \"mod_$m=1\" ;; esac; done < /proc/modules\n"
               // Without /proc/modules, the directories of /sys/module (a loaded or
               // built-in module's), then lsmod.
               "elif [ -d /sys/module ]; then for m in overlay br_netfilter; do [ -d "
               "\"/sys/module/$m\" ] && echo \"mod_$m=1\"; done\n"
               "else lsmod | awk 'NR>1 && ($1==\"overlay\" || $1==\"br_netfilter\") {print "
               "\"mod_\"$1\"=1\"}'; fi\n") +
           same_file_test("modules_file", kModulesFile, kKernelModules) +
           same_file_test("sysctl_file", kSysctlFile, kKernelSysctls) +
           "sysctl net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables "
           "net.bridge.bridge-nf-call-ip6tables 2>/dev/null\n"
           "true\n";
  }
  std::string what() const override { return "kernel modules and sysctls"; }
  std::string observation(const HostRun&) const override { return script(); }
  util::Result<void> needs_from(HostRun&, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    std::vector<std::string> mods;
    for (const char* m : {"overlay", "br_netfilter"})
      if (!kv.count(std::string("mod_") + m)) mods.push_back(m);
    if (!mods.empty()) needs.push_back("load kernel modules " + util::join(mods, ", "));
    if (!kv.count("modules_file")) needs.push_back(std::string("write ") + kModulesFile);
    if (!kv.count("sysctl_file")) needs.push_back(std::string("write ") + kSysctlFile);
    std::vector<std::string> bad;
    for (const char* k : {"net.ipv4.ip_forward", "net.bridge.bridge-nf-call-iptables",
                          "net.bridge.bridge-nf-call-ip6tables"})
      if (kv[k] != "1") bad.push_back(k);
    if (!bad.empty()) needs.push_back("set " + util::join(bad, ", ") + " to 1");
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    return run_last_step(
        h, "loading modules and setting sysctls",
        write_file(kModulesFile, kKernelModules) + "modprobe overlay\nmodprobe br_netfilter\n" +
            write_file(kSysctlFile, kKernelSysctls) + "sysctl -p " + kSysctlFile + " >/dev/null\n");
  }
};

}  // namespace

std::unique_ptr<Phase> make_kernel_phase() {
  return std::make_unique<KernelPhase>();
}

}  // namespace pai::deploy::phases
