#pragma once
// paictl node add as a use case (usecase.h; docs/install.md, docs/azure.md):
//
//   node add DIR HOST...        the HiveD change is planned; the hosts join as
//                               install --limit HOST... does; the change is pushed
//                               to the master as the last step (HiveD restarts).
//   node add DIR --azure POOL   the pool's scale set grows (config.yaml's count and
//                               layout.yaml follow), then its new VMs join as above.

#include <optional>
#include <string>
#include <vector>

#include "deploy/hived_edit.h"
#include "deploy/install.h"

namespace pai::deploy {

struct NodeAddRequest {
  std::string cluster_dir;
  std::vector<std::string> nodes;  // hosts of layout.yaml (with the request's limit)
  std::string azure_pool;          // instead: grow this Azure pool ...
  int count = 1;                   // ... by this many VMs
  std::string vc;                  // the VC that gets the new cells; "" none
  bool dry_run = false;
  bool yes = false;
  std::vector<std::string> ignore_checks;
  int wait_s = 300;
  size_t parallel = 64;
  std::string templates_dir;
  std::string layouts_dir;
  AzureAccess azure;
};

struct NodeAddPlan {
  NodeAddRequest request;
  InstallDeps deps;
  // The new nodes: the hosts named; with an Azure pool, those Azure made (none
  // before the apply).
  std::vector<std::string> nodes;
  // The HiveD config's change: the hosts' cells; with an Azure pool, the cells
  // of placeholder VMs (new-vm-1, ...) when a VC is named or in a dry run.
  HivedEdit hived;
  std::optional<AzureGrowPlan> grow;
};
// On-prem: the HiveD change. Azure: a VC that cannot take the cells, the pool
// refused, what the scale set has now. Changes nothing.
UseCaseResult<NodeAddPlan> plan_node_add(const NodeAddRequest& request, const InstallDeps& deps,
                                         const Callbacks& callbacks);

struct NodeAddOutcome {
  enum class End {
    DryRun,          // --azure: a dry run stops after the plan
    Declined,        // --azure: the VMs were not confirmed
    NoTerminal,      // --azure: no confirmation could be asked
    AzureFailed,     // --azure: growing the pool failed (`error`)
    CellsFailed,     // --azure: the VMs' cells could not be planned (`error`)
    JoinNotPlanned,  // the join could not be planned (`error`)
    Joined,          // the join ran (`join`); then the push, unless it failed
  } end = End::Joined;
  std::optional<UseCaseError> error;
  std::optional<AzureGrowOutcome> grow;
  std::optional<InstallPlan> join_plan;
  std::optional<InstallOutcome> join;
  // Whether the join went as the push may follow (nothing failed or was refused).
  bool join_went_on = false;
  std::optional<PushOutcome> push;
};
NodeAddOutcome apply_node_add(NodeAddPlan& plan, const Callbacks& callbacks);

}  // namespace pai::deploy
