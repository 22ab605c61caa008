#include "bundle/oci.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "util/json.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace pai::bundle {

namespace {

constexpr const char* kOciIndex = "application/vnd.oci.image.index.v1+json";
constexpr const char* kDockerList = "application/vnd.docker.distribution.manifest.list.v2+json";
constexpr const char* kOciManifest = "application/vnd.oci.image.manifest.v1+json";
constexpr const char* kDockerManifest = "application/vnd.docker.distribution.manifest.v2+json";

bool oci_is_index(const std::string& mt) {
  return mt == kOciIndex || mt == kDockerList;
}

std::string oci_digest_of(const std::string& data) {
  return "sha256:" + util::sha256_hex(data);
}

// The value of one parameter of a WWW-Authenticate challenge.
std::string oci_challenge_param(const std::string& header, const std::string& name) {
  auto at = header.find(name + "=\"");
  if (at == std::string::npos) return "";
  at += name.size() + 2;
  auto end = header.find('"', at);
  return end == std::string::npos ? "" : header.substr(at, end - at);
}

// One repository of one registry: GETs with the token flow and blob redirects.
class OciSession {
 public:
  OciSession(http::Client& c, std::string base, std::string repo)
      : c_(c), base_(std::move(base)), repo_(std::move(repo)) {}

  util::Result<http::Response> get(const std::string& path, const std::string& accept) {
    std::string url = base_ + "/v2/" + repo_ + path;
    for (int attempt = 0; attempt < 2; ++attempt) {
      http::Request r;
      r.url = url;
      if (!accept.empty()) r.headers.push_back({"Accept", accept});
      if (!token_.empty()) r.headers.push_back({"Authorization", "Bearer " + token_});
      auto res = c_.send(r);
      if (res.error == http::ErrorKind::Redirect) return follow(res.response.header("location"));
      if (!res.ok())
        return util::Error{"GET " + http::redact_url(url) + ": " + res.message, "",
                           util::Error::Kind::Remote};
      if (res.response.status == 401 && attempt == 0 && token_.empty()) {
        if (auto t = authenticate(res.response.header("www-authenticate")); !t.ok())
          return t.error();
        continue;
      }
      if (res.response.status != 200)
        return util::Error{
            "GET " + http::redact_url(url) + " answered " + std::to_string(res.response.status) +
                " " + std::string(http::reason_phrase(res.response.status)),
            res.response.status == 404 ? "the registry has no such image or tag" : "",
            util::Error::Kind::Remote};
      return std::move(res.response);
    }
    return util::Error{"GET " + http::redact_url(url) + ": still 401 with a token", "",
                       util::Error::Kind::Remote};
  }

 private:
  // A blob's redirect (to a CDN) is followed once, without the token.
  util::Result<http::Response> follow(const std::string& location) {
    if (location.empty())
      return util::Error{"a redirect without a Location", "", util::Error::Kind::Remote};
    std::string url = location;
    if (url[0] == '/') url = base_ + url;
    http::Request r;
    r.url = url;
    auto res = c_.send(r);
    if (!res.ok() || res.response.status != 200)
      return util::Error{"GET " + http::redact_url(url) + ": " +
                             (res.ok() ? std::to_string(res.response.status) : res.message),
                         "", util::Error::Kind::Remote};
    return std::move(res.response);
  }

  util::Result<void> authenticate(const std::string& challenge) {
    if (challenge.rfind("Bearer ", 0) != 0)
      return util::Error{base_ + " asks for credentials (" +
                             challenge.substr(0, challenge.find(' ')) +
                             "), which bundle build "
                             "does not send",
                         "pull through a registry mirror that needs none (image_registry_mirror)",
                         util::Error::Kind::Remote};
    std::string realm = oci_challenge_param(challenge, "realm");
    std::string service = oci_challenge_param(challenge, "service");
    std::string scope = oci_challenge_param(challenge, "scope");
    if (scope.empty()) scope = "repository:" + repo_ + ":pull";
    if (realm.empty())
      return util::Error{base_ + ": a Bearer challenge without a realm", "",
                         util::Error::Kind::Remote};
    std::string url = realm + (realm.find('?') == std::string::npos ? "?" : "&") +
                      http::form_encode({{"service", service}, {"scope", scope}});
    http::Request r;
    r.url = url;
    auto res = c_.send(r);
    if (!res.ok() || res.response.status != 200)
      return util::Error{"the token of " + repo_ + " from " + http::host_of(realm) + ": " +
                             (res.ok() ? std::to_string(res.response.status) : res.message),
                         "", util::Error::Kind::Remote};
    auto j = util::parse_json_or_discarded(res.response.body);
    if (j.is_object() && j.contains("token") && j["token"].is_string())
      token_ = j["token"].get<std::string>();
    else if (j.is_object() && j.contains("access_token") && j["access_token"].is_string())
      token_ = j["access_token"].get<std::string>();
    if (token_.empty())
      return util::Error{http::host_of(realm) + " gave no token for " + repo_, "",
                         util::Error::Kind::Remote};
    return {};
  }

  http::Client& c_;
  std::string base_, repo_, token_;
};

util::Result<std::string> oci_fetch_blob(OciSession& s, BlobStore& store, const std::string& digest,
                                         const std::string& accept, bool manifest,
                                         uint64_t& fetched) {
  if (store.has(digest)) return store.get(digest);
  auto r = s.get((manifest ? "/manifests/" : "/blobs/") + digest, accept);
  if (!r) return r.error();
  fetched += r->body.size();
  if (auto p = store.put(digest, r->body); !p.ok()) return p.error();
  return std::move(r->body);
}

util::Result<void> oci_add_entry(struct archive* a, const std::string& name,
                                 const std::string& data, bool dir = false) {
  std::unique_ptr<struct archive_entry, void (*)(struct archive_entry*)> e(archive_entry_new(),
                                                                           archive_entry_free);
  archive_entry_set_pathname(e.get(), name.c_str());
  archive_entry_set_filetype(e.get(), dir ? AE_IFDIR : AE_IFREG);
  archive_entry_set_perm(e.get(), dir ? 0755 : 0644);
  archive_entry_set_size(e.get(), dir ? 0 : static_cast<la_int64_t>(data.size()));
  archive_entry_set_mtime(e.get(), 0, 0);
  if (archive_write_header(a, e.get()) != ARCHIVE_OK)
    return util::Error{std::string("writing the image tar: ") + archive_error_string(a), ""};
  for (size_t off = 0; off < data.size();) {
    auto n = archive_write_data(a, data.data() + off, std::min<size_t>(data.size() - off, 1 << 20));
    if (n <= 0)
      return util::Error{std::string("writing the image tar: ") + archive_error_string(a), ""};
    off += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace

std::string BlobStore::path_of(const std::string& digest) const {
  auto colon = digest.find(':');
  return dir_ + "/" + digest.substr(0, colon) + "/" + digest.substr(colon + 1);
}

bool BlobStore::has(const std::string& digest) const {
  return util::is_regular_file(path_of(digest));
}

util::Result<void> BlobStore::put(const std::string& digest, const std::string& data) {
  if (digest.rfind("sha256:", 0) != 0)
    return util::Error{"unsupported digest " + digest, "", util::Error::Kind::Remote};
  std::string got = oci_digest_of(data);
  if (got != digest)
    return util::Error{"a blob's content is " + got + ", not the " + digest + " it was asked for",
                       "the registry or a proxy changed it; fetch again",
                       util::Error::Kind::Remote};
  std::string path = path_of(digest);
  if (auto m = util::make_directories(std::filesystem::path(path).parent_path().string()); !m.ok())
    return m;
  return util::write_file_atomic(path, data);
}

util::Result<std::string> BlobStore::get(const std::string& digest) const {
  return util::read_file(path_of(digest), size_t{8} << 30);
}

std::string registry_host(const deploy::ImageRef& ref) {
  return ref.registry == "docker.io" ? "registry-1.docker.io" : ref.registry;
}

util::Result<PulledImage> pull_image(http::Client& client, const deploy::ImageRef& from,
                                     const std::string& name, const PullOptions& o,
                                     BlobStore& store) {
  OciSession s(client, o.scheme + "://" + registry_host(from), from.repository);
  PulledImage img;
  img.name = name;
  img.source = from.str();
  const std::string accept =
      std::string(kOciIndex) + ", " + kDockerList + ", " + kOciManifest + ", " + kDockerManifest;
  std::string top;
  if (!from.digest.empty()) {
    auto b = oci_fetch_blob(s, store, from.digest, accept, true, img.fetched_bytes);
    if (!b) return b.error();
    top = std::move(*b);
  } else {
    auto r = s.get("/manifests/" + from.tag, accept);
    if (!r) return r.error();
    top = std::move(r->body);
    img.fetched_bytes += top.size();
    std::string said = r->header("docker-content-digest");
    if (!said.empty() && said != oci_digest_of(top))
      return util::Error{img.source +
                             ": the manifest's content is not the digest the registry "
                             "named (" +
                             said + ")",
                         "", util::Error::Kind::Remote};
  }
  auto j = util::parse_json_or_discarded(top);
  if (!j.is_object())
    return util::Error{img.source + ": the manifest is not JSON", "", util::Error::Kind::Remote};
  std::string mt = j.value("mediaType", "");
  if (mt.empty()) mt = j.contains("manifests") ? kOciIndex : kOciManifest;

  std::vector<nlohmann::json> manifests;  // descriptors of the image manifests kept
  if (oci_is_index(mt)) {
    nlohmann::json kept = nlohmann::json::array();
    size_t total = 0;
    for (const auto& d : j.value("manifests", nlohmann::json::array())) {
      ++total;
      if (!d.is_object() || !d.contains("platform") || !d["platform"].is_object()) continue;
      const auto& p = d["platform"];
      if (p.value("os", "") != "linux") continue;
      if (std::find(o.archs.begin(), o.archs.end(), p.value("architecture", "")) == o.archs.end())
        continue;
      kept.push_back(d);
    }
    if (kept.empty())
      return util::Error{img.source + " has no image for linux/" + util::join(o.archs, ", linux/"),
                         "the bundle's platforms must be ones the image is built for",
                         util::Error::Kind::Remote};
    for (const auto& d : kept) manifests.push_back(d);
    if (kept.size() != total) {
      j["manifests"] = kept;
      top = util::dump_json(j);
    }
  }
  img.media_type = mt;
  img.digest = oci_digest_of(top);
  img.size = top.size();
  if (!store.has(img.digest))
    if (auto p = store.put(img.digest, top); !p.ok()) return p.error();
  img.blobs.push_back(img.digest);

  std::vector<std::pair<std::string, std::string>> todo;  // (digest, manifest text)
  if (oci_is_index(mt)) {
    for (const auto& d : manifests) {
      std::string digest = d.value("digest", "");
      auto b = oci_fetch_blob(s, store, digest, accept, true, img.fetched_bytes);
      if (!b) return b.error();
      img.blobs.push_back(digest);
      todo.emplace_back(digest, std::move(*b));
    }
  } else {
    todo.emplace_back(img.digest, top);
  }
  std::set<std::string> seen(img.blobs.begin(), img.blobs.end());
  for (const auto& [digest, text] : todo) {
    auto m = util::parse_json_or_discarded(text);
    if (!m.is_object() || !m.contains("config") || !m.contains("layers"))
      return util::Error{img.source + ": manifest " + digest + " has no config or layers", "",
                         util::Error::Kind::Remote};
    std::vector<std::string> blobs = {m["config"].value("digest", "")};
    for (const auto& l : m["layers"])
      if (l.is_object()) blobs.push_back(l.value("digest", ""));
    for (const auto& b : blobs) {
      if (!seen.insert(b).second) continue;
      auto got = store.has(b) ? util::Result<std::string>(std::string())
                              : oci_fetch_blob(s, store, b, "", false, img.fetched_bytes);
      if (!got) return got.error();
      img.blobs.push_back(b);
    }
  }
  return img;
}

util::Result<void> write_image_tar(const PulledImage& img, const BlobStore& store,
                                   const std::string& path) {
  std::string tag = img.name.substr(img.name.rfind(':') + 1);
  nlohmann::json index = {
      {"schemaVersion", 2},
      {"manifests", nlohmann::json::array({{{"mediaType", img.media_type},
                                            {"digest", img.digest},
                                            {"size", img.size},
                                            {"annotations",
                                             {{"io.containerd.image.name", img.name},
                                              {"org.opencontainers.image.ref.name", tag}}}}})}};
  std::string part = path + ".part";
  struct archive* a = archive_write_new();
  std::unique_ptr<struct archive, int (*)(struct archive*)> guard(a, archive_write_free);
  if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
      archive_write_open_filename(a, part.c_str()) != ARCHIVE_OK)
    return util::Error{"cannot write " + part + ": " + archive_error_string(a), ""};
  auto add = [&](const std::string& n, const std::string& d, bool dir = false) {
    return oci_add_entry(a, n, d, dir);
  };
  if (auto r = add("oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}"); !r.ok()) return r;
  if (auto r = add("index.json", util::dump_json(index)); !r.ok()) return r;
  if (auto r = add("blobs/", "", true); !r.ok()) return r;
  if (auto r = add("blobs/sha256/", "", true); !r.ok()) return r;
  std::vector<std::string> blobs = img.blobs;
  std::sort(blobs.begin(), blobs.end());
  for (const auto& b : blobs) {
    auto data = store.get(b);
    if (!data) return data.error();
    if (auto r = add("blobs/sha256/" + b.substr(7), *data); !r.ok()) return r;
  }
  if (archive_write_close(a) != ARCHIVE_OK)
    return util::Error{"cannot write " + part + ": " + archive_error_string(a), ""};
  std::error_code ec;
  std::filesystem::rename(part, path, ec);
  if (ec) return util::Error{"cannot rename " + part + ": " + ec.message(), ""};
  return {};
}

}  // namespace pai::bundle
