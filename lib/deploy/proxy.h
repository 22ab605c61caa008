#pragma once
// What paictl install writes on every host for config.yaml's proxies and
// registry mirrors (docs/install.md, "Proxies and mirrors"): apt's proxy, the
// proxy environment of containerd and the kubelet (systemd drop-ins), and
// containerd's hosts.toml of each mirrored registry. The `proxy` phase writes
// them; these functions render them, so that they are tested without a host.

#include <map>
#include <string>
#include <vector>

namespace pai::deploy {

struct ProxySettings {
  std::string http;                   // http_proxy ("" = none)
  std::string https;                  // https_proxy, else http_proxy
  std::vector<std::string> no_proxy;  // completed with the cluster's own (complete_no_proxy)
  bool empty() const { return http.empty() && https.empty(); }
};

// The files, each with its mode.
inline constexpr const char* kAptProxyFile = "/etc/apt/apt.conf.d/95paictl-proxy";
inline constexpr const char* kContainerdProxyDropIn =
    "/etc/systemd/system/containerd.service.d/paictl-proxy.conf";
inline constexpr const char* kKubeletProxyDropIn =
    "/etc/systemd/system/kubelet.service.d/paictl-proxy.conf";
inline constexpr const char* kCertsDir = "/etc/containerd/certs.d";
// The first line of every file above: how a later run knows which are paictl's.
inline constexpr const char* kWrittenByPaictl = "# Written by paictl install";

// The cluster's own addresses and names that never go through the proxy, after
// the operator's entries (kept first, in their order), each once: localhost,
// 127.0.0.1, the pods' and services' ranges, every host's address and name,
// the control-plane endpoint's host, .svc and .cluster.local.
std::vector<std::string> complete_no_proxy(const std::vector<std::string>& given,
                                           const std::string& pods_subnet,
                                           const std::string& service_subnet,
                                           const std::vector<std::string>& host_addresses,
                                           const std::vector<std::string>& host_names,
                                           const std::string& control_plane_endpoint);

// apt.conf: Acquire::http(s)::Proxy, and "DIRECT" for the no_proxy entries that
// are single hosts (apt has no no_proxy list). "" when there is no proxy.
std::string render_apt_proxy(const ProxySettings& p);
// A systemd drop-in ([Service] Environment=HTTP_PROXY=... for both cases of
// each name), the values escaped for systemd. "" when there is no proxy.
std::string render_proxy_dropin(const ProxySettings& p);
// containerd's hosts.toml for `registry` (its directory name under certs.d):
// the registry itself as the server, each mirror a host to pull and resolve
// from, in order.
std::string render_hosts_toml(const std::string& registry, const std::vector<std::string>& mirrors);
// The files of the proxies and mirrors: path -> content ("" none of the proxy's).
std::map<std::string, std::string> proxy_and_mirror_files(
    const ProxySettings& p, const std::map<std::string, std::vector<std::string>>& mirrors);

}  // namespace pai::deploy
