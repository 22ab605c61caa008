#include "cluster/add.h"

#include <filesystem>

#include "api/signin.h"
#include "http/client.h"
#include "util/fs.h"
#include "util/time.h"

namespace pai::cluster {

namespace {

AddError request_error(std::string message, std::string hint = {}) {
  AddError e;
  e.stage = AddError::Stage::Request;
  e.message = std::move(message);
  e.hint = std::move(hint);
  return e;
}

AddError api_error(AddError::Stage stage, std::string doing, api::Error err) {
  AddError e;
  e.stage = stage;
  e.doing = std::move(doing);
  e.message = err.summary();
  e.hint = err.hint;
  e.api = std::move(err);
  return e;
}

}  // namespace

util::Result<PreparedAdd, AddError> prepare_add(AddRequest req, const Registry* registry) {
  PreparedAdd out;
  if (!valid_cluster_name(req.name))
    return request_error("cluster name \"" + req.name +
                         "\" must be 1-63 letters, digits, '.', '_' or '-', start with a "
                         "letter or digit, and not be 'auto'");
  if (req.credential == Credential::Password && req.user.empty())
    return request_error("a password sign-in needs the user name (--user)");
  if (req.credential == Credential::TokenFile) {
    if (req.token_file.empty() || req.token_file[0] != '/')
      return request_error("--token-file needs an absolute path (it is read again at every use)");
  }
  if (registry && registry->find(req.name) && !req.force)
    return request_error("a cluster named \"" + req.name + "\" is already registered (" +
                         registry->find(req.name)->uri + "); pass --force to replace it");
  // User info in the URI ("http://user:pw@host") is neither used, stored nor shown.
  bool had_userinfo = false;
  std::string uri = http::strip_userinfo(req.uri, &had_userinfo);
  while (!uri.empty() && uri.back() == '/') uri.pop_back();
  if (uri.rfind("http://", 0) != 0 && uri.rfind("https://", 0) != 0)
    return request_error("--uri must start with http:// or https://, got \"" + uri + "\"");
  req.uri = uri;
  if (had_userinfo)
    out.warnings.push_back(
        "the user name and password in --uri are ignored and not stored; use --user and "
        "--password-stdin");
  if (!req.ca_file.empty()) {
    if (!util::is_regular_file(req.ca_file))
      return request_error("--ca-file " + req.ca_file + " is not a readable file");
    // Stored absolute: a relative path would be read from whatever directory a
    // later command runs in (failing there, or trusting another cert.pem).
    std::error_code ec;
    std::string abs = std::filesystem::absolute(req.ca_file, ec).lexically_normal().string();
    if (ec) return request_error("--ca-file " + req.ca_file + ": " + ec.message());
    req.ca_file = abs;
  }
  if (req.credential == Credential::Password && uri.rfind("http://", 0) == 0)
    out.warnings.push_back(
        "signing in over plain http://: the password (and then the token) travel unencrypted; "
        "use the cluster's https:// address if it has one");
  if (req.insecure && uri.rfind("https://", 0) == 0)
    out.warnings.push_back("TLS certificates of " + req.name + " are not verified (--insecure)");
  out.request = std::move(req);
  return out;
}

AddResult add_cluster(const AddRequest& req, http::Client& http, const Registry& registry,
                      diag::List& diags) {
  if (registry.find(req.name) && !req.force)
    return request_error("a cluster named \"" + req.name + "\" is already registered (" +
                         registry.find(req.name)->uri + "); pass --force to replace it");
  if (req.credential != Credential::TokenFile && req.secret.empty())
    return request_error(std::string("no ") +
                         (req.credential == Credential::Password ? "password" : "token") +
                         " was given");
  Cluster c;
  c.name = req.name;
  c.uri = req.uri;
  c.ca_file = req.ca_file;
  c.insecure = req.insecure;
  c.hived = req.hived;
  c.added_at = util::now_rfc3339();
  std::string secret = req.secret;
  if (req.credential == Credential::TokenFile) {
    c.auth = AuthMethod::TokenFile;
    c.token_file = req.token_file;
    auto t = read_token(c);
    if (!t.ok()) return request_error(t.error().message);
    secret = std::move(*t);
  }

  auto p = api::probe(http, req.uri);
  if (!p.ok()) {
    AddError e = api_error(AddError::Stage::Probe, "probing " + req.uri, p.error());
    if (p.error().kind != api::Error::Kind::Transport)
      e.hint = "neither " + req.uri + "/rest-server/api/v2/info nor " + req.uri +
               "/api/v2/info answers like OpenPAI";
    return e;
  }
  c.rest_server = p->rest_base;
  c.version = p->info.version;
  c.authn_method = p->info.authn_method;

  std::string token;
  if (req.credential == Credential::Password) {
    if (api::sign_in_method(p->info) == api::SignIn::Oidc)
      return request_error(
          req.name + " signs users in with OIDC (Azure AD), which needs a browser",
          "sign in to the web portal, create an application token in your profile, and pass it "
          "with --token-stdin");
    api::Client anon(http, c.rest_server);
    auto l = anon.login(req.user, secret, req.token_days * 86400);
    if (!l.ok()) return api_error(AddError::Stage::SignIn, "logging in as " + req.user, l.error());
    token = l->token;
    c.user = l->user.empty() ? req.user : l->user;
    c.login = "password";
    c.token = token;
  } else {
    token = secret;
    c.user = req.user.empty() ? api::user_from_token(token) : req.user;
    c.login = "token";
    if (c.auth == AuthMethod::Token) c.token = token;
    if (c.user.empty()) return request_error("cannot tell the user of this token; pass --user");
  }
  secret.clear();

  api::Client authed(http, c.rest_server, token);
  auto u = authed.user(c.user);
  if (!u.ok())
    return api_error(AddError::Stage::TokenCheck, "checking the token of " + c.user, u.error());

  bool make_current = req.use || registry.current().empty();
  std::string file = registry.file_for(req.name);
  auto written = update_file(
      file,
      [&](Config& cfg) -> util::Result<void> {
        if (Cluster* existing = cfg.find(req.name)) {
          if (!req.force)
            return util::Error{"a cluster named \"" + req.name +
                                   "\" was registered meanwhile; pass --force to replace it",
                               {}};
          c.extra = existing->extra;
          *existing = c;
        } else {
          cfg.clusters.push_back(c);
        }
        if (make_current && registry.file_for_current() == file) cfg.current = req.name;
        return {};
      },
      diags);
  if (written.ok() && make_current && registry.file_for_current() != file) {
    written = update_file(
        registry.file_for_current(),
        [&](Config& cfg) -> util::Result<void> {
          cfg.current = req.name;
          return {};
        },
        diags);
  }
  if (!written.ok()) {
    AddError e;
    e.stage = AddError::Stage::Registry;
    e.message = written.error().message;
    return e;
  }
  AddOutcome done;
  done.cluster = std::move(c);
  done.user = *u;
  done.made_current = make_current;
  done.file = file;
  return done;
}

}  // namespace pai::cluster
