#include "bundle/manifest.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "util/json.h"
#include "util/json_pull.h"
#include "util/sha256.h"

namespace pai::bundle {

namespace {

namespace fs = std::filesystem;

bool manifest_is_hex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The reader of manifest.json: a JsonPull that knows the file's name, so
// every problem is "FILE:LINE:COL: ...".
class ManifestReader {
 public:
  ManifestReader(const std::string& text, std::string file) : pull_(text), file_(std::move(file)) {}

  util::JsonPull& pull() { return pull_; }

  util::Error error_at(std::pair<uint32_t, uint32_t> pos, const std::string& what) const {
    return util::Error{
        file_ + ":" + std::to_string(pos.first) + ":" + std::to_string(pos.second) + ": " + what,
        "a bundle's manifest.json is written by paictl bundle build "
        "(docs/bundle.md); build the bundle again rather than editing it",
        util::Error::Kind::Input};
  }
  util::Error pull_error() const {
    return error_at(pull_.line_column(pull_.error_offset()), pull_.error());
  }

  util::Result<std::string> string(const char* key) {
    auto pos = pull_.value_position();
    if (pull_.peek() != util::JsonPull::Kind::String)
      return error_at(pos, std::string("\"") + key + "\" must be a string, found " +
                               util::JsonPull::kind_name(pull_.peek()));
    std::string out;
    if (!pull_.read_string(out)) return pull_error();
    return out;
  }
  util::Result<uint64_t> count(const char* key) {
    auto pos = pull_.value_position();
    std::string_view text;
    bool integer = false;
    if (pull_.peek() != util::JsonPull::Kind::Number || !pull_.read_number(text, integer) ||
        !integer || text.empty() || text[0] == '-' || text.size() > 19)
      return error_at(pos, std::string("\"") + key + "\" must be a whole number of bytes");
    return std::stoull(std::string(text));
  }

 private:
  util::JsonPull pull_;
  std::string file_;
};

util::Result<Platform> manifest_platform(ManifestReader& r) {
  auto& p = r.pull();
  auto pos = p.value_position();
  if (p.peek() != util::JsonPull::Kind::Object)
    return r.error_at(pos, "a platform must be an object {\"os\": ..., \"arch\": ...}");
  p.begin_object();
  Platform out;
  std::string_view key;
  std::string scratch;
  while (p.next_key(key, scratch)) {
    if (key == "os" || key == "arch") {
      auto v = r.string(key == "os" ? "os" : "arch");
      if (!v) return v.error();
      (key == "os" ? out.os : out.arch) = std::move(*v);
    } else if (!p.skip()) {
      break;
    }
  }
  if (!p.ok()) return r.pull_error();
  if (out.os.empty() || out.arch.empty())
    return r.error_at(pos, "a platform needs \"os\" (ubuntu-22.04) and \"arch\" (amd64)");
  return out;
}

util::Result<BundleFile> manifest_file(ManifestReader& r) {
  auto& p = r.pull();
  auto pos = p.value_position();
  if (p.peek() != util::JsonPull::Kind::Object)
    return r.error_at(pos, "a file must be an object {\"path\", \"kind\", \"sha256\", \"bytes\"}");
  p.begin_object();
  BundleFile f;
  std::string kind;
  bool have_bytes = false;
  std::string_view key;
  std::string scratch;
  while (p.next_key(key, scratch)) {
    std::string k(key);
    if (k == "bytes") {
      auto n = r.count("bytes");
      if (!n) return n.error();
      f.bytes = *n;
      have_bytes = true;
      continue;
    }
    std::string* dst = k == "path"      ? &f.path
                       : k == "kind"    ? &kind
                       : k == "package" ? &f.package
                       : k == "version" ? &f.version
                       : k == "image"   ? &f.image
                       : k == "sha256"  ? &f.sha256
                                        : nullptr;
    if (!dst) {
      if (!p.skip()) break;
      continue;
    }
    auto v = r.string(k.c_str());
    if (!v) return v.error();
    *dst = std::move(*v);
  }
  if (!p.ok()) return r.pull_error();
  if (f.path.empty()) return r.error_at(pos, "a file has no \"path\"");
  if (!valid_file_path(f.path))
    return r.error_at(pos, "\"" + f.path +
                               "\" is not a bundle path (relative, under debs/ or images/, "
                               "without . or .. parts)");
  if (kind == "deb") {
    f.kind = FileKind::Deb;
    if (f.package.empty() || f.version.empty())
      return r.error_at(pos, f.path + ": a deb needs \"package\" and \"version\"");
  } else if (kind == "image") {
    f.kind = FileKind::Image;
    if (f.image.empty()) return r.error_at(pos, f.path + ": an image needs \"image\"");
  } else {
    return r.error_at(pos,
                      f.path + ": \"kind\" must be \"deb\" or \"image\", found \"" + kind + "\"");
  }
  if (!manifest_is_hex64(f.sha256))
    return r.error_at(pos, f.path + ": \"sha256\" must be 64 lower-case hex digits");
  if (!have_bytes) return r.error_at(pos, f.path + ": a file has no \"bytes\"");
  return f;
}

}  // namespace

const char* to_string(FileKind k) {
  return k == FileKind::Deb ? "deb" : "image";
}

std::vector<const BundleFile*> Bundle::debs_for(const Platform& p) const {
  std::vector<const BundleFile*> out;
  std::string prefix = "debs/" + p.dir_name() + "/";
  for (const auto& f : files)
    if (f.kind == FileKind::Deb && f.path.rfind(prefix, 0) == 0) out.push_back(&f);
  return out;
}

std::vector<const BundleFile*> Bundle::images() const {
  std::vector<const BundleFile*> out;
  for (const auto& f : files)
    if (f.kind == FileKind::Image) out.push_back(&f);
  return out;
}

const BundleFile* Bundle::find(const std::string& path) const {
  for (const auto& f : files)
    if (f.path == path) return &f;
  return nullptr;
}

bool valid_file_path(const std::string& path) {
  if (path.empty() || path[0] == '/' || path.find('\\') != std::string::npos) return false;
  if (path.rfind("debs/", 0) != 0 && path.rfind("images/", 0) != 0) return false;
  size_t start = 0;
  for (;;) {
    size_t slash = path.find('/', start);
    std::string part = path.substr(start, slash == std::string::npos ? slash : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

std::string manifest_json(const Bundle& b) {
  nlohmann::json j = {{"apiVersion", b.api_version},
                      {"cluster", b.cluster},
                      {"created", b.created},
                      {"kubeVersion", b.kube_version}};
  j["platforms"] = nlohmann::json::array();
  for (const auto& p : b.platforms) j["platforms"].push_back({{"os", p.os}, {"arch", p.arch}});
  if (b.driver) j["driver"] = *b.driver;
  j["files"] = nlohmann::json::array();
  for (const auto& f : b.files) {
    nlohmann::json o = {{"path", f.path}, {"kind", to_string(f.kind)}};
    if (f.kind == FileKind::Deb) {
      o["package"] = f.package;
      o["version"] = f.version;
    } else {
      o["image"] = f.image;
    }
    o["sha256"] = f.sha256;
    o["bytes"] = f.bytes;
    j["files"].push_back(std::move(o));
  }
  return util::dump_json(j, 2) + "\n";
}

util::Result<Bundle> parse_manifest(const std::string& text, const std::string& file) {
  ManifestReader r(text, file);
  auto& p = r.pull();
  Bundle b;
  b.api_version.clear();
  if (p.peek() != util::JsonPull::Kind::Object) {
    if (!p.ok()) return r.pull_error();
    return r.error_at(p.value_position(), "a bundle manifest must be a JSON object");
  }
  auto top = p.value_position();
  p.begin_object();
  std::string_view key;
  std::string scratch;
  std::set<std::string> paths;
  bool have_files = false;
  while (p.next_key(key, scratch)) {
    std::string k(key);
    auto pos = p.value_position();
    if (k == "apiVersion" || k == "cluster" || k == "created" || k == "kubeVersion" ||
        k == "driver") {
      auto v = r.string(k.c_str());
      if (!v) return v.error();
      if (k == "apiVersion") {
        if (*v != kApiVersion)
          return r.error_at(
              pos, "apiVersion is \"" + *v + "\"; this paictl reads \"" + kApiVersion + "\"");
        b.api_version = *v;
      } else if (k == "cluster") {
        b.cluster = *v;
      } else if (k == "created") {
        b.created = *v;
      } else if (k == "kubeVersion") {
        b.kube_version = *v;
      } else {
        b.driver = *v;
      }
    } else if (k == "platforms" || k == "files") {
      if (p.peek() != util::JsonPull::Kind::Array)
        return r.error_at(pos, "\"" + k + "\" must be an array");
      p.begin_array();
      while (p.next_element()) {
        if (k == "platforms") {
          auto pl = manifest_platform(r);
          if (!pl) return pl.error();
          b.platforms.push_back(std::move(*pl));
        } else {
          auto epos = p.value_position();
          auto f = manifest_file(r);
          if (!f) return f.error();
          if (!paths.insert(f->path).second) return r.error_at(epos, f->path + " is listed twice");
          b.files.push_back(std::move(*f));
        }
      }
      if (k == "files") have_files = true;
    } else if (!p.skip()) {
      break;
    }
  }
  if (!p.ok() || !p.expect_end()) return r.pull_error();
  if (b.api_version.empty())
    return r.error_at(top, std::string("no \"apiVersion\" (\"") + kApiVersion + "\")");
  if (b.kube_version.empty()) return r.error_at(top, "no \"kubeVersion\"");
  if (b.platforms.empty()) return r.error_at(top, "no \"platforms\" (at least one)");
  if (!have_files) return r.error_at(top, "no \"files\"");
  return b;
}

util::Result<Bundle> read_bundle(const std::string& dir) {
  std::string file = dir + "/" + kManifestFile;
  auto text = util::read_file(file);
  if (!text) {
    if (!util::path_entry_exists(file))
      return util::Error{dir + " is not a bundle: it has no " + kManifestFile,
                         "paictl bundle build CLUSTER_DIR --out " + dir + " makes one",
                         util::Error::Kind::Input};
    return util::Error{file + ": " + text.error().message, "", util::Error::Kind::Input};
  }
  auto b = parse_manifest(*text, file);
  if (!b) return b;
  b->dir = dir;
  return b;
}

util::Result<FileDigest> digest_file(const std::string& path) {
  if (auto c = util::check_regular_file(path); !c.ok())
    return util::Error{path + ": " + c.error().message, "", util::Error::Kind::Input};
  std::ifstream in(path, std::ios::binary);
  if (!in) return util::Error{path + ": cannot be opened", "", util::Error::Kind::Input};
  util::Sha256 h;
  FileDigest d;
  std::string buf(1 << 20, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    auto n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    h.update(std::string_view(buf.data(), n));
    d.bytes += n;
  }
  if (in.bad()) return util::Error{path + ": read error", "", util::Error::Kind::Input};
  d.sha256 = h.hex();
  return d;
}

util::Result<Bundle> verify_bundle(const std::string& dir) {
  auto b = read_bundle(dir);
  if (!b) return b;
  const std::string hint =
      "the bundle is not as paictl bundle build wrote it; build it again (a re-run of bundle "
      "build keeps the files that are right and fetches the rest)";
  // Nothing unlisted: every entry under the bundle is manifest.json, a listed
  // file, or a folder on the way to one.
  std::set<std::string> listed, folders;
  for (const auto& f : b->files) {
    listed.insert(f.path);
    for (size_t s = f.path.find('/'); s != std::string::npos; s = f.path.find('/', s + 1))
      folders.insert(f.path.substr(0, s));
  }
  std::error_code ec;
  std::vector<std::string> unlisted;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    std::string rel = fs::relative(it->path(), dir, ec).generic_string();
    if (ec) break;
    if (rel == kManifestFile) continue;
    auto st = it->symlink_status(ec);
    if (fs::is_directory(st) && folders.count(rel)) continue;
    if (fs::is_directory(st)) it.disable_recursion_pending();
    if (fs::is_regular_file(st) && listed.count(rel)) continue;
    unlisted.push_back(rel + (fs::is_directory(st) ? "/" : ""));
  }
  if (ec)
    return util::Error{"cannot list " + dir + ": " + ec.message(), "", util::Error::Kind::Input};
  if (!unlisted.empty()) {
    std::sort(unlisted.begin(), unlisted.end());
    return util::Error{
        dir + "/" + unlisted[0] + " is not in the bundle's manifest" +
            (unlisted.size() > 1 ? " (and " + std::to_string(unlisted.size() - 1) + " more)" : ""),
        hint, util::Error::Kind::Input};
  }
  // Sizes first (cheap), then the checksums.
  for (const auto& f : b->files) {
    std::string path = dir + "/" + f.path;
    if (!util::path_entry_exists(path))
      return util::Error{path + " is missing (the manifest lists it)", hint,
                         util::Error::Kind::Input};
    if (!util::is_regular_file(path) || fs::is_symlink(fs::symlink_status(path, ec)))
      return util::Error{path + " is not a regular file", hint, util::Error::Kind::Input};
    auto size = fs::file_size(path, ec);
    if (ec || size != f.bytes)
      return util::Error{path + " has " + std::to_string(size) + " bytes; the manifest says " +
                             std::to_string(f.bytes) + " (changed or cut short)",
                         hint, util::Error::Kind::Input};
  }
  for (const auto& f : b->files) {
    std::string path = dir + "/" + f.path;
    auto d = digest_file(path);
    if (!d) return d.error();
    if (d->sha256 != f.sha256)
      return util::Error{path + " has SHA-256 " + d->sha256 + "; the manifest says " + f.sha256 +
                             " (the file was changed)",
                         hint, util::Error::Kind::Input};
  }
  return b;
}

}  // namespace pai::bundle
