#pragma once
// OpenPAI config.yaml (the installer's quick-start settings, v1.5+).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/azure_config.h"
#include "config/context.h"

namespace pai::config {

// kube-vip on the masters (docs/install.md): a static pod on each master that
// holds the control plane's virtual address (ARP mode) on `interface`; the
// endpoint is then address:6443.
struct KubeVip {
  std::string address;    // an IPv4 address on the masters' network, no host's own
  std::string interface;  // the masters' network interface that carries it (eth0)
  Mark mark;
};

struct ClusterConfig {
  std::string file;
  std::string user;
  // The SSH/sudo password. Never printed, logged or put in a diagnostic.
  std::string password;
  bool has_password = false;
  std::string docker_image_tag;
  std::string ssh_key_file_path;
  std::string docker_data_root = "/mnt/docker";
  bool enable_hived_scheduler = true;
  Mark enable_hived_scheduler_mark;
  bool enable_docker_cache = false;
  std::string network_plugin = "calico";
  // Registries the hosts must reach (image repos and the service registry), in file order.
  std::vector<std::string> registries;
  std::vector<std::string> insecure_registries;
  std::vector<std::string> registry_mirrors;
  // paictl install: the Kubernetes release, where its packages come from, the
  // cluster's address ranges and the API endpoint (docs/install.md).
  std::string kube_version = "1.30.10";
  Mark kube_version_mark;
  std::string kube_package_repo;    // "" = pkgs.k8s.io for kube_version's minor release
  std::string kube_offline_bundle;  // a local directory of .deb files, copied to the hosts
  std::string kube_pods_subnet = "10.244.0.0/16";
  std::string kube_service_addresses = "10.96.0.0/12";
  std::string kube_control_plane_endpoint;  // "" = the master's hostip:6443
  Mark kube_control_plane_endpoint_mark;
  std::optional<KubeVip> kube_vip;  // a kube-vip virtual address in front of the masters
  std::string nvidia_package_repo;  // "" = nvidia.github.io/libnvidia-container
  // Proxies and registry mirrors the hosts use (docs/install.md, "Proxies and
  // mirrors"): as written ("" / empty = none). A proxy URL may hold a password:
  // show it with mask_url_credentials (config/node_settings.h) only.
  std::string http_proxy;
  std::string https_proxy;
  std::vector<std::string> no_proxy;  // the operator's entries; install adds the cluster's own
  std::map<std::string, std::vector<std::string>> containerd_registry_mirrors;  // REGISTRY -> URLs
  std::string image_registry_mirror;  // HOST[:PORT] every image is pulled from
  int64_t host_daemon_port_start = 40000;
  int64_t host_daemon_port_end = 65535;
  // The Azure part of the cluster (docs/azure.md), when config.yaml has `azure:`.
  std::optional<AzureConfig> azure;

  // paictl's settings of the cluster directory (docs/init.md): the defaults of the
  // commands given this directory; their flags override them. Paths are as written
  // ("" = not set); resolve_setting_path makes a relative one relative to the
  // directory of config.yaml.
  std::string ssh_config;                        // an SSH client config (ssh -F), or "none"
  std::string ssh_user;                          // the login user (before `user`)
  std::string known_hosts;                       // the known_hosts file to verify host keys against
  std::vector<std::string> ignore_check_errors;  // install's pre-install checks that do not stop
  std::string hived_url;                         // HiveD's inspect API, http(s)://HOST:PORT
};

// The control plane's endpoint config.yaml sets, HOST:PORT: kube_control_plane_endpoint,
// else kube_vip's address:6443, else "" (one master: its hostip:6443).
std::string control_plane_endpoint(const ClusterConfig& c);

// Whether `name` can be a Linux network interface's name (1-15 bytes, no '/',
// ':', white space or NUL, not "." or "..").
bool is_interface_name(std::string_view name);

// `path` as the commands use it: absolute, or relative to the directory of
// `config_file` (config.yaml's path as read). "" and "none" stay as they are.
std::string resolve_setting_path(const std::string& config_file, const std::string& path);

// Keys the v1.5+ installer reads from config.yaml.
const std::vector<std::string>& cluster_config_keys();

// Loads config.yaml. With `check_files`, the files that paictl's settings name
// (ssh_config, known_hosts, a relative ssh_key_file_path) must exist, relative to
// the directory of ctx.file() (C009); files checked in memory leave it false.
ClusterConfig load_cluster_config(const Node* root, Context& ctx, bool check_files = false);

}  // namespace pai::config
