#include "bundle/build.h"

#include <archive.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "bundle/oci.h"
#include "deploy/images.h"
#include "deploy/prepare.h"
#include "inventory/inventory.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/sha256.h"
#include "util/strings.h"
#include "util/time.h"
#include "yaml/yaml.h"

namespace pai::bundle {

namespace {

namespace fs = std::filesystem;

constexpr const char* kWorkDir = ".paictl-build";  // blobs and the images' record while building

util::Error build_input(std::string message, std::string hint = {}) {
  return util::Error{std::move(message), std::move(hint), util::Error::Kind::Input};
}

// A Packages index as served: plain, or gzip/xz compressed (libarchive's raw
// format reads through any of its filters).
util::Result<std::string> build_decompress(const std::string& data) {
  struct archive* a = archive_read_new();
  std::unique_ptr<struct archive, int (*)(struct archive*)> guard(a, archive_read_free);
  archive_read_support_filter_all(a);
  archive_read_support_format_raw(a);
  if (archive_read_open_memory(a, data.data(), data.size()) != ARCHIVE_OK)
    return util::Error{std::string("cannot read a Packages index: ") + archive_error_string(a), ""};
  struct archive_entry* e = nullptr;
  if (archive_read_next_header(a, &e) != ARCHIVE_OK)
    return util::Error{std::string("cannot read a Packages index: ") + archive_error_string(a), ""};
  std::string out;
  char buf[65536];
  for (;;) {
    auto n = archive_read_data(a, buf, sizeof buf);
    if (n < 0)
      return util::Error{std::string("cannot read a Packages index: ") + archive_error_string(a),
                         ""};
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// GET of a URL that must answer 200.
util::Result<std::string> build_get(http::Client& c, const std::string& url, bool missing_ok,
                                    bool& missing) {
  http::Request r;
  r.url = url;
  auto res = c.send(r);
  missing = false;
  if (res.ok() && res.response.status == 404 && missing_ok) {
    missing = true;
    return std::string();
  }
  if (!res.ok())
    return util::Error{"GET " + http::redact_url(url) + ": " + res.message,
                       "bundle build needs a connected machine: the repositories and registries "
                       "must answer",
                       util::Error::Kind::Remote};
  if (res.response.status != 200)
    return util::Error{"GET " + http::redact_url(url) + " answered " +
                           std::to_string(res.response.status) + " " +
                           std::string(http::reason_phrase(res.response.status)),
                       "", util::Error::Kind::Remote};
  return std::move(res.response.body);
}

// A repository's packages of one architecture (and "all"): Packages, else
// Packages.xz, else Packages.gz.
util::Result<std::vector<AptPackage>> build_read_source(http::Client& c, const AptSource& s,
                                                        const std::string& arch) {
  std::vector<AptPackage> out;
  std::string base = s.url;
  for (auto at = base.find("$(ARCH)"); at != std::string::npos; at = base.find("$(ARCH)"))
    base.replace(at, 7, arch);
  for (const auto& url : s.index_urls(arch)) {
    std::string text;
    bool found = false;
    for (const char* ext : {"", ".xz", ".gz"}) {
      bool missing = false;
      auto got = build_get(c, url + ext, true, missing);
      if (!got) return got.error();
      if (missing) continue;
      auto plain = build_decompress(*got);
      if (!plain) return plain.error();
      text = std::move(*plain);
      found = true;
      break;
    }
    if (!found)
      return util::Error{
          s.str() + " has no Packages index at " + http::redact_url(url) + "[.xz|.gz]",
          "check the source line (a flat repository is deb URL /)", util::Error::Kind::Remote};
    for (auto& p : parse_packages_index(text, base))
      if (p.architecture == arch || p.architecture == "all") out.push_back(std::move(p));
  }
  return out;
}

// config.yaml's image_registry_mirror (HOST[:PORT]), "" when not set.
std::string build_mirror(const std::string& cluster_dir) {
  auto text = util::read_file(cluster_dir + "/config.yaml");
  if (!text) return "";
  auto s = yaml::load(*text);
  if (s.documents.empty() || !s.documents[0]->is_mapping()) return "";
  const auto* m = s.documents[0]->get("image_registry_mirror");
  if (!m || !m->is_scalar()) return "";
  std::string v = m->scalar();
  for (const char* scheme : {"https://", "http://"})
    if (v.rfind(scheme, 0) == 0) v = v.substr(std::string(scheme).size());
  while (!v.empty() && v.back() == '/') v.pop_back();
  return v;
}

// The record of the images written: path -> {image, pull, sha256, bytes}.
nlohmann::json build_read_record(const std::string& out_dir) {
  auto text = util::read_file(out_dir + "/" + kWorkDir + "/images.json");
  if (!text) return nlohmann::json::object();
  auto j = util::parse_json_or_discarded(*text);
  return j.is_object() ? j : nlohmann::json::object();
}

bool build_file_matches(const std::string& path, const std::string& sha256, uint64_t bytes) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(path, ec))) return false;
  if (fs::file_size(path, ec) != bytes || ec) return false;
  auto d = digest_file(path);
  return d.ok() && d->sha256 == sha256;
}

}  // namespace

util::Result<Platform> parse_platform(const std::string& text) {
  auto slash = text.find('/');
  Platform p;
  if (slash != std::string::npos) {
    p.os = text.substr(0, slash);
    p.arch = text.substr(slash + 1);
  }
  static const std::set<std::string> kArchs = {"amd64", "arm64"};
  if (p.os.empty() || p.os.find('-') == std::string::npos || !kArchs.count(p.arch))
    return build_input("--platform " + text + " is not OS-VERSION/ARCH",
                       "e.g. --platform ubuntu-22.04/amd64 (architectures: amd64, arm64)");
  return p;
}

util::Result<std::vector<std::string>> default_os_repos(const Platform& p) {
  std::string ubuntu = p.arch == "amd64" ? "http://archive.ubuntu.com/ubuntu"
                                         : "http://ports.ubuntu.com/ubuntu-ports";
  auto ub = [&](const std::string& code) {
    return std::vector<std::string>{
        "deb " + ubuntu + " " + code + " main restricted universe",
        "deb " + ubuntu + " " + code + "-updates main restricted universe"};
  };
  if (p.os == "ubuntu-20.04") return ub("focal");
  if (p.os == "ubuntu-22.04") return ub("jammy");
  if (p.os == "ubuntu-24.04") return ub("noble");
  auto deb = [](const std::string& code, const std::string& comps) {
    return std::vector<std::string>{
        "deb http://deb.debian.org/debian " + code + " " + comps,
        "deb http://deb.debian.org/debian " + code + "-updates " + comps};
  };
  if (p.os == "debian-11") return deb("bullseye", "main contrib non-free");
  if (p.os == "debian-12") return deb("bookworm", "main contrib non-free non-free-firmware");
  return build_input("paictl has no default package archive for " + p.os,
                     "name the OS's repositories with --os-repo 'deb URL SUITE COMPONENT...'");
}

std::string image_file_path(const std::string& image) {
  std::string n;
  for (char c : image) n += (c == '/' || c == ':' || c == '@') ? '_' : c;
  return "images/" + n + ".tar";
}

util::Result<BuildPlan> plan_bundle(const BuildRequest& request, const BuildDeps& deps) {
  BuildPlan plan;
  plan.request = request;
  if (plan.request.platforms.empty()) plan.request.platforms = {{"ubuntu-22.04", "amd64"}};
  const auto& r = plan.request;
  if (r.out_dir.empty())
    return build_input("no --out DIR", "paictl bundle build CLUSTER_DIR --out DIR");
  // The output directory: new, empty, or a bundle (or a build of one) paictl wrote.
  if (util::path_entry_exists(r.out_dir)) {
    if (!util::is_directory(r.out_dir))
      return build_input("--out " + r.out_dir + " is not a directory");
    std::error_code ec;
    bool empty = fs::is_empty(r.out_dir, ec);
    if (!empty && !util::path_entry_exists(r.out_dir + "/" + kManifestFile) &&
        !util::path_entry_exists(r.out_dir + "/" + kWorkDir))
      return build_input("--out " + r.out_dir + " is neither empty nor a bundle",
                         "name a new directory; bundle build removes files of a bundle it "
                         "no longer needs, so it never writes into another directory");
  }

  inventory::InventoryOptions io;
  io.paths = {r.cluster_dir};
  io.ssh_config = "none";
  deploy::ClusterHosts hosts;
  hosts.inventory = inventory::build_inventory(io);
  if (hosts.inventory.input_error) {
    for (const auto& d : hosts.inventory.diagnostics.items())
      if (d.severity == diag::Severity::Error)
        return build_input((d.file.empty() ? ""
                                           : d.file + ":" + std::to_string(d.line) + ":" +
                                                 std::to_string(d.column) + ": ") +
                               d.message,
                           d.hint);
    return build_input(r.cluster_dir + ": the cluster files have errors",
                       "paictl check config " + r.cluster_dir);
  }
  deploy::PrepareRequest pr;
  pr.cluster_dir = r.cluster_dir;
  pr.templates_dir = r.templates_dir;
  auto prepared = deploy::prepare_cluster(pr, std::move(hosts));
  if (!prepared) return prepared.error().error;
  const auto& s = prepared->settings;
  const deploy::HostSpec* master = prepared->master();
  if (!master) return build_input("layout.yaml has no pai-master host");
  plan.cluster = s.cluster_name;
  plan.kube_version = s.kube_version;
  for (const auto& h : prepared->specs) plan.gpus |= h.gpus > 0;
  plan.mirror = build_mirror(prepared->cluster_dir);

  // The images.
  auto images = deploy::images_of(s, *master, plan.gpus);
  if (!images) return images.error();
  // What an earlier build wrote: the record of a build under way, and the
  // manifest of a finished one.
  auto record = build_read_record(r.out_dir);
  if (auto earlier = read_bundle(r.out_dir); earlier.ok())
    for (const auto* f : earlier->images())
      if (!record.contains(f->path))
        record[f->path] = {{"image", f->image},
                           {"pull", plan.mirror.empty() ? f->image : ""},
                           {"sha256", f->sha256},
                           {"bytes", f->bytes}};
  for (const auto& i : *images) {
    PlannedImage pi;
    pi.image = i.image;
    pi.used_by = i.used_by;
    auto ref = deploy::parse_image_ref(i.image);
    if (!ref) return ref.error();
    pi.pull = plan.mirror.empty() ? ref->str() : deploy::through_mirror(*ref, plan.mirror).str();
    pi.path = image_file_path(i.image);
    if (record.contains(pi.path) && record[pi.path].is_object()) {
      const auto& rec = record[pi.path];
      std::string pulled_from = rec.value("pull", "");
      pi.kept = rec.value("image", "") == pi.image &&
                (pulled_from == pi.pull || pulled_from.empty()) &&
                build_file_matches(r.out_dir + "/" + pi.path, rec.value("sha256", ""),
                                   rec.value("bytes", uint64_t{0}));
      if (pi.kept) {
        pi.kept_sha256 = rec.value("sha256", "");
        pi.kept_bytes = rec.value("bytes", uint64_t{0});
      }
    }
    plan.images.push_back(std::move(pi));
  }

  // The .debs, per platform.
  std::string version = s.kube_version + "-1.1";
  std::string kube_repo = s.package_repo.empty()
                              ? "https://pkgs.k8s.io/core:/stable:/v" +
                                    s.kube_version.substr(0, s.kube_version.rfind('.')) + "/deb/"
                              : s.package_repo;
  std::string nvidia_repo = s.nvidia_repo.empty()
                                ? "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH)"
                                : s.nvidia_repo;
  if (!deps.apt) return util::Error{"no HTTP client for the package repositories", ""};
  for (const auto& p : r.platforms) {
    std::vector<std::string> lines = {"deb " + kube_repo + " /"};
    if (plan.gpus) lines.push_back("deb " + nvidia_repo + " /");
    if (r.os_repos.empty()) {
      auto def = default_os_repos(p);
      if (!def) return def.error();
      for (auto& l : *def) lines.push_back(std::move(l));
    } else {
      for (const auto& l : r.os_repos) lines.push_back(l);
    }
    std::vector<AptPackage> index;
    for (const auto& l : lines) {
      auto src = parse_apt_source(l);
      if (!src) return src.error();
      if (deps.on_progress) deps.on_progress("reading", src->str() + " (" + p.arch + ")");
      auto pk = build_read_source(*deps.apt, *src, p.arch);
      if (!pk) return pk.error();
      for (auto& x : *pk) index.push_back(std::move(x));
      plan.sources[p.dir_name()].push_back(src->str());
    }
    std::vector<Wanted> wanted = {{{"kubeadm"}, version},
                                  {{"kubelet"}, version},
                                  {{"kubectl"}, version},
                                  {{"containerd", "containerd.io"}, ""}};
    if (plan.gpus) wanted.push_back({{"nvidia-container-toolkit"}, ""});
    if (plan.gpus && r.driver)
      wanted.push_back(
          {{p.os.rfind("debian", 0) == 0 ? "nvidia-driver" : "nvidia-driver-" + *r.driver}, ""});
    auto res = resolve_packages(wanted, index);
    if (!res) {
      util::Error e = res.error();
      e.message = p.dir_name() + ": " + e.message;
      return e;
    }
    plan.assumed[p.dir_name()] = res->assumed;
    for (auto& pkg : res->packages) {
      PlannedDeb d;
      d.platform = p;
      std::string file = pkg.filename.substr(pkg.filename.rfind('/') + 1);
      d.path = "debs/" + p.dir_name() + "/" + file;
      if (!valid_file_path(d.path) || file.size() < 5 || file.substr(file.size() - 4) != ".deb")
        return util::Error{"the repository names a file that is no .deb: " + pkg.filename, "",
                           util::Error::Kind::Remote};
      d.kept = build_file_matches(r.out_dir + "/" + d.path, pkg.sha256, pkg.size);
      if (!d.kept) plan.deb_bytes_to_fetch += pkg.size;
      d.package = std::move(pkg);
      plan.debs.push_back(std::move(d));
    }
  }
  return plan;
}

util::Result<BuildOutcome> apply_bundle(const BuildPlan& plan, const BuildDeps& deps) {
  const auto& r = plan.request;
  BuildOutcome out;
  auto progress = [&](const std::string& what, const std::string& detail) {
    if (deps.on_progress) deps.on_progress(what, detail);
  };
  std::string work = r.out_dir + "/" + kWorkDir;
  if (auto m = util::make_directories(work + "/blobs"); !m.ok()) return m.error();
  // The images kept are recorded before the manifest goes: a bundle being
  // rebuilt is no bundle until its new manifest is written, and a build
  // killed in between still knows them.
  nlohmann::json record = nlohmann::json::object();
  for (const auto& i : plan.images)
    if (i.kept)
      record[i.path] = {
          {"image", i.image}, {"pull", i.pull}, {"sha256", i.kept_sha256}, {"bytes", i.kept_bytes}};
  if (auto w = util::write_file_atomic(work + "/images.json", util::dump_json(record, 2)); !w.ok())
    return w.error();
  std::error_code ec;
  fs::remove(r.out_dir + "/" + kManifestFile, ec);

  Bundle& b = out.bundle;
  b.dir = r.out_dir;
  b.cluster = plan.cluster;
  b.created = r.created.empty() ? util::now_rfc3339() : r.created;
  b.kube_version = plan.kube_version;
  b.platforms = r.platforms;
  if (plan.gpus && r.driver) b.driver = r.driver;

  for (const auto& d : plan.debs) {
    std::string path = r.out_dir + "/" + d.path;
    BundleFile f{d.path, FileKind::Deb,    d.package.name, d.package.version,
                 "",     d.package.sha256, d.package.size};
    if (build_file_matches(path, d.package.sha256, d.package.size)) {
      ++out.kept;
      progress("kept", d.path);
      b.files.push_back(std::move(f));
      continue;
    }
    bool missing = false;
    auto data = build_get(*deps.apt, d.package.url(), false, missing);
    if (!data) return data.error();
    if (data->size() != d.package.size || util::sha256_hex(*data) != d.package.sha256)
      return util::Error{d.package.url() +
                             " is not the file its repository's Packages index "
                             "lists (size or SHA256 differ)",
                         "the repository changed while reading it, or something between changed "
                         "the file; run bundle build again",
                         util::Error::Kind::Remote};
    if (auto m = util::make_directories(fs::path(path).parent_path().string()); !m.ok())
      return m.error();
    if (auto w = util::write_file_atomic(path, *data); !w.ok()) return w.error();
    ++out.fetched;
    out.fetched_bytes += data->size();
    progress("fetched",
             d.path + " (" + util::format_bytes(static_cast<double>(data->size())) + ")");
    b.files.push_back(std::move(f));
  }

  if (!deps.registry) return util::Error{"no HTTP client for the registries", ""};
  BlobStore store(work + "/blobs");
  std::set<std::string> archs;
  for (const auto& p : r.platforms) archs.insert(p.arch);
  PullOptions po;
  po.archs.assign(archs.begin(), archs.end());
  po.scheme = deps.registry_scheme;
  if (auto m = util::make_directories(r.out_dir + "/images"); !m.ok()) return m.error();
  for (const auto& i : plan.images) {
    std::string path = r.out_dir + "/" + i.path;
    if (i.kept && build_file_matches(path, i.kept_sha256, i.kept_bytes)) {
      ++out.kept;
      progress("kept", i.path);
      b.files.push_back({i.path, FileKind::Image, "", "", i.image, i.kept_sha256, i.kept_bytes});
      continue;
    }
    auto ref = deploy::parse_image_ref(i.pull);
    if (!ref) return ref.error();
    auto pulled = pull_image(*deps.registry, *ref, i.image, po, store);
    if (!pulled) {
      util::Error e = pulled.error();
      if (i.pull != i.image) e.message = i.image + " (through " + plan.mirror + "): " + e.message;
      return e;
    }
    if (auto w = write_image_tar(*pulled, store, path); !w.ok()) return w.error();
    auto d = digest_file(path);
    if (!d) return d.error();
    record[i.path] = {
        {"image", i.image}, {"pull", i.pull}, {"sha256", d->sha256}, {"bytes", d->bytes}};
    if (auto w = util::write_file_atomic(work + "/images.json", util::dump_json(record, 2));
        !w.ok())
      return w.error();
    ++out.fetched;
    out.fetched_bytes += pulled->fetched_bytes;
    progress("fetched", i.path + " (" + i.pull + ", " +
                            util::format_bytes(static_cast<double>(d->bytes)) + ")");
    b.files.push_back({i.path, FileKind::Image, "", "", i.image, d->sha256, d->bytes});
  }

  // What an earlier build left that this bundle does not hold, then the
  // work directory; the manifest last.
  std::set<std::string> keep;
  for (const auto& f : b.files) keep.insert(f.path);
  for (const char* top : {"debs", "images"}) {
    std::vector<fs::path> gone;
    for (auto it = fs::recursive_directory_iterator(r.out_dir + "/" + top, ec);
         !ec && it != fs::end(it); it.increment(ec)) {
      std::string rel = fs::relative(it->path(), r.out_dir, ec).generic_string();
      if (!it->is_directory() && !keep.count(rel)) gone.push_back(it->path());
    }
    for (const auto& g : gone) {
      fs::remove(g, ec);
      ++out.removed;
      progress("removed", fs::relative(g, r.out_dir, ec).generic_string());
    }
  }
  fs::remove_all(work, ec);
  if (ec) return util::Error{"cannot remove " + work + ": " + ec.message(), ""};
  if (auto w = util::write_file_atomic(r.out_dir + "/" + kManifestFile, manifest_json(b)); !w.ok())
    return w.error();
  return out;
}

}  // namespace pai::bundle
