#include "check/hybrid.h"

#include <map>
#include <optional>
#include <utility>

#include "check/cross_site.h"
#include "check/site_overlap.h"
#include "config/azure_config.h"
#include "remote/executor.h"
#include "util/strings.h"

namespace pai::check {

std::vector<CheckResult> hybrid_checks(const config::CheckOutcome& loaded,
                                       const std::vector<HostOutcome>& hosts, const HostExec& exec,
                                       const HybridOptions& opts) {
  std::vector<CheckResult> out;
  if (loaded.clusters.empty() || !loaded.clusters[0].config || !loaded.clusters[0].config->azure)
    return out;
  const auto& cluster = loaded.clusters[0];
  const auto& cfg = *cluster.config;
  const auto& az = *cfg.azure;
  // The site as the labels phase gives it: a VM paictl wrote into layout.yaml,
  // or a host inside azure.address-space, is on Azure.
  std::map<std::string, std::string> vms;
  if (cluster.layout)
    if (auto it = loaded.sources.find(cluster.layout->file); it != loaded.sources.end())
      vms = config::azure_pools_in_layout(it->second);
  std::vector<SiteHost> all;
  for (const auto& oc : hosts) {
    const auto& h = oc.plan;
    std::string ip = h.hostip.empty() ? h.address : h.hostip;
    all.push_back(
        {h.name, ip, config::site_labels(az, vms, h.name, ip)["paictl.io/site"], h.master});
  }
  const bool cross_site = config::parse_cidr(az.address_space).has_value();
  auto ranges = hybrid_ranges(az, cfg.kube_pods_subnet, cfg.kube_service_addresses);

  std::vector<std::vector<CheckResult>> cross(hosts.size());
  std::vector<std::optional<CheckResult>> overlap(hosts.size());
  remote::ExecutorOptions eo;
  eo.parallel = std::max<size_t>(1, opts.parallel);
  remote::run_parallel(hosts.size(), eo, [&](size_t i) {
    if (!hosts[i].reached) return;
    const std::string& name = hosts[i].plan.name;
    if (cross_site) {
      auto probes = cross_site_probes(all[i], all);
      if (!probes.empty())
        cross[i] = cross_site_results(
            name, probes,
            exec(i, cross_site_script(probes, opts.cni_mtu, 2, az.tunnel_mtu), 60000));
    }
    if (all[i].site != "onprem") return;
    auto r = exec(i, site_overlap_command(), 30000);
    std::string err = r.ok() ? "" : r.error;
    std::vector<HostNetwork> nets;
    if (err.empty()) {
      auto routes = parse_ip_routes(r.out);
      if (routes.ok())
        nets = std::move(*routes);
      else
        err = routes.error().message;
    }
    auto addrs = interface_networks(hosts[i].facts.interfaces);
    nets.insert(nets.end(), addrs.begin(), addrs.end());
    if (!err.empty())
      overlap[i] = {name, "SiteOverlap", Status::Skip, "cannot read the host's routes: " + err,
                    "",   false};
    else
      overlap[i] = site_overlap_result(name, nets, ranges);
  });
  for (auto& v : cross) out.insert(out.end(), v.begin(), v.end());
  for (auto& r : overlap)
    if (r) out.push_back(std::move(*r));
  std::vector<std::string> clashes;
  for (const auto& [a, b] : overlapping_ranges(ranges))
    clashes.push_back(a.what + " " + a.cidr + " overlaps " + b.what + " " + b.cidr);
  if (!clashes.empty())
    out.push_back({"", "SiteOverlap", Status::Fail, util::join(clashes, "; "),
                   "the VNet, the pods and the services each need a range of their own "
                   "(paictl check config reports the same as A003)",
                   false});
  return out;
}

}  // namespace pai::check
