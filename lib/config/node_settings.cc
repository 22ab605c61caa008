#include "config/node_settings.h"

#include <cctype>

#include "util/strings.h"

namespace pai::config {

namespace {

bool node_settings_port_ok(std::string_view p) {
  if (p.empty() || p.size() > 5) return false;
  for (char c : p)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  auto v = util::parse_int(p);
  return v && *v >= 1 && *v <= 65535;
}

// A host name as resolvers take it (DNS is case-insensitive), or an IPv4 address.
bool node_settings_host_ok(std::string_view h) {
  return util::is_ipv4(h) || util::is_dns1123_subdomain(util::to_lower(h));
}

bool node_settings_ipv6_ok(std::string_view h) {
  if (h.size() < 2 || h.find(':') == std::string_view::npos) return false;
  for (char c : h)
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return false;
  return true;
}

// HOST[:PORT], or [IPV6][:PORT].
bool node_settings_host_port_ok(std::string_view hp) {
  if (!hp.empty() && hp[0] == '[') {
    auto close = hp.find(']');
    if (close == std::string_view::npos || !node_settings_ipv6_ok(hp.substr(1, close - 1)))
      return false;
    auto rest = hp.substr(close + 1);
    return rest.empty() || (rest[0] == ':' && node_settings_port_ok(rest.substr(1)));
  }
  auto colon = hp.rfind(':');
  if (colon == std::string_view::npos) return node_settings_host_ok(hp);
  return node_settings_host_ok(hp.substr(0, colon)) && node_settings_port_ok(hp.substr(colon + 1));
}

bool node_settings_name_ok(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!std::isalnum(static_cast<unsigned char>(s.front())) ||
      !std::isalnum(static_cast<unsigned char>(s.back())))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

// The part after the scheme of an http(s) URL, or nullopt with no such scheme.
std::optional<std::string_view> node_settings_after_scheme(std::string_view url) {
  for (std::string_view s : {"http://", "https://"})
    if (url.substr(0, s.size()) == s) return url.substr(s.size());
  return std::nullopt;
}

}  // namespace

util::Result<void> check_proxy_url(std::string_view url) {
  auto rest = node_settings_after_scheme(url);
  if (!rest)
    return util::Error{"is not an http:// or https:// URL",
                       "write the proxy as a URL, e.g. http://proxy.example.com:3128"};
  for (char c : url)
    if (static_cast<unsigned char>(c) <= ' ' || c == '"' || c == '\\' || c == 127)
      return util::Error{"holds a blank, a quote or a backslash",
                         "percent-encode them in the user and password (%20, %22, %5C)"};
  std::string_view r = *rest;
  if (!r.empty() && r.back() == '/') r.remove_suffix(1);
  if (auto at = r.rfind('@'); at != std::string_view::npos) {
    if (at == 0)
      return util::Error{"has an empty user before '@'", "write http://USER:PASSWORD@HOST:PORT"};
    r = r.substr(at + 1);
  }
  if (r.find('/') != std::string_view::npos)
    return util::Error{"has a path; a proxy is HOST[:PORT]", "e.g. http://proxy.example.com:3128"};
  if (!node_settings_host_port_ok(r))
    return util::Error{"does not name a host (and port 1-65535)",
                       "e.g. http://proxy.example.com:3128"};
  return {};
}

std::string mask_url_credentials(std::string_view url) {
  auto scheme = url.find("://");
  size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  auto host_end = url.find('/', start);
  auto at = url.rfind('@', host_end == std::string_view::npos ? url.size() : host_end);
  if (at == std::string_view::npos || at < start) return std::string(url);
  return std::string(url.substr(0, start)) + "***" + std::string(url.substr(at));
}

std::string url_credentials(std::string_view url) {
  auto scheme = url.find("://");
  size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  auto host_end = url.find('/', start);
  auto at = url.rfind('@', host_end == std::string_view::npos ? url.size() : host_end);
  if (at == std::string_view::npos || at < start) return {};
  return std::string(url.substr(start, at - start));
}

std::vector<std::string> split_no_proxy(std::string_view text) {
  std::vector<std::string> out;
  if (util::trim(text).empty()) return out;
  for (auto part : util::split(text, ',')) out.emplace_back(util::trim(part));
  return out;
}

util::Result<void> check_no_proxy_entry(std::string_view e) {
  const char* hint =
      "a host name (.example.com for its subdomains), an IPv4 address or CIDR "
      "(10.0.0.0/8), HOST:PORT or *; one entry each";
  if (e.empty()) return util::Error{"is empty", hint};
  if (e == "*") return {};
  if (e.find("://") != std::string_view::npos)
    return util::Error{"has a scheme; no_proxy holds hosts, not URLs", hint};
  for (char c : e)
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == '@')
      return util::Error{"holds a blank, ',' or '@'", hint};
  if (auto slash = e.find('/'); slash != std::string_view::npos) {
    auto bits = util::parse_int(e.substr(slash + 1));
    auto addr = e.substr(0, slash);
    if (util::is_ipv4(addr) && bits && *bits >= 0 && *bits <= 32) return {};
    if (node_settings_ipv6_ok(addr) && bits && *bits >= 0 && *bits <= 128) return {};
    return util::Error{"is not a CIDR (ADDRESS/BITS)", hint};
  }
  std::string_view h = e;
  if (h.substr(0, 2) == "*.")
    h.remove_prefix(2);
  else if (h.substr(0, 1) == ".")
    h.remove_prefix(1);
  if (node_settings_ipv6_ok(h) || node_settings_host_port_ok(h)) return {};
  return util::Error{"is not a host name, an address or a CIDR", hint};
}

util::Result<void> check_registry_host(std::string_view host) {
  const char* hint = "HOST or HOST:PORT without a scheme or a path, e.g. registry.example.com:5000";
  if (host.find("://") != std::string_view::npos)
    return util::Error{"has a scheme; a registry is HOST[:PORT]", hint};
  if (host.find('/') != std::string_view::npos)
    return util::Error{"has a path; a registry is HOST[:PORT]", hint};
  if (!node_settings_host_port_ok(host)) return util::Error{"is not HOST[:PORT]", hint};
  return {};
}

util::Result<void> check_mirror_url(std::string_view url) {
  const char* hint = "e.g. https://mirror.example.com or http://10.0.0.5:5000";
  auto rest = node_settings_after_scheme(url);
  if (!rest) return util::Error{"is not an http:// or https:// URL", hint};
  std::string_view r = *rest;
  auto slash = r.find('/');
  std::string_view hp = r.substr(0, slash);
  if (hp.find('@') != std::string_view::npos)
    return util::Error{"holds a user and password; containerd's hosts.toml takes none in the URL",
                       "give the registry's credentials to containerd another way, or use a "
                       "mirror that needs none"};
  if (!node_settings_host_port_ok(hp)) return util::Error{"does not name a host (and port)", hint};
  return {};
}

util::Result<void> check_label_key(std::string_view key) {
  const char* hint =
      "a label key is [PREFIX/]NAME: PREFIX a DNS subdomain (lower case, at most 253), NAME at "
      "most 63 of letters, digits, '-', '_' and '.', starting and ending with a letter or digit";
  if (key.empty()) return util::Error{"is empty", hint};
  auto slash = key.find('/');
  std::string_view name = key;
  if (slash != std::string_view::npos) {
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (!util::is_dns1123_subdomain(prefix))
      return util::Error{"has a prefix \"" + std::string(prefix) + "\" that is not a DNS subdomain",
                         hint};
  }
  if (name.size() > 63) return util::Error{"has a name longer than 63 characters", hint};
  if (!node_settings_name_ok(name))
    return util::Error{"has a name \"" + std::string(name) +
                           "\" that is not letters, digits, '-', '_' and '.' starting and ending "
                           "with a letter or digit",
                       hint};
  return {};
}

util::Result<void> check_label_value(std::string_view value) {
  const char* hint =
      "a label value is empty or at most 63 of letters, digits, '-', '_' and '.', starting and "
      "ending with a letter or digit; quote it in YAML when it looks like a number or boolean";
  if (value.empty()) return {};
  if (value.size() > 63) return util::Error{"is longer than 63 characters", hint};
  if (!node_settings_name_ok(value))
    return util::Error{
        "is not letters, digits, '-', '_' and '.' starting and ending with a letter "
        "or digit",
        hint};
  return {};
}

util::Result<void> check_label_key_allowed(std::string_view key) {
  if (key == "pai-master" || key == "pai-worker")
    return util::Error{"is paictl's own label, set from pai-master/pai-worker",
                       "set the role with pai-master or pai-worker: \"true\" on the machine"};
  auto slash = key.find('/');
  if (slash == std::string_view::npos) return {};
  std::string prefix(key.substr(0, slash));
  if (prefix == "paictl.io" || prefix.ends_with(".paictl.io"))
    return util::Error{"has paictl's own prefix " + prefix + "/",
                       "paictl sets paictl.io/ labels itself; use a prefix of your own, e.g. "
                       "example.com/"};
  if (prefix == "node-role.kubernetes.io" || prefix == "topology.kubernetes.io") return {};
  for (std::string_view k : {"kubernetes.io", "k8s.io"})
    if (prefix == k || prefix.ends_with("." + std::string(k)))
      return util::Error{"has the prefix " + prefix + "/ that Kubernetes reserves",
                         "use a prefix of your own, e.g. example.com/; node-role.kubernetes.io/ "
                         "and topology.kubernetes.io/ are allowed"};
  return {};
}

util::Result<void> check_taint_effect(std::string_view effect) {
  static const std::vector<std::string> effects = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
  for (const auto& e : effects)
    if (effect == e) return {};
  std::string guess = util::did_you_mean(effect, effects);
  return util::Error{"is not a taint effect",
                     (guess.empty() ? "" : "did you mean \"" + guess + "\"? ") +
                         "effect is one of NoSchedule, PreferNoSchedule, NoExecute (case matters)"};
}

}  // namespace pai::config
