#pragma once
// paictl check cluster CLUSTER_DIR as a use case: one report on a running
// cluster, as diagnostics with codes K001-K099 (lib/diag/codes_cluster.cc).
// What it reads, and how:
//  * the master, in one SSH session: one curl run against the API server with
//    admin.conf's credentials (kubectl get --raw where curl is missing) for the
//    version, the nodes and the cluster files, and `etcdctl endpoint health`
//    with etcd's certificates; the other masters' etcd, one session each;
//  * every host's certificates, one session each (check/certs.h: certs check's
//    reader and findings, K100-K149);
//  * HiveD's inspect API (the cluster status and the affinity groups);
//  * the cluster directory: config.yaml's kube_version, layout.yaml's SKUs, the
//    cluster files (config drift) and .paictl/backups.jsonl (the last backup).
// Changes nothing anywhere. docs/check-cluster.md.
//
// The check runs over a cluster directory made ready as the hosts' runs take
// it (ClusterUnderCheck); deploy::check_cluster (deploy/cluster_check.h) is
// the use case that prepares it as install does and reaches its hosts.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "http/client.h"
#include "inventory/host_spec.h"
#include "remote/transport.h"

namespace pai::check {

struct ClusterCheckRequest {
  std::string cluster_dir;
  int warn_within_days = 30;    // certificates expiring within this many days
  int backup_max_age_days = 7;  // the last backup older than this
  std::string hived;  // HiveD's inspect API; "" = config.yaml's hived_url, else the cluster's
  std::string templates_dir;
};

// The cluster directory as the check reads it: its hosts and the settings the
// report compares with.
struct ClusterUnderCheck {
  std::string cluster_dir;  // without a trailing '/'
  // The hosts of layout.yaml; the master is the first of its masters (the
  // other masters: `other_master`).
  std::vector<inventory::HostSpec> hosts;
  std::string ns;            // OpenPAI's namespace (services-configuration.yaml)
  std::string kube_version;  // config.yaml's kube_version ("" = not compared)
  // HiveD's inspect API where the cluster files put it (the master's HiveD
  // port), "" when HiveD is not enabled.
  std::string hived;
  const inventory::HostSpec* master() const;
};

// What the check talks through: both required.
struct ClusterCheckDeps {
  remote::Transport* transport = nullptr;  // the hosts
  http::Client* hived_http = nullptr;      // HiveD's inspect API
  std::function<double()> now_epoch;       // wall clock, s since 1970; null: time()
};

// A Node as the master's API server shows it.
struct NodeStatus {
  std::string name;
  std::string kubelet_version;  // status.nodeInfo.kubeletVersion ("v1.30.10")
  std::string ready;            // "True", "False", "Unknown", "" (no Ready condition)
  std::string ready_reason;     // the condition's reason and message
  bool unschedulable = false;
  std::string maintenance;       // the paictl.io/maintenance annotation ("OPERATION RUN-ID"), or ""
  int64_t allocatable_gpus = 0;  // nvidia.com/gpu
};

// One master's etcd as `etcdctl endpoint health` saw it.
struct EtcdHealth {
  std::string host;
  enum class State { Healthy, Unhealthy, Unchecked } state = State::Unchecked;
  std::string message;  // etcdctl's words, or why it was not checked
};

// What the master's reads gave (the parts of the report made from them).
struct MasterReads {
  std::string api_version;  // /version's gitVersion
  std::vector<NodeStatus> nodes;
  std::optional<std::map<std::string, std::string>> cluster_files;  // nullopt: none there
  std::vector<EtcdHealth> etcd;
};

struct ClusterCheck {
  std::string cluster_dir;
  std::string master;   // its layout.yaml name
  std::string hived;    // the URL HiveD was read at ("" when HiveD is not enabled)
  diag::List findings;  // sorted
  // The master could not be reached (K001): the front end exits 3.
  bool master_unreachable = false;
};

// Everything found on the cluster, unreachable parts included, is a finding.
// `cluster` must have a master.
ClusterCheck check_cluster(const ClusterCheckRequest& request, const ClusterUnderCheck& cluster,
                           const ClusterCheckDeps& deps);

// --- the parts, for their unit tests ---------------------------------------------------

// The script the master runs (the API read, then etcd's health at `etcd_endpoint`).
std::string master_read_script(const std::string& ns, const std::string& etcd_endpoint);
// Only etcd's health (the other masters).
std::string etcd_health_script(const std::string& etcd_endpoint);

// Kubernetes' version skew (K010-K012): `api` the API server's version, the
// nodes' kubelets, config.yaml's `kube_version` ("" = not compared).
void version_skew_findings(const std::string& api, const std::vector<NodeStatus>& nodes,
                           const std::string& kube_version, diag::List& out);

// The age of the last backup (K030-K032) from CLUSTER_DIR/.paictl/backups.jsonl.
void backup_findings(const std::string& cluster_dir, double now_epoch, int max_age_days,
                     diag::List& out);

}  // namespace pai::check
