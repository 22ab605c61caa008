#pragma once
// HTTP for paictl: one small interface (`Client`) and its libcurl
// implementation (`CurlClient`).
//
// - Connect and total timeouts per attempt.
// - Retries with exponential backoff and jitter, for failures where a retry is
//   safe: connection failures (the request never left), 429 (refused before it
//   was handled; Retry-After is honoured), and 502/503/504 or timeouts only for
//   idempotent requests. A POST is never sent twice once the server may have
//   acted on it.
// - TLS is verified; a CA bundle can be given (--ca-file), and verification is
//   off only when the user says so (--insecure).
// - Proxies come from the environment as libcurl reads them (http_proxy,
//   https_proxy, HTTPS_PROXY, all_proxy, no_proxy; upper-case HTTP_PROXY is
//   ignored on purpose, see "httpoxy").
// - Redirects are not followed: a token must not travel to another host.
// - Nothing here prints. An optional log callback gets one line per attempt
//   with the method, a redacted URL, the status and the time; never headers or
//   bodies.

#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pai::http {

struct Header {
  std::string name;
  std::string value;
};

struct Request {
  std::string method = "GET";
  std::string url;
  std::vector<Header> headers;
  std::string body;
  // Whether sending it twice is harmless. Unset: GET, HEAD, PUT, DELETE and
  // OPTIONS are; POST and PATCH are not.
  std::optional<bool> idempotent;
  bool is_idempotent() const;
};

struct Response {
  long status = 0;
  std::vector<Header> headers;  // names in lower case
  std::string body;
  // The last value of a header (name in any case), or "".
  std::string header(std::string_view name) const;
};

enum class ErrorKind {
  None,
  Resolve,   // the host name does not resolve
  Connect,   // nothing listens, or the connection was refused/unreachable
  Timeout,   // connect or total timeout
  Tls,       // certificate or handshake failure
  Proxy,     // the proxy failed
  Send,      // the connection broke while sending
  Receive,   // the connection broke while receiving
  TooLarge,  // the response exceeded the size limit
  Redirect,  // the server answered with a redirect (not followed)
  Other,
};
std::string_view to_string(ErrorKind k);

struct Result {
  ErrorKind error = ErrorKind::None;
  std::string message;  // for transport failures: what went wrong, with the host
  Response response;    // the last response (status 0 on transport failure)
  int attempts = 0;
  double elapsed_ms = 0;
  bool ok() const { return error == ErrorKind::None; }
};

struct RetryPolicy {
  int max_attempts = 4;           // the first try included; 1 disables retries
  double base_delay_s = 0.5;      // the first backoff is base..2*base with jitter
  double max_delay_s = 8;         // cap of one backoff
  double max_retry_after_s = 60;  // a longer Retry-After is reported, not waited for
};

struct TlsOptions {
  std::string ca_file;    // PEM bundle to verify the server with (else the system store)
  bool insecure = false;  // skip verification: only when the user asks for it
};

struct Options {
  double connect_timeout_s = 10;
  double timeout_s = 60;  // whole request, per attempt
  RetryPolicy retry;
  TlsOptions tls;
  std::string user_agent;  // default "paictl/<version>"
  size_t max_response_bytes = 64u << 20;
  // One line per attempt, for -v. Never contains headers, bodies or tokens.
  std::function<void(const std::string&)> log;
  // Replaces the sleep between attempts (tests); gets seconds.
  std::function<void(double)> sleep;
  // True once the user asked to stop: a transfer under way ends within about a
  // second ("HOST: interrupted", ErrorKind::Other). May be null.
  std::function<bool()> cancelled;
  // Seed of the jitter; 0 picks a random one.
  uint64_t seed = 0;
};

class Client {
 public:
  virtual ~Client() = default;
  // Sends with the client's retry policy. Safe to call from several threads.
  virtual Result send(const Request& r) = 0;
};

class CurlClient : public Client {
 public:
  explicit CurlClient(Options o = {});
  ~CurlClient() override;
  CurlClient(const CurlClient&) = delete;
  CurlClient& operator=(const CurlClient&) = delete;
  Result send(const Request& r) override;
  const Options& options() const { return opt_; }

 private:
  struct Pool;
  Result send_once(const Request& r);
  Options opt_;
  std::unique_ptr<Pool> pool_;
};

// --- the retry policy, on its own for tests ------------------------------------

struct RetryDecision {
  bool retry = false;
  double delay_s = 0;
  std::string reason;   // "503 Service Unavailable", "connection refused", ...
  std::string why_not;  // set when a retryable failure is not retried (e.g. a POST)
};

// After attempt number `attempt` (1-based) of `r` ended with `res`: retry, and
// after how long? `jitter` in [0, 1) picks the point in the backoff window.
// `now` is used to read Retry-After dates.
RetryDecision decide_retry(const Request& r, const Result& res, int attempt, const RetryPolicy& p,
                           double jitter, std::time_t now);

// Retry-After as seconds from `now`: delta-seconds or an HTTP-date. nullopt if malformed.
std::optional<double> parse_retry_after(std::string_view value, std::time_t now);

// --- helpers ---------------------------------------------------------------------

// Percent-encodes everything but unreserved characters (RFC 3986).
std::string url_encode(std::string_view s);
// application/x-www-form-urlencoded
std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields);
// The URL without user info, and with the values of query parameters that look
// like credentials (token, access_token, password, key, sig...) replaced by "***".
std::string redact_url(std::string_view url);
// The URL without its user info ("http://user:pw@host/x" -> "http://host/x").
// `had_userinfo` is set when there was some.
std::string strip_userinfo(std::string_view url, bool* had_userinfo = nullptr);
// "host:port" of a URL, for messages.
std::string host_of(std::string_view url);
// The reason phrase of a status code ("Not Found").
std::string_view reason_phrase(long status);

}  // namespace pai::http
