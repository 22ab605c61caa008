#pragma once
// A highly available control plane's checks (layout.yaml with 3 or 5 masters,
// docs/install.md), run by `check hosts` on each reached host, with the probes
// of check/cross_site.h (TCP connects from the host itself, changing nothing):
//   * ControlPlaneEndpoint: from every host, TCP to kube_control_plane_endpoint
//     (an operator's load balancer). It must accept the connection: a load
//     balancer listens before any API server behind it does. Refused (nothing
//     listens) or no answer (blocked, no route, no such host) fails. kube-vip's
//     address appears only when kube-vip runs on a master: not probed.
//   * MasterPort: from each master, TCP to every other master's etcd (2379,
//     2380), API server (6443) and kubelet (10250). Before an install nothing
//     listens: refused passes (the path is open), a timeout or no route fails.

#include <string>
#include <vector>

#include "check/catalogue.h"
#include "check/cross_site.h"
#include "check/hybrid.h"
#include "config/cluster_files.h"

namespace pai::check {

// What `from` probes: the endpoint (HOST:PORT, "" for none) from every host,
// the other masters' ports from a master.
std::vector<Probe> master_probes(const SiteHost& from, const std::vector<SiteHost>& all,
                                 const std::string& endpoint);

// The results of one host's probes (cross_site_script's output), one per probe.
std::vector<CheckResult> master_results(const std::string& host, const std::vector<Probe>& probes,
                                        const remote::ExecResult& r);

// Nothing when layout.yaml has fewer than 2 masters or no config.yaml.
std::vector<CheckResult> control_plane_checks(const config::CheckOutcome& loaded,
                                              const std::vector<HostOutcome>& hosts,
                                              const HostExec& exec, size_t parallel = 64);

}  // namespace pai::check
