// paictl cluster add NAME --uri URL [--user U] (--password-stdin | --token-stdin | --token-file F)

#include <termios.h>
#include <unistd.h>

#include <cstdio>

#include "api/client.h"
#include "app.h"
#include "cluster/add.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "http/client.h"
#include "output/output.h"
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
  std::string hived;
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
  pai::util::Result<std::string> r = std::string();
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
  if (!r.ok()) {
    print_error("reading the " + std::string(what) + ": " + r.error().message + "; that is not a " +
                what);
    return std::nullopt;
  }
  std::string s = std::move(*r);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (s.empty()) {
    print_error(std::string("no ") + what + " on stdin");
    return std::nullopt;
  }
  return s;
}

pai::cluster::AddRequest request_of(const AddOptions& o) {
  pai::cluster::AddRequest req;
  req.name = o.name;
  req.uri = o.uri;
  req.user = o.user;
  req.credential = o.password_stdin ? pai::cluster::Credential::Password
                   : o.token_stdin  ? pai::cluster::Credential::Token
                                    : pai::cluster::Credential::TokenFile;
  req.token_file = o.token_file;
  req.ca_file = o.ca_file;
  req.insecure = o.insecure;
  req.hived = o.hived;
  req.force = o.force;
  req.use = o.use;
  req.token_days = o.expiration_days;
  return req;
}

// Every usage error before the registry is read or the cluster asked: not exactly
// one sign-in method, --password-stdin without --user, and the first of libpai's
// request checks (prepare_add without the registry: the name, --token-file, --uri,
// --ca-file).
void validate_cluster_add(const AddOptions& o, Usage& u) {
  int methods =
      (o.password_stdin ? 1 : 0) + (o.token_stdin ? 1 : 0) + (o.token_file.empty() ? 0 : 1);
  u.error_if(methods != 1, "give exactly one of --password-stdin, --token-stdin or --token-file",
             "secrets are never taken as arguments (they would show in process lists and shell "
             "history)");
  u.error_if(o.password_stdin && o.user.empty(), "--password-stdin needs --user",
             "the sign-in is POST /api/v2/authn/basic/login with the user and the password");
  pai::cluster::AddRequest req = request_of(o);
  if (req.user.empty()) req.user = "-";  // its absence is reported above, not again
  auto prepared = pai::cluster::prepare_add(std::move(req));
  if (!prepared.ok()) u.error(prepared.error().message, prepared.error().hint);
}

int run(const AddOptions& o, const Globals& g) {
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;

  auto checked = pai::cluster::prepare_add(request_of(o), reg.get());
  if (!checked.ok()) {
    print_error(checked.error().message);
    if (!checked.error().hint.empty())
      std::fprintf(stderr, "  hint: %s\n", pai::util::printable(checked.error().hint).c_str());
    return kExitUsage;
  }
  pai::cluster::PreparedAdd& prepared = *checked;
  for (const auto& w : prepared.warnings) print_warning(w);
  if (o.password_stdin || o.token_stdin) {
    auto s = read_secret(o.password_stdin ? "password" : "token");
    if (!s) return kExitUsage;
    prepared.request.secret = std::move(*s);
  }

  pai::http::Options hopt;
  hopt.timeout_s = o.timeout;
  hopt.connect_timeout_s = std::min(10.0, o.timeout);
  hopt.tls.ca_file = prepared.request.ca_file;
  hopt.tls.insecure = o.insecure;
  if (g.verbose)
    hopt.log = [](const std::string& l) { std::fprintf(stderr, "paictl: %s\n", l.c_str()); };
  pai::http::CurlClient http(hopt);

  pai::diag::List diags;
  pai::cluster::AddResult r = pai::cluster::add_cluster(prepared.request, http, *reg, diags);
  prepared.request.secret.clear();
  if (!r.ok()) {
    using Stage = pai::cluster::AddError::Stage;
    const pai::cluster::AddError& e = r.error();
    if (e.api) {
      pai::api::Error shown = *e.api;
      if (e.stage == Stage::Probe && !e.hint.empty()) shown.hint = e.hint;
      int rc = jobcli::report_api_error(o.name, e.doing, shown);
      // An address that does not answer like OpenPAI is a remote failure;
      // credentials the server refuses are the user's input (exit 2).
      if (e.stage == Stage::Probe && rc == kExitUsage) return kExitRemote;
      bool refused =
          shown.kind == pai::api::Error::Kind::Http && (shown.status == 401 || shown.status == 403);
      if ((e.stage == Stage::SignIn || e.stage == Stage::TokenCheck) && refused) return kExitUsage;
      return rc;
    }
    print_error(e.message);
    if (!e.hint.empty()) std::fprintf(stderr, "  hint: %s\n", pai::util::printable(e.hint).c_str());
    return kExitUsage;
  }
  const pai::cluster::AddOutcome& done = *r;
  if (!g.quiet) {
    using pai::util::printable;
    const pai::cluster::Cluster& c = done.cluster;
    std::printf("cluster %s added: %s (OpenPAI %s, %s sign-in), user %s%s\n", o.name.c_str(),
                printable(c.uri).c_str(), printable(c.version).c_str(),
                c.authn_method.empty() ? "basic" : printable(c.authn_method).c_str(),
                printable(c.user).c_str(), done.user.admin ? " (admin)" : "");
    std::printf("virtual clusters you may use: %s\n",
                done.user.virtual_clusters.empty()
                    ? "none"
                    : printable(pai::util::join(done.user.virtual_clusters, ", ")).c_str());
    if (done.made_current) std::printf("current cluster: %s\n", o.name.c_str());
  }
  return kExitOk;
}

void add_cluster_add(Flags& parent, Globals& g) {
  auto o = std::make_shared<AddOptions>();
  Flags* cmd = &parent;
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
  cmd->add_option("--hived", o->hived,
                  "HiveD's web server, when it is not behind the cluster's pylon (/a/<host>:30096)")
      ->type_name("URL");
  cmd->add_flag("--insecure", o->insecure,
                "Do not verify the cluster's TLS certificate (not recommended)");
  cmd->add_flag("--force", o->force, "Replace a cluster registered under the same name");
  cmd->add_flag("--use", o->use, "Make it the current cluster (the first cluster added always is)");
  cmd->add_option("--token-days", o->expiration_days,
                  "Validity of the token a password sign-in asks for (1-7)")
      ->check(Range(1, 7))
      ->capture_default_str();
  cmd->add_option("--request-timeout", o->timeout, "Seconds to wait for each request")
      ->capture_default_str();
  cmd->footer(
      "The password is sent once to POST /api/v2/authn/basic/login and never stored. The registry\n"
      "($XDG_CONFIG_HOME/paictl/clusters.yaml, or PAICTL_CONFIG) is written with mode 0600.\n\n"
      "EXIT STATUS:\n"
      "  0 added, 2 bad usage or refused credentials, 3 the cluster cannot be reached\n\n");
  define_command(*cmd, g, o,
                 {.validate = validate_cluster_add,
                  .run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace

void build_cluster_add(Flags& cmd, Globals& g) {
  add_cluster_add(cmd, g);
}

}  // namespace paictl
