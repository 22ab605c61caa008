#pragma once
// paictl check cluster CLUSTER_DIR as a use case: the cluster directory
// prepared as install prepares it (prepare.h: its files checked, its hosts as
// HostSpecs, the same refusals), then check::check_cluster (check/cluster.h,
// the check itself) over those hosts, reached with the use cases' transport,
// and HiveD with hived_http_client's. docs/check-cluster.md.

#include <functional>

#include "check/cluster.h"
#include "deploy/host_plan.h"
#include "deploy/prepare.h"
#include "deploy/usecase.h"

namespace pai::deploy {

struct ClusterCheckDeps {
  HostsLoader load_hosts;
  TransportFactory transport;          // null: SSH
  http::Client* hived_http = nullptr;  // null: hived_http_client's (two tries a request)
  std::function<double()> now_epoch;   // wall clock, s since 1970; null: time()
};

// The cluster directory's errors (its files, its hosts) are the UseCaseError;
// everything found on the cluster, unreachable parts included, is a finding.
UseCaseResult<check::ClusterCheck> check_cluster(const check::ClusterCheckRequest& request,
                                                 const ClusterCheckDeps& deps);

}  // namespace pai::deploy
