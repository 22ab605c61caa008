#include "deploy/backup_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <utility>

#include "util/fs.h"
#include "util/json.h"
#include "util/sha256.h"

namespace pai::deploy {

namespace {

util::Error backup_archive_error(std::string message, std::string hint = {}) {
  util::Error e{std::move(message), std::move(hint)};
  e.kind = util::Error::Kind::Input;
  return e;
}

nlohmann::json backup_archive_hosts_json(const std::vector<BackupHost>& hosts) {
  auto a = nlohmann::json::array();
  for (const auto& h : hosts) a.push_back({{"name", h.name}, {"address", h.address}});
  return a;
}

bool backup_archive_hex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The string at j[key], or an error naming the field.
util::Result<std::string> backup_archive_string(const nlohmann::json& j, const char* key,
                                                const std::string& where, bool required = true) {
  auto it = j.find(key);
  if (it == j.end()) {
    if (!required) return std::string();
    return backup_archive_error(where + ": \"" + key + "\" is missing");
  }
  if (!it->is_string()) return backup_archive_error(where + ": \"" + key + "\" is not a string");
  return it->get<std::string>();
}

util::Result<std::vector<std::string>> backup_archive_strings(const nlohmann::json& j,
                                                              const char* key,
                                                              const std::string& where) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end()) return out;
  if (!it->is_array()) return backup_archive_error(where + ": \"" + key + "\" is not a list");
  for (const auto& v : *it) {
    if (!v.is_string())
      return backup_archive_error(where + ": \"" + key + "\" holds something not a string");
    out.push_back(v.get<std::string>());
  }
  return out;
}

util::Result<std::vector<BackupHost>> backup_archive_read_hosts(const nlohmann::json& j,
                                                                const char* key) {
  std::vector<BackupHost> out;
  auto it = j.find(key);
  if (it == j.end()) return out;
  std::string where = std::string("manifest.json: ") + key;
  if (!it->is_array()) return backup_archive_error(where + " is not a list");
  for (const auto& h : *it) {
    if (!h.is_object()) return backup_archive_error(where + " holds something not an object");
    auto n = backup_archive_string(h, "name", where);
    if (!n.ok()) return std::move(n).error();
    auto a = backup_archive_string(h, "address", where);
    if (!a.ok()) return std::move(a).error();
    out.push_back({*n, *a});
  }
  return out;
}

// libarchive's writer appending to a string.
la_ssize_t backup_archive_write_cb(struct archive*, void* data, const void* buf, size_t n) {
  static_cast<std::string*>(data)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

struct BackupArchiveFree {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
using BackupArchiveReader = std::unique_ptr<struct archive, BackupArchiveFree>;

std::string backup_archive_why(struct archive* a) {
  const char* s = archive_error_string(a);
  return s ? s : "unreadable";
}

// One member's data, at most `limit` bytes (the header's size, already checked).
util::Result<std::string> backup_archive_data(struct archive* a, const std::string& name,
                                              int64_t size) {
  std::string data;
  data.reserve(static_cast<size_t>(std::min<int64_t>(size, 64 << 20)));
  char buf[65536];
  for (;;) {
    la_ssize_t n = archive_read_data(a, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0)
      return backup_archive_error("the archive is truncated or corrupt in member " + name + " (" +
                                      backup_archive_why(a) + ")",
                                  "the file was cut short or damaged; use another copy");
    data.append(buf, static_cast<size_t>(n));
    if (static_cast<int64_t>(data.size()) > size)
      return backup_archive_error("member " + name + " holds more than its header says");
  }
  if (static_cast<int64_t>(data.size()) != size)
    return backup_archive_error("the archive is truncated in member " + name + " (" +
                                    std::to_string(data.size()) + " of " + std::to_string(size) +
                                    " bytes)",
                                "the file was cut short; use another copy");
  return data;
}

uint64_t backup_archive_limit(const std::string& name, const ArchiveLimits& l) {
  if (name == kManifestMember) return l.max_manifest_bytes;
  if (name == kSnapshotMember) return l.max_snapshot_bytes;
  if (name.rfind("database/", 0) == 0) return l.max_database_bytes;
  return l.max_member_bytes;
}

util::Result<BackupArchive> backup_archive_read(struct archive* a, const ArchiveLimits& limits) {
  BackupArchive out;
  bool have_manifest = false;
  std::set<std::string> expected;
  std::map<std::string, const BackupMemberInfo*> info;
  size_t count = 0;
  std::string last = "(the start)";
  for (;;) {
    struct archive_entry* e = nullptr;
    int r = archive_read_next_header(a, &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) {
      if (count == 0)
        return backup_archive_error("not a backup archive (" + backup_archive_why(a) + ")",
                                    "paictl backup writes a .tar.gz whose first member is "
                                    "manifest.json");
      return backup_archive_error("the archive is truncated or corrupt after member " + last +
                                      " (" + backup_archive_why(a) + ")",
                                  "the file was cut short or damaged; use another copy");
    }
    if (++count > limits.max_members)
      return backup_archive_error("the archive holds more than " +
                                  std::to_string(limits.max_members) + " members");
    const char* p = archive_entry_pathname(e);
    std::string name = p ? p : "";
    if (std::string why = unsafe_member_name(name); !why.empty())
      return backup_archive_error("member \"" + name.substr(0, 300) + "\" is refused: " + why);
    if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e) != nullptr ||
        archive_entry_symlink(e) != nullptr)
      return backup_archive_error("member " + name + " is not a regular file",
                                  "a backup archive holds regular files only");
    if (!archive_entry_size_is_set(e))
      return backup_archive_error("member " + name + " has no size");
    int64_t size = archive_entry_size(e);
    uint64_t limit = backup_archive_limit(name, limits);
    if (size < 0 || static_cast<uint64_t>(size) > limit)
      return backup_archive_error("member " + name + " is larger than " + std::to_string(limit) +
                                  " bytes (" + std::to_string(size) + ")");
    if (!have_manifest) {
      if (name != kManifestMember)
        return backup_archive_error("the first member is " + name + ", not manifest.json",
                                    "not an archive paictl backup wrote");
      auto text = backup_archive_data(a, name, size);
      if (!text.ok()) return std::move(text).error();
      auto m = parse_manifest(*text);
      if (!m.ok()) return std::move(m).error();
      out.manifest = std::move(m).value();
      out.manifest_text = std::move(text).value();
      have_manifest = true;
      for (const auto& mi : out.manifest.members) {
        expected.insert(mi.name);
        info[mi.name] = &mi;
      }
      last = name;
      continue;
    }
    auto it = info.find(name);
    if (it == info.end()) {
      if (name == kManifestMember || out.members.count(name))
        return backup_archive_error("member " + name + " appears twice");
      return backup_archive_error("member " + name + " is not listed in manifest.json",
                                  "the archive was changed after paictl backup wrote it");
    }
    if (static_cast<uint64_t>(size) != it->second->bytes)
      return backup_archive_error("member " + name + " has " + std::to_string(size) +
                                      " bytes, manifest.json says " +
                                      std::to_string(it->second->bytes),
                                  "the archive was changed after paictl backup wrote it");
    auto data = backup_archive_data(a, name, size);
    if (!data.ok()) return std::move(data).error();
    if (util::sha256_hex(*data) != it->second->sha256)
      return backup_archive_error("member " + name +
                                      " does not match its checksum in manifest.json (sha256 " +
                                      it->second->sha256.substr(0, 12) + "...)",
                                  "the archive was changed or damaged; use another copy");
    out.members.emplace(name, std::move(data).value());
    info.erase(it);
    last = name;
  }
  if (!have_manifest)
    return backup_archive_error("the archive holds no manifest.json",
                                "not an archive paictl backup wrote");
  if (!info.empty())
    return backup_archive_error(
        "member " + info.begin()->first + " of manifest.json is missing (the archive is truncated)",
        "the file was cut short; use another copy");
  return out;
}

// Whether the gzip stream fed to `next` is whole: it ends (its CRC and size
// checked by zlib) exactly where the data ends. libarchive reads the members
// but does not notice a stream cut after the last of them.
class BackupArchiveGzipCheck {
 public:
  BackupArchiveGzipCheck() { ok_ = inflateInit2(&z_, 15 + 16) == Z_OK; }
  ~BackupArchiveGzipCheck() { inflateEnd(&z_); }
  BackupArchiveGzipCheck(const BackupArchiveGzipCheck&) = delete;
  BackupArchiveGzipCheck& operator=(const BackupArchiveGzipCheck&) = delete;
  // Feeds data; false once the stream is known to be bad.
  bool feed(std::string_view data) {
    if (!ok_) return false;
    if (data.empty()) return true;
    if (ended_) return ok_ = false;  // bytes after the end
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z_.avail_in = static_cast<uInt>(data.size());
    unsigned char out[65536];
    while (z_.avail_in > 0 && !ended_) {
      z_.next_out = out;
      z_.avail_out = sizeof out;
      int r = inflate(&z_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) {
        ended_ = true;
        if (z_.avail_in > 0) return ok_ = false;
      } else if (r != Z_OK) {
        return ok_ = false;
      }
    }
    return true;
  }
  bool whole() const { return ok_ && ended_; }

 private:
  z_stream z_{};
  bool ok_ = false;
  bool ended_ = false;
};

util::Result<void> backup_archive_gzip_whole(std::string_view bytes) {
  BackupArchiveGzipCheck g;
  size_t off = 0;
  while (off < bytes.size()) {
    size_t n = std::min<size_t>(bytes.size() - off, 1 << 20);
    if (!g.feed(bytes.substr(off, n))) break;
    off += n;
  }
  if (!g.whole())
    return backup_archive_error(
        "the archive is truncated or corrupt (its gzip stream does not end as written)",
        "the file was cut short or damaged; use another copy");
  return {};
}

}  // namespace

std::string unsafe_member_name(std::string_view name) {
  if (name.empty()) return "an empty name";
  if (name.size() > 255) return "a name longer than 255 bytes";
  if (name.front() == '/') return "an absolute path";
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part.empty()) return "an empty path component";
    if (part == "." || part == "..") return "a '.' or '..' path component";
    for (char c : part)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '.' || c == '_' || c == '-'))
        return "a character other than letters, digits, '.', '_', '-' and '/'";
    start = end + 1;
  }
  return {};
}

std::string manifest_json(const BackupManifest& m) {
  nlohmann::json j;
  j["format"] = m.format;
  j["cluster"] = m.cluster;
  j["masters"] = backup_archive_hosts_json(m.masters);
  j["nodes"] = backup_archive_hosts_json(m.nodes);
  j["kubernetes_version"] = m.kubernetes_version;
  j["etcd_version"] = m.etcd_version;
  j["time"] = m.time;
  j["time_utc"] = m.time_utc;
  j["database"] = m.database;
  j["etcd"] = {{"name", m.etcd.name},
               {"data_dir", m.etcd.data_dir},
               {"initial_cluster", m.etcd.initial_cluster},
               {"initial_advertise_peer_urls", m.etcd.peer_urls},
               {"endpoint", m.etcd.endpoint}};
  j["objects"] = {{"namespaces", m.namespaces}, {"configmaps", m.configmaps}};
  auto members = nlohmann::json::array();
  for (const auto& mi : m.members)
    members.push_back({{"name", mi.name}, {"bytes", mi.bytes}, {"sha256", mi.sha256}});
  j["members"] = members;
  return util::dump_json(j, 2) + "\n";
}

util::Result<BackupManifest> parse_manifest(std::string_view text) {
  auto parsed = util::parse_json(text);
  if (!parsed.ok())
    return backup_archive_error("manifest.json is not JSON (line " +
                                std::to_string(parsed.error().line) + ": " +
                                parsed.error().message + ")");
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return backup_archive_error("manifest.json is not a JSON object");
  BackupManifest m;
  const std::string w = "manifest.json";
  auto format = backup_archive_string(j, "format", w);
  if (!format.ok()) return std::move(format).error();
  if (*format != kBackupFormat)
    return backup_archive_error(
        "manifest.json: format \"" + format->substr(0, 80) + "\" is not " + kBackupFormat,
        "an archive of another tool, or of a newer paictl");
  auto cluster = backup_archive_string(j, "cluster", w);
  if (!cluster.ok()) return std::move(cluster).error();
  m.cluster = *cluster;
  for (auto [key, field] :
       {std::pair{"kubernetes_version", &m.kubernetes_version},
        std::pair{"etcd_version", &m.etcd_version}, std::pair{"time_utc", &m.time_utc},
        std::pair{"database", &m.database}}) {
    auto s = backup_archive_string(j, key, w, false);
    if (!s.ok()) return std::move(s).error();
    *field = *s;
  }
  if (auto t = j.find("time"); t != j.end()) {
    if (!t->is_number()) return backup_archive_error("manifest.json: \"time\" is not a number");
    m.time = t->get<double>();
  }
  auto masters = backup_archive_read_hosts(j, "masters");
  if (!masters.ok()) return std::move(masters).error();
  m.masters = std::move(masters).value();
  auto nodes = backup_archive_read_hosts(j, "nodes");
  if (!nodes.ok()) return std::move(nodes).error();
  m.nodes = std::move(nodes).value();
  if (auto e = j.find("etcd"); e != j.end()) {
    if (!e->is_object()) return backup_archive_error("manifest.json: \"etcd\" is not an object");
    for (auto [key, field] :
         {std::pair{"name", &m.etcd.name}, std::pair{"data_dir", &m.etcd.data_dir},
          std::pair{"initial_cluster", &m.etcd.initial_cluster},
          std::pair{"initial_advertise_peer_urls", &m.etcd.peer_urls},
          std::pair{"endpoint", &m.etcd.endpoint}}) {
      auto s = backup_archive_string(*e, key, w + ": etcd", false);
      if (!s.ok()) return std::move(s).error();
      *field = *s;
    }
  }
  if (auto o = j.find("objects"); o != j.end()) {
    if (!o->is_object()) return backup_archive_error("manifest.json: \"objects\" is not an object");
    auto ns = backup_archive_strings(*o, "namespaces", w + ": objects");
    if (!ns.ok()) return std::move(ns).error();
    m.namespaces = std::move(ns).value();
    auto cms = backup_archive_strings(*o, "configmaps", w + ": objects");
    if (!cms.ok()) return std::move(cms).error();
    m.configmaps = std::move(cms).value();
  }
  auto members = j.find("members");
  if (members == j.end() || !members->is_array())
    return backup_archive_error("manifest.json: \"members\" is missing or not a list");
  std::set<std::string> seen;
  for (const auto& mj : *members) {
    if (!mj.is_object())
      return backup_archive_error("manifest.json: \"members\" holds something not an object");
    BackupMemberInfo mi;
    auto name = backup_archive_string(mj, "name", w + ": members");
    if (!name.ok()) return std::move(name).error();
    mi.name = *name;
    if (std::string why = unsafe_member_name(mi.name); !why.empty() || mi.name == kManifestMember)
      return backup_archive_error("manifest.json: member \"" + mi.name.substr(0, 300) +
                                  "\" is refused: " + (why.empty() ? "the manifest itself" : why));
    if (!seen.insert(mi.name).second)
      return backup_archive_error("manifest.json: member " + mi.name + " is listed twice");
    auto b = mj.find("bytes");
    if (b == mj.end() || !b->is_number_unsigned())
      return backup_archive_error("manifest.json: member " + mi.name +
                                  ": \"bytes\" is missing or not a count");
    mi.bytes = b->get<uint64_t>();
    auto sha = backup_archive_string(mj, "sha256", w + ": member " + mi.name);
    if (!sha.ok()) return std::move(sha).error();
    if (!backup_archive_hex64(*sha))
      return backup_archive_error("manifest.json: member " + mi.name +
                                  ": \"sha256\" is not 64 lower-case hex digits");
    mi.sha256 = *sha;
    m.members.push_back(std::move(mi));
  }
  return m;
}

namespace {

using BackupArchiveViews = std::vector<std::pair<std::string_view, std::string_view>>;

util::Result<std::string> backup_archive_write(const BackupArchiveViews& members) {
  std::string out;
  struct archive* a = archive_write_new();
  std::unique_ptr<struct archive, int (*)(struct archive*)> guard(a, archive_write_free);
  if (archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
      archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
      // The gzip stream ends the file: no zeros padding it to a block after.
      archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
      archive_write_open(a, &out, nullptr, backup_archive_write_cb, nullptr) != ARCHIVE_OK)
    return util::Error{"the archive could not be started: " + backup_archive_why(a), {}};
  for (const auto& [name, data] : members) {
    struct archive_entry* e = archive_entry_new();
    std::string path(name);
    archive_entry_set_pathname(e, path.c_str());
    archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0600);
    archive_entry_set_mtime(e, 0, 0);
    int r = archive_write_header(a, e);
    archive_entry_free(e);
    if (r != ARCHIVE_OK) return util::Error{"member " + path + ": " + backup_archive_why(a), {}};
    size_t off = 0;
    while (off < data.size()) {
      la_ssize_t n =
          archive_write_data(a, data.data() + off, std::min<size_t>(data.size() - off, 1 << 20));
      if (n <= 0) return util::Error{"member " + path + ": " + backup_archive_why(a), {}};
      off += static_cast<size_t>(n);
    }
  }
  if (archive_write_close(a) != ARCHIVE_OK)
    return util::Error{"the archive could not be finished: " + backup_archive_why(a), {}};
  return out;
}

}  // namespace

util::Result<std::string> write_raw_archive(
    const std::vector<std::pair<std::string, std::string>>& members) {
  BackupArchiveViews v;
  for (const auto& [n, d] : members) v.emplace_back(n, d);
  return backup_archive_write(v);
}

util::Result<std::string> write_backup_archive(
    BackupManifest& manifest, const std::vector<std::pair<std::string, std::string>>& members) {
  manifest.members.clear();
  std::set<std::string> names;
  for (const auto& [name, data] : members) {
    if (std::string why = unsafe_member_name(name); !why.empty())
      return backup_archive_error("member \"" + name + "\": " + why);
    if (name == kManifestMember || !names.insert(name).second)
      return backup_archive_error("member " + name + " is given twice");
    manifest.members.push_back({name, data.size(), util::sha256_hex(data)});
  }
  std::string text = manifest_json(manifest);
  BackupArchiveViews all;
  all.emplace_back(kManifestMember, text);
  for (const auto& [n, d] : members) all.emplace_back(n, d);
  return backup_archive_write(all);
}

util::Result<BackupArchive> read_backup_archive(std::string_view bytes,
                                                const ArchiveLimits& limits) {
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x1f ||
      static_cast<unsigned char>(bytes[1]) != 0x8b)
    return backup_archive_error("not a backup archive (not gzip-compressed)",
                                "paictl backup writes a .tar.gz whose first member is "
                                "manifest.json");
  BackupArchiveReader a(archive_read_new());
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
    return backup_archive_error("not a backup archive (" + backup_archive_why(a.get()) + ")",
                                "paictl backup writes a .tar.gz whose first member is "
                                "manifest.json");
  auto r = backup_archive_read(a.get(), limits);
  if (!r.ok()) return r;
  if (auto g = backup_archive_gzip_whole(bytes); !g.ok()) return std::move(g).error();
  return r;
}

util::Result<BackupArchive> read_backup_archive_file(const std::string& path,
                                                     const ArchiveLimits& limits) {
  if (auto c = util::check_regular_file(path); !c.ok())
    return backup_archive_error(path + ": " + c.error().message);
  BackupArchiveReader a(archive_read_new());
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK)
    return backup_archive_error(
        path + ": not a backup archive (" + backup_archive_why(a.get()) + ")",
        "paictl backup writes a .tar.gz whose first member is "
        "manifest.json");
  auto r = backup_archive_read(a.get(), limits);
  if (r.ok()) {
    // The whole file again, through zlib: it must end where its gzip stream does.
    std::FILE* f = std::fopen(path.c_str(), "rb");
    BackupArchiveGzipCheck g;
    bool good = f != nullptr;
    if (f) {
      std::vector<char> buf(1 << 20);
      size_t n;
      while (good && (n = std::fread(buf.data(), 1, buf.size(), f)) > 0)
        good = g.feed({buf.data(), n});
      good = good && !std::ferror(f) && g.whole();
      std::fclose(f);
    }
    if (!good)
      return backup_archive_error(
          path +
              ": the archive is truncated or corrupt (its gzip stream does not end as "
              "written)",
          "the file was cut short or damaged; use another copy");
    return r;
  }
  util::Error e = std::move(r).error();
  e.message = path + ": " + e.message;
  return e;
}

util::Result<std::map<std::string, std::string>> read_plain_tar(std::string_view bytes,
                                                                size_t max_files,
                                                                uint64_t max_bytes) {
  BackupArchiveReader a(archive_read_new());
  archive_read_support_format_tar(a.get());
  std::map<std::string, std::string> out;
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
    return backup_archive_error("not a tar stream (" + backup_archive_why(a.get()) + ")");
  for (;;) {
    struct archive_entry* e = nullptr;
    int r = archive_read_next_header(a.get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN)
      return backup_archive_error("the tar stream is truncated or corrupt (" +
                                  backup_archive_why(a.get()) + ")");
    const char* p = archive_entry_pathname(e);
    std::string name = p ? p : "";
    while (name.rfind("./", 0) == 0) name.erase(0, 2);
    if (archive_entry_filetype(e) == AE_IFDIR) continue;
    if (!name.empty() && name.back() == '/') name.pop_back();
    if (std::string why = unsafe_member_name(name); !why.empty())
      return backup_archive_error("file \"" + name.substr(0, 300) + "\" is refused: " + why);
    if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e) != nullptr)
      return backup_archive_error(name + " is not a regular file");
    if (out.size() >= max_files)
      return backup_archive_error("more than " + std::to_string(max_files) + " files");
    int64_t size = archive_entry_size(e);
    if (size < 0 || static_cast<uint64_t>(size) > max_bytes)
      return backup_archive_error(name + " is larger than " + std::to_string(max_bytes) + " bytes");
    auto data = backup_archive_data(a.get(), name, size);
    if (!data.ok()) return std::move(data).error();
    out[name] = std::move(data).value();
  }
  return out;
}

}  // namespace pai::deploy
