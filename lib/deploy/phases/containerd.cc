// The `containerd` phase: its configuration (systemd cgroups; NVIDIA the
// default runtime on GPU hosts), restarted when it changed, and the kubelet
// enabled.
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

// The pause image of an offline bundle, as containerd's CRI must name it for
// pod sandboxes ("" without a bundle, or when it carries none): containerd's
// default (pause:3.8 in 1.7) would be pulled otherwise.
std::string containerd_sandbox_image(const InstallSettings& s) {
  if (!s.bundle) return {};
  for (const auto& f : s.bundle->files)
    if (f.kind == "image") {
      std::string ref = normalized_image(f.image);
      std::string repo = ref.substr(0, ref.rfind(':'));
      if (repo.substr(repo.rfind('/') + 1) == "pause") return ref;
    }
  return {};
}

class ContainerdPhase : public KeyValuePhase {
 public:
  explicit ContainerdPhase(const InstallSettings& s)
      : KeyValuePhase("containerd"), sandbox_(containerd_sandbox_image(s)) {}
  inline static const std::string kScript =
      std::string(
          "C=/etc/containerd/config.toml\n"
          // Without a config file nothing more is read: the phase writes one and
          // restarts containerd whatever it runs now (no stamp without a config).
          "if [ -f $C ]; then\n"
          "echo config=1\n"
          // One grep for both settings; each matched line told apart without its
          // leading blanks.
          "g=$(grep -E '^[[:space:]]*(SystemdCgroup = true|default_runtime_name = \"nvidia\")' $C "
          "2>/dev/null)\n"
          "s=; n=\n"
          "while IFS= read -r l; do l=${l#\"${l%%[![:space:]]*}\"}; case $l in 'SystemdCgroup = "
          "true'*) s=1 ;; 'default_runtime_name = \"nvidia\"'*) n=1 ;; esac; done <<EOF\n"
          "$g\n"
          "EOF\n"
          "[ -n \"$s\" ] && echo systemd=1\n"
          "[ -n \"$n\" ] && echo nvidia=1\n") +
      read_into_v("/etc/containerd/paictl.stamp") +
      "h=$(sha256sum $C); [ \"$v\" = \"${h%% *}\" ] && echo stamp=1\n"
      "echo \"active=$(systemctl is-active containerd 2>/dev/null)\"\n"
      "fi\n";
  std::string what() const override { return "containerd"; }
  std::string observation(const HostRun&) const override {
    if (sandbox_.empty()) return kScript;
    // With a bundle: whether the CRI's sandbox image is the bundle's pause.
    return kScript + "[ -f /etc/containerd/config.toml ] && grep -qF " +
           shell_quote("sandbox_image = \"" + sandbox_ + "\"") +
           " /etc/containerd/config.toml && echo sandbox=1\ntrue\n";
  }
  util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    bool gpu = has_gpu(h.spec());
    if (!kv.count("config") || !kv.count("systemd") || (gpu && !kv.count("nvidia")) ||
        (!sandbox_.empty() && !kv.count("sandbox")))
      needs.push_back(std::string("write /etc/containerd/config.toml (SystemdCgroup = true") +
                      (gpu ? ", nvidia the default runtime" : "") +
                      (sandbox_.empty() ? "" : ", sandbox image " + sandbox_) + ")");
    if (!kv.count("stamp") || kv["active"] != "active")
      needs.push_back("restart containerd with that configuration");
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>& needs) override {
    std::string script;
    bool rewrite = !needs.empty() && needs[0].rfind("write", 0) == 0;
    if (rewrite) {
      script +=
          "mkdir -p /etc/containerd\n"
          "containerd config default > /etc/containerd/config.toml.paictl-new\n"
          "sed -i 's/SystemdCgroup = false/SystemdCgroup = true/' "
          "/etc/containerd/config.toml.paictl-new\n" +
          (sandbox_.empty() ? std::string()
                            : "sed -i 's#sandbox_image = .*#sandbox_image = \"" + sandbox_ +
                                  "\"#' /etc/containerd/config.toml.paictl-new\n") +
          "mv /etc/containerd/config.toml.paictl-new /etc/containerd/config.toml\n";
      if (has_gpu(h.spec()))
        script += "nvidia-ctk runtime configure --runtime=containerd --set-as-default\n";
    }
    script +=
        "systemctl restart containerd\n"
        "sha256sum /etc/containerd/config.toml | cut -d' ' -f1 > /etc/containerd/paictl.stamp\n"
        "systemctl enable kubelet\n";
    return run_last_step(h, "configuring containerd", script);
  }

 private:
  std::string sandbox_;
};

}  // namespace

std::unique_ptr<Phase> make_containerd_phase(const InstallSettings& s) {
  return std::make_unique<ContainerdPhase>(s);
}

}  // namespace pai::deploy::phases
