#pragma once
// The cluster registry: the OpenPAI clusters a user has registered, which one
// is current, and the preference order for `--cluster auto`.
//
// Where it lives, like kubeconfig:
//   - PAICTL_CONFIG: one file, or several separated by ':'. Reading merges them
//     and the first file to define a cluster, `current` or `preference` wins;
//     writing goes to the file that holds the entry, else the first file.
//   - else $XDG_CONFIG_HOME/paictl/clusters.yaml
//   - else $HOME/.config/paictl/clusters.yaml
// The cluster a command uses: --cluster NAME, else `current`.
//
// Files hold access tokens: they are written at mode 0600 (directories 0700),
// through a temporary file and a rename, while holding an exclusive flock on
// "<file>.lock", and re-read under that lock, so concurrent paictl processes
// never lose each other's changes. A file that cannot be parsed is never
// overwritten. Passwords are never stored: `cluster add` trades them for a token.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diag/diagnostic.h"
#include "util/result.h"

namespace pai::cluster {

enum class AuthMethod { Token, TokenFile };

struct Cluster {
  std::string name;
  std::string uri;          // as the user gave it, e.g. https://pai.example.com
  std::string rest_server;  // the REST API base found by `cluster add`, e.g.
                            // https://pai.example.com/rest-server
  std::string user;
  AuthMethod auth = AuthMethod::Token;
  std::string login;       // how the token was obtained: "password" (basic login) or "token"
  std::string token;       // secret; empty with TokenFile
  std::string token_file;  // read at each use
  std::string ca_file;     // absolute path
  bool insecure = false;
  // HiveD's web server (its inspect API); "" = behind the pylon, /a/<host>:30096
  std::string hived;
  std::string version;       // the server's version when added
  std::string authn_method;  // basic or OIDC
  std::string added_at;      // RFC 3339, UTC
  // Favourite jobs (USER~NAME) of this cluster: `paictl job star`. OpenPAI has no
  // favourites, so they live here, with the cluster they belong to.
  std::vector<std::string> starred;
  std::string source;  // the file it was read from (not stored)
  nlohmann::ordered_json extra =
      nlohmann::ordered_json::object();  // keys paictl does not know, kept as they are
};

// One registry file.
struct Config {
  std::optional<std::string> current;
  std::optional<std::vector<std::string>> preference;
  std::vector<Cluster> clusters;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // unknown top-level keys, kept
  Cluster* find(const std::string& name);
  bool remove(const std::string& name);
};

// Cluster names: 1-63 of [A-Za-z0-9_.-], starting with a letter or digit.
bool valid_cluster_name(std::string_view name);

// Parses a registry file; problems go to `out` with file:line:col. nullopt when
// the file cannot be trusted (then it must not be rewritten).
std::optional<Config> parse_config(const std::string& text, const std::string& path,
                                   diag::List& out);
std::string serialize_config(const Config& c);

class Registry {
 public:
  // The files, in precedence order, from PAICTL_CONFIG or the XDG default.
  static std::vector<std::string> default_paths();

  // Reads every file that exists. Problems (unreadable or malformed files,
  // loose permissions) go to `diags`; errors mean the result must not be used.
  static Registry load(const std::vector<std::string>& paths, diag::List& diags);

  const std::vector<std::string>& paths() const { return paths_; }
  const std::vector<Cluster>& clusters() const { return clusters_; }
  const Cluster* find(const std::string& name) const;
  const std::string& current() const { return current_; }
  const std::vector<std::string>& preference() const { return preference_; }

  // The file that holds `name`, else the first file.
  std::string file_for(const std::string& name) const;
  // The first file that sets `current` (or `preference`), else the first file.
  std::string file_for_current() const;
  std::string file_for_preference() const;

 private:
  std::vector<std::string> paths_;
  std::vector<Cluster> clusters_;
  std::string current_;
  std::vector<std::string> preference_;
  std::string current_file_, preference_file_;
};

// Read-modify-write of one registry file under its lock: reads the file (an
// empty Config when it does not exist), calls `change`, and writes the result
// atomically at mode 0600 unless `change` fails (its error is returned). Parse
// problems are reported in `diags`.
util::Result<void> update_file(const std::string& path,
                               const std::function<util::Result<void>(Config&)>& change,
                               diag::List& diags);

// Why the cluster's TLS settings must not be used, or "": a relative caFile
// (registered by an older paictl) would be resolved against the current directory.
std::string tls_problem(const Cluster& c);

// The token of a cluster: the stored one, or the trimmed content of its token
// file (an error when the file cannot be read or is empty).
util::Result<std::string> read_token(const Cluster& c);

}  // namespace pai::cluster
