#pragma once
// OpenPAI config.yaml (the installer's quick-start settings, v1.5+).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/azure_config.h"
#include "config/context.h"

namespace pai::config {

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
  std::string nvidia_package_repo;          // "" = nvidia.github.io/libnvidia-container
  int64_t host_daemon_port_start = 40000;
  int64_t host_daemon_port_end = 65535;
  // The Azure part of the cluster (docs/azure.md), when config.yaml has `azure:`.
  std::optional<AzureConfig> azure;
};

// Keys the v1.5+ installer reads from config.yaml.
const std::vector<std::string>& cluster_config_keys();

ClusterConfig load_cluster_config(const Node* root, Context& ctx);

}  // namespace pai::config
