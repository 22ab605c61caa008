#pragma once
// node maintain's -o json document (paictl.nodeMaintain/v1): the change asked,
// each host's change, the maintenance plan (hived::maintenance_json), and after
// an apply what the node batch runner did.

#include "deploy/install_json.h"
#include "deploy/maintain.h"

namespace pai::deploy {

// {"apiVersion", "kind": "NodeMaintain", "cluster", "dryRun", "change": {"driver"?,
//  "packages", "reboot"}, "groupsFrom", "hosts": [{"host", "os", "gpus", "driverNow",
//  "driverExpected"?, "reboot", "changes", "packages": [{"name", "from", "to", "held",
//  "removes"}]}], "plan": {...}, "outcome"?: {"end", "runId", "resumed", "nodes":
//  [{"node", "batch"?, "end", "message"?}], "error"?}}
DocJson maintain_json(const MaintainPlan& plan, const MaintainOutcome* outcome);

const char* to_string(MaintainOutcome::End e);

}  // namespace pai::deploy
