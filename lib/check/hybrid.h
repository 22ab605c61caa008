#pragma once
// A hybrid cluster's checks (config.yaml has an azure: section), run on each
// reached host after its facts are in:
//   - the cross-site checks (check/cross_site.h): the ports and path MTU towards
//     the hosts of the other site, when azure.address-space is a range;
//   - SiteOverlap (check/site_overlap.h): the cluster's ranges against each other
//     and, on each on-prem host, against its own routes and addresses.
// `check hosts` and install's pre-install checks both run them.

#include <functional>
#include <string>
#include <vector>

#include "check/catalogue.h"
#include "check/runner.h"
#include "config/cluster_files.h"
#include "remote/transport.h"

namespace pai::check {

// Runs `script` on the host of hosts[i] (sh -c), within timeout_ms.
using HostExec =
    std::function<remote::ExecResult(size_t i, const std::string& script, int timeout_ms)>;

struct HybridOptions {
  size_t parallel = 64;
  int cni_mtu = 0;  // 0: as install computes it (azure.tunnel-mtu included)
};

// Nothing when the cluster has no config.yaml or no azure: section. Hosts not
// reached are left out; a host whose routes cannot be read gets a skipped
// SiteOverlap. The ranges' own clashes are one cluster-wide result (host "").
std::vector<CheckResult> hybrid_checks(const config::CheckOutcome& loaded,
                                       const std::vector<HostOutcome>& hosts, const HostExec& exec,
                                       const HybridOptions& opts);

}  // namespace pai::check
