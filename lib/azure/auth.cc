#include "azure/auth.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::azure {

namespace {

using util::Error;
using util::Result;

std::string auth_excerpt(const nlohmann::json& v) {
  std::string s = util::dump_json(v);
  return s.size() > 40 ? s.substr(0, 40) + "..." : s;
}

class OAuthTokenSource : public TokenSource {
 public:
  OAuthTokenSource(Method m, Identity id, http::Client& http, TokenOptions o, remote::Secret secret,
                   std::string secret_origin, std::string assertion_file,
                   std::string identity_endpoint, remote::Secret identity_header)
      : method_(m),
        id_(std::move(id)),
        http_(http),
        opt_(std::move(o)),
        secret_(std::move(secret)),
        secret_origin_(std::move(secret_origin)),
        assertion_file_(std::move(assertion_file)),
        identity_endpoint_(std::move(identity_endpoint)),
        identity_header_(std::move(identity_header)) {}

  Result<std::string> token(bool refresh) override {
    std::lock_guard<std::mutex> lock(mu_);
    // A failed sign-in answers at once; a renewal (the server refused the
    // token) asks again.
    if (failed_ && !refresh) return *failed_;
    double now = opt_.clock.now();
    if (!refresh && !cached_.empty()) {
      double margin = std::min(opt_.renew_before_s, lifetime_ / 10);
      if (now < expires_at_ - margin) return cached_.reveal();
    }
    auto fresh = fetch();
    if (!fresh.ok()) {
      // Asked again, it would fail the same way after the same waits.
      if (!(opt_.cancelled && opt_.cancelled())) failed_ = fresh.error();
      return fresh.error();
    }
    failed_.reset();
    return cached_.reveal();
  }

  std::string describe() const override {
    switch (method_) {
      case Method::ClientSecret:
        return "the client secret of application " + id_.client_id + " (" + secret_origin_ + ")";
      case Method::FederatedToken:
        return "a federated token of application " + id_.client_id +
               " (AZURE_FEDERATED_TOKEN_FILE)";
      case Method::ManagedIdentity:
        return "the managed identity at IDENTITY_ENDPOINT";
    }
    return "";
  }

 private:
  Result<bool> fetch() {
    http::Request r;
    std::string where;
    if (method_ == Method::ManagedIdentity) {
      std::string resource = opt_.endpoints.scope;
      if (auto p = resource.rfind("/.default"); p != std::string::npos) resource.resize(p + 1);
      r.method = "GET";
      r.url = identity_endpoint_ + (identity_endpoint_.find('?') == std::string::npos ? "?" : "&") +
              "resource=" + http::url_encode(resource) + "&api-version=2019-08-01";
      r.headers.push_back({"X-IDENTITY-HEADER", identity_header_.reveal()});
      where = http::host_of(identity_endpoint_);
    } else {
      std::vector<std::pair<std::string, std::string>> form = {{"grant_type", "client_credentials"},
                                                               {"client_id", id_.client_id},
                                                               {"scope", opt_.endpoints.scope}};
      if (method_ == Method::ClientSecret) {
        form.emplace_back("client_secret", secret_.reveal());
      } else {
        auto f = util::read_file(assertion_file_, 1u << 20);
        if (!f.ok())
          return Error{"cannot read AZURE_FEDERATED_TOKEN_FILE " + assertion_file_ + ": " +
                           f.error().message,
                       "the platform writes the workload identity token there"};
        form.emplace_back("client_assertion_type",
                          "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
        form.emplace_back("client_assertion", std::string(util::trim(*f)));
      }
      r.method = "POST";
      r.url = opt_.endpoints.authority + "/" + http::url_encode(id_.tenant) + "/oauth2/v2.0/token";
      r.headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
      r.body = http::form_encode(form);
      r.idempotent = true;  // asking for a token twice does no harm
      where = http::host_of(r.url);
    }
    r.headers.push_back({"Accept", "application/json"});
    http::Result res;
    const double started = opt_.clock.now();
    auto interrupted = [&]() -> std::optional<Error> {
      if (opt_.cancelled && opt_.cancelled())
        return Error{"sign-in to " + where + ": interrupted", ""};
      return std::nullopt;
    };
    for (int attempt = 1;; ++attempt) {
      if (auto i = interrupted()) {
        std::fill(r.body.begin(), r.body.end(), '\0');
        return *i;
      }
      res = http_.send(r);
      long st = res.response.status;
      // A refused certificate does not get better by asking again.
      bool transient =
          (!res.ok() && res.error != http::ErrorKind::Tls) || st == 429 || st == 408 || st >= 500;
      if (opt_.log)
        opt_.log("token " + r.method + " " + http::redact_url(r.url) + " -> " +
                 (res.ok() ? std::to_string(st) : "failed: " + res.message));
      if (!transient || attempt >= 3) break;
      double wait = attempt;
      if (auto ra = http::parse_retry_after(res.response.header("retry-after"), std::time(nullptr)))
        wait = std::min(*ra, 30.0);
      if (opt_.clock.now() + wait + opt_.attempt_timeout_s > started + opt_.deadline_s) break;
      if (opt_.log)
        opt_.log("token " + r.method + " " + http::redact_url(r.url) + ": trying again in " +
                 std::to_string(static_cast<int>(wait)) + " s");
      for (double slept = 0; slept < wait && !interrupted(); slept += 0.25)
        opt_.clock.sleep(std::min(0.25, wait - slept));
    }
    // The request held the secret: wipe our copy of the body.
    std::fill(r.body.begin(), r.body.end(), '\0');
    if (!res.ok())
      return Error{"cannot reach the sign-in endpoint " + where + ": " + res.message,
                   res.error == http::ErrorKind::Tls
                       ? "its certificate was not accepted: check --ca-file / PAICTL_CA_FILE "
                         "and --authority-host / PAICTL_AUTHORITY_HOST"
                       : "check --authority-host / PAICTL_AUTHORITY_HOST and the network"};
    if (res.response.status != 200)
      return Error{"sign-in to tenant " + id_.tenant + " with " + describe() +
                       " failed: " + format_token_error(res.response.status, res.response.body),
                   "check tenant, client-id and the secret; the service principal needs a "
                   "role on the subscription (docs/azure.md)"};
    auto j = util::parse_json_or_discarded(res.response.body);
    if (!j.is_object() || !j.contains("access_token") || !j["access_token"].is_string())
      return Error{"the sign-in endpoint " + where + " answered without an access_token", ""};
    double lifetime = 3600;
    double now = opt_.clock.now();
    auto seconds = [](const nlohmann::json& v) -> std::optional<double> {
      if (v.is_number()) return v.get<double>();
      if (v.is_string()) return util::parse_double(v.get<std::string>());
      return std::nullopt;
    };
    const char* field = j.contains("expires_in") ? "expires_in" : "expires_on";
    if (j.contains(field)) {
      auto v = seconds(j[field]);
      // expires_on (managed identity) is a time in epoch seconds.
      if (v && std::string(field) == "expires_on") *v -= static_cast<double>(std::time(nullptr));
      if (!v || !std::isfinite(*v) || *v <= 0)
        return Error{"the sign-in endpoint " + where + " answered a token with " + field + " " +
                         auth_excerpt(j[field]) + ", not a positive number of seconds",
                     ""};
      lifetime = *v;
    }
    // Kept between a second and a day: the token is asked for again when it
    // ends, however long the endpoint said it lasts.
    lifetime = std::clamp(lifetime, 1.0, 86400.0);
    cached_ = remote::Secret(j["access_token"].get<std::string>());
    lifetime_ = lifetime;
    expires_at_ = now + lifetime;
    if (opt_.log)
      opt_.log("signed in with " + describe() + "; the token is valid for " +
               std::to_string(static_cast<long>(lifetime)) + " s");
    return true;
  }

  Method method_;
  Identity id_;
  http::Client& http_;
  TokenOptions opt_;
  remote::Secret secret_;
  std::string secret_origin_;
  std::string assertion_file_;
  std::string identity_endpoint_;
  remote::Secret identity_header_;
  std::mutex mu_;
  remote::Secret cached_;
  std::optional<Error> failed_;
  double expires_at_ = 0;
  double lifetime_ = 3600;
};

}  // namespace

std::string format_token_error(long status, const std::string& body) {
  std::string out = std::to_string(status) + " " + std::string(http::reason_phrase(status));
  auto j = util::parse_json_or_discarded(body);
  if (j.is_object()) {
    std::string desc = j.value("error_description", std::string());
    std::string err = j.value("error", std::string());
    // AADSTS descriptions continue with "Trace ID: …" lines; the first line says it.
    if (auto nl = desc.find_first_of("\r\n"); nl != std::string::npos) desc.resize(nl);
    if (!desc.empty()) out += ": " + desc;
    if (!err.empty()) out += " (" + err + ")";
  }
  return out;
}

Result<std::unique_ptr<TokenSource>> make_token_source(
    const Identity& id, http::Client& http, TokenOptions o,
    std::function<const char*(const char*)> getenv_fn) {
  if (!getenv_fn) getenv_fn = [](const char* n) -> const char* { return std::getenv(n); };
  auto env = [&](const char* n) -> std::string {
    const char* v = getenv_fn(n);
    return v ? v : "";
  };
  Identity ident = id;
  if (ident.tenant.empty()) ident.tenant = env("AZURE_TENANT_ID");
  if (ident.client_id.empty()) ident.client_id = env("AZURE_CLIENT_ID");
  auto need_app = [&]() -> std::optional<Error> {
    if (ident.tenant.empty())
      return Error{"no Azure tenant", "set azure.tenant in config.yaml (or AZURE_TENANT_ID)"};
    if (ident.client_id.empty())
      return Error{"no Azure client id",
                   "set azure.client-id in config.yaml (or AZURE_CLIENT_ID): the service "
                   "principal's application id"};
    return std::nullopt;
  };
  if (!ident.client_secret_file.empty()) {
    if (auto e = need_app()) return *e;
    auto f = util::read_file(ident.client_secret_file, 64u << 10);
    if (!f.ok())
      return Error{
          "cannot read client-secret-file " + ident.client_secret_file + ": " + f.error().message,
          "the file holds the service principal's secret on one line (mode 0600)"};
    std::string s(util::trim(*f));
    std::fill(f->begin(), f->end(), '\0');
    if (s.empty()) return Error{"client-secret-file " + ident.client_secret_file + " is empty", ""};
    return std::unique_ptr<TokenSource>(
        new OAuthTokenSource(Method::ClientSecret, ident, http, std::move(o),
                             remote::Secret(std::move(s)), "client-secret-file", "", "", {}));
  }
  if (std::string s = env("AZURE_CLIENT_SECRET"); !s.empty()) {
    if (auto e = need_app()) return *e;
    return std::unique_ptr<TokenSource>(
        new OAuthTokenSource(Method::ClientSecret, ident, http, std::move(o),
                             remote::Secret(std::move(s)), "AZURE_CLIENT_SECRET", "", "", {}));
  }
  if (std::string f = env("AZURE_FEDERATED_TOKEN_FILE"); !f.empty()) {
    if (auto e = need_app()) return *e;
    return std::unique_ptr<TokenSource>(
        new OAuthTokenSource(Method::FederatedToken, ident, http, std::move(o), {}, "", f, "", {}));
  }
  std::string ep = env("IDENTITY_ENDPOINT"), hdr = env("IDENTITY_HEADER");
  if (!ep.empty() && !hdr.empty())
    return std::unique_ptr<TokenSource>(new OAuthTokenSource(Method::ManagedIdentity, ident, http,
                                                             std::move(o), {}, "", "", ep,
                                                             remote::Secret(std::move(hdr))));
  return Error{"no Azure credentials",
               "give azure.client-secret-file in config.yaml, or set AZURE_CLIENT_SECRET, "
               "AZURE_FEDERATED_TOKEN_FILE, or run where IDENTITY_ENDPOINT/IDENTITY_HEADER are "
               "set (docs/azure.md)"};
}

}  // namespace pai::azure
