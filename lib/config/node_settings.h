#pragma once
// What config.yaml and layout.yaml say about the hosts' network and the nodes
// beyond OpenPAI's own keys: HTTP proxies (http_proxy, https_proxy, no_proxy),
// registry mirrors (containerd_registry_mirrors, image_registry_mirror), and
// operators' own node labels and taints (docs/install.md). The checks here are
// pure: check config reports what they return with the file's position (L080-L099).

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace pai::config {

// A taint of layout.yaml (machine or machine-sku `taints:`).
struct NodeTaint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule or NoExecute
  bool operator==(const NodeTaint&) const = default;
};

// http(s)://[USER[:PASSWORD]@]HOST[:PORT][/]: what apt, containerd and the
// kubelet (Go's net/http) all take as a proxy.
util::Result<void> check_proxy_url(std::string_view url);
// The URL with its user and password replaced by "***" ("http://***@proxy:3128"):
// what paictl shows of a proxy anywhere.
std::string mask_url_credentials(std::string_view url);
// "USER:PASSWORD" of a proxy URL ("" when it has none): what the install's
// masker hides in every log line.
std::string url_credentials(std::string_view url);

// One no_proxy entry: a host name (optionally with a leading '.' or "*."), an
// IPv4 address or CIDR, an IPv6 address, HOST:PORT, or "*".
util::Result<void> check_no_proxy_entry(std::string_view entry);
// no_proxy written as a comma string: its entries, blanks trimmed (empty ones kept,
// for check_no_proxy_entry to refuse).
std::vector<std::string> split_no_proxy(std::string_view text);

// HOST[:PORT] of a registry (a DNS name, an IPv4 address or "localhost"; no scheme, no path).
util::Result<void> check_registry_host(std::string_view host);
// A mirror's address in containerd's hosts.toml: http(s)://HOST[:PORT][/PATH].
util::Result<void> check_mirror_url(std::string_view url);

// A Kubernetes label key: [PREFIX/]NAME, PREFIX a DNS subdomain of at most 253
// characters, NAME at most 63 of [A-Za-z0-9._-] starting and ending with a letter or digit.
util::Result<void> check_label_key(std::string_view key);
// A label value: empty, or at most 63 of [A-Za-z0-9._-] starting and ending alphanumeric.
util::Result<void> check_label_value(std::string_view value);
// Whether an operator may set this key: not Kubernetes' own (kubernetes.io/,
// k8s.io/ and their subdomains, but node-role.kubernetes.io/ and
// topology.kubernetes.io/), not paictl's own (paictl.io/ and its subdomains,
// pai-master, pai-worker).
util::Result<void> check_label_key_allowed(std::string_view key);
// NoSchedule, PreferNoSchedule or NoExecute.
util::Result<void> check_taint_effect(std::string_view effect);

}  // namespace pai::config
