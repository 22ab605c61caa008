#pragma once
// The effect of quarantining nodes, before it is done (`paictl hived
// quarantine`): cordoning a node makes HiveD count its cells as bad (a node is
// healthy when Ready and not Unschedulable), so
//  * the VCs whose free guarantee no longer fits the healthy free cells get
//    doomed bad cells (HiveD binds bad cells to their virtual cells, so that
//    the VC sees the failure): replayed on HiveD's state as it is now (its bad
//    nodes marked, its running groups restored), then with the nodes bad too,
//    as the maintenance planner replays a batch (maintenance.h);
//  * the running groups on the nodes keep running (a cordon evicts nothing):
//    named, with the leaf cells they hold there, unless the nodes are drained.
// Pure: no I/O.

#include <cstdint>
#include <string>
#include <vector>

#include "hived/live.h"
#include "util/result.h"

namespace pai::hived {

// Doomed bad cells of one VC, chain and cell type, before and after.
struct QuarantineDoomed {
  std::string vc;
  std::string chain;
  std::string cell_type;
  int64_t cells_before = 0, cells_after = 0;
  int64_t leaves_before = 0, leaves_after = 0;
  int64_t guaranteed_leaves = 0;  // the VC's guaranteed leaf cells (every chain)
};

// A running group with leaf cells on the nodes.
struct QuarantineGroup {
  std::string name;
  std::string vc;
  int32_t priority = 0;
  std::string state;
  std::vector<std::string> nodes;  // the quarantined nodes it runs on, in name order
  int64_t leaves = 0;              // its leaf cells on them
  int64_t gpus = 0;                // all its leaf cells
};

struct QuarantineEffect {
  std::vector<std::string> nodes;          // the nodes given that HiveD has cells on
  std::vector<std::string> unknown_nodes;  // given, but not in HiveD's physical cluster
  std::vector<std::string> already_bad;    // given, and HiveD sees them bad now
  std::vector<QuarantineDoomed> doomed;    // VCs whose doomed cells change, by VC
  std::vector<QuarantineGroup> groups;     // by name
  int64_t leaves = 0;                      // leaf cells of the nodes
};

// `nodes` are quarantined (`bad` true) or released (false: the nodes healthy
// again). An error when the live state gives no config to replay on.
util::Result<QuarantineEffect> quarantine_effect(const LiveState& live,
                                                 const std::vector<std::string>& nodes,
                                                 bool bad = true);

}  // namespace pai::hived
