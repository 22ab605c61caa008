#pragma once
// The -o json|yaml documents of node add and node remove (paictl.nodeAdd/v1,
// paictl.nodeRemove/v1; docs/schemas/): the nodes, the HiveD config's change,
// the Azure part, and the plan and result of the join (or reset) and the push.

#include "deploy/install_json.h"
#include "deploy/node_add.h"
#include "deploy/node_remove.h"

namespace pai::deploy {

// The scale set's change ("azure" of node add --azure); with what Azure made
// when the apply got that far.
DocJson azure_grow_json(const AzureGrowPlan& plan, const AzureGrowOutcome* outcome);
// The VMs to delete and the pools' counts ("azure" of node remove --azure);
// with the nodes Azure no longer shows when the apply got that far.
DocJson azure_removal_json(const AzureRemovalPlan& plan, const AzureRemovalOutcome* outcome);

// node add's document; null when there is none (the plan was refused before
// Azure was read, or the join's end printed its own).
DocJson node_add_json(const NodeAddPlan& plan, const NodeAddOutcome* outcome);
// node remove's document.
DocJson node_remove_json(const NodeRemovePlan& plan, const NodeRemoveOutcome* outcome);

}  // namespace pai::deploy
