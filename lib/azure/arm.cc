#include "azure/arm.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "util/json.h"
#include "util/printable.h"
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

// The first bytes of a body that is not JSON, safe to print on one line.
std::string arm_excerpt(const std::string& body) {
  constexpr size_t kMax = 120;
  std::string head = body.substr(0, kMax);
  std::string out;
  for (char c : util::printable(head)) out += c == '\n' || c == '\r' || c == '\t' ? ' ' : c;
  if (body.size() > kMax) out += "... (" + std::to_string(body.size()) + " bytes)";
  return out;
}

// A 2xx answer whose body must be a JSON object and is not: what came back.
std::optional<Error> arm_not_object(const std::string& what, const ArmResponse& r) {
  if (r.body.is_object()) return std::nullopt;
  std::string got = !r.unreadable.empty() ? "a body that is not JSON: \"" + r.unreadable + "\""
                    : r.body.is_null()
                        ? std::string("an empty body")
                        : "JSON that is not an object: " + arm_excerpt(util::dump_json(r.body));
  return Error{"ARM " + what + ": " + std::to_string(r.status) + " " +
                   std::string(http::reason_phrase(r.status)) + " with " + got +
                   " (x-ms-client-request-id " + r.client_request_id + ")",
               "ARM answers with a JSON object; check --arm-endpoint / PAICTL_ARM_ENDPOINT and "
               "any proxy in between"};
}

std::string arm_gave_up(const ArmResponse& r) {
  return r.gave_up.empty() ? "" : ", " + r.gave_up;
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

std::string ArmWait::line() const {
  return "waiting " + fmt_seconds(seconds) + " s for ARM (" + why + ")" +
         (what.empty() ? "" : (poll ? " on " : " before ") + what);
}

std::optional<Error> ArmClient::cancellation(const std::string& what) const {
  if (opt_.cancelled && opt_.cancelled())
    return Error{"ARM " + what + ": interrupted; nothing more was sent",
                 "what Azure had accepted goes on there; paictl install plans again from what "
                 "Azure shows"};
  return std::nullopt;
}

Result<void> ArmClient::pause(double s, bool poll_wait, const std::string& why,
                              const std::string& what) {
  if (auto c = cancellation(what)) return *c;
  if (s <= 0) return {};
  if (s >= 1 && opt_.on_wait) opt_.on_wait(ArmWait{s, why, what, poll_wait});
  double slept = 0;
  if (!opt_.cancelled) {
    opt_.clock.sleep(s);
    slept = s;
  } else {
    // In slices, so that a cancellation ends the wait soon.
    while (slept < s) {
      double slice = std::min(0.25, s - slept);
      opt_.clock.sleep(slice);
      slept += slice;
      if (opt_.cancelled()) break;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.waited_s += slept;
    if (poll_wait) stats_.poll_waited_s += slept;
  }
  if (auto c = cancellation(what)) return *c;
  return {};
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
    (void)pause(1, false, "few requests left in this subscription's window", "");
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
  const double started = opt_.clock.now();
  double throttle_waited = 0;
  const std::string what = method + " " + short_path(url);
  for (;;) {
    if (auto c = cancellation(what)) return *c;
    auto tok = tokens_.token(false);
    if (!tok.ok()) return tok.error();
    r.headers[auth_index].value = "Bearer " + *tok;
    auto res = http_.send(r);
    r.headers[auth_index].value.clear();
    ArmResponse out;
    out.status = res.response.status;
    out.headers = res.response.headers;
    out.body = parse_body(res.response.body);
    if (out.body.is_null() && !res.response.body.empty())
      out.unreadable = arm_excerpt(res.response.body);
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
      std::string line = "ARM " + what + " -> ";
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
    if (auto c = cancellation(what)) return *c;
    if (res.ok()) observe_limits(out, method);
    std::optional<double> retry_after;
    if (res.ok())
      retry_after = http::parse_retry_after(out.header("retry-after"), std::time(nullptr));

    std::optional<Error> stopped;
    auto gave_up = [&] {
      return "after " + std::to_string(throttled + contention + transient + 1) + " attempts in " +
             fmt_seconds(opt_.clock.now() - started) + " s";
    };
    // Kinds: 't' transport/5xx (bounded by the request's deadline), 'c'
    // contention, 'q' throttled (bounded by max_throttle_wait_s in all).
    auto retry = [&](char kind, int& count, int max, double delay, const std::string& why) {
      if (count >= max) return false;
      if (kind == 't' &&
          opt_.clock.now() + delay + opt_.attempt_timeout_s > started + opt_.request_deadline_s) {
        if (opt_.log)
          opt_.log("ARM: " + why + "; not retrying " + what + ": another attempt could end after " +
                   fmt_seconds(opt_.request_deadline_s) + " s");
        return false;
      }
      if (kind == 'q') {
        if (throttle_waited + delay > opt_.max_throttle_wait_s) {
          if (opt_.log)
            opt_.log("ARM: throttled for " + fmt_seconds(delay) + " s more, beyond " +
                     fmt_seconds(opt_.max_throttle_wait_s) + " s in all; giving up");
          return false;
        }
        throttle_waited += delay;
      }
      ++count;
      if (opt_.log)
        opt_.log("ARM: " + why + "; retrying " + what + " in " + fmt_seconds(delay) +
                 " s (x-ms-client-request-id " + crid + ")");
      auto p = pause(delay, false, why + (retry_after ? ", Retry-After" : ""), what);
      if (!p.ok()) {
        stopped = p.error();
        return false;
      }
      return true;
    };
    auto backoff = [](double base, int n) { return std::min(60.0, base * std::pow(2.0, n)); };

    if (!res.ok()) {
      if (res.error == http::ErrorKind::Tls || res.error == http::ErrorKind::Redirect)
        return Error{"ARM " + what + ": " + res.message,
                     res.error == http::ErrorKind::Tls
                         ? "check --ca-file / PAICTL_CA_FILE and --arm-endpoint"
                         : ""};
      {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.transient++;
      }
      if (retry('t', transient, opt_.max_transient_retries,
                backoff(opt_.transient_base_s, transient), res.message))
        continue;
      if (stopped) return *stopped;
      return Error{"ARM " + what + ": " + res.message + " (" + gave_up() + ")",
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
      double d = retry_after ? std::min(*retry_after, opt_.max_retry_after_s)
                             : backoff(opt_.contention_base_s, contention);
      if (retry('c', contention, opt_.max_contention_retries, d,
                "another operation holds the resource (" + code + ")"))
        continue;
      if (stopped) return *stopped;
      out.gave_up = gave_up();
      return out;
    }
    if (out.status == 429) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.throttled++;
      }
      double d = retry_after.value_or(opt_.default_wait_s);
      if (retry('q', throttled, opt_.max_throttle_retries, d, "throttled (429)")) continue;
      if (stopped) return *stopped;
      out.gave_up = gave_up();
      return out;
    }
    if (out.status == 408 || out.status >= 500) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.transient++;
      }
      double d = retry_after ? std::min(*retry_after, opt_.max_retry_after_s)
                             : backoff(opt_.transient_base_s, transient);
      if (retry('t', transient, opt_.max_transient_retries, d,
                std::to_string(out.status) + " " + std::string(http::reason_phrase(out.status))))
        continue;
      if (stopped) return *stopped;
      out.gave_up = gave_up();
      return out;
    }
    return out;
  }
}

Result<ArmResponse> ArmClient::get(const std::string& path, const std::string& api_version) {
  auto r = request("GET", path, api_version);
  if (!r.ok()) return r;
  if (r->status == 200) {
    if (auto e = arm_not_object("GET " + path, *r)) return *e;
    return r;
  }
  if (r->status == 404) return r;
  return Error{"ARM GET " + path + ": " + format_arm_error(r->status, r->body) +
                   " (x-ms-client-request-id " + r->client_request_id + arm_gave_up(*r) + ")",
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
                     " (x-ms-client-request-id " + r->client_request_id + arm_gave_up(*r) + ")",
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
                     " (x-ms-client-request-id " + r->client_request_id + arm_gave_up(*r) + ")",
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
                       r->client_request_id + arm_gave_up(*r) + ")",
                   ""};
    if (auto e = arm_not_object("GET " + short_path(url_for(next, api)), *r)) return *e;
    if (r->body.contains("value") && !r->body["value"].is_array())
      return Error{"ARM GET " + short_path(url_for(next, api)) +
                       ": a list whose \"value\" is not an array: " +
                       arm_excerpt(util::dump_json(r->body["value"])) +
                       " (x-ms-client-request-id " + r->client_request_id + ")",
                   ""};
    if (r->body.contains("value"))
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
    if (!g.ok() && (cancellation(path) || !tokens_.token(false).ok())) return g.error();
    if (g.ok() && g->status == 200) {
      if (auto e = arm_not_object("GET " + path, *g)) return *e;
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
    double d = opt_.default_wait_s;
    if (g.ok())
      if (auto ra = http::parse_retry_after(g->header("retry-after"), std::time(nullptr)))
        d = std::min(*ra, opt_.max_poll_wait_s);
    if (opt_.clock.now() + d > deadline)
      return Error{"ARM PUT " + path + ": still provisioning after " +
                       fmt_seconds(opt_.operation_timeout_s) + " s",
                   ""};
    if (auto p = pause(d, true, "the resource is being provisioned", "PUT " + path); !p.ok())
      return p.error();
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
      if (auto e = arm_not_object("PUT " + path, first)) return *e;
      std::string st = provisioning_state(first.body);
      if (st.empty() || st == "Succeeded") return first.body;
      if (st == "Failed" || st == "Canceled")
        return Error{what + ": the resource's provisioningState is " + st, ""};
      if (auto w =
              pause(wait_after(first), true, "the resource is being provisioned", "PUT " + path);
          !w.ok())
        return w.error();
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
    if (auto w = pause(d, true, "the operation is in progress", method + " " + path); !w.ok())
      return w.error();
    auto p = request("GET", url, "");
    if (!p.ok()) {
      // A refused URL, a failed sign-in (the token source answers it at once
      // from then on) or a cancellation will not get better by polling.
      if (p.error().message.rfind("refusing", 0) == 0 || cancellation(what) ||
          !tokens_.token(false).ok() || ++failed > opt_.max_failed_polls)
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
