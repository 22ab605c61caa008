#include "check/site_overlap.h"

#include <optional>

#include <nlohmann/json.hpp>

#include "util/json.h"
#include "util/strings.h"

namespace pai::check {

namespace {

bool pod_device(const std::string& dev) {
  return dev == "flannel.1" || dev == "cni0" || dev == "vxlan.calico" || dev == "tunl0" ||
         dev == "kube-ipvs0" || dev.rfind("cali", 0) == 0 || dev == "lo";
}

std::string describe(const HostNetwork& n) {
  return std::string(n.route ? "route " : "interface network ") + n.cidr +
         (n.dev.empty() ? "" : " (dev " + n.dev + ")");
}

}  // namespace

std::vector<ClusterRange> hybrid_ranges(const config::AzureConfig& azure,
                                        const std::string& pods_subnet,
                                        const std::string& service_subnet) {
  std::vector<ClusterRange> out;
  for (const ClusterRange& r :
       {ClusterRange{"azure.address-space", azure.address_space},
        ClusterRange{"azure.subnet", azure.subnet}, ClusterRange{"kube_pods_subnet", pods_subnet},
        ClusterRange{"kube_service_addresses", service_subnet}})
    if (config::parse_cidr(r.cidr)) out.push_back(r);
  return out;
}

std::vector<std::pair<ClusterRange, ClusterRange>> overlapping_ranges(
    const std::vector<ClusterRange>& ranges) {
  std::vector<std::pair<ClusterRange, ClusterRange>> out;
  for (size_t i = 0; i < ranges.size(); ++i)
    for (size_t j = i + 1; j < ranges.size(); ++j) {
      auto a = config::parse_cidr(ranges[i].cidr), b = config::parse_cidr(ranges[j].cidr);
      if (!a || !b || !a->overlaps(*b)) continue;
      bool subnet_in_space = (ranges[i].what == "azure.address-space" &&
                              ranges[j].what == "azure.subnet" && a->contains(*b));
      if (!subnet_in_space) out.emplace_back(ranges[i], ranges[j]);
    }
  return out;
}

util::Result<std::vector<HostNetwork>> parse_ip_routes(const std::string& text) {
  std::vector<HostNetwork> out;
  auto doc = util::parse_json_or_discarded(text);
  if (doc.is_discarded() || !doc.is_array())
    return util::Error{"not the JSON of ip -j route (iproute2 4.13 or later prints it)", {}};
  for (const auto& r : doc) {
    if (!r.is_object() || !r.contains("dst") || !r["dst"].is_string()) continue;
    std::string dst = r["dst"].get<std::string>();
    std::string dev = r.value("dev", std::string());
    if (dst == "default" || pod_device(dev)) continue;
    if (dst.find('/') == std::string::npos) dst += "/32";
    auto c = config::parse_cidr(dst);
    if (!c) continue;  // IPv6 or a route type without an address
    out.push_back({c->str(), dev, true});
  }
  return out;
}

std::vector<HostNetwork> interface_networks(const std::vector<facts::InterfaceAddress>& addrs) {
  std::vector<HostNetwork> out;
  for (const auto& a : addrs) {
    if (a.v6 || a.prefix <= 0 || pod_device(a.interface)) continue;
    auto c = config::parse_cidr(a.address + "/" + std::to_string(a.prefix));
    if (!c || (c->base >> 24) == 127) continue;
    out.push_back({c->str(), a.interface, false});
  }
  return out;
}

std::string site_overlap_command() {
  return "ip -j -4 route show 2>&1";
}

CheckResult site_overlap_result(const std::string& host, const std::vector<HostNetwork>& networks,
                                const std::vector<ClusterRange>& ranges) {
  CheckResult r;
  r.host = host;
  r.check = "SiteOverlap";
  std::vector<std::string> errors, warnings;
  std::optional<config::Cidr> space;  // a route inside it is the link to Azure
  for (const auto& range : ranges)
    if (range.what == "azure.address-space") space = config::parse_cidr(range.cidr);
  for (const auto& n : networks) {
    auto nc = config::parse_cidr(n.cidr);
    if (!nc) continue;
    bool warned = false;
    for (const auto& range : ranges) {
      auto rc = config::parse_cidr(range.cidr);
      if (!rc || !nc->overlaps(*rc)) continue;
      bool azure = range.what.rfind("azure.", 0) == 0;
      std::string line = describe(n) + " overlaps " + range.what + " " + range.cidr;
      if (azure && n.route && space && space->contains(*nc)) continue;  // the link to Azure
      if (azure && n.route && space && nc->contains(*space)) {
        if (!warned)
          warnings.push_back(describe(n) + " covers azure.address-space " + space->str());
        warned = true;
        continue;
      }
      errors.push_back(line);
    }
  }
  if (!errors.empty()) {
    r.status = Status::Fail;
    r.message = util::join(errors, "; ");
    r.hint =
        "pick kube_pods_subnet, kube_service_addresses and azure.address-space outside the "
        "on-prem networks (ip route, ip addr on the host), e.g. address-space 10.224.0.0/16, "
        "pods 10.244.0.0/16, services 10.96.0.0/12; change them before install: afterwards "
        "the cluster holds them";
  } else if (!warnings.empty()) {
    r.status = Status::Warn;
    r.message = util::join(warnings, "; ") +
                " (the route to Azure over the link must be more specific than it)";
    r.hint =
        "route azure.address-space over the VPN with its own route on this host or its gateway";
  } else {
    r.message =
        "no network of this host overlaps azure.address-space, its subnet, the pods' or "
        "the services' range";
  }
  return r;
}

}  // namespace pai::check
