// The `containerd` phase: its configuration (systemd cgroups; NVIDIA the
// default runtime on GPU hosts), restarted when it changed, and the kubelet
// enabled.
#include "deploy/image_mirror.h"
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "deploy/proxy.h"
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
      : KeyValuePhase("containerd"),
        mirrors_(!s.registry_mirrors.empty()),
        image_mirror_(s.image_mirror),
        sandbox_(containerd_sandbox_image(s)) {}
  inline static const std::string kScript =
      std::string(
          "C=/etc/containerd/config.toml\n"
          // Without a config file nothing more is read: the phase writes one and
          // restarts containerd whatever it runs now (no stamp without a config).
          "if [ -f $C ]; then\n"
          "echo config=1\n"
          // One grep for both settings; each matched line told apart without its
          // leading blanks.
          "g=$(grep -E '^[[:space:]]*(SystemdCgroup = true|default_runtime_name = \"nvidia\"|"
          "config_path = |sandbox_image = )' $C "
          "2>/dev/null)\n"
          "s=; n=\n"
          "while IFS= read -r l; do l=${l#\"${l%%[![:space:]]*}\"}; case $l in 'SystemdCgroup = "
          "true'*) s=1 ;; 'default_runtime_name = \"nvidia\"'*) n=1 ;; 'config_path = '*) echo "
          "\"config_path=${l#config_path = }\" ;; 'sandbox_image = '*) echo "
          "\"sandbox_image=${l#sandbox_image = }\" ;; esac; done <<EOF\n"
          "$g\n"
          "EOF\n"
          "[ -n \"$s\" ] && echo systemd=1\n"
          "[ -n \"$n\" ] && echo nvidia=1\n") +
      read_into_v("/etc/containerd/paictl.stamp") +
      "h=$(sha256sum $C); [ \"$v\" = \"${h%% *}\" ] && echo stamp=1\n"
      "echo \"active=$(systemctl is-active containerd 2>/dev/null)\"\n"
      "fi\n";
  std::string what() const override { return "containerd"; }
  std::string observation(const HostRun&) const override { return kScript; }
  util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    bool gpu = has_gpu(h.spec());
    // The registry mirrors' hosts.toml are read where config_path points; the
    // pods' sandbox (pause) image comes through image_registry_mirror.
    bool mirrors = mirrors_;
    std::string certs = std::string("\"") + kCertsDir + "\"";
    std::string sandbox = kv["sandbox_image"];
    if (sandbox.size() >= 2 && sandbox.front() == '"')
      sandbox = sandbox.substr(1, sandbox.size() - 2);
    // An offline bundle's pause comes first (its images are imported under
    // their own names); else the mirror's.
    bool sandbox_ok =
        !sandbox_.empty()
            ? sandbox == sandbox_
            : image_mirror_.empty() || image_through_mirror(sandbox, image_mirror_) == sandbox;
    if (!kv.count("config") || !kv.count("systemd") || (gpu && !kv.count("nvidia")) ||
        (mirrors && kv["config_path"] != certs) || !sandbox_ok) {
      std::string what = "SystemdCgroup = true";
      if (gpu) what += ", nvidia the default runtime";
      if (mirrors) what += ", config_path " + std::string(kCertsDir);
      if (!sandbox_.empty())
        what += ", sandbox image " + sandbox_;
      else if (!image_mirror_.empty())
        what += ", the sandbox image from " + image_mirror_;
      needs.push_back("write /etc/containerd/config.toml (" + what + ")");
    }
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
          "/etc/containerd/config.toml.paictl-new\n";
      if (mirrors_)
        script += std::string("sed -i 's|config_path = \"\"|config_path = \"") + kCertsDir +
                  "\"|' /etc/containerd/config.toml.paictl-new\n";
      // The default's sandbox image names its registry (registry.k8s.io/pause:3.8):
      // the path after it, from the mirror.
      if (!sandbox_.empty())
        script += "sed -i 's#sandbox_image = .*#sandbox_image = \"" + sandbox_ +
                  "\"#' /etc/containerd/config.toml.paictl-new\n";
      else if (!image_mirror_.empty())
        script += "sed -i " +
                  shell_quote("s|^\\( *sandbox_image = \"\\)[^/\"]*/|\\1" + image_mirror_ + "/|") +
                  " /etc/containerd/config.toml.paictl-new\n";
      script += "mv /etc/containerd/config.toml.paictl-new /etc/containerd/config.toml\n";
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
  bool mirrors_;
  std::string image_mirror_;
  std::string sandbox_;
};

}  // namespace

std::unique_ptr<Phase> make_containerd_phase(const InstallSettings& s) {
  return std::make_unique<ContainerdPhase>(s);
}

}  // namespace pai::deploy::phases
