#include "api/signin.h"

#include "util/json.h"

namespace pai::api {

Result<Probe> probe(http::Client& http, const std::string& uri) {
  std::vector<std::string> tried;
  std::optional<Error> first;
  std::vector<std::string> bases;
  const std::string suffix = "/rest-server";
  if (uri.size() >= suffix.size() &&
      uri.compare(uri.size() - suffix.size(), suffix.size(), suffix) == 0)
    bases = {uri};
  else
    bases = {uri + suffix, uri};
  for (const auto& b : bases) {
    Client c(http, b);
    tried.push_back(b + "/api/v2/info");
    auto r = c.info();
    if (r.ok()) return Probe{b, *r, tried};
    if (!first) first = r.error();
    if (r.error().kind == Error::Kind::Transport) break;  // the host itself does not answer
  }
  return *first;
}

SignIn sign_in_method(const ClusterInfo& info) {
  return info.authn_method == "OIDC" ? SignIn::Oidc : SignIn::Basic;
}

std::string base64url_decode(std::string_view in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-' || c == '+') return 62;
    if (c == '_' || c == '/') return 63;
    return -1;
  };
  std::string out;
  int bits = 0, acc = 0;
  for (char c : in) {
    int v = val(c);
    if (v < 0) break;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

std::string user_from_token(const std::string& token) {
  size_t a = token.find('.');
  size_t b = a == std::string::npos ? a : token.find('.', a + 1);
  if (b == std::string::npos) return {};
  Json j = util::parse_json_or_discarded(base64url_decode(token.substr(a + 1, b - a - 1)));
  if (j.is_discarded() || !j.is_object() || !j.contains("username") || !j["username"].is_string())
    return {};
  return j["username"].get<std::string>();
}

}  // namespace pai::api
