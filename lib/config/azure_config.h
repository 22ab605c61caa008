#pragma once
// The `azure:` section of config.yaml: where paictl creates the Azure part of a
// cluster (docs/azure.md). Checked by `paictl check config` with A-codes.
//
//   azure:
//     subscription: 00000000-0000-0000-0000-000000000000
//     tenant: contoso.onmicrosoft.com          # or the tenant id
//     client-id: 11111111-2222-3333-4444-555555555555
//     client-secret-file: ~/.config/paictl/azure-secret   # never the secret itself
//     location: eastus
//     resource-group: pai-rg
//     address-space: 10.224.0.0/16
//     subnet: 10.224.1.0/24                    # default: the first /24 of address-space
//     admin-user: paiadmin
//     ssh-public-key-file: ~/.ssh/id_ed25519.pub
//     image: microsoft-dsvm:ubuntu-hpc:2204:latest
//     allowed-ssh-from: [203.0.113.10/32]
//     onprem-address-space: [10.0.0.0/24]      # default: the on-prem hosts of layout.yaml
//     tunnel-mtu: 1400                         # the link between the sites (pods: 1350)
//     public-ip: false                         # true: a public address per VM
//     pools:
//       - name: gpu
//         sku: Standard_ND96asr_v4
//         count: 2
//         machine-type: ND96asr-v4             # a machine-sku of layout.yaml
//       - name: cp                             # the control plane on Azure: one VM,
//         role: master                         # the cluster's pai-master (layout.yaml
//         sku: Standard_D8s_v5                 # then has no on-prem master)
//         count: 1
//         machine-type: cpu-master

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/context.h"

namespace pai::config {

struct AzurePool {
  std::string name;
  std::string sku;
  int64_t count = 0;
  std::string machine_type;
  Mark mark;
  Mark machine_type_mark;
  Mark count_mark;  // where count's value is written (node add --azure rewrites it)
  // role: master: the pool's one VM is the cluster's pai-master (the control
  // plane on Azure, on-prem hosts join it); role: worker (the default): workers.
  bool master = false;
};

struct AzureConfig {
  Mark mark;
  std::string subscription;
  std::string tenant;
  std::string client_id;
  std::string client_secret_file;  // a path; the secret itself is never in config.yaml
  std::string location;
  std::string resource_group;
  std::string address_space = "10.224.0.0/16";
  std::string subnet;  // "" = the first /24 of address_space
  std::string admin_user = "paiadmin";
  std::string ssh_public_key_file;
  std::string image = "microsoft-dsvm:ubuntu-hpc:2204:latest";
  std::vector<std::string> allowed_ssh_from;
  std::vector<std::string> onprem_address_space;
  // The MTU of the link between the sites (tunnel-mtu): install gives the pods'
  // VXLAN network at most this less 50. 1400 is Microsoft's guidance for a
  // site-to-site VPN (TCP MSS 1350).
  int tunnel_mtu = 1400;
  // public-ip: true gives each VM a public address (Standard SKU, in the scale
  // set's NIC); SSH to it is then admitted from allowed-ssh-from only.
  bool public_ip = false;
  std::vector<AzurePool> pools;
  // The pool whose VM is the master (role: master), or nullptr.
  const AzurePool* master_pool() const;
};

const std::vector<std::string>& azure_config_keys();

// Reads and checks the section; kube_pods_subnet/kube_service_addresses are
// for the overlap check. ssh-public-key-file is required unless config.yaml
// has ssh_key_file_path (`ssh_key_file_path`: its KEY.pub is the default).
AzureConfig load_azure_config(const Node* section, Context& ctx, const std::string& pods_subnet,
                              const std::string& service_subnet,
                              const std::string& ssh_key_file_path = {});

// The machines paictl wrote into layout.yaml's text for Azure pools, by the
// marker on their first line ("- hostname: NAME  # azure pool POOL"): NAME -> POOL.
std::map<std::string, std::string> azure_pools_in_layout(std::string_view layout_text);

// A hybrid cluster's node labels for one host (docs/hybrid.md): every host gets
// paictl.io/site=onprem|azure; an Azure VM (one of `pools_in_layout`, or a
// hostip inside address-space) also topology.kubernetes.io/region=<location>
// and, when the pool is known, paictl.io/azure-pool=<pool>.
std::map<std::string, std::string> site_labels(
    const AzureConfig& azure, const std::map<std::string, std::string>& pools_in_layout,
    const std::string& hostname, const std::string& hostip);

// IPv4 CIDR helpers (also used by the Azure model).
struct Cidr {
  uint32_t base = 0;
  int bits = 0;
  bool contains(const Cidr& o) const;
  bool overlaps(const Cidr& o) const;
  std::string str() const;
};
std::optional<Cidr> parse_cidr(std::string_view s);

// Azure sizes with an InfiniBand (RDMA) NIC: an "r" among the size's feature
// letters (Standard_ND96asr_v4, Standard_NC24rs_v3, Standard_HB120rs_v3).
bool is_infiniband_sku(std::string_view sku);

}  // namespace pai::config
