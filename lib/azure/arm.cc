#include "azure/arm.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "util/json.h"
#include "util/strings.h"

namespace pai::azure {

namespace {

using util::Error;
using util::Result;

std::string short_path(const std::string& url) {
  // The path and query without the scheme and host, for log lines.
  auto p = url.find("://");
  if (p == std::string::npos) return url;
  auto s = url.find('/', p + 3);
  return s == std::string::npos ? "/" : url.substr(s);
}

std::string fmt_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10 ? "%.1f" : "%.0f", s);
  return buf;
}

bool contention_code(const std::string& code) {
  return code == "AnotherOperationInProgress" || code == "RetryableErrorDueToAnotherOperation" ||
         code == "OperationPreempted" || code == "Conflict.AnotherOperationInProgress";
}

nlohmann::json parse_body(const std::string& text) {
  if (text.empty()) return nullptr;
  auto j = util::parse_json_or_discarded(text);
  return j.is_discarded() ? nlohmann::json(nullptr) : j;
}

std::string provisioning_state(const nlohmann::json& body) {
  if (body.is_object() && body.contains("properties") && body["properties"].is_object()) {
    const auto& p = body["properties"];
    if (p.contains("provisioningState") && p["provisioningState"].is_string())
      return p["provisioningState"].get<std::string>();
  }
  return "";
}

}  // namespace

bool is_terminal_state(std::string_view s) {
  return s == "Succeeded" || s == "Failed" || s == "Canceled";
}

std::string ArmResponse::header(std::string_view name) const {
  std::string lower = util::to_lower(name);
  std::string v;
  for (const auto& h : headers)
    if (h.name == lower) v = h.value;
  return v;
}

std::string arm_error_code(const nlohmann::json& body) {
  if (!body.is_object()) return "";
  const nlohmann::json* e = &body;
  if (body.contains("error") && body["error"].is_object()) e = &body["error"];
  if (e->contains("code") && (*e)["code"].is_string()) return (*e)["code"].get<std::string>();
  return "";
}

std::string format_arm_error(long status, const nlohmann::json& body) {
  std::string out;
  if (status > 0) out = std::to_string(status) + " " + std::string(http::reason_phrase(status));
  const nlohmann::json* e = nullptr;
  if (body.is_object()) {
    e = body.contains("error") && body["error"].is_object() ? &body["error"] : &body;
    if (!e->contains("code") && !e->contains("message")) e = nullptr;
  }
  if (!e) return out.empty() ? "no details" : out;
  auto str = [](const nlohmann::json& o, const char* k) {
    return o.contains(k) && o[k].is_string() ? o[k].get<std::string>() : std::string();
  };
  std::string code = str(*e, "code"), msg = str(*e, "message");
  // One readable line: newlines in messages become spaces.
  auto flat = [](std::string s) {
    for (char& c : s)
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    return s;
  };
  if (!out.empty()) out += ": ";
  out += code.empty() ? flat(msg) : code + (msg.empty() ? "" : ": " + flat(msg));
  if (e->contains("details") && (*e)["details"].is_array() && !(*e)["details"].empty()) {
    std::vector<std::string> parts;
    for (const auto& d : (*e)["details"]) {
      if (!d.is_object()) continue;
      std::string dc = str(d, "code"), dm = str(d, "message");
      if (dc.empty() && dm.empty()) continue;
      parts.push_back(dc + (dm.empty() ? "" : (dc.empty() ? "" : ": ") + flat(dm)));
      if (parts.size() == 5) break;
    }
    if (!parts.empty()) out += " (details: " + util::join(parts, "; ") + ")";
  }
  return out;
}

ArmClient::ArmClient(http::Client& http, TokenSource& tokens, ArmOptions o)
    : http_(http), tokens_(tokens), opt_(std::move(o)) {
  if (!opt_.clock.now || !opt_.clock.sleep) opt_.clock = Clock::real();
}

ArmStats ArmClient::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::string ArmClient::url_for(const std::string& path, const std::string& api_version) const {
  if (path.rfind("https://", 0) == 0 || path.rfind("http://", 0) == 0) return path;
  std::string url = opt_.endpoints.arm + path;
  if (!api_version.empty())
    url += (path.find('?') == std::string::npos ? "?" : "&") + std::string("api-version=") +
           api_version;
  return url;
}

void ArmClient::sleep(double s, bool poll_wait) {
  if (s <= 0) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.waited_s += s;
    if (poll_wait) stats_.poll_waited_s += s;
  }
  opt_.clock.sleep(s);
}

void ArmClient::observe_limits(const ArmResponse& r, const std::string& method) {
  std::string v = r.header(method == "GET" ? "x-ms-ratelimit-remaining-subscription-reads"
                                           : "x-ms-ratelimit-remaining-subscription-writes");
  if (v.empty()) return;
  auto n = util::parse_int(util::trim(v));
  if (!n) return;
  bool low = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    long& m = method == "GET" ? stats_.min_remaining_reads : stats_.min_remaining_writes;
    if (m < 0 || *n < m) m = static_cast<long>(*n);
    low = *n < opt_.low_remaining;
  }
  if (low) {
    if (opt_.log)
      opt_.log("ARM: only " + std::to_string(*n) + " " + (method == "GET" ? "reads" : "writes") +
               " left in this subscription's window; slowing down");
    sleep(1, false);
  }
}

Result<ArmResponse> ArmClient::request(const std::string& method, const std::string& path,
                                       const std::string& api_version, const nlohmann::json* body,
                                       const std::vector<http::Header>& extra) {
  std::string url = url_for(path, api_version);
  if (http::host_of(url) != http::host_of(opt_.endpoints.arm))
    return Error{"refusing to send the ARM token to " + http::host_of(url) +
                     " (not the ARM endpoint " + http::host_of(opt_.endpoints.arm) + ")",
                 "an operation URL pointed outside --arm-endpoint"};
  bool is_poll = path.rfind("https://", 0) == 0 || path.rfind("http://", 0) == 0;
  http::Request r;
  r.method = method;
  r.url = url;
  r.idempotent = true;  // ARM's PUT, GET and DELETE are idempotent
  if (body) {
    r.body = body->dump();
    r.headers.push_back({"Content-Type", "application/json"});
  }
  r.headers.push_back({"Accept", "application/json"});
  std::string crid = new_uuid();
  r.headers.push_back({"x-ms-client-request-id", crid});
  for (const auto& h : extra) r.headers.push_back(h);
  r.headers.push_back({"Authorization", ""});
  size_t auth_index = r.headers.size() - 1;

  int throttled = 0, contention = 0, transient = 0;
  bool renewed = false;
  for (;;) {
    auto tok = tokens_.token(false);
    if (!tok.ok()) return tok.error();
    r.headers[auth_index].value = "Bearer " + *tok;
    auto res = http_.send(r);
    r.headers[auth_index].value.clear();
    ArmResponse out;
    out.status = res.response.status;
    out.headers = res.response.headers;
    out.body = parse_body(res.response.body);
    out.client_request_id = crid;
    out.request_id = res.response.header("x-ms-request-id");
    {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.requests++;
      stats_.by_method[method]++;
      if (is_poll && method == "GET") stats_.polls++;
    }
    std::string code = res.ok() ? arm_error_code(out.body) : "";
    if (opt_.log) {
      std::string line = "ARM " + method + " " + short_path(url) + " -> ";
      line += res.ok()
                  ? std::to_string(out.status) + " " + std::string(http::reason_phrase(out.status))
                  : "failed: " + res.message;
      if (!code.empty() && out.status >= 400) line += " " + code;
      line += " (" + std::to_string(static_cast<long>(res.elapsed_ms)) +
              " ms, x-ms-client-request-id " + crid;
      if (!out.request_id.empty()) line += ", x-ms-request-id " + out.request_id;
      line += ")";
      opt_.log(line);
    }
    if (res.ok()) observe_limits(out, method);
    std::optional<double> retry_after;
    if (res.ok())
      retry_after = http::parse_retry_after(out.header("retry-after"), std::time(nullptr));

    auto retry = [&](int& count, int max, double delay, const std::string& why) {
      if (count >= max) return false;
      ++count;
      if (opt_.log)
        opt_.log("ARM: " + why + "; retrying " + method + " " + short_path(url) + " in " +
                 fmt_seconds(delay) + " s (x-ms-client-request-id " + crid + ")");
      sleep(delay, false);
      return true;
    };
    auto backoff = [](double base, int n) { return std::min(60.0, base * std::pow(2.0, n)); };

    if (!res.ok()) {
      if (res.error == http::ErrorKind::Tls || res.error == http::ErrorKind::Redirect)
        return Error{"ARM " + method + " " + short_path(url) + ": " + res.message,
                     res.error == http::ErrorKind::Tls
                         ? "check --ca-file / PAICTL_CA_FILE and --arm-endpoint"
                         : ""};
      {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.transient++;
      }
      if (retry(transient, opt_.max_transient_retries, backoff(opt_.transient_base_s, transient),
                res.message))
        continue;
      return Error{"ARM " + method + " " + short_path(url) + ": " + res.message + " (after " +
                       std::to_string(transient + 1) + " attempts)",
                   "check --arm-endpoint / PAICTL_ARM_ENDPOINT and the network"};
    }
    if (out.status == 401 && !renewed &&
        (code == "InvalidAuthenticationToken" || code == "ExpiredAuthenticationToken" ||
         code == "AuthenticationFailed" || code.empty())) {
      renewed = true;
      auto t = tokens_.token(true);
      if (!t.ok()) return t.error();
      continue;
    }
    if ((out.status == 409 || out.status == 429) && contention_code(code)) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.contention++;
      }
      // The server's Retry-After sets the interval when it gives one (Addendum.md).
      double d = retry_after ? std::min(*retry_after, opt_.max_poll_wait_s)
                             : backoff(opt_.contention_base_s, contention);
      if (retry(contention, opt_.max_contention_retries, d,
                "another operation holds the resource (" + code + ")"))
        continue;
      return out;
    }
    if (out.status == 429) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.throttled++;
      }
      double d = retry_after.value_or(opt_.default_wait_s);
      if (d > opt_.max_throttle_wait_s) {
        if (opt_.log)
          opt_.log("ARM: throttled for " + fmt_seconds(d) + " s, longer than " +
                   fmt_seconds(opt_.max_throttle_wait_s) + " s; giving up");
        return out;
      }
      if (retry(throttled, opt_.max_throttle_retries, d, "throttled (429)")) continue;
      return out;
    }
    if (out.status == 408 || out.status >= 500) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.transient++;
      }
      double d = retry_after ? std::min(*retry_after, opt_.max_poll_wait_s)
                             : backoff(opt_.transient_base_s, transient);
      if (retry(transient, opt_.max_transient_retries, d,
                std::to_string(out.status) + " " + std::string(http::reason_phrase(out.status))))
        continue;
      return out;
    }
    return out;
  }
}

Result<ArmResponse> ArmClient::get(const std::string& path, const std::string& api_version) {
  auto r = request("GET", path, api_version);
  if (!r.ok()) return r;
  if (r->status == 200 || r->status == 404) return r;
  return Error{"ARM GET " + path + ": " + format_arm_error(r->status, r->body) +
                   " (x-ms-client-request-id " + r->client_request_id + ")",
               r->status == 403 ? "the service principal needs a role on the subscription or "
                                  "resource group (docs/azure.md)"
                                : ""};
}

Result<nlohmann::json> ArmClient::put(const std::string& path, const std::string& api_version,
                                      const nlohmann::json& body,
                                      const std::vector<http::Header>& extra) {
  auto r = request("PUT", path, api_version, &body, extra);
  if (!r.ok()) return r.error();
  if (r->status != 200 && r->status != 201 && r->status != 202)
    return Error{"ARM PUT " + path + ": " + format_arm_error(r->status, r->body) +
                     " (x-ms-client-request-id " + r->client_request_id + ")",
                 r->status == 403 ? "the service principal needs Contributor on the subscription "
                                    "or resource group (docs/azure.md)"
                                  : ""};
  return wait("PUT", path, api_version, *r);
}

Result<bool> ArmClient::remove(const std::string& path, const std::string& api_version) {
  auto r = request("DELETE", path, api_version);
  if (!r.ok()) return r.error();
  if (r->status == 204 || r->status == 404) return false;
  if (r->status != 200 && r->status != 202)
    return Error{"ARM DELETE " + path + ": " + format_arm_error(r->status, r->body) +
                     " (x-ms-client-request-id " + r->client_request_id + ")",
                 ""};
  auto w = wait("DELETE", path, api_version, *r);
  if (!w.ok()) return w.error();
  return true;
}

Result<std::vector<nlohmann::json>> ArmClient::list(const std::string& path,
                                                    const std::string& api_version) {
  std::vector<nlohmann::json> items;
  std::string next = path;
  std::string api = api_version;
  for (int page = 0; page < 10000 && !next.empty(); ++page) {
    auto r = request("GET", next, api);
    if (!r.ok()) return r.error();
    if (r->status != 200)
      return Error{"ARM GET " + short_path(url_for(next, api)) + ": " +
                       format_arm_error(r->status, r->body) + " (x-ms-client-request-id " +
                       r->client_request_id + ")",
                   ""};
    if (r->body.is_object() && r->body.contains("value") && r->body["value"].is_array())
      for (auto& v : r->body["value"]) items.push_back(std::move(v));
    next.clear();
    if (r->body.is_object() && r->body.contains("nextLink") && r->body["nextLink"].is_string())
      next = r->body["nextLink"].get<std::string>();
    api.clear();  // nextLink carries its own query
  }
  return items;
}

Result<nlohmann::json> ArmClient::wait_resource(const std::string& path,
                                                const std::string& api_version, double deadline) {
  int failed = 0;
  for (;;) {
    auto g = request("GET", path, api_version);
    if (g.ok() && g->status == 200) {
      std::string st = provisioning_state(g->body);
      if (st.empty() || st == "Succeeded") return g->body;
      if (st == "Failed" || st == "Canceled")
        return Error{"ARM PUT " + path + ": the resource's provisioningState is " + st, ""};
      failed = 0;
    } else if (++failed > opt_.max_failed_polls) {
      return Error{"ARM GET " + path + ": " +
                       (g.ok() ? format_arm_error(g->status, g->body) : g.error().message),
                   ""};
    }
    if (opt_.clock.now() > deadline)
      return Error{"ARM PUT " + path + ": still provisioning after " +
                       fmt_seconds(opt_.operation_timeout_s) + " s",
                   ""};
    double d = opt_.default_wait_s;
    if (g.ok())
      if (auto ra = http::parse_retry_after(g->header("retry-after"), std::time(nullptr)))
        d = std::min(*ra, opt_.max_poll_wait_s);
    sleep(d, true);
  }
}

Result<nlohmann::json> ArmClient::wait(const std::string& method, const std::string& path,
                                       const std::string& api_version, const ArmResponse& first) {
  double deadline = opt_.clock.now() + opt_.operation_timeout_s;
  std::string aao = first.header("azure-asyncoperation");
  std::string loc = first.header("location");
  std::string what = "ARM " + method + " " + path;
  auto wait_after = [&](const ArmResponse& r) {
    double d = opt_.default_wait_s;
    if (auto ra = http::parse_retry_after(r.header("retry-after"), std::time(nullptr)))
      d = std::min(*ra, opt_.max_poll_wait_s);
    return d;
  };
  auto final_get = [&]() -> Result<nlohmann::json> {
    if (method != "PUT") return nlohmann::json(nullptr);
    return wait_resource(path, api_version, deadline);
  };

  if (aao.empty() && loc.empty()) {
    if (method == "PUT") {
      std::string st = provisioning_state(first.body);
      if (st.empty() || st == "Succeeded") return first.body;
      if (st == "Failed" || st == "Canceled")
        return Error{what + ": the resource's provisioningState is " + st, ""};
      sleep(wait_after(first), true);
      return wait_resource(path, api_version, deadline);
    }
    if (first.status == 202)
      return Error{what + ": 202 Accepted without Location or Azure-AsyncOperation", ""};
    return nlohmann::json(nullptr);
  }

  bool use_aao = !aao.empty();
  std::string url = use_aao ? aao : loc;
  double d = wait_after(first);
  int failed = 0;
  for (;;) {
    if (opt_.clock.now() + d > deadline)
      return Error{what + ": the operation did not finish within " +
                       fmt_seconds(opt_.operation_timeout_s) + " s",
                   "it may still finish; paictl install shows the state when run again"};
    sleep(d, true);
    auto p = request("GET", url, "");
    if (!p.ok()) {
      // A refused URL or a sign-in failure will not get better by polling.
      if (p.error().message.rfind("refusing", 0) == 0 || ++failed > opt_.max_failed_polls)
        return Error{what + ": cannot read the operation's status: " + p.error().message,
                     p.error().hint};
      d = std::min(60.0, opt_.transient_base_s * std::pow(2.0, failed));
      continue;
    }
    const ArmResponse& r = *p;
    if (use_aao) {
      std::string status;
      if (r.status == 200 && r.body.is_object() && r.body.contains("status") &&
          r.body["status"].is_string())
        status = r.body["status"].get<std::string>();
      if (status.empty()) {
        // Reading the status failed (5xx, 404, 429 after retries, or no body):
        // that says nothing about the operation.
        if (++failed > opt_.max_failed_polls)
          return Error{
              what + ": cannot read the operation's status: " + format_arm_error(r.status, r.body),
              ""};
        if (opt_.log)
          opt_.log("ARM: the status of " + what + " could not be read (" +
                   format_arm_error(r.status, r.body) + "); polling again");
        d = std::max(wait_after(r), std::min(60.0, opt_.transient_base_s * std::pow(2.0, failed)));
        continue;
      }
      failed = 0;
      if (status == "Succeeded") return final_get();
      if (status == "Failed" || status == "Canceled") {
        std::string detail = r.body.contains("error") ? format_arm_error(0, r.body) : "no details";
        return Error{what + ": the operation " + (status == "Failed" ? "failed" : "was canceled") +
                         ": " + detail + " (x-ms-client-request-id " + first.client_request_id +
                         ")",
                     ""};
      }
      d = wait_after(r);
      continue;
    }
    // Location
    if (r.status == 202) {
      failed = 0;
      d = wait_after(r);
      continue;
    }
    if (r.status == 200 || r.status == 201 || r.status == 204) return final_get();
    if (r.status >= 400 && r.status < 500 && r.status != 404 && r.status != 408 &&
        r.status != 429 && !arm_error_code(r.body).empty())
      return Error{what + ": the operation failed: " + format_arm_error(r.status, r.body) +
                       " (x-ms-client-request-id " + first.client_request_id + ")",
                   ""};
    if (++failed > opt_.max_failed_polls)
      return Error{
          what + ": cannot read the operation's status: " + format_arm_error(r.status, r.body), ""};
    d = std::max(wait_after(r), std::min(60.0, opt_.transient_base_s * std::pow(2.0, failed)));
  }
}

}  // namespace pai::azure
