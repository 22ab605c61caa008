// The `packages` phase: kubeadm, the kubelet and kubectl of the release (held),
// containerd, and the NVIDIA Container Toolkit on GPU hosts, from the package
// repositories or an offline bundle.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/fs.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

class PackagesPhase : public KeyValuePhase {
 public:
  explicit PackagesPhase(const InstallSettings& s) : KeyValuePhase("packages"), s_(s) {}

  std::string version() const { return s_.kube_version + "-1.1"; }
  std::string kube_repo() const {
    return s_.package_repo.empty()
               ? "https://pkgs.k8s.io/core:/stable:/v" + minor_of(s_.kube_version) + "/deb/"
               : s_.package_repo;
  }
  std::string nvidia_repo() const {
    return s_.nvidia_repo.empty()
               ? "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH)"
               : s_.nvidia_repo;
  }
  std::string kube_line() const {
    return "deb [signed-by=" + std::string(kKubeKeyring) + "] " + kube_repo() + " /\n";
  }
  std::string nvidia_line() const {
    return "deb [signed-by=" + std::string(kNvidiaKeyring) + "] " + nvidia_repo() + " /\n";
  }
  std::string bundle_line() const {
    return "deb [trusted=yes] file:" + std::string(kBundleDir) + " ./\n";
  }
  bool bundle() const { return !s_.offline_bundle.empty(); }
  std::vector<std::string> wanted(const HostSpec& h) const {
    std::vector<std::string> w = {"kubeadm=" + version(), "kubelet=" + version(),
                                  "kubectl=" + version(),
                                  bundle() ? "containerd.io" : "containerd"};
    if (has_gpu(h)) w.push_back("nvidia-container-toolkit");
    return w;
  }
  std::vector<std::string> bundle_files() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(s_.offline_bundle, ec)) {
      std::string n = e.path().filename().string();
      if (n.size() > 4 && n.substr(n.size() - 4) == ".deb" && e.is_regular_file()) out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string script(const HostSpec& spec) const {
    std::string script =
        "dpkg-query -W -f 'pkg_${Package}=${Version}=${db:Status-Abbrev}\\n' kubeadm kubelet "
        "kubectl containerd containerd.io nvidia-container-toolkit 2>/dev/null\n";
    if (bundle()) {
      script += same_file_test("source_bundle", kBundleList, bundle_line());
      for (const auto& f : bundle_files())
        script += "[ -f " + shell_quote(std::string(kBundleDir) + "/" + f) +
                  " ] || echo missing_file=1\n";
    } else {
      script += same_file_test("source_kube", kKubeList, kube_line());
      if (has_gpu(spec)) script += same_file_test("source_nvidia", kNvidiaList, nvidia_line());
    }
    return script + "true\n";
  }
  std::string what() const override { return "packages"; }
  std::string observation(const HostRun& h) const override { return script(h.spec()); }
  util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    if (bundle()) {
      if (kv.count("missing_file"))
        needs.push_back("copy the offline bundle (" + std::to_string(bundle_files().size()) +
                        " packages) to " + kBundleDir);
      if (!kv.count("source_bundle")) needs.push_back(std::string("add ") + kBundleList);
    } else {
      if (!kv.count("source_kube"))
        needs.push_back("add the Kubernetes v" + minor_of(s_.kube_version) +
                        " package repository (" + kube_repo() + ")");
      if (has_gpu(h.spec()) && !kv.count("source_nvidia"))
        needs.push_back("add the NVIDIA Container Toolkit package repository");
    }
    std::vector<std::string> missing;
    for (const auto& w : wanted(h.spec())) {
      auto eq = w.find('=');
      std::string name = w.substr(0, eq);
      auto it = kv.find("pkg_" + name);
      // ${db:Status-Abbrev}: desired state (i, or h when held) then "i" when installed.
      std::string st = it == kv.end() ? "" : it->second.substr(it->second.rfind('=') + 1);
      bool ok = st.size() >= 2 && st[1] == 'i';
      if (ok && eq != std::string::npos) ok = it->second.rfind(w.substr(eq + 1) + "=", 0) == 0;
      if (!ok) missing.push_back(w);
    }
    if (!missing.empty()) needs.push_back("install " + util::join(missing, " "));
    // The installed kubeadm's version, for the control plane's and the join's
    // configuration (kubeadm_version).
    {
      auto it = kv.find("pkg_kubeadm");
      std::string v;
      if (it != kv.end()) {
        std::string st = it->second.substr(it->second.rfind('=') + 1);
        if (st.size() >= 2 && st[1] == 'i') v = it->second.substr(0, it->second.rfind('='));
      }
      h.facts()["kubeadm_package"] = v;
    }
    // A hold is dpkg's selection (what `apt-mark hold` sets): "h" first in
    // ${db:Status-Abbrev}, so the same query answers it.
    std::vector<std::string> unheld;
    for (const char* p : {"kubeadm", "kubelet", "kubectl"}) {
      auto it = kv.find(std::string("pkg_") + p);
      std::string st = it == kv.end() ? "" : it->second.substr(it->second.rfind('=') + 1);
      if (st.empty() || st[0] != 'h') unheld.push_back(p);
    }
    if (!unheld.empty()) needs.push_back("hold " + util::join(unheld, " "));
    return {};
  }

  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    std::string script = "export DEBIAN_FRONTEND=noninteractive\nmkdir -p /etc/apt/keyrings\n";
    if (bundle()) {
      std::string mk = "mkdir -p " + std::string(kBundleDir) + "\n";
      if (util::Result<void> s = run_step(h, "creating " + std::string(kBundleDir), mk); !s.ok())
        return s;
      for (const auto& f : bundle_files()) {
        auto read = util::read_file(s_.offline_bundle + "/" + f, size_t{4} << 30);
        if (!read.ok())
          return util::Error{
              "cannot read " + s_.offline_bundle + "/" + f + ": " + read.error().message, "",
              util::Error::Kind::Input};
        const std::string& content = *read;
        std::string dst = std::string(kBundleDir) + "/" + f;
        if (util::Result<void> s =
                run_step(h, "copying " + f,
                         "cat > " + shell_quote(dst + ".part") + "\nmv " +
                             shell_quote(dst + ".part") + " " + shell_quote(dst) + "\n",
                         content);
            !s.ok())
          return s;
      }
      script += write_file(kBundleList, bundle_line());
    } else {
      // The repositories' signing keys, when this host can fetch them; without
      // one apt refuses the repository and says so.
      script += "[ -s " + std::string(kKubeKeyring) + " ] || { curl -fsSL --max-time 20 " +
                shell_quote(kube_repo() + "Release.key") + " | gpg --dearmor -o " + kKubeKeyring +
                " 2>/dev/null || rm -f " + kKubeKeyring +
                "; echo 'paictl: could not fetch the Kubernetes repository key' >&2; } || true\n";
      script += write_file(kKubeList, kube_line());
      if (has_gpu(h.spec())) {
        script += "[ -s " + std::string(kNvidiaKeyring) +
                  " ] || { curl -fsSL --max-time 20 "
                  "https://nvidia.github.io/libnvidia-container/gpgkey | gpg --dearmor -o " +
                  kNvidiaKeyring + " 2>/dev/null || rm -f " + kNvidiaKeyring + "; } || true\n";
        script += write_file(kNvidiaList, nvidia_line());
      }
    }
    script += "apt-get update -q\n";
    script += "apt-get install -y -q --allow-change-held-packages " +
              util::join(wanted(h.spec()), " ") + "\n";
    script += "apt-mark hold kubeadm kubelet kubectl\n";
    return run_last_step(h, "installing packages", script, {}, 1800000);
  }

 private:
  const InstallSettings& s_;
};

}  // namespace

std::unique_ptr<Phase> make_packages_phase(const InstallSettings& s) {
  return std::make_unique<PackagesPhase>(s);
}

}  // namespace pai::deploy::phases
