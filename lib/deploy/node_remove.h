#pragma once
// paictl node remove as a use case (usecase.h; docs/install.md, docs/azure.md):
// refused when running groups use the nodes' cells (HiveD's inspect API, unless
// forced); the nodes are drained and deleted from Kubernetes, reset (or, with
// --azure, their VMs deleted), their cells and layout.yaml entries leave the
// cluster files, which are pushed to the master as the last step. A master of
// several leaves etcd first: its member removed through another master's
// etcdctl, refused when what is left would have no quorum (etcd_members.h); a
// master that is lost (its member unhealthy, its SSH unanswered) is not reset.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deploy/etcd_members.h"
#include "deploy/hived_edit.h"
#include "deploy/host_plan.h"
#include "http/client.h"

namespace pai::deploy {

struct NodeRemoveRequest {
  std::string cluster_dir;
  std::vector<std::string> nodes;  // hosts of layout.yaml (with the request's limit)
  bool drain = false;              // kubectl drain before the node is deleted
  bool azure = false;              // the nodes are VMs of Azure pools: delete them
  std::string vc;                  // the VC that gives up cells that no longer fit
  std::string hived;               // HiveD's inspect API: refuse when running groups use the nodes
  bool force = false;              // remove them even then
  bool dry_run = false;
  bool yes = false;
  int wait_s = 300;
  size_t parallel = 64;
  std::string templates_dir;
  AzureAccess azure_access;
};

struct NodeRemoveDeps {
  InstallDeps install;
  // HiveD's inspect API. Null: a CurlClient (30 s a request, 10 s to connect).
  http::Client* hived_http = nullptr;
};

// A running group that uses the removed nodes' cells.
struct AffectedGroup {
  std::string name, vc, effect, reason;
};

struct NodeRemovePlan {
  NodeRemoveRequest request;
  NodeRemoveDeps deps;
  std::shared_ptr<const PreparedCluster> cluster;
  std::vector<std::string> nodes;  // the layout.yaml names
  HivedEdit hived;
  std::optional<AzureRemovalPlan> azure;
  // Read from HiveD (request.hived, when the HiveD config changes): the groups
  // that would not keep running as they do. Set only when they were read.
  std::optional<std::vector<AffectedGroup>> running_groups;
  // Running groups use the cells, and the request forces the removal.
  bool forced() const { return running_groups && !running_groups->empty(); }
  // Masters among the nodes (a control plane of several): their etcd members,
  // removed first through the etcdctl of `etcd_via`, a master that stays.
  std::vector<EtcdMember> etcd_remove;
  std::string etcd_via;
  // Masters that are lost (the member unhealthy and SSH unanswered): not reset.
  std::vector<std::string> lost;
  // Where kubectl drains and deletes the nodes: a master that stays.
  const HostSpec* kubectl_host() const;
  // What runs on the master for each node (kubectl drain and delete).
  std::string node_script(const std::string& node) const;
};
// Refuses the only master (or every master), a master whose removal would
// leave etcd without a quorum, nodes that are not VMs (--azure), a HiveD change that
// cannot be made, and running groups on the nodes' cells without `force`
// (About::Other, the groups in the message). Changes nothing.
UseCaseResult<NodeRemovePlan> plan_node_remove(const NodeRemoveRequest& request,
                                               const NodeRemoveDeps& deps,
                                               const Callbacks& callbacks);

struct NodeRemoveOutcome {
  enum class End {
    DryRun,           // on-prem: the reset's plan ran (`reset`); --azure: nothing ran
    Declined,         // not confirmed
    DeleteFailed,     // deleting a node from Kubernetes failed (`error`)
    AzureFailed,      // deleting the VMs or writing the files failed (`error`)
    ResetNotPlanned,  // the reset could not be planned (`error`)
    EtcdFailed,       // removing a master's etcd member failed (`error`)
    NothingToReset,   // every node was a lost master: nothing reset; then the push
    Reset,            // the reset ran (`reset`); then the push, unless it failed
    AzureDeleted,     // the VMs went; then the push
  } end = End::Declined;
  std::optional<UseCaseError> error;
  std::vector<std::string> deleted;       // nodes deleted from Kubernetes
  std::vector<std::string> etcd_removed;  // masters whose etcd member was removed
  std::optional<AzureRemovalOutcome> azure;
  std::optional<HostStage> reset;
  bool reset_went_on = false;
  std::optional<PushOutcome> push;
};
NodeRemoveOutcome apply_node_remove(NodeRemovePlan& plan, const Callbacks& callbacks);

}  // namespace pai::deploy
