#include "support/fake_client.h"

#include <nlohmann/json.hpp>

namespace pai::http {

namespace {

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return s;
}

std::string percent_decode(std::string_view s, bool plus_is_space) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else if (plus_is_space && s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

ErrorKind error_kind_of(const std::string& name) {
  for (ErrorKind k : {ErrorKind::Resolve, ErrorKind::Connect, ErrorKind::Timeout, ErrorKind::Tls,
                      ErrorKind::Proxy, ErrorKind::Send, ErrorKind::Receive, ErrorKind::TooLarge,
                      ErrorKind::Redirect, ErrorKind::Other})
    if (to_string(k) == name) return k;
  return ErrorKind::Other;
}

bool matches(const Route& route, const SeenRequest& s) {
  if (route.method != s.method || route.path != s.path) return false;
  if (!route.host.empty() && route.host != s.host) return false;
  for (const auto& [k, v] : route.query) {
    auto it = s.query.find(k);
    if (it == s.query.end() || it->second != v) return false;
  }
  for (const auto& [k, v] : route.headers) {
    auto it = s.headers.find(k);
    if (v.empty()) {
      if (it != s.headers.end()) return false;
    } else if (it == s.headers.end() || it->second != v) {
      return false;
    }
  }
  return !route.body || *route.body == s.body;
}

}  // namespace

std::string SeenRequest::header(const std::string& name) const {
  auto it = headers.find(lower(name));
  return it == headers.end() ? std::string() : it->second;
}

SeenRequest parse_request(const Request& r) {
  SeenRequest s;
  s.method = r.method;
  s.url = r.url;
  s.body = r.body;
  s.host = host_of(r.url);
  size_t scheme = r.url.find("://");
  size_t start = r.url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  std::string rest = start == std::string::npos ? "/" : r.url.substr(start);
  if (size_t hash = rest.find('#'); hash != std::string::npos) rest.resize(hash);
  size_t q = rest.find('?');
  s.path = percent_decode(rest.substr(0, q), false);
  if (q != std::string::npos) {
    std::string query = rest.substr(q + 1);
    size_t pos = 0;
    while (pos <= query.size()) {
      size_t amp = query.find('&', pos);
      std::string part =
          query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
      if (!part.empty()) {
        size_t eq = part.find('=');
        s.query[percent_decode(part.substr(0, eq), true)] =
            eq == std::string::npos ? std::string() : percent_decode(part.substr(eq + 1), true);
      }
      if (amp == std::string::npos) break;
      pos = amp + 1;
    }
  }
  for (const auto& h : r.headers) s.headers[lower(h.name)] = h.value;
  return s;
}

void FakeClient::add(Route r) {
  std::lock_guard<std::mutex> lock(mu_);
  routes_.push_back(std::move(r));
}

void FakeClient::add(const std::string& method, const std::string& path, long status,
                     std::string body, std::string content_type) {
  Route r;
  r.method = method;
  r.path = path;
  FakeAnswer a;
  a.response.status = status;
  a.response.headers.push_back({"content-type", std::move(content_type)});
  a.response.body = std::move(body);
  r.answers.push_back(std::move(a));
  add(std::move(r));
}

Result FakeClient::send(const Request& r) {
  SeenRequest s = parse_request(r);
  std::lock_guard<std::mutex> lock(mu_);
  served_.resize(routes_.size(), 0);
  Result res;
  res.attempts = 1;
  for (size_t i = routes_.size(); i-- > 0;) {
    const Route& route = routes_[i];
    if (route.times >= 0 && served_[i] >= route.times) continue;
    if (!matches(route, s)) continue;
    s.matched = true;
    if (!route.answers.empty()) {
      size_t k = std::min(static_cast<size_t>(served_[i]), route.answers.size() - 1);
      const FakeAnswer& a = route.answers[k];
      res.error = a.error;
      res.message = a.message;
      if (a.error == ErrorKind::None || a.error == ErrorKind::Redirect) res.response = a.response;
    } else {
      res.response.status = 200;
    }
    ++served_[i];
    seen_.push_back(std::move(s));
    return res;
  }
  res.error = ErrorKind::Other;
  res.message = "no fake route for " + r.method + " " + redact_url(r.url);
  seen_.push_back(std::move(s));
  return res;
}

std::vector<SeenRequest> FakeClient::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_;
}

void FakeClient::clear_requests() {
  std::lock_guard<std::mutex> lock(mu_);
  seen_.clear();
}

std::vector<SeenRequest> FakeClient::unmatched() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SeenRequest> out;
  for (const auto& s : seen_)
    if (!s.matched) out.push_back(s);
  return out;
}

std::vector<Route> routes_from_json(const std::string& text, std::string* error) {
  using Json = nlohmann::json;
  Json j = Json::parse(text, nullptr, false);
  auto fail = [&](const std::string& why) {
    if (error) *error = why;
    return std::vector<Route>{};
  };
  if (j.is_discarded()) return fail("the routes are not JSON");
  if (j.is_object() && j.contains("routes")) j = j["routes"];
  if (!j.is_array()) return fail("the routes must be a list");
  std::vector<Route> out;
  for (const auto& item : j) {
    if (!item.is_object() || !item.contains("request") || !item["request"].is_object())
      return fail("each route needs a \"request\" object");
    const Json& q = item["request"];
    Route r;
    r.method = q.value("method", std::string("GET"));
    r.path = q.value("path", std::string());
    r.host = q.value("host", std::string());
    if (q.contains("query") && q["query"].is_object())
      for (auto it = q["query"].begin(); it != q["query"].end(); ++it)
        r.query[it.key()] =
            it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
    if (q.contains("headers") && q["headers"].is_object())
      for (auto it = q["headers"].begin(); it != q["headers"].end(); ++it)
        r.headers[lower(it.key())] = it.value().get<std::string>();
    if (q.contains("body") && q["body"].is_string()) r.body = q["body"].get<std::string>();
    r.times = item.value("times", -1);
    if (item.contains("responses") && item["responses"].is_array()) {
      for (const auto& a : item["responses"]) {
        FakeAnswer ans;
        if (a.contains("error")) {
          ans.error = error_kind_of(a.value("error", std::string()));
          ans.message = a.value("message", std::string());
        }
        ans.response.status = a.value("status", 0L);
        if (a.contains("headers") && a["headers"].is_object())
          for (auto it = a["headers"].begin(); it != a["headers"].end(); ++it)
            ans.response.headers.push_back({lower(it.key()), it.value().get<std::string>()});
        if (a.contains("body"))
          ans.response.body =
              a["body"].is_string() ? a["body"].get<std::string>() : a["body"].dump();
        r.answers.push_back(std::move(ans));
      }
    }
    if (r.path.empty() || r.path[0] != '/') return fail("a route's path must start with '/'");
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace pai::http
