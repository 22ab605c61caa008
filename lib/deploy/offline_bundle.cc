#include "deploy/offline_bundle.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "util/fs.h"
#include "util/json.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace pai::deploy {

namespace {

namespace fs = std::filesystem;

util::Error offline_bundle_bad(const std::string& what, const std::string& hint = {}) {
  return util::Error{what,
                     hint.empty() ? "rebuild the bundle (paictl bundle build) on a connected "
                                    "machine and copy it whole"
                                  : hint,
                     util::Error::Kind::Input};
}

std::string offline_bundle_str(const nlohmann::json& o, const char* key) {
  return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

bool offline_bundle_hex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// The sha256 of a file, read in pieces (image archives are large).
util::Result<std::string> offline_bundle_file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return util::Error{"cannot read " + path, ""};
  util::Sha256 h;
  std::string buf(1 << 20, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    auto n = in.gcount();
    if (n > 0) h.update(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  if (in.bad()) return util::Error{"cannot read " + path, ""};
  return h.hex();
}

}  // namespace

const BundleFile* OfflineBundle::deb(const std::string& platform,
                                     const std::string& package) const {
  for (const auto& f : files)
    if (f.kind == "deb" && f.platform == platform && f.package == package) return &f;
  return nullptr;
}

bool is_manifest_bundle(const std::string& dir) {
  return util::path_entry_exists(dir + "/manifest.json");
}

util::Result<OfflineBundle> read_offline_bundle(const std::string& dir) {
  const std::string mpath = dir + "/manifest.json";
  auto text = util::read_file(mpath, 64u << 20);
  if (!text.ok()) return offline_bundle_bad("cannot read " + mpath + ": " + text.error().message);
  auto doc = util::parse_json(*text);
  if (!doc.ok()) return offline_bundle_bad(mpath + ": " + doc.error().message);
  const nlohmann::json& m = *doc;
  if (!m.is_object()) return offline_bundle_bad(mpath + ": not a JSON object");
  if (offline_bundle_str(m, "apiVersion") != "paictl.io/bundle/v1")
    return offline_bundle_bad(mpath + ": apiVersion is \"" + offline_bundle_str(m, "apiVersion") +
                              "\", expected \"paictl.io/bundle/v1\"");
  OfflineBundle b;
  b.dir = dir;
  b.cluster = offline_bundle_str(m, "cluster");
  b.created = offline_bundle_str(m, "created");
  b.kube_version = offline_bundle_str(m, "kubeVersion");
  b.driver = offline_bundle_str(m, "driver");
  if (b.kube_version.empty()) return offline_bundle_bad(mpath + ": no kubeVersion");
  if (!m.contains("platforms") || !m["platforms"].is_array() || m["platforms"].empty())
    return offline_bundle_bad(mpath + ": no platforms");
  for (const auto& p : m["platforms"]) {
    if (!p.is_object()) return offline_bundle_bad(mpath + ": a platform is not an object");
    BundlePlatform bp{offline_bundle_str(p, "os"), offline_bundle_str(p, "arch")};
    if (bp.os.empty() || bp.arch.empty())
      return offline_bundle_bad(mpath + ": a platform without os or arch");
    b.platforms.push_back(bp);
  }
  if (!m.contains("files") || !m["files"].is_array())
    return offline_bundle_bad(mpath + ": no files");
  std::set<std::string> seen;
  for (const auto& f : m["files"]) {
    if (!f.is_object()) return offline_bundle_bad(mpath + ": a file entry is not an object");
    BundleFile bf;
    bf.path = offline_bundle_str(f, "path");
    bf.kind = offline_bundle_str(f, "kind");
    bf.package = offline_bundle_str(f, "package");
    bf.version = offline_bundle_str(f, "version");
    bf.image = offline_bundle_str(f, "image");
    bf.sha256 = util::to_lower(offline_bundle_str(f, "sha256"));
    if (f.contains("bytes") && f["bytes"].is_number_unsigned())
      bf.bytes = f["bytes"].get<uint64_t>();
    else if (!(f.contains("bytes") && f["bytes"].is_number_integer() &&
               f["bytes"].get<int64_t>() == 0))
      return offline_bundle_bad(mpath + ": " + bf.path + " has no size (bytes)");
    if (bf.path.empty() || bf.path[0] == '/' || bf.path.find("..") != std::string::npos ||
        bf.path == "manifest.json")
      return offline_bundle_bad(mpath + ": a file path \"" + bf.path +
                                "\" is not a path inside the bundle");
    if (!seen.insert(bf.path).second)
      return offline_bundle_bad(mpath + ": " + bf.path + " is listed twice");
    if (!offline_bundle_hex64(bf.sha256))
      return offline_bundle_bad(mpath + ": " + bf.path + " has no sha256 (64 hex digits)");
    if (bf.kind == "deb") {
      auto parts = util::split(bf.path, '/');
      if (parts.size() != 3 || parts[0] != "debs" || bf.package.empty() || bf.version.empty())
        return offline_bundle_bad(mpath + ": the deb " + bf.path +
                                  " is not debs/PLATFORM/NAME.deb with its package and version");
      bf.platform = std::string(parts[1]);
    } else if (bf.kind == "image") {
      if (bf.image.empty()) return offline_bundle_bad(mpath + ": " + bf.path + " names no image");
    } else {
      return offline_bundle_bad(mpath + ": " + bf.path + " has kind \"" + bf.kind +
                                "\", expected deb or image");
    }
    b.files.push_back(std::move(bf));
  }
  return b;
}

util::Result<OfflineBundle> verify_offline_bundle(const std::string& dir) {
  auto b = read_offline_bundle(dir);
  if (!b.ok()) return b;
  std::set<std::string> listed = {"manifest.json"};
  for (const auto& f : b->files) {
    listed.insert(f.path);
    const std::string p = dir + "/" + f.path;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
      return offline_bundle_bad("the offline bundle lacks " + f.path + " (" + p + ")");
    auto size = fs::file_size(p, ec);
    if (ec || size != f.bytes)
      return offline_bundle_bad("the offline bundle's " + f.path + " has " +
                                std::to_string(ec ? 0 : size) + " bytes, the manifest says " +
                                std::to_string(f.bytes) + " (changed or truncated)");
    auto sum = offline_bundle_file_sha256(p);
    if (!sum.ok()) return offline_bundle_bad(sum.error().message);
    if (*sum != f.sha256)
      return offline_bundle_bad("the offline bundle's " + f.path + " does not match its sha256 (" +
                                *sum + ", the manifest says " + f.sha256 + "): it was changed");
  }
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) continue;
    std::string rel = fs::relative(it->path(), dir, ec).generic_string();
    if (!listed.count(rel))
      return offline_bundle_bad(
          "the offline bundle has " + rel + ", which its manifest does not list",
          "remove it, or rebuild the bundle (paictl bundle build)");
  }
  if (ec) return offline_bundle_bad("cannot list " + dir + ": " + ec.message());
  return b;
}

std::string normalized_image(const std::string& ref) {
  std::string r = ref;
  size_t slash = r.find('/');
  std::string first = slash == std::string::npos ? "" : r.substr(0, slash);
  bool has_registry =
      !first.empty() && (first.find('.') != std::string::npos ||
                         first.find(':') != std::string::npos || first == "localhost");
  if (!has_registry) r = "docker.io/" + r;
  if (r.rfind("docker.io/", 0) == 0 && r.find('/', 10) == std::string::npos)
    r = "docker.io/library/" + r.substr(10);
  std::string last = r.substr(r.rfind('/') + 1);
  if (last.find(':') == std::string::npos && last.find('@') == std::string::npos) r += ":latest";
  return r;
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
