#include "deploy/offline_bundle.h"

#include "bundle/manifest.h"
#include "deploy/images.h"
#include "util/fs.h"
#include "util/strings.h"

namespace pai::deploy {

namespace {

// The install's view of a bundle lib/bundle read (and verified).
OfflineBundle offline_bundle_of(bundle::Bundle&& b) {
  OfflineBundle o;
  o.dir = std::move(b.dir);
  o.cluster = std::move(b.cluster);
  o.created = std::move(b.created);
  o.kube_version = std::move(b.kube_version);
  o.driver = b.driver.value_or("");
  for (auto& p : b.platforms) o.platforms.push_back({std::move(p.os), std::move(p.arch)});
  for (auto& f : b.files) {
    BundleFile bf;
    bf.path = std::move(f.path);
    bf.kind = bundle::to_string(f.kind);
    bf.package = std::move(f.package);
    bf.version = std::move(f.version);
    bf.image = std::move(f.image);
    bf.sha256 = std::move(f.sha256);
    bf.bytes = f.bytes;
    if (f.kind == bundle::FileKind::Deb) {
      auto parts = util::split(bf.path, '/');
      if (parts.size() >= 2) bf.platform = std::string(parts[1]);
    }
    o.files.push_back(std::move(bf));
  }
  return o;
}

}  // namespace

const BundleFile* OfflineBundle::deb(const std::string& platform,
                                     const std::string& package) const {
  for (const auto& f : files)
    if (f.kind == "deb" && f.platform == platform && f.package == package) return &f;
  return nullptr;
}

bool is_manifest_bundle(const std::string& dir) {
  return util::path_entry_exists(dir + "/" + bundle::kManifestFile);
}

util::Result<OfflineBundle> read_offline_bundle(const std::string& dir) {
  auto b = bundle::read_bundle(dir);
  if (!b.ok()) return b.error();
  return offline_bundle_of(std::move(*b));
}

util::Result<OfflineBundle> verify_offline_bundle(const std::string& dir) {
  auto b = bundle::verify_bundle(dir);
  if (!b.ok()) return b.error();
  return offline_bundle_of(std::move(*b));
}

std::string normalized_image(const std::string& ref) {
  return normalize_image(ref);
}

ImageScope image_scope(const std::string& ref) {
  std::string n = normalized_image(ref);
  std::string repo = n.substr(0, n.rfind(':'));
  std::string base = repo.substr(repo.rfind('/') + 1);
  if (base == "pause" || base == "kube-proxy" || base == "coredns" ||
      repo.find("/flannel/") != std::string::npos || base.rfind("flannel", 0) == 0)
    return ImageScope::All;
  if (base == "k8s-device-plugin") return ImageScope::Gpu;
  return ImageScope::Masters;
}

std::vector<const BundleFile*> images_for_host(const OfflineBundle& b, bool master, bool gpu) {
  std::vector<const BundleFile*> out;
  for (const auto& f : b.files) {
    if (f.kind != "image") continue;
    ImageScope s = image_scope(f.image);
    if (s == ImageScope::All || (s == ImageScope::Masters && master) ||
        (s == ImageScope::Gpu && gpu))
      out.push_back(&f);
  }
  return out;
}

std::vector<const BundleFile*> debs_for_platform(const OfflineBundle& b,
                                                 const std::string& platform) {
  std::vector<const BundleFile*> out;
  for (const auto& f : b.files)
    if (f.kind == "deb" && f.platform == platform) out.push_back(&f);
  return out;
}

bool deb_for_host(const std::string& package, bool gpu) {
  auto starts = [&](const char* p) { return package.rfind(p, 0) == 0; };
  bool toolkit = starts("nvidia-container-") || starts("libnvidia-container");
  if (toolkit) return gpu;
  bool driver = starts("nvidia-") || starts("libnvidia-") || starts("xserver-xorg-video-nvidia");
  return !driver;
}

std::string deb_host_name(const BundleFile& f) {
  std::string v = f.version;
  std::string esc;
  for (char c : v) esc += c == ':' ? std::string("%3a") : std::string(1, c);
  std::string arch = f.platform.substr(f.platform.rfind('-') + 1);
  return f.package + "_" + esc + "_" + arch + ".deb";
}

std::string dpkg_arch(const std::string& arch) {
  if (arch == "x86_64") return "amd64";
  if (arch == "aarch64") return "arm64";
  return arch;
}

util::Result<void> bundle_fits_platform(const OfflineBundle& b, const std::string& os,
                                        const std::string& arch) {
  std::string a = dpkg_arch(arch);
  std::vector<std::string> names;
  for (const auto& p : b.platforms) {
    if (p.os == os && p.arch == a) return {};
    names.push_back(p.name());
  }
  return util::Error{
      "the offline bundle carries " + util::join(names, ", ") + ", not " + os + "-" + a,
      "build a bundle for " + os + "-" + a +
          " (paictl bundle build on a connected machine, with this host in "
          "layout.yaml)"};
}

}  // namespace pai::deploy
