// The `packages` phase: kubeadm, the kubelet and kubectl of the release (held),
// containerd, and the NVIDIA Container Toolkit on GPU hosts, from the package
// repositories or an offline bundle.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/fs.h"
#include "util/sha256.h"
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
  // A plain directory of .debs (served to apt as a file: source); a bundle
  // with a manifest is s_.bundle (installed with dpkg from the host's copies).
  bool bundle() const { return !s_.offline_bundle.empty() && !s_.bundle; }
  std::vector<std::string> wanted(const HostSpec& h) const {
    std::vector<std::string> w = {"kubeadm=" + version(), "kubelet=" + version(),
                                  "kubectl=" + version(),
                                  bundle() ? "containerd.io" : "containerd"};
    if (has_gpu(h)) w.push_back("nvidia-container-toolkit");
    return w;
  }
  // What a host installs from a bundle: the kube packages at the bundle's
  // versions, the containerd it carries (Docker's containerd.io or the OS's).
  std::vector<std::string> wanted_from_bundle(const HostSpec& h,
                                              const std::string& platform) const {
    const OfflineBundle& b = *s_.bundle;
    std::vector<std::string> w;
    for (const char* p : {"kubeadm", "kubelet", "kubectl"}) {
      const BundleFile* f = b.deb(platform, p);
      w.push_back(std::string(p) + "=" + (f ? f->version : version()));
    }
    w.push_back(b.deb(platform, "containerd.io") ? "containerd.io" : "containerd");
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
    if (s_.bundle) {
      // The host's architecture, and the sha256 of each .deb already copied
      // (a copy an interrupted run left is finished, not started again).
      script +=
          "echo \"arch=$(uname -m)\"\n"
          "for f in " +
          std::string(kBundleDir) +
          "/debs/*.deb; do [ -f \"$f\" ] || "
          "continue; s=$(sha256sum < \"$f\"); echo \"have_${f##*/}=${s%% *}\"; done\n";
    } else if (bundle()) {
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
    std::vector<std::string> want = wanted(h.spec());
    if (s_.bundle) {
      auto& facts = h.facts();
      std::string os = facts.value("os_id", "") + "-" + facts.value("os_version", "");
      std::string arch = dpkg_arch(kv["arch"]);
      if (auto fits = bundle_fits_platform(*s_.bundle, os, arch); !fits.ok())
        return util::Error{h.spec().name + ": " + fits.error().message, fits.error().hint,
                           util::Error::Kind::Input};
      std::string platform = os + "-" + arch;
      facts["bundle_platform"] = platform;
      uint64_t bytes = 0;
      size_t n = 0;
      for (const BundleFile* f : debs_for_platform(*s_.bundle, platform)) {
        if (!deb_for_host(f->package, has_gpu(h.spec()))) continue;
        auto it = kv.find("have_" + deb_host_name(*f));
        if (it != kv.end() && it->second == f->sha256) continue;
        ++n;
        bytes += f->bytes;
      }
      if (n)
        needs.push_back("copy " + std::to_string(n) + " .deb file(s) of " + platform + " (" +
                        std::to_string((bytes + 1023) / 1024) + " KiB) to " + kBundleDir + "/debs");
      want = wanted_from_bundle(h.spec(), platform);
    } else if (bundle()) {
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
    for (const auto& w : want) {
      auto eq = w.find('=');
      std::string name = w.substr(0, eq);
      auto it = kv.find("pkg_" + name);
      // ${db:Status-Abbrev}: desired state (i, or h when held) then "i" when installed.
      std::string st = it == kv.end() ? "" : it->second.substr(it->second.rfind('=') + 1);
      bool ok = st.size() >= 2 && st[1] == 'i';
      if (ok && eq != std::string::npos) ok = it->second.rfind(w.substr(eq + 1) + "=", 0) == 0;
      if (!ok) missing.push_back(w);
    }
    if (!missing.empty())
      needs.push_back("install " + util::join(missing, " ") +
                      (s_.bundle ? " (dpkg -i of the bundle's .debs)" : ""));
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

  util::Result<void> apply(HostRun& h, const std::vector<std::string>& needs) override {
    if (s_.bundle) return apply_bundle(h, needs);
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
  // From a bundle: each .deb of the host's platform it installs (deb_for_host)
  // copied (only those not
  // there with their sha256; each copy checked on the host before it takes
  // its name), then dpkg -i of them all from the local files: apt and its
  // repositories are not used at all.
  util::Result<void> apply_bundle(HostRun& h, const std::vector<std::string>& needs) {
    const std::string platform = h.facts().value("bundle_platform", "");
    const std::string dir = std::string(kBundleDir) + "/debs";
    if (util::Result<void> s =
            run_step(h, "creating " + dir, "mkdir -p " + shell_quote(dir) + "\n");
        !s.ok())
      return s;
    auto have = h.observe_sh("for f in " + dir +
                             "/*.deb; do [ -f \"$f\" ] || continue; s=$(sha256sum < \"$f\"); "
                             "echo \"${f##*/}=${s%% *}\"; done\ntrue\n");
    auto kv = parse_key_values(have.ok() ? have.out : std::string());
    std::vector<std::string> files;
    for (const BundleFile* f : debs_for_platform(*s_.bundle, platform)) {
      if (!deb_for_host(f->package, has_gpu(h.spec()))) continue;
      const std::string name = deb_host_name(*f);
      files.push_back(dir + "/" + name);
      if (kv.count(name) && kv[name] == f->sha256) continue;
      if (util::Result<void> s =
              copy_checked(h, s_.bundle->dir + "/" + f->path, *f, dir + "/" + name);
          !s.ok())
        return s;
    }
    bool install = false;
    for (const auto& n : needs) install |= n.rfind("install ", 0) == 0;
    std::string script = "export DEBIAN_FRONTEND=noninteractive\n";
    if (install) {
      script += "dpkg -i";
      for (const auto& f : files) script += " " + shell_quote(f);
      script += "\n";
    }
    script += "apt-mark hold kubeadm kubelet kubectl\n";
    return run_last_step(h, "installing packages from the bundle", script, {}, 1800000);
  }

  const InstallSettings& s_;
};

}  // namespace

std::unique_ptr<Phase> make_packages_phase(const InstallSettings& s) {
  return std::make_unique<PackagesPhase>(s);
}

}  // namespace pai::deploy::phases
