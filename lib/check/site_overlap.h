#pragma once
// A hybrid cluster's address ranges against each other and against the on-prem
// hosts' own networks (check hosts' SiteOverlap): azure.address-space, its
// subnet, kube_pods_subnet and kube_service_addresses must not overlap one
// another, nor a network of an on-prem host (its interfaces' networks and the
// routes of its main table). Routed between the sites, an address in two of
// them would mean two hosts; a host route into the pods' or the services'
// range sends their traffic out of the wrong door.
//
// One exception: a route contained in azure.address-space is the link to Azure
// (the VPN's route to the VNet) and is expected; one that contains the whole
// address-space and more (a corporate 10.0.0.0/8) is a warning, since the
// link's own, longer route still wins.

#include <string>
#include <vector>

#include "check/catalogue.h"
#include "config/azure_config.h"
#include "facts/host_facts.h"
#include "util/result.h"

namespace pai::check {

struct ClusterRange {
  std::string what;  // "azure.address-space", "kube_pods_subnet", ...
  std::string cidr;  // as written
};

struct HostNetwork {
  std::string cidr;    // "10.0.0.0/24"
  std::string dev;     // "eth0"
  bool route = false;  // a route of the main table, else an interface's network
};

// The ranges that must stay apart (the unparsable ones are left out: check
// config reports them).
std::vector<ClusterRange> hybrid_ranges(const config::AzureConfig& azure,
                                        const std::string& pods_subnet,
                                        const std::string& service_subnet);

// Each pair of `ranges` that overlap, except azure.subnet inside azure.address-space.
std::vector<std::pair<ClusterRange, ClusterRange>> overlapping_ranges(
    const std::vector<ClusterRange>& ranges);

// The command run on each on-prem host (it changes nothing): its IPv4 routes as
// iproute2's JSON (parse_ip_routes). The host's addresses are already in its
// facts (the fact script's `ip -o addr`: interface_networks).
std::string site_overlap_command();

// The routes of `ip -j -4 route show` (IPv4, main table), without the default
// route and the pod network's own devices (flannel.1, cni0, cali*, vxlan.calico,
// tunl0, kube-ipvs0), which install creates for those very ranges. An error for
// text that is not that JSON.
util::Result<std::vector<HostNetwork>> parse_ip_routes(const std::string& json_text);

// The networks of a host's IPv4 interface addresses (no loopback, no pod devices,
// none whose prefix is unknown: `hostname -I`'s bare addresses).
std::vector<HostNetwork> interface_networks(const std::vector<facts::InterfaceAddress>& addrs);

// One SiteOverlap result per host: fail with every overlap found (the host's
// network, its device, the cluster range it overlaps), warn on a route that
// covers the whole address-space, else pass.
CheckResult site_overlap_result(const std::string& host, const std::vector<HostNetwork>& networks,
                                const std::vector<ClusterRange>& ranges);

}  // namespace pai::check
