#pragma once
// paictl upgrade as a use case (usecase.h; docs/upgrade.md): the cluster's
// Kubernetes moved to `to` one minor at a time, with kubeadm's rules
// (upgrade_version.h). Per minor: the control plane first (on the master the
// kubeadm package of the minor's repository, unheld, installed and held again,
// `kubeadm upgrade plan`, `kubeadm upgrade apply vVER -y` unless the API server
// already runs VER, then the master's kubelet and kubectl and a kubelet
// restart), then the workers in the maintenance planner's batches
// (hived/maintenance.h, around HiveD's running groups): per node cordon, wait
// for its groups or evict them, the kubeadm package, `kubeadm upgrade node`, the
// kubelet and kubectl packages (held again), a kubelet restart, verify (Ready at
// the new version, the SKU's GPUs allocatable), uncordon. config.yaml's
// kube_version follows once a minor is done on every node.
//
// The cluster is the source of truth: a plan reads the API server's version
// and every Node's kubelet version and annotations, so a run that a kill -9
// cut short is finished by the next one (kubeadm upgrade apply runs once per
// minor; a node it left cordoned, annotated paictl.io/maintenance, is finished
// and uncordoned). .paictl/upgrade-versions.journal records the steps and the
// applies, .paictl/upgrade.journal the node batch runner's steps.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deploy/host_plan.h"
#include "deploy/upgrade_version.h"
#include "hived/maintenance.h"
#include "http/client.h"
#include "util/clock.h"

namespace pai::deploy {

struct UpgradeRequest {
  std::string cluster_dir;
  std::string to;                     // 1.Y or 1.Y.Z
  std::string max_unavailable = "1";  // N or P% (hived::parse_max_unavailable)
  double wait_for_groups_s = 3600;    // how long a running group may be waited for
  bool evict = false;                 // evict the groups that cannot be waited for
  std::string hived;  // HiveD's inspect API ("" : config.yaml's hived_url, else none)
  bool dry_run = false;
  std::vector<std::string> limit;  // the workers to upgrade (the control plane always)
  size_t parallel = 8;             // nodes of one batch at a time
  double node_wait_s = 300;        // a node Ready at the new version after its kubelet restart
  double poll_s = 1;               // between reads of a node or of its groups
  // The cluster's copy of the cluster files follows config.yaml's kube_version:
  // a config push to the master ends the apply (templates_dir: its templates).
  bool push_cluster_files = true;
  std::string templates_dir;
};

struct UpgradeDeps {
  InstallDeps install;
  // HiveD's inspect API and the gateway (the groups' expected ends). Null: CurlClients.
  http::Client* hived_http = nullptr;
  http::Client* rest_http = nullptr;
  util::Clock clock;                 // empty: the real clock
  std::function<double()> wall_now;  // epoch seconds; empty: the system clock
};

// A Node as the plan read it.
struct UpgradeNode {
  std::string name;
  bool master = false;
  std::string kubelet;  // "1.30.10"
  bool ready = false;
  bool unschedulable = false;
  std::string maintenance;  // the paictl.io/maintenance annotation ("" none)
  int gpus_allocatable = 0;
  int gpus_expected = 0;  // the SKU's count (layout.yaml)
};

struct UpgradeStep {
  KubeVersion to;                    // with its patch
  bool latest = true;                // the minor's latest patch in the repository
  bool control_plane_done = false;   // the API server runs `to` already
  bool master_kubelet_done = false;  // the master's kubelet runs `to`
  // The other masters of a control plane of several whose kubelet is behind:
  // kubeadm upgrade node on each, one at a time, etcd healthy between them.
  std::vector<std::string> other_masters;
  std::vector<std::string> nodes;  // workers whose kubelet is behind, or left cordoned
  hived::MaintenancePlan batches;  // the workers' order and batches
  std::string repo;                // the minor's package repository
};

struct UpgradePlan {
  UpgradeRequest request;
  UpgradeDeps deps;
  std::shared_ptr<const PreparedCluster> cluster;
  KubeVersion target;
  KubeVersion control_plane;   // what the API server runs
  std::string config_version;  // config.yaml's kube_version
  std::vector<UpgradeNode> nodes;
  std::vector<UpgradeStep> steps;
  std::string hived_url;  // "" : none known
  std::string run_id;
  std::vector<std::string> warnings;
  bool up_to_date() const { return steps.empty(); }
};

// Reads the cluster (on the master: the API server's version, the Nodes) and
// the repository (apt on the master, with each minor's source in a temporary
// directory: nothing changes), HiveD's running groups, and plans. Input errors:
// a malformed version, a downgrade, a version the repository does not have, a
// kubelet outside the supported skew, an offline-bundle install; Remote: the
// master or HiveD not reachable.
UseCaseResult<UpgradePlan> plan_upgrade(const UpgradeRequest& request, const UpgradeDeps& deps);

struct UpgradeEvent {
  enum class Kind {
    Step,           // a minor step starts (`version`)
    ControlPlane,   // `message`: what runs on the master now
    Applied,        // kubeadm upgrade apply ran (`version`)
    ApplySkipped,   // the API server already ran `version`
    Batch,          // a batch of workers starts (`message`: its nodes)
    NodeStart,      // `node` is cordoned and taken
    NodeWaiting,    // `node` waits for `message` (groups) until they end
    NodeDone,       // `node` runs `version`, uncordoned
    ConfigUpdated,  // config.yaml's kube_version is `version`
  };
  Kind kind = Kind::Step;
  std::string version, node, message;
};

struct UpgradeOutcome {
  bool ok = false;
  std::optional<UseCaseError> error;
  std::vector<std::string> applied;   // the versions kubeadm upgrade apply ran for
  std::vector<std::string> upgraded;  // "NODE VERSION", in order
  std::string config_version;         // config.yaml's kube_version at the end
};

UpgradeOutcome apply_upgrade(UpgradePlan& plan,
                             const std::function<void(const UpgradeEvent&)>& on_event);

// --- pieces, for the tests --------------------------------------------------------------

// The package repository of a minor: `configured` (config.yaml's
// kube_package_repo) with its v1.Y replaced, or pkgs.k8s.io's.
std::string kube_repo_for(const std::string& configured, int minor);
// `apt-cache madison kubeadm` lines -> the patches of `minor`.
std::vector<int> parse_madison(const std::string& text, int minor);
// config.yaml's text with kube_version set to `version` (the line replaced, or
// added at the end), every other line as it was.
std::string with_kube_version(const std::string& text, const std::string& version);

}  // namespace pai::deploy
