#include "cluster/registry.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

#include "http/client.h"
#include "util/fs.h"
#include "util/strings.h"
#include "util/yaml_emit.h"
#include "yaml/yaml.h"

namespace pai::cluster {

using Json = nlohmann::ordered_json;

namespace {

// The first lines of a registry paictl writes, and its last line: a file that
// begins with the header and has no end line was truncated. (Registries written
// before the end line existed begin with the old header and are not checked.)
constexpr const char* kRegistryHeader =
    "# paictl cluster registry, written by 'paictl cluster'. It holds access tokens:\n"
    "# keep it private (paictl writes it with mode 0600). It ends with '# end'.\n";
constexpr const char* kRegistryEnd = "# end\n";

bool registry_has_end_line(const std::string& text) {
  for (size_t at = text.find("# end"); at != std::string::npos; at = text.find("# end", at + 1))
    if ((at == 0 || text[at - 1] == '\n') &&
        (at + 5 == text.size() || text[at + 5] == '\n' || text[at + 5] == '\r'))
      return true;
  return false;
}

void problem(diag::List& out, diag::Severity sev, const std::string& code, const std::string& file,
             yaml::Mark m, std::string message, std::string hint = {}) {
  out.add(code, sev, file, m.line, m.column, std::move(message), std::move(hint));
}

Json to_json(const yaml::Node* n) {
  if (!n || n->is_null()) return nullptr;
  if (n->is_mapping()) {
    Json j = Json::object();
    for (const auto& p : n->pairs()) j[p.key->scalar()] = to_json(p.value);
    return j;
  }
  if (n->is_sequence()) {
    Json j = Json::array();
    for (const auto* i : n->items()) j.push_back(to_json(i));
    return j;
  }
  if (auto b = n->as_bool()) return *b;
  if (auto i = n->as_int()) return *i;
  if (auto d = n->as_float()) return *d;
  return n->scalar();
}

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The file a write should replace: the target of a symlink, so that a linked
// registry (dotfiles) stays linked.
std::string write_target(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf)) return buf;
  return path;
}

class FileLock {
 public:
  explicit FileLock(const std::string& path) : path_(path + ".lock") {}
  ~FileLock() {
    if (fd_ >= 0) {
      ::flock(fd_, LOCK_UN);
      ::close(fd_);
    }
  }
  util::Result<void> acquire(double timeout_s) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) return util::Error{path_ + ": " + std::strerror(errno), {}};
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR)
        return util::Error{path_ + ": " + std::strerror(errno), {}};
      if (std::chrono::steady_clock::now() > deadline)
        return util::Error{"another paictl process holds " + path_ + " for more than " +
                               std::to_string(static_cast<int>(timeout_s)) + " s",
                           {}};
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return {};
  }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

bool valid_cluster_name(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  char f = name[0];
  if (!((f >= 'a' && f <= 'z') || (f >= 'A' && f <= 'Z') || (f >= '0' && f <= '9'))) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-' || c == '.'))
      return false;
  return name != "auto";
}

Cluster* Config::find(const std::string& name) {
  for (auto& c : clusters)
    if (c.name == name) return &c;
  return nullptr;
}

bool Config::remove(const std::string& name) {
  size_t before = clusters.size();
  std::erase_if(clusters, [&](const Cluster& c) { return c.name == name; });
  return clusters.size() != before;
}

std::optional<Config> parse_config(const std::string& text, const std::string& path,
                                   diag::List& out) {
  // A registry paictl wrote ends with the line "# end". A file with paictl's
  // header and no such line anywhere was cut short (a full disk, a copy that
  // stopped) and its last cluster may be half there. Lines added by hand after
  // it are fine: the line is still there.
  if (text.rfind(kRegistryHeader, 0) == 0 && !registry_has_end_line(text)) {
    uint32_t lines = static_cast<uint32_t>(std::count(text.begin(), text.end(), '\n'));
    problem(out, diag::Severity::Error, "R001", path, {lines + 1, 1},
            "the registry was cut short: the line \"# end\" that paictl writes last is missing",
            "restore it from a backup, or move it away and register the clusters again");
    return std::nullopt;
  }
  Config c;
  yaml::Stream st = yaml::load(text);
  bool ok = true;
  for (const auto& w : st.warnings) {
    problem(out, diag::Severity::Error, "R002", path, w.mark, w.message, w.hint);
    ok = false;
  }
  if (st.error) {
    problem(out, diag::Severity::Error, "R001", path, st.error->mark,
            "YAML syntax error: " + st.error->message,
            "fix the file by hand, or move it away and register the clusters again");
    return std::nullopt;
  }
  if (st.documents.empty() || st.documents[0]->is_null())
    return ok ? std::optional<Config>(c) : std::nullopt;
  if (st.documents.size() > 1) {
    problem(out, diag::Severity::Error, "R002", path, st.documents[1]->mark(),
            "the registry holds several documents", "keep one");
    return std::nullopt;
  }
  const yaml::Node* root = st.documents[0];
  if (!root->is_mapping()) {
    problem(out, diag::Severity::Error, "R002", path, root->mark(),
            "the registry must be a mapping (apiVersion, current, clusters...), found " +
                root->describe());
    return std::nullopt;
  }
  auto str = [&](const yaml::Node* n, const std::string& what) -> std::optional<std::string> {
    if (!n || n->is_null()) return std::string();
    if (!n->is_scalar()) {
      problem(out, diag::Severity::Error, "R002", path, n->mark(),
              what + " must be a string, found " + n->describe());
      ok = false;
      return std::nullopt;
    }
    return n->scalar();
  };
  for (const auto& p : root->pairs()) {
    const std::string& k = p.key->scalar();
    const yaml::Node* v = p.value;
    if (k == "apiVersion" || k == "kind") {
      continue;
    } else if (k == "current") {
      if (auto s = str(v, "current")) c.current = *s;
    } else if (k == "preference") {
      std::vector<std::string> pref;
      if (v && v->is_sequence()) {
        for (const auto* i : v->items())
          if (auto s = str(i, "preference item")) pref.push_back(*s);
      } else if (v && !v->is_null()) {
        problem(out, diag::Severity::Error, "R002", path, v->mark(),
                "preference must be a list of cluster names");
        ok = false;
      }
      c.preference = pref;
    } else if (k == "clusters") {
      if (!v || v->is_null()) continue;
      if (!v->is_sequence()) {
        problem(out, diag::Severity::Error, "R002", path, v->mark(), "clusters must be a list");
        ok = false;
        continue;
      }
      for (const auto* item : v->items()) {
        if (!item->is_mapping()) {
          problem(out, diag::Severity::Error, "R002", path, item->mark(),
                  "a cluster entry must be a mapping");
          ok = false;
          continue;
        }
        Cluster cl;
        cl.source = path;
        for (const auto& f : item->pairs()) {
          const std::string& key = f.key->scalar();
          std::string where = "cluster field " + key;
          if (key == "name") {
            if (auto s = str(f.value, where)) cl.name = *s;
          } else if (key == "uri") {
            if (auto s = str(f.value, where)) cl.uri = *s;
          } else if (key == "restServer") {
            if (auto s = str(f.value, where)) cl.rest_server = *s;
          } else if (key == "user") {
            if (auto s = str(f.value, where)) cl.user = *s;
          } else if (key == "login") {
            if (auto s = str(f.value, where)) cl.login = *s;
          } else if (key == "token") {
            if (auto s = str(f.value, "a token")) cl.token = *s;
          } else if (key == "tokenFile") {
            if (auto s = str(f.value, where)) cl.token_file = *s;
          } else if (key == "caFile") {
            if (auto s = str(f.value, where)) cl.ca_file = *s;
          } else if (key == "insecure") {
            auto b = f.value ? f.value->as_bool() : std::nullopt;
            if (!b && f.value && !f.value->is_null()) {
              problem(out, diag::Severity::Error, "R002", path, f.value->mark(),
                      "insecure must be true or false");
              ok = false;
            }
            cl.insecure = b.value_or(false);
          } else if (key == "hived") {
            if (auto s = str(f.value, where)) cl.hived = *s;
          } else if (key == "version") {
            if (auto s = str(f.value, where)) cl.version = *s;
          } else if (key == "authnMethod") {
            if (auto s = str(f.value, where)) cl.authn_method = *s;
          } else if (key == "addedAt") {
            if (auto s = str(f.value, where)) cl.added_at = *s;
          } else if (key == "starred") {
            if (!f.value || f.value->is_null()) continue;
            if (!f.value->is_sequence()) {
              problem(out, diag::Severity::Error, "R002", path, f.value->mark(),
                      "starred must be a list of jobs (USER~NAME)");
              ok = false;
              continue;
            }
            for (const auto* j : f.value->items())
              if (auto s = str(j, "a starred job")) cl.starred.push_back(*s);
          } else {
            cl.extra[key] = to_json(f.value);
          }
        }
        if (cl.name.empty()) {
          problem(out, diag::Severity::Error, "R002", path, item->mark(),
                  "a cluster entry has no name");
          ok = false;
          continue;
        }
        if (cl.uri.empty() && cl.rest_server.empty()) {
          problem(out, diag::Severity::Error, "R002", path, item->mark(),
                  "cluster " + cl.name + " has no uri");
          ok = false;
        }
        // User info in a URI is never used nor shown (older registries may hold some);
        // the next change of the file drops it.
        cl.uri = http::strip_userinfo(cl.uri);
        cl.rest_server = http::strip_userinfo(cl.rest_server);
        if (cl.rest_server.empty()) cl.rest_server = cl.uri;
        cl.auth = cl.token_file.empty() ? AuthMethod::Token : AuthMethod::TokenFile;
        if (c.find(cl.name)) {
          problem(out, diag::Severity::Error, "R002", path, item->mark(),
                  "cluster " + cl.name + " is listed twice", "remove one of the entries");
          ok = false;
          continue;
        }
        c.clusters.push_back(std::move(cl));
      }
    } else {
      c.extra[k] = to_json(v);
    }
  }
  if (!ok) return std::nullopt;
  return c;
}

std::string serialize_config(const Config& c) {
  Json j = Json::object();
  j["apiVersion"] = "paictl/v1";
  j["kind"] = "ClusterRegistry";
  if (c.current) j["current"] = *c.current;
  if (c.preference) j["preference"] = *c.preference;
  Json list = Json::array();
  for (const auto& cl : c.clusters) {
    Json e = Json::object();
    e["name"] = cl.name;
    e["uri"] = cl.uri;
    if (!cl.rest_server.empty() && cl.rest_server != cl.uri) e["restServer"] = cl.rest_server;
    if (!cl.user.empty()) e["user"] = cl.user;
    if (!cl.login.empty()) e["login"] = cl.login;
    if (cl.auth == AuthMethod::TokenFile)
      e["tokenFile"] = cl.token_file;
    else if (!cl.token.empty())
      e["token"] = cl.token;
    if (!cl.ca_file.empty()) e["caFile"] = cl.ca_file;
    if (cl.insecure) e["insecure"] = true;
    if (!cl.hived.empty()) e["hived"] = cl.hived;
    if (!cl.version.empty()) e["version"] = cl.version;
    if (!cl.authn_method.empty()) e["authnMethod"] = cl.authn_method;
    if (!cl.added_at.empty()) e["addedAt"] = cl.added_at;
    if (!cl.starred.empty()) e["starred"] = cl.starred;
    for (auto it = cl.extra.begin(); it != cl.extra.end(); ++it)
      if (!e.contains(it.key())) e[it.key()] = it.value();
    list.push_back(e);
  }
  j["clusters"] = list;
  for (auto it = c.extra.begin(); it != c.extra.end(); ++it)
    if (!j.contains(it.key())) j[it.key()] = it.value();
  return std::string(kRegistryHeader) + util::to_yaml(j) + kRegistryEnd;
}

std::vector<std::string> Registry::default_paths() {
  std::vector<std::string> out;
  const char* env = std::getenv("PAICTL_CONFIG");
  if (env && *env) {
    for (auto p : util::split(env, ':'))
      if (!p.empty()) out.emplace_back(p);
    if (!out.empty()) return out;
  }
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg && xdg[0] == '/') return {std::string(xdg) + "/paictl/clusters.yaml"};
  const char* home = std::getenv("HOME");
  return {std::string(home && *home ? home : ".") + "/.config/paictl/clusters.yaml"};
}

Registry Registry::load(const std::vector<std::string>& paths, diag::List& diags) {
  Registry r;
  r.paths_ = paths;
  for (const auto& path : paths) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      if (errno != ENOENT)
        problem(diags, diag::Severity::Error, "R001", path, {},
                std::string("cannot read: ") + std::strerror(errno));
      continue;
    }
    if ((st.st_mode & 077) != 0 && S_ISREG(st.st_mode)) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
      problem(diags, diag::Severity::Warning, "R003", path, {},
              std::string("the registry holds access tokens but its mode is ") + mode +
                  ", so other users may read it",
              "run: chmod 600 " + util::shell_quote(path) + " (paictl writes it with 0600)");
    }
    auto rr = util::read_file(path, 4u << 20);
    if (!rr.ok()) {
      problem(diags, diag::Severity::Error, "R001", path, {}, "cannot read: " + rr.error().message);
      continue;
    }
    std::optional<Config> c = parse_config(*rr, path, diags);
    if (!c) continue;
    if (c->current && r.current_file_.empty()) {
      r.current_ = *c->current;
      r.current_file_ = path;
    }
    if (c->preference && r.preference_file_.empty()) {
      r.preference_ = *c->preference;
      r.preference_file_ = path;
    }
    for (auto& cl : c->clusters)
      if (!r.find(cl.name)) r.clusters_.push_back(std::move(cl));
  }
  return r;
}

const Cluster* Registry::find(const std::string& name) const {
  for (const auto& c : clusters_)
    if (c.name == name) return &c;
  return nullptr;
}

std::string Registry::file_for(const std::string& name) const {
  if (const Cluster* c = find(name)) return c->source;
  return paths_.empty() ? std::string() : paths_.front();
}

std::string Registry::file_for_current() const {
  return !current_file_.empty() ? current_file_ : paths_.empty() ? std::string() : paths_.front();
}

std::string Registry::file_for_preference() const {
  return !preference_file_.empty() ? preference_file_
         : paths_.empty()          ? std::string()
                                   : paths_.front();
}

util::Result<void> update_file(const std::string& path,
                               const std::function<util::Result<void>(Config&)>& change,
                               diag::List& diags) {
  if (path.empty()) return util::Error{"no registry file", {}};
  std::string dir = dir_of(path);
  if (!util::is_directory(dir)) {
    auto made = util::make_directories(dir, 0700);
    if (!made.ok()) return util::Error{"cannot create " + dir + ": " + made.error().message, {}};
  }
  FileLock lock(write_target(path));
  if (auto locked = lock.acquire(10); !locked.ok()) return locked;
  Config c;
  if (util::path_exists(path)) {
    auto rr = util::read_file(path, 4u << 20);
    if (!rr.ok()) return util::Error{"cannot read " + path + ": " + rr.error().message, {}};
    std::optional<Config> parsed = parse_config(*rr, path, diags);
    if (!parsed) return util::Error{path + " is not a valid registry; it was left unchanged", {}};
    c = std::move(*parsed);
  }
  if (auto changed = change(c); !changed.ok()) return changed;
  auto written = util::write_file_atomic(write_target(path), serialize_config(c), 0600);
  if (!written.ok())
    return util::Error{"cannot write the registry: " + written.error().message, {}};
  return {};
}

std::string tls_problem(const Cluster& c) {
  if (!c.ca_file.empty() && c.ca_file[0] != '/')
    return "its caFile \"" + c.ca_file +
           "\" is a relative path, which would be read from the current directory (and could "
           "trust another file of that name); run 'paictl cluster add " +
           c.name + " ... --ca-file /absolute/path --force'";
  return {};
}

util::Result<std::string> read_token(const Cluster& c) {
  if (c.auth != AuthMethod::TokenFile) return c.token;
  auto rr = util::read_file(c.token_file, 1u << 20);
  if (!rr.ok())
    return util::Error{"cannot read the token file " + c.token_file + ": " + rr.error().message,
                       {}};
  std::string t(util::trim(*rr));
  if (t.empty()) return util::Error{"the token file " + c.token_file + " is empty", {}};
  return t;
}

}  // namespace pai::cluster
