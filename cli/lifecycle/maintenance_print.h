#pragma once
// The maintenance plan (lib/hived/maintenance.h) as `upgrade` and `node maintain`
// print it: per batch its nodes and estimated start, why, what happens to each
// running group on its nodes (waited for until ~T, evicted) and elsewhere
// (lazily preempted), and the VCs' doomed cells; then the nodes that wait
// because a group blocks them.

#include <string>

#include "hived/maintenance.h"
#include "output/printer.h"

namespace paictl::lifecycle {

// Text for the terminal; `wide` adds each group's reason and nodes.
std::string maintenance_text(const pai::hived::MaintenancePlan& plan, bool wide = false);

// One line: "5 nodes in 3 batches (1 node a batch), 1 group waited for, 1
// evicted, 2 nodes blocked" (a front end's summary or confirmation).
std::string maintenance_summary(const pai::hived::MaintenancePlan& plan);

// The plan's document (paictl.maintenancePlan/v1) for -o json|yaml.
Json maintenance_document(const pai::hived::MaintenancePlan& plan);

}  // namespace paictl::lifecycle
