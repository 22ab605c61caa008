#pragma once
// A test implementation of http::Client (as ninja's VirtualFileSystem stands in
// for its RealDiskInterface): it answers from routes, recorded from a real
// server or written by the test, and keeps every request it was sent so a test
// can assert on exactly what went over the wire. No sockets, no threads, no
// retries: code under test sees the answers a server gave, instantly.
//
// Routes are JSON (see routes_from_json):
//   [{"request":  {"method": "GET", "path": "/rest-server/api/v2/info",
//                  "host": "pai.example:80",           (optional; default any host)
//                  "query": {"vc": "research"},        (optional; these must be present)
//                  "headers": {"authorization": "Bearer t"}, (optional; "" = must be absent)
//                  "body": "username=..."},            (optional; exact)
//     "responses": [{"status": 200, "headers": {"content-type": "application/json"},
//                    "body": "...text..." | {json}, "error": "connect", "message": "..."}],
//     "times": 1}]                                     (optional; answers before it stops matching)
// A route answers its responses in order and then repeats the last one. When
// several routes match, the one added last wins, so a test can load a recording
// and then override one answer.

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "http/client.h"

namespace pai::http {

struct FakeAnswer {
  Response response;
  ErrorKind error = ErrorKind::None;  // a transport failure instead of a response
  std::string message;
};

struct Route {
  std::string method = "GET";
  std::string path;  // exact, without the query
  std::string host;  // "host:port" as host_of() gives it; empty: any
  std::map<std::string, std::string> query;
  std::map<std::string, std::string> headers;  // names in lower case; "" means absent
  std::optional<std::string> body;
  std::vector<FakeAnswer> answers;
  int times = -1;  // -1: always
};

// A request as the fake received it, split for assertions.
struct SeenRequest {
  std::string method;
  std::string url;
  std::string host;
  std::string path;                            // percent-decoded
  std::map<std::string, std::string> query;    // percent-decoded
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  bool matched = false;
  bool has_header(const std::string& name) const { return headers.count(name) > 0; }
  std::string header(const std::string& name) const;
};

class FakeClient : public Client {
 public:
  FakeClient() = default;
  explicit FakeClient(std::vector<Route> routes) : routes_(std::move(routes)) {}

  // Takes precedence over the routes added before it.
  void add(Route r);
  // A route with one answer: `status` and `body` (JSON text unless content_type says otherwise).
  void add(const std::string& method, const std::string& path, long status, std::string body,
           std::string content_type = "application/json; charset=utf-8");

  // Unmatched requests get ErrorKind::Other with "no fake route for ..." and
  // are kept in requests() with matched = false.
  Result send(const Request& r) override;

  std::vector<SeenRequest> requests() const;
  void clear_requests();
  // Requests no route answered.
  std::vector<SeenRequest> unmatched() const;

 private:
  mutable std::mutex mu_;
  std::vector<Route> routes_;
  std::vector<int> served_;  // answers given per route
  std::vector<SeenRequest> seen_;
};

// Parses routes (the format above). On error returns {} and sets `error`.
std::vector<Route> routes_from_json(const std::string& text, std::string* error);

// Splits a URL into host, decoded path and decoded query parameters.
SeenRequest parse_request(const Request& r);

}  // namespace pai::http
