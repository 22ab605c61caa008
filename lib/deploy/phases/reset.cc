// The `reset` phase: what install put on a host removed, and what it changed
// put back as it was before install.
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "deploy/proxy.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

// For each hosts.toml under /etc/containerd/certs.d that paictl wrote (its first
// line says so), `action` with the file in $f.
std::string reset_hosts_toml_loop(const std::string& action) {
  return std::string("for f in ") + kCertsDir +
         "/*/hosts.toml; do [ -f \"$f\" ] || continue; l=; IFS= read -r l < \"$f\" || true; "
         "case $l in \"" +
         kWrittenByPaictl + "\"*) " + action + " ;; esac; done\n";
}

using util::shell_quote;

const char* kResetPackages =
    "kubeadm kubelet kubectl cri-tools kubernetes-cni containerd containerd.io runc "
    "nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools "
    "libnvidia-container1";

class ResetPhase : public KeyValuePhase {
 public:
  ResetPhase() : KeyValuePhase("reset") {}
  static std::string script() {
    std::string d = kStateDir;
    return "command -v kubeadm >/dev/null && { [ -e /etc/kubernetes/kubelet.conf ] || [ -e "
           "/etc/kubernetes/admin.conf ] || [ -d /etc/kubernetes/pki ] || [ -f "
           "/var/lib/kubelet/config.yaml ] || [ -n \"$(ls -A /etc/kubernetes/manifests "
           "2>/dev/null)\" "
           "]; } && echo kube=1\n"
           "before=" +
           d +
           "/packages.before\n"
           "for p in " +
           std::string(kResetPackages) +
           "; do dpkg-query -W -f '${db:Status-Abbrev}' $p 2>/dev/null | grep -q '^.i' || "
           "continue; "
           "[ -f $before ] && grep -qx \"$p\" $before && continue; echo \"pkg_$p=1\"; done\n"
           "grep -q '^# paictl: ' /etc/fstab 2>/dev/null && echo fstab=1\n"
           "for f in " +
           kModulesFile + " " + kSysctlFile + " " + kKubeList + " " + kNvidiaList + " " +
           kBundleList + " " + kKubeKeyring + " " + kNvidiaKeyring + " " + kAptProxyFile + " " +
           kContainerdProxyDropIn + " " + kKubeletProxyDropIn +
           " /etc/containerd/config.toml /etc/containerd/paictl.stamp " + kKubeadmLock + " " +
           kKubeadmLockElsewhere +
           "; do [ -e $f ] && echo "
           "\"file_$f=1\"; done\n" +
           reset_hosts_toml_loop("echo \"file_$f=1\"") +
           "[ -n \"$(ls -A /etc/cni/net.d 2>/dev/null)\" ] && echo cni=1\n"
           "[ -d " +
           d + " ] && echo state=1\n" + "true\n";
  }
  std::string what() const override { return "what install left"; }
  std::string observation(const HostRun&) const override { return script(); }
  util::Result<void> needs_from(HostRun&, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    if (kv.count("kube")) needs.push_back("kubeadm reset -f");
    std::vector<std::string> pkgs, files;
    for (const auto& [k, v] : kv) {
      if (k.rfind("pkg_", 0) == 0) pkgs.push_back(k.substr(4));
      if (k.rfind("file_", 0) == 0) files.push_back(k.substr(5));
    }
    if (!pkgs.empty()) needs.push_back("purge " + util::join(pkgs, " "));
    if (kv.count("fstab")) needs.push_back("restore the swap lines of /etc/fstab and swap on");
    if (!files.empty()) needs.push_back("remove " + util::join(files, " "));
    if (kv.count("cni")) needs.push_back("remove the CNI configuration in /etc/cni/net.d");
    if (kv.count("state"))
      needs.push_back("restore modules and sysctls, remove " + std::string(kStateDir));
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>& needs) override {
    std::string d = kStateDir;
    std::string script = "export DEBIAN_FRONTEND=noninteractive\n";
    for (const auto& n : needs)
      if (n == "kubeadm reset -f") script += holding_kubeadm_lock("kubeadm reset -f\n");
    script +=
        "before=" + d +
        "/packages.before\n"
        "P=''\nfor p in " +
        std::string(kResetPackages) +
        "; do dpkg-query -W -f '${db:Status-Abbrev}' $p 2>/dev/null | grep -q '^.i' || continue; "
        "[ -f $before ] && grep -qx \"$p\" $before && continue; P=\"$P $p\"; done\n"
        "if [ -n \"$P\" ]; then apt-mark unhold $P >/dev/null 2>&1 || true; apt-get purge -y -q "
        "$P; "
        "apt-get autoremove -y -q; fi\n"
        "rm -f " +
        std::string(kModulesFile) + " " + kSysctlFile + " " + kKubeList + " " + kNvidiaList + " " +
        kBundleList + " " + kKubeKeyring + " " + kNvidiaKeyring + " " + kAptProxyFile + " " +
        kContainerdProxyDropIn + " " + kKubeletProxyDropIn +
        " /etc/containerd/config.toml /etc/containerd/paictl.stamp " + kKubeadmLock + " " +
        kKubeadmLockElsewhere + "\n" +
        reset_hosts_toml_loop("rm -f \"$f\"; rmdir \"${f%/hosts.toml}\" 2>/dev/null || true") +
        "rm -rf " + kBundleDir +
        " /etc/cni/net.d/* /etc/kubernetes/manifests\n"
        "rmdir /var/cache/paictl 2>/dev/null || true\n"

        "if grep -q '^# paictl: ' /etc/fstab; then sed -i 's/^# paictl: //' /etc/fstab; swapon -a; "
        "fi\n"
        "if [ -d " +
        d +
        " ]; then\n"
        "  if [ -f " +
        d +
        "/modules.before ]; then for m in br_netfilter overlay bridge stp llc; do grep -qx $m " +
        d +
        "/modules.before || modprobe -r $m 2>/dev/null || true; done; fi\n"
        "  if [ -f " +
        d +
        "/sysctl.before ]; then while IFS= read -r kv; do [ -n \"$kv\" ] && "
        "sysctl -w \"$kv\" >/dev/null; done < " +
        d +
        "/sysctl.before; fi\n"
        "  rm -rf " +
        d +
        "\n"
        "fi\n";
    return run_last_step(h, "resetting the host", script, {}, 1800000);
  }
};

}  // namespace

std::unique_ptr<Phase> make_reset_phase() {
  return std::make_unique<ResetPhase>();
}

}  // namespace pai::deploy::phases
