#include "deploy/proxy.h"

#include <set>

#include "util/strings.h"

namespace pai::deploy {

namespace {

// A value inside Environment="...": systemd expands %-specifiers and takes
// C-style escapes, so '%' doubles and '"' and '\' are escaped.
std::string proxy_systemd_escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '%')
      out += "%%";
    else if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else
      out += c;
  }
  return out;
}

bool proxy_is_single_host(const std::string& e) {
  return !e.empty() && e != "*" && e[0] != '.' && e[0] != '*' && e.find('/') == std::string::npos &&
         e.find(':') == std::string::npos;
}

}  // namespace

std::vector<std::string> complete_no_proxy(const std::vector<std::string>& given,
                                           const std::string& pods_subnet,
                                           const std::string& service_subnet,
                                           const std::vector<std::string>& host_addresses,
                                           const std::vector<std::string>& host_names,
                                           const std::string& control_plane_endpoint) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& e) {
    if (!e.empty() && seen.insert(e).second) out.push_back(e);
  };
  for (const auto& e : given) add(e);
  add("localhost");
  add("127.0.0.1");
  add(pods_subnet);
  add(service_subnet);
  for (const auto& a : host_addresses) add(a);
  for (const auto& n : host_names) add(n);
  if (!control_plane_endpoint.empty()) {
    std::string host = control_plane_endpoint;
    if (auto c = host.rfind(':'); c != std::string::npos && host.find(']') == std::string::npos)
      host.resize(c);
    add(host);
  }
  add(".svc");
  add(".cluster.local");
  return out;
}

std::string render_apt_proxy(const ProxySettings& p) {
  if (p.empty()) return {};
  std::string out = std::string(kWrittenByPaictl) +
                    " (config.yaml http_proxy, https_proxy, no_proxy): apt's proxy.\n";
  if (!p.http.empty()) out += "Acquire::http::Proxy \"" + p.http + "\";\n";
  if (!p.https.empty()) out += "Acquire::https::Proxy \"" + p.https + "\";\n";
  for (const auto& e : p.no_proxy) {
    if (!proxy_is_single_host(e)) continue;
    if (!p.http.empty()) out += "Acquire::http::Proxy::" + e + " \"DIRECT\";\n";
    if (!p.https.empty()) out += "Acquire::https::Proxy::" + e + " \"DIRECT\";\n";
  }
  return out;
}

std::string render_proxy_dropin(const ProxySettings& p) {
  if (p.empty()) return {};
  std::string out = std::string(kWrittenByPaictl) +
                    " (config.yaml http_proxy, https_proxy, no_proxy).\n[Service]\n";
  auto env = [&](const std::string& name, const std::string& value) {
    if (value.empty()) return;
    std::string v = proxy_systemd_escape(value);
    out += "Environment=\"" + name + "=" + v + "\" \"" + util::to_lower(name) + "=" + v + "\"\n";
  };
  env("HTTP_PROXY", p.http);
  env("HTTPS_PROXY", p.https);
  env("NO_PROXY", util::join(p.no_proxy, ","));
  return out;
}

std::string render_hosts_toml(const std::string& registry,
                              const std::vector<std::string>& mirrors) {
  std::string out = std::string(kWrittenByPaictl) +
                    " (config.yaml containerd_registry_mirrors): the mirrors of " + registry +
                    ", tried in order before it.\n";
  if (registry != "_default") {
    std::string server =
        registry == "docker.io" ? "https://registry-1.docker.io" : "https://" + registry;
    out += "server = \"" + server + "\"\n";
  }
  for (const auto& m : mirrors) {
    std::string url = m;
    while (url.size() > 8 && url.back() == '/') url.pop_back();
    out += "\n[host.\"" + url + "\"]\n  capabilities = [\"pull\", \"resolve\"]\n";
  }
  return out;
}

std::map<std::string, std::string> proxy_and_mirror_files(
    const ProxySettings& p, const std::map<std::string, std::vector<std::string>>& mirrors) {
  std::map<std::string, std::string> out;
  out[kAptProxyFile] = render_apt_proxy(p);
  out[kContainerdProxyDropIn] = render_proxy_dropin(p);
  out[kKubeletProxyDropIn] = render_proxy_dropin(p);
  for (const auto& [reg, urls] : mirrors)
    out[std::string(kCertsDir) + "/" + reg + "/hosts.toml"] = render_hosts_toml(reg, urls);
  return out;
}

}  // namespace pai::deploy
