#pragma once
// Azure Resource Manager over lib/http: requests with api-version, a bearer
// token and an x-ms-client-request-id, and ONE long-running-operation engine
// for every resource type (Azure/azure-resource-manager-rpc v1.0,
// async-api-reference.md):
//
//  * 201/202 with Azure-AsyncOperation: GET that URL until its `status` is
//    Succeeded, Failed or Canceled; a PUT then reads the resource once more.
//  * 202 with Location (no Azure-AsyncOperation): GET it while it answers 202;
//    the first other answer is the operation's result.
//  * 200/201 with a non-terminal properties.provisioningState and neither
//    header: GET the resource until the state is terminal.
//  * Retry-After (seconds) sets every wait (`max_poll_wait_s` at most); without
//    it, `default_wait_s`. The whole operation ends by `operation_timeout_s`.
//  * A failed poll (network, 5xx, 404, 429) is a failed read of the status,
//    not a failed operation: the engine waits and polls again.
//
// Every request is retried here, never below (lib/http runs with one attempt):
//  * 429 waits its Retry-After (`max_throttle_wait_s` at most);
//  * 409/429 AnotherOperationInProgress, RetryableErrorDueToAnotherOperation
//    (another operation holds the resource) back off exponentially;
//  * transport failures, 408 and 5xx back off exponentially;
//  (a Retry-After on any of these sets the wait instead of the backoff, up to
//  `max_retry_after_s`);
//  * 401 InvalidAuthenticationToken/ExpiredAuthenticationToken renews the token once.
// Bounds: one request with its retries for transport failures, 408 and 5xx
// ends by `request_deadline_s` (a retry that could not finish before it is not
// started; 4 attempts' worth, as lib/http's REST and HiveD clients); the 429
// waits of one request add up to `max_throttle_wait_s` at most. Every wait of a
// second or more is announced (`on_wait`) before it starts, and `cancelled`
// (checked before each request and during each wait) ends it at once.
// A 2xx answer whose body should be a JSON object and is not (not JSON, a
// number out of range, empty) is an error naming the resource and what came
// back (truncated), never a resource that "is missing".
// The remaining-request counts ARM sends (x-ms-ratelimit-remaining-*) are kept
// in the statistics, and a request waits a little when one runs low.
// Tokens and bodies never reach the log; each log line has the method, the
// path, the status, the time and the client request id (and ARM's request id).
// URLs from Location, Azure-AsyncOperation and nextLink are followed only on
// the ARM endpoint's host, so the token never travels elsewhere.

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "azure/auth.h"
#include "azure/clock.h"
#include "http/client.h"
#include "util/result.h"

namespace pai::azure {

// A wait of the client, announced before it starts: "waiting 30 s for ARM
// (503 Service Unavailable, Retry-After) before GET /subscriptions/...".
struct ArmWait {
  double seconds = 0;
  std::string why;    // "503 Service Unavailable, Retry-After", "the operation is in progress"
  std::string what;   // "GET /subscriptions/..."
  bool poll = false;  // between polls of a long-running operation
  std::string line() const;
};

struct ArmOptions {
  Endpoints endpoints;
  Clock clock;
  std::function<void(const std::string&)> log;
  // Every wait of a second or more, before it starts. May be null.
  std::function<void(const ArmWait&)> on_wait;
  // True once the user asked to stop (Ctrl-C): no further request is sent and
  // a wait ends within a quarter of a second. May be null.
  std::function<bool()> cancelled;
  double default_wait_s = 60;         // between polls when Retry-After is missing (the contract's)
  double max_poll_wait_s = 600;       // the longest Retry-After honoured between polls
  double max_throttle_wait_s = 1200;  // the 429 Retry-After waits of one request, in all
  double max_retry_after_s = 30;      // the longest Retry-After of a 5xx, 408 or contention answer
  double attempt_timeout_s = 120;     // one HTTP attempt's limit (the http::Client's timeout)
  double request_deadline_s = 480;    // one request with its retries (429 waits aside)
  int max_throttle_retries = 8;
  int max_transient_retries = 5;
  double transient_base_s = 2;  // 2, 4, 8, ... capped at 60
  int max_contention_retries = 8;
  double contention_base_s = 5;  // 5, 10, 20, ... capped at 60
  int max_failed_polls = 10;     // consecutive failed status reads before giving up
  double operation_timeout_s = 3 * 3600;
  int low_remaining = 5;  // below this many remaining requests, wait before the next
};

struct ArmResponse {
  long status = 0;
  nlohmann::json body;  // null when empty or not JSON
  std::vector<http::Header> headers;
  std::string client_request_id;
  std::string request_id;  // x-ms-request-id
  // The body's first bytes, printable, when it is not empty and not JSON.
  std::string unreadable;
  // When retries ended without success: "after 5 attempts in 150 s".
  std::string gave_up;
  std::string header(std::string_view name) const;
};

struct ArmStats {
  int requests = 0;  // every HTTP request sent (retries included), token requests excluded
  int polls = 0;     // of them, status reads of long-running operations
  int throttled = 0;
  int contention = 0;
  int transient = 0;
  double waited_s = 0;       // time slept, every kind
  double poll_waited_s = 0;  // of it, Retry-After waits between polls
  long min_remaining_reads = -1;
  long min_remaining_writes = -1;
  std::map<std::string, int> by_method;  // "PUT" -> count
};

class ArmClient {
 public:
  ArmClient(http::Client& http, TokenSource& tokens, ArmOptions o);

  // One logical request: `path` is relative to the ARM endpoint (api-version is
  // appended) or an absolute URL on its host (used as it is). Retries as the
  // top of this file says; any final HTTP status comes back as a response, only
  // a transport failure or a refused sign-in is an error.
  util::Result<ArmResponse> request(const std::string& method, const std::string& path,
                                    const std::string& api_version,
                                    const nlohmann::json* body = nullptr,
                                    const std::vector<http::Header>& extra = {});

  // GET; 404 is a response (status 404), other non-2xx answers are errors.
  util::Result<ArmResponse> get(const std::string& path, const std::string& api_version);
  // PUT and wait for the operation; the resource as GET shows it at the end.
  util::Result<nlohmann::json> put(const std::string& path, const std::string& api_version,
                                   const nlohmann::json& body,
                                   const std::vector<http::Header>& extra = {});
  // DELETE and wait until it is gone. true when it existed (false: 204).
  util::Result<bool> remove(const std::string& path, const std::string& api_version);
  // GET a collection, following nextLink; the items of every page's `value`.
  util::Result<std::vector<nlohmann::json>> list(const std::string& path,
                                                 const std::string& api_version);

  // The long-running-operation engine on its own: `first` is the answer to
  // `method` (PUT or DELETE) on `path`. For a PUT, the resource at the end; for
  // a DELETE, null.
  util::Result<nlohmann::json> wait(const std::string& method, const std::string& path,
                                    const std::string& api_version, const ArmResponse& first);

  ArmStats stats() const;
  const ArmOptions& options() const { return opt_; }

 private:
  std::string url_for(const std::string& path, const std::string& api_version) const;
  // Waits `s` seconds (announced when it is one or more), or returns the
  // cancellation's error.
  util::Result<void> pause(double s, bool poll_wait, const std::string& why,
                           const std::string& what);
  std::optional<util::Error> cancellation(const std::string& what) const;
  void observe_limits(const ArmResponse& r, const std::string& method);
  util::Result<nlohmann::json> wait_resource(const std::string& path,
                                             const std::string& api_version, double deadline);

  http::Client& http_;
  TokenSource& tokens_;
  ArmOptions opt_;
  mutable std::mutex mu_;
  ArmStats stats_;
};

// An ARM error answer as one line with its code:
// "409 Conflict: AnotherOperationInProgress: Operation ... (details: Code: message; ...)".
// Accepts {"error":{code,message,details}} and Compute's unwrapped {code,message}.
std::string format_arm_error(long status, const nlohmann::json& body);
// The error code of an answer ("AnotherOperationInProgress"), or "".
std::string arm_error_code(const nlohmann::json& body);

// Operations' and resources' terminal states.
bool is_terminal_state(std::string_view s);

}  // namespace pai::azure
