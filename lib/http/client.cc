#include "http/client.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "util/version.h"

namespace pai::http {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return out;
}

std::string trim_ws(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '\n')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n'))
    --e;
  return std::string(s.substr(b, e - b));
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  Response* response;
  size_t limit;
  bool too_large = false;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t len = size * n;
  if (t->response->body.size() + len > t->limit) {
    t->too_large = true;
    return 0;  // aborts the transfer
  }
  t->response->body.append(data, len);
  return len;
}

// Ends a transfer under way once Options::cancelled says so (within a second:
// libcurl calls it about once a second while it waits).
int client_on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancelled = static_cast<const std::function<bool()>*>(user);
  return (*cancelled)() ? 1 : 0;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t len = size * n;
  std::string_view line(data, len);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new response (after 100 Continue, or a proxy's CONNECT): start over.
    t->response->headers.clear();
    return len;
  }
  size_t colon = line.find(':');
  if (colon != std::string_view::npos)
    t->response->headers.push_back({lower(line.substr(0, colon)), trim_ws(line.substr(colon + 1))});
  return len;
}

ErrorKind classify(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_RESOLVE_HOST:
      return ErrorKind::Resolve;
    case CURLE_COULDNT_CONNECT:
      return ErrorKind::Connect;
    case CURLE_OPERATION_TIMEDOUT:
      return ErrorKind::Timeout;
    case CURLE_COULDNT_RESOLVE_PROXY:
      return ErrorKind::Proxy;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_USE_SSL_FAILED:
      return ErrorKind::Tls;
    case CURLE_SEND_ERROR:
      return ErrorKind::Send;
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
      return ErrorKind::Receive;
    case CURLE_WRITE_ERROR:
      return ErrorKind::TooLarge;
    default:
      return ErrorKind::Other;
  }
}

}  // namespace

bool Request::is_idempotent() const {
  if (idempotent) return *idempotent;
  return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE" ||
         method == "OPTIONS";
}

std::string Response::header(std::string_view name) const {
  std::string want = lower(name);
  std::string found;
  for (const auto& h : headers)
    if (h.name == want) found = h.value;
  return found;
}

std::string_view to_string(ErrorKind k) {
  switch (k) {
    case ErrorKind::None:
      return "none";
    case ErrorKind::Resolve:
      return "resolve";
    case ErrorKind::Connect:
      return "connect";
    case ErrorKind::Timeout:
      return "timeout";
    case ErrorKind::Tls:
      return "tls";
    case ErrorKind::Proxy:
      return "proxy";
    case ErrorKind::Send:
      return "send";
    case ErrorKind::Receive:
      return "receive";
    case ErrorKind::TooLarge:
      return "too-large";
    case ErrorKind::Redirect:
      return "redirect";
    case ErrorKind::Other:
      return "other";
  }
  return "other";
}

// A few reusable easy handles keep connections alive between requests.
struct CurlClient::Pool {
  std::mutex mu;
  std::vector<CURL*> idle;
  CURL* acquire() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!idle.empty()) {
        CURL* h = idle.back();
        idle.pop_back();
        curl_easy_reset(h);
        return h;
      }
    }
    return curl_easy_init();
  }
  void release(CURL* h) {
    std::lock_guard<std::mutex> lock(mu);
    if (idle.size() < 8)
      idle.push_back(h);
    else
      curl_easy_cleanup(h);
  }
  ~Pool() {
    for (CURL* h : idle) curl_easy_cleanup(h);
  }
};

CurlClient::CurlClient(Options o) : opt_(std::move(o)), pool_(std::make_unique<Pool>()) {
  global_init();
  if (opt_.user_agent.empty()) opt_.user_agent = std::string("paictl/") + pai::kVersion;
}

CurlClient::~CurlClient() = default;

Result CurlClient::send_once(const Request& r) {
  Result res;
  CURL* h = pool_->acquire();
  if (!h) {
    res.error = ErrorKind::Other;
    res.message = "cannot create a libcurl handle";
    return res;
  }
  Transfer t{&res.response, opt_.max_response_bytes};
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opt_.connect_timeout_s * 1000));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(opt_.timeout_s * 1000));
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_USERAGENT, opt_.user_agent.c_str());
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  if (opt_.cancelled) {
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, client_on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &opt_.cancelled);
  }
  if (opt_.tls.insecure) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  } else {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!opt_.tls.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, opt_.tls.ca_file.c_str());
  }
  if (r.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else if (r.method == "HEAD") {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r.method.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, r.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
  }
  curl_slist* headers = nullptr;
  for (const auto& hd : r.headers)
    headers = curl_slist_append(headers, (hd.name + ": " + hd.value).c_str());
  // No "Expect: 100-continue" round trip for larger bodies.
  headers = curl_slist_append(headers, "Expect:");
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);

  auto start = std::chrono::steady_clock::now();
  CURLcode code = curl_easy_perform(h);
  res.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (code == CURLE_OK) {
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &res.response.status);
    if (res.response.status >= 300 && res.response.status < 400 && res.response.status != 304) {
      res.error = ErrorKind::Redirect;
      std::string to = res.response.header("location");
      res.message = host_of(r.url) + " redirects to " +
                    (to.empty() ? std::string("another address") : redact_url(to)) +
                    "; paictl does not follow redirects (a token must not go to another host)";
    }
  } else {
    res.error = t.too_large ? ErrorKind::TooLarge : classify(code);
    std::string detail = errbuf[0] ? std::string(errbuf) : curl_easy_strerror(code);
    while (!detail.empty() && (detail.back() == '\n' || detail.back() == '.')) detail.pop_back();
    if (res.error == ErrorKind::TooLarge)
      detail =
          "the response is larger than " + std::to_string(opt_.max_response_bytes >> 20) + " MiB";
    if (code == CURLE_ABORTED_BY_CALLBACK) detail = "interrupted";
    res.message = host_of(r.url) + ": " + detail;
    if (res.error == ErrorKind::Tls && !opt_.tls.insecure)
      res.message += opt_.tls.ca_file.empty() ? " (pass --ca-file with the cluster's CA "
                                                "certificate, or --insecure to skip verification)"
                                              : " (with CA file " + opt_.tls.ca_file + ")";
    res.response = Response{};
  }
  curl_slist_free_all(headers);
  pool_->release(h);
  return res;
}

Result CurlClient::send(const Request& r) {
  std::mt19937_64 rng(opt_.seed ? opt_.seed : std::random_device{}());
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Result res;
  double total_ms = 0;
  for (int attempt = 1;; ++attempt) {
    res = send_once(r);
    total_ms += res.elapsed_ms;
    res.attempts = attempt;
    if (opt_.log) {
      std::string line = r.method + " " + redact_url(r.url) + " -> ";
      line += res.ok() || res.error == ErrorKind::Redirect
                  ? std::to_string(res.response.status) + " " +
                        std::string(reason_phrase(res.response.status))
                  : "failed: " + res.message;
      line += " (" + std::to_string(static_cast<long>(res.elapsed_ms)) + " ms";
      if (attempt > 1) line += ", attempt " + std::to_string(attempt);
      line += ")";
      opt_.log(line);
    }
    RetryDecision d = decide_retry(r, res, attempt, opt_.retry, unit(rng), std::time(nullptr));
    if (!d.retry) break;
    if (opt_.log) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f", d.delay_s);
      opt_.log("retrying in " + std::string(buf) + " s: " + d.reason);
    }
    if (opt_.sleep)
      opt_.sleep(d.delay_s);
    else
      std::this_thread::sleep_for(std::chrono::duration<double>(d.delay_s));
  }
  res.elapsed_ms = total_ms;
  return res;
}

std::optional<double> parse_retry_after(std::string_view value, std::time_t now) {
  std::string v = trim_ws(value);
  if (v.empty()) return std::nullopt;
  bool digits = std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) {
    if (v.size() > 9) return 1e9;
    return std::stod(v);
  }
  struct tm tm {};
  const char* end = strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end || *end != '\0') return std::nullopt;
  std::time_t at = timegm(&tm);
  double delta = std::difftime(at, now);
  return delta < 0 ? 0 : delta;
}

RetryDecision decide_retry(const Request& r, const Result& res, int attempt, const RetryPolicy& p,
                           double jitter, std::time_t now) {
  RetryDecision d;
  bool idempotent = r.is_idempotent();
  bool retryable = false;
  bool safe = false;
  std::optional<double> retry_after;
  if (!res.ok()) {
    switch (res.error) {
      case ErrorKind::Resolve:
      case ErrorKind::Connect:
      case ErrorKind::Proxy:
        // Nothing reached the server: safe for any method.
        retryable = safe = true;
        d.reason = res.message;
        break;
      case ErrorKind::Timeout:
      case ErrorKind::Send:
      case ErrorKind::Receive:
        retryable = true;
        safe = idempotent;
        d.reason = res.message;
        break;
      default:
        return d;  // TLS, redirects, oversized answers: retrying changes nothing
    }
  } else {
    long s = res.response.status;
    if (s == 429) {
      // The rate limiter refuses before the request is handled.
      retryable = safe = true;
      d.reason = "429 Too Many Requests";
    } else if (s == 502 || s == 503 || s == 504) {
      retryable = true;
      safe = idempotent;
      d.reason = std::to_string(s) + " " + std::string(reason_phrase(s));
    } else {
      return d;
    }
    std::string ra = res.response.header("retry-after");
    if (!ra.empty()) retry_after = parse_retry_after(ra, now);
  }
  if (!retryable) return d;
  if (!safe) {
    d.why_not = "a " + r.method + " request is not retried after " + d.reason +
                ": the server may have acted on it; check before sending it again";
    return d;
  }
  if (attempt >= p.max_attempts) {
    d.why_not = "gave up after " + std::to_string(attempt) + " attempts";
    return d;
  }
  // Exponential backoff with "equal jitter": half fixed, half random.
  double backoff = std::min(p.max_delay_s, p.base_delay_s * std::pow(2.0, attempt - 1));
  double delay = backoff / 2 + jitter * backoff / 2;
  if (retry_after) {
    if (*retry_after > p.max_retry_after_s) {
      d.why_not = "the server asks to wait " + std::to_string(static_cast<long>(*retry_after)) +
                  " s (Retry-After), more than the " +
                  std::to_string(static_cast<long>(p.max_retry_after_s)) + " s paictl waits";
      return d;
    }
    delay = std::max(delay, *retry_after);
  }
  d.retry = true;
  d.delay_s = delay;
  return d;
}

std::string url_encode(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [k, v] : fields) {
    if (!out.empty()) out += '&';
    out += url_encode(k) + "=" + url_encode(v);
  }
  return out;
}

std::string redact_url(std::string_view url) {
  std::string u(url);
  // user:password@
  size_t scheme = u.find("://");
  size_t host_start = scheme == std::string::npos ? 0 : scheme + 3;
  size_t path_start = u.find_first_of("/?#", host_start);
  size_t at = u.find('@', host_start);
  if (at != std::string::npos && (path_start == std::string::npos || at < path_start))
    u = u.substr(0, host_start) + "***@" + u.substr(at + 1);
  size_t q = u.find('?');
  if (q == std::string::npos) return u;
  std::string out = u.substr(0, q + 1);
  std::string query = u.substr(q + 1);
  std::string frag;
  if (size_t hash = query.find('#'); hash != std::string::npos) {
    frag = query.substr(hash);
    query = query.substr(0, hash);
  }
  size_t pos = 0;
  bool first = true;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    std::string part = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    size_t eq = part.find('=');
    std::string key = lower(part.substr(0, eq));
    bool secret = key.find("token") != std::string::npos ||
                  key.find("password") != std::string::npos ||
                  key.find("secret") != std::string::npos || key == "key" || key == "sig" ||
                  key == "signature" || key.find("auth") != std::string::npos || key == "code";
    if (!first) out += '&';
    first = false;
    out += secret && eq != std::string::npos ? part.substr(0, eq) + "=***" : part;
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return out + frag;
}

std::string strip_userinfo(std::string_view url, bool* had_userinfo) {
  if (had_userinfo) *had_userinfo = false;
  size_t scheme = url.find("://");
  size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  size_t end = url.find_first_of("/?#", start);
  size_t at = url.substr(0, end).rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(url);
  if (had_userinfo) *had_userinfo = true;
  return std::string(url.substr(0, start)) + std::string(url.substr(at + 1));
}

std::string host_of(std::string_view url) {
  size_t scheme = url.find("://");
  size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string host(
      url.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
  size_t at = host.rfind('@');
  if (at != std::string::npos) host = host.substr(at + 1);
  return host;
}

std::string_view reason_phrase(long status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 307:
      return "Temporary Redirect";
    case 308:
      return "Permanent Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "";
  }
}

}  // namespace pai::http
