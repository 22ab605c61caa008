// The `proxy` phase: config.yaml's proxies for apt (an apt.conf.d file),
// containerd and the kubelet (systemd drop-ins), and containerd's hosts.toml of
// each mirrored registry; systemd reloaded and the services restarted only when
// their drop-in changed. A proxy URL may hold a password: the files reach the
// host on stdin (never in a command line), are written 0600, and the plan and
// logs name only their paths.
#include "deploy/proxy.h"
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

std::string proxy_parent_dir(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

class ProxyPhase : public KeyValuePhase {
 public:
  explicit ProxyPhase(const InstallSettings& s) : KeyValuePhase("proxy"), s_(s) {}

  static bool secret_file(const std::string& path) { return path.rfind(kCertsDir, 0) != 0; }
  std::map<std::string, std::string> files() const {
    return proxy_and_mirror_files(s_.proxy, s_.registry_mirrors);
  }
  static std::string script() {
    const std::string fixed =
        std::string(kAptProxyFile) + " " + kContainerdProxyDropIn + " " + kKubeletProxyDropIn;
    const std::string hosts = std::string(kCertsDir) + "/*/hosts.toml";
    return "for f in " + hosts +
           "; do [ -f \"$f\" ] || continue; l=; IFS= read -r l < \"$f\" || true; case $l in \"" +
           kWrittenByPaictl + "\"*) echo \"ours:$f=1\" ;; esac; done\n" + "sha256sum " + fixed +
           " " + hosts +
           " 2>/dev/null | while read -r s f; do echo \"sum:$f=$s\"; done\n"
           "stat -c 'mode:%n=%a' " +
           fixed + " 2>/dev/null\ntrue\n";
  }
  std::string what() const override { return "the proxies and registry mirrors"; }
  std::string observation(const HostRun&) const override { return script(); }
  util::Result<void> needs_from(HostRun&, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    for (const auto& [path, content] : files()) {
      auto sum = kv.find("sum:" + path);
      if (content.empty()) {
        if (sum != kv.end()) needs.push_back("remove " + path);
        continue;
      }
      bool same = sum != kv.end() && sum->second == util::sha256_hex(content);
      if (same && secret_file(path) && kv["mode:" + path] != "600") same = false;
      if (!same) needs.push_back("write " + path);
    }
    auto wanted = files();
    for (const auto& [key, v] : kv) {
      if (key.rfind("ours:", 0) != 0) continue;
      std::string path = key.substr(5);
      if (!wanted.count(path)) needs.push_back("remove " + path);
    }
    return {};
  }

  util::Result<void> apply(HostRun& h, const std::vector<std::string>& needs) override {
    auto wanted = files();
    std::string script = "umask 022\n", input;
    bool containerd = false, kubelet = false;
    for (const auto& n : needs) {
      bool write = n.rfind("write ", 0) == 0;
      std::string path = n.substr(write ? 6 : 7);
      containerd |= path == kContainerdProxyDropIn;
      kubelet |= path == kKubeletProxyDropIn;
      if (!write) {
        script += "rm -f " + shell_quote(path) + "\n";
        if (!secret_file(path))
          script += "rmdir " + shell_quote(proxy_parent_dir(path)) + " 2>/dev/null || true\n";
        continue;
      }
      const std::string& content = wanted[path];
      size_t lines = 0;
      for (char c : content) lines += c == '\n';
      const std::string q = shell_quote(path), dir = shell_quote(proxy_parent_dir(path));
      // The content on stdin, read line by line by the shell itself (no process
      // reads ahead of its part); a secret file is 0600 from its creation.
      script += "[ -d " + dir + " ] || mkdir -p " + dir + "\n(umask " +
                (secret_file(path) ? "077" : "022") + "; i=0; while [ $i -lt " +
                std::to_string(lines) +
                " ] && IFS= read -r l; do printf '%s\\n' \"$l\"; i=$((i+1)); done > " + q +
                ".paictl-new)\nchmod " + (secret_file(path) ? "600 " : "644 ") + q +
                ".paictl-new\nmv " + q + ".paictl-new " + q + "\n";
      input += content;
    }
    if (containerd || kubelet) script += "systemctl daemon-reload\n";
    // Restarted only where running: a host without them yet starts them later
    // with the drop-in in place.
    // (Not try-restart: it fails where the unit is not installed yet.)
    for (auto [changed, unit] :
         {std::pair{containerd, "containerd"}, std::pair{kubelet, "kubelet"}})
      if (changed)
        script += std::string("if systemctl is-active -q ") + unit + "; then systemctl restart " +
                  unit + "; fi\n";
    return run_last_step(h, "writing the proxies and registry mirrors", script, input);
  }

 private:
  const InstallSettings& s_;
};

}  // namespace

std::unique_ptr<Phase> make_proxy_phase(const InstallSettings& s) {
  return std::make_unique<ProxyPhase>(s);
}

}  // namespace pai::deploy::phases
