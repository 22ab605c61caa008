// paictl cluster add NAME --uri URL [--user U] (--password-stdin | --token-stdin | --token-file F)

#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "api/client.h"
#include "app.h"
#include "cluster/registry.h"
#include "cmd_job_common.h"
#include "exit_codes.h"
#include "http/client.h"
#include "output.h"
#include "util/fs.h"
#include "util/printable.h"
#include "util/stdin.h"
#include "util/strings.h"

namespace paictl {

namespace {

struct AddOptions {
  std::string name;
  std::string uri;
  std::string user;
  bool password_stdin = false;
  bool token_stdin = false;
  std::string token_file;
  std::string ca_file;
  bool insecure = false;
  bool force = false;
  bool use = false;
  double timeout = 30;
  int expiration_days = 7;
};

// Reads a secret from stdin: without echo and after a prompt on a terminal,
// as-is (minus the final newline) from a pipe. Bounded: an endless producer is
// an error, not a memory exhaustion.
std::optional<std::string> read_secret(const char* what) {
  pai::util::ReadResult r;
  if (isatty(0)) {
    std::fprintf(stderr, "%s: ", what);
    std::fflush(stderr);
    termios old{};
    bool restore = tcgetattr(0, &old) == 0;
    if (restore) {
      termios quiet = old;
      quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
      tcsetattr(0, TCSANOW, &quiet);
    }
    r = pai::util::read_line(0, pai::util::kMaxSecretBytes);
    if (restore) tcsetattr(0, TCSANOW, &old);
    std::fprintf(stderr, "\n");
  } else {
    r = pai::util::read_fd(0, pai::util::kMaxSecretBytes);
  }
  if (!r.ok) {
    print_error("reading the " + std::string(what) + ": " + r.error + "; that is not a " + what);
    return std::nullopt;
  }
  std::string s = std::move(r.content);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (s.empty()) {
    print_error(std::string("no ") + what + " on stdin");
    return std::nullopt;
  }
  return s;
}

std::string base64url_decode(std::string_view in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-' || c == '+') return 62;
    if (c == '_' || c == '/') return 63;
    return -1;
  };
  std::string out;
  int bits = 0, acc = 0;
  for (char c : in) {
    int v = val(c);
    if (v < 0) break;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

// The user name inside an OpenPAI JWT ({"username": ...}), or "".
std::string user_from_token(const std::string& token) {
  size_t a = token.find('.');
  size_t b = a == std::string::npos ? a : token.find('.', a + 1);
  if (b == std::string::npos) return {};
  nlohmann::json j =
      nlohmann::json::parse(base64url_decode(token.substr(a + 1, b - a - 1)), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return {};
  return j.value("username", std::string());
}

int run(const AddOptions& o, const Globals& g) {
  if (!pai::cluster::valid_cluster_name(o.name)) {
    print_error("cluster name \"" + o.name +
                "\" must be 1-63 letters, digits, '.', '_' or '-', start with a letter or digit, "
                "and not be 'auto'");
    return kExitUsage;
  }
  int methods =
      (o.password_stdin ? 1 : 0) + (o.token_stdin ? 1 : 0) + (o.token_file.empty() ? 0 : 1);
  if (methods != 1) {
    print_error("give exactly one of --password-stdin, --token-stdin or --token-file");
    std::fprintf(stderr,
                 "Secrets are never taken as arguments (they would show in process lists and shell "
                 "history).\n");
    return kExitUsage;
  }
  if (o.password_stdin && o.user.empty()) {
    print_error("--password-stdin needs --user");
    return kExitUsage;
  }
  // User info in the URI ("http://user:pw@host") is neither used, stored nor printed.
  bool had_userinfo = false;
  std::string uri = pai::http::strip_userinfo(o.uri, &had_userinfo);
  while (!uri.empty() && uri.back() == '/') uri.pop_back();
  if (uri.rfind("http://", 0) != 0 && uri.rfind("https://", 0) != 0) {
    print_error("--uri must start with http:// or https://, got \"" + uri + "\"");
    return kExitUsage;
  }
  if (had_userinfo)
    print_warning(
        "the user name and password in --uri are ignored and not stored; use --user and "
        "--password-stdin");
  if (!o.ca_file.empty() && !pai::util::is_regular_file(o.ca_file)) {
    print_error("--ca-file " + o.ca_file + " is not a readable file");
    return kExitUsage;
  }
  // Stored absolute: a relative path would be read from whatever directory a
  // later command runs in (failing there, or trusting another cert.pem).
  std::string ca_file;
  if (!o.ca_file.empty()) {
    std::error_code ec;
    ca_file = std::filesystem::absolute(o.ca_file, ec).lexically_normal().string();
    if (ec) {
      print_error("--ca-file " + o.ca_file + ": " + ec.message());
      return kExitUsage;
    }
  }
  const bool plain_http = uri.rfind("http://", 0) == 0;
  if (!o.token_file.empty() && o.token_file[0] != '/') {
    print_error("--token-file needs an absolute path (it is read again at every use)");
    return kExitUsage;
  }

  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  if (reg->find(o.name) && !o.force) {
    print_error("a cluster named \"" + o.name + "\" is already registered (" +
                reg->find(o.name)->uri + "); pass --force to replace it");
    return kExitUsage;
  }

  std::string secret;
  pai::cluster::Cluster c;
  c.name = o.name;
  c.uri = uri;
  c.ca_file = ca_file;
  c.insecure = o.insecure;
  c.added_at = pai::cluster::now_rfc3339();
  if (o.password_stdin || o.token_stdin) {
    auto s = read_secret(o.password_stdin ? "password" : "token");
    if (!s) return kExitUsage;
    secret = *s;
  } else {
    c.auth = pai::cluster::AuthMethod::TokenFile;
    c.token_file = o.token_file;
    std::string err;
    secret = pai::cluster::read_token(c, &err);
    if (!err.empty()) {
      print_error(err);
      return kExitUsage;
    }
  }

  pai::http::Options hopt;
  hopt.timeout_s = o.timeout;
  hopt.connect_timeout_s = std::min(10.0, o.timeout);
  hopt.tls.ca_file = ca_file;
  hopt.tls.insecure = o.insecure;
  if (g.verbose)
    hopt.log = [](const std::string& l) { std::fprintf(stderr, "paictl: %s\n", l.c_str()); };
  pai::http::CurlClient http(hopt);

  // The REST API is under /rest-server behind OpenPAI's pylon; a bare
  // rest-server (port 9186) serves it at the root.
  std::vector<std::string> bases;
  if (uri.size() >= 12 && uri.compare(uri.size() - 12, 12, "/rest-server") == 0)
    bases = {uri};
  else
    bases = {uri + "/rest-server", uri};
  std::optional<pai::api::ClusterInfo> info;
  std::optional<pai::api::Error> first_error;
  for (const auto& b : bases) {
    pai::api::Client probe(http, b);
    auto r = probe.info();
    if (r.ok()) {
      info = *r;
      c.rest_server = b;
      break;
    }
    if (!first_error) first_error = r.error;
    if (r.error->kind == pai::api::Error::Kind::Transport)
      break;  // the host itself does not answer
  }
  if (!info) {
    int rc = jobcli::report_api_error(o.name, "probing " + uri, *first_error);
    if (first_error->kind != pai::api::Error::Kind::Transport)
      std::fprintf(
          stderr,
          "  hint: neither %s/rest-server/api/v2/info nor %s/api/v2/info answers like OpenPAI\n",
          uri.c_str(), uri.c_str());
    return rc == kExitUsage ? kExitRemote : rc;
  }
  c.version = info->version;
  c.authn_method = info->authn_method;

  pai::api::Client api(http, c.rest_server);
  std::string token;
  if (o.password_stdin) {
    if (info->authn_method == "OIDC") {
      print_error(o.name + " signs users in with OIDC (Azure AD), which needs a browser");
      std::fprintf(stderr,
                   "  hint: sign in to the web portal, create an application token in your "
                   "profile, and pass it with "
                   "--token-stdin\n");
      return kExitUsage;
    }
    if (plain_http)
      print_warning(
          "signing in over plain http://: the password (and then the token) travel "
          "unencrypted; use the cluster's https:// address if it has one");
    auto l = api.login(o.user, secret, o.expiration_days * 86400);
    if (!l.ok()) return jobcli::report_api_error(o.name, "logging in as " + o.user, *l.error);
    token = l->token;
    c.user = l->user.empty() ? o.user : l->user;
    c.login = "password";
    c.token = token;
  } else {
    token = secret;
    c.user = o.user.empty() ? user_from_token(token) : o.user;
    c.login = "token";
    if (c.auth == pai::cluster::AuthMethod::Token) c.token = token;
    if (c.user.empty()) {
      print_error("cannot tell the user of this token; pass --user");
      return kExitUsage;
    }
  }
  secret.clear();

  pai::api::Client authed(http, c.rest_server, token);
  auto u = authed.user(c.user);
  if (!u.ok()) return jobcli::report_api_error(o.name, "checking the token of " + c.user, *u.error);

  pai::diag::List diags;
  bool make_current = o.use || reg->current().empty();
  std::string file = reg->file_for(o.name);
  std::string err = pai::cluster::update_file(
      file,
      [&](pai::cluster::Config& cfg) -> std::string {
        if (pai::cluster::Cluster* existing = cfg.find(o.name)) {
          if (!o.force)
            return "a cluster named \"" + o.name +
                   "\" was registered meanwhile; pass --force to replace it";
          c.extra = existing->extra;
          *existing = c;
        } else {
          cfg.clusters.push_back(c);
        }
        if (make_current && reg->file_for_current() == file) cfg.current = o.name;
        return {};
      },
      diags);
  if (err.empty() && make_current && reg->file_for_current() != file) {
    err = pai::cluster::update_file(
        reg->file_for_current(),
        [&](pai::cluster::Config& cfg) -> std::string {
          cfg.current = o.name;
          return {};
        },
        diags);
  }
  if (!err.empty()) {
    print_error(err);
    return kExitUsage;
  }
  if (!g.quiet) {
    using pai::util::printable;
    std::printf("cluster %s added: %s (OpenPAI %s, %s sign-in), user %s%s\n", o.name.c_str(),
                printable(uri).c_str(), printable(c.version).c_str(),
                c.authn_method.empty() ? "basic" : printable(c.authn_method).c_str(),
                printable(c.user).c_str(), u->admin ? " (admin)" : "");
    std::printf("virtual clusters you may use: %s\n",
                u->virtual_clusters.empty()
                    ? "none"
                    : printable(pai::util::join(u->virtual_clusters, ", ")).c_str());
    if (make_current) std::printf("current cluster: %s\n", o.name.c_str());
    if (o.insecure && !plain_http)
      std::fprintf(stderr,
                   "paictl: warning: TLS certificates of %s are not verified (--insecure)\n",
                   o.name.c_str());
  }
  return kExitOk;
}

void add_cluster_add(CLI::App& parent, Globals& g) {
  auto o = std::make_shared<AddOptions>();
  CLI::App* cmd =
      parent.add_subcommand("add", "Register an OpenPAI cluster: probe it, sign in, store a token");
  cmd->add_option("NAME", o->name, "A short name for the cluster, used with --cluster")->required();
  cmd->add_option("--uri", o->uri, "The cluster's web address, e.g. https://pai.example.com")
      ->required();
  cmd->add_option("--user", o->user, "Your OpenPAI user name (read from the token when not given)");
  cmd->add_flag("--password-stdin", o->password_stdin,
                "Read the password from stdin, sign in, and store only the token it gives");
  cmd->add_flag("--token-stdin", o->token_stdin,
                "Read a token (e.g. an application token) from stdin and store it");
  cmd->add_option("--token-file", o->token_file,
                  "Read the token from FILE at each use (the file is not copied)")
      ->type_name("FILE");
  cmd->add_option("--ca-file", o->ca_file,
                  "PEM file with the CA that signed the cluster's certificate")
      ->type_name("FILE");
  cmd->add_flag("--insecure", o->insecure,
                "Do not verify the cluster's TLS certificate (not recommended)");
  cmd->add_flag("--force", o->force, "Replace a cluster registered under the same name");
  cmd->add_flag("--use", o->use, "Make it the current cluster (the first cluster added always is)");
  cmd->add_option("--token-days", o->expiration_days,
                  "Validity of the token a password sign-in asks for (1-7)")
      ->check(CLI::Range(1, 7))
      ->capture_default_str();
  cmd->add_option("--request-timeout", o->timeout, "Seconds to wait for each request")
      ->capture_default_str();
  cmd->footer(
      "The password is sent once to POST /api/v2/authn/basic/login and never stored. The registry\n"
      "($XDG_CONFIG_HOME/paictl/clusters.yaml, or PAICTL_CONFIG) is written with mode 0600.\n\n"
      "EXIT STATUS:\n"
      "  0 added, 2 bad usage or refused credentials, 3 the cluster cannot be reached\n\n"
      "EXAMPLES:\n"
      "  pass show pai/lab | paictl cluster add lab --uri https://pai.lab.example.com --user alice "
      "--password-stdin\n"
      "  paictl cluster add cloud --uri https://pai.cloud.example.com --token-file "
      "/run/secrets/pai-token\n"
      "  paictl cluster add dev --uri https://10.0.0.5 --ca-file dev-ca.pem --user bob "
      "--password-stdin < pw.txt\n");
  cmd->callback([o, &g]() { g.exit_code = run(*o, g); });
}

}  // namespace

static Registrar registrar(
    {{"cluster", "add"},
     "Register an OpenPAI cluster (probe, sign in, store a token at mode 0600)",
     30,
     add_cluster_add});

}  // namespace paictl
