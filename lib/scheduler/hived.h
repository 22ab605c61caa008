#pragma once
// HiveD's scheduling algorithm (OSDI '20; microsoft/hivedscheduler pkg/algorithm)
// over the checked HiveD model:
//
//  * cell chains and levels; physical cells with addresses, nodes and leaf indices;
//  * buddy allocation with split and merge over per-chain, per-level free lists;
//  * virtual clusters whose preassigned virtual cells are bound to physical cells
//    only while used, with HiveD's safety counters and the safe relaxed buddy
//    allocation when bad cells get in the way;
//  * guaranteed priorities 0..1000 and opportunistic -1; gang scheduling of
//    affinity groups; topology-aware packing (nodes with most leaf cells used
//    first, inside a node the lowest common ancestor as low as possible);
//  * preemption of whole lower-priority groups, with HiveD's Reserving/Reserved
//    cell states, and lazy preemption (downgrade to opportunistic);
//  * pinned cells, several leaf cell types (SKUs) with several chains each;
//  * bad nodes and "doomed" bad cells.
//
// What differs from HiveD, on purpose:
//  * Ties: by default as HiveD's lists happen to be ordered: free lists keep
//    their list order (appends, swap-removal), cluster views the order their
//    last stable sort left; or configuration order (make_hived_policy(...,
//    false)). Go map order (chains of a leaf type, VC loops) is configuration
//    order. The same calls always give the same placements.
//  * What HiveD scans linearly is indexed: free lists are ordered sets keyed by
//    (opportunistic leaf cells, cell), cluster views are bucketed by usage, the
//    cells of a node are listed per node. Decisions are those of HiveD's rules.
//  * Kubernetes is not modelled: all nodes start healthy, every node counts as
//    suggested unless the request carries Kubernetes' suggested nodes (then
//    HiveD's rules for them apply, docs/fidelity.md), and a group is
//    allocated when it is scheduled (HiveD waits for the pod's bind).
//  * A preemption returns all its victims at once (HiveD returns those of one
//    random node per call, as the Kubernetes preemption extender asks per node).
//  * Leaf counters are exact on irregular trees (a cell with fewer children
//    than its type says); HiveD multiplies by the first cell's child count.
//
// Edge cases where HiveD's master corrupts its state or panics, found by the
// randomized tests (tests/unit/scheduler/property_test.cc), are handled:
//  * a group's cells are bound before its preassigned cells are allocated, and
//    each virtual leaf is resolved from the physical cell at allocation time
//    (as HiveD's mapPhysicalCellToVirtual does), so releases in between that
//    bind doomed bad cells cannot take a virtual cell the group is about to use;
//  * releasing an opportunistic pod that sits on a doomed bad cell does not
//    release the doomed cell;
//  * a doomed cell that the VC put to use becomes an ordinary allocation when
//    it is healthy again or no longer needed as doomed (HiveD unbinds it under
//    running pods);
//  * a placement that lazy preemption turned onto a bad node is refused;
//  * after cancelling overlapping lower-priority preemptions HiveD goes on with
//    the plan made before; the port does too (with HiveD's tie order) while
//    that plan still holds, and plans again when cancelling moved bindings the
//    plan relied on (or with configuration order). A request that overlaps a
//    preemption in progress waits when preemption is not allowed (HiveD binds
//    over the reserved cells);
//  * a cell handed back to a group being preempted, whose VC reused its
//    virtual cells meanwhile, is held opportunistically.

#include <memory>
#include <string>

#include "scheduler/policy.h"
#include "util/result.h"

namespace pai::scheduler {

// Ties: `hived_order` (the default) breaks them as HiveD's lists happen to be
// ordered (docs/fidelity.md); false breaks them by configuration order.
util::Result<std::unique_ptr<Policy>> make_hived_policy(const config::HivedModel& model,
                                                        bool hived_order = true);

// A copy of a policy make_hived_policy made, with its whole state (cheaper
// than making it again and replaying); nullptr for other policies.
std::unique_ptr<Policy> copy_hived_policy(const Policy& policy);

// Doomed bad cells: bad physical cells HiveD has bound to a VC's preassigned
// virtual cells because the VC's free guarantee exceeds the healthy free cells.
struct DoomedCount {
  int32_t vc = -1;     // index into cluster().vcs
  int32_t chain = -1;  // index into cluster().chains
  int32_t level = 0;
  int64_t cells = 0;
  int64_t leaf_cells = 0;  // leaf cells in them
};
// Per VC, chain and level with any, in that order; empty for other policies.
// Costs the number of VCs x cell levels, not the cluster's size.
std::vector<DoomedCount> doomed_cells(const Policy& policy);

// Per chain and level ([chain][level], level 0 unused): how many bad free
// cells HiveD takes before it dooms one, the free cells left minus the largest
// free guarantee of a VC (it binds doomed cells while a VC's free guarantee
// exceeds the healthy free cells); the largest int64_t where no VC has a free
// guarantee at that level. Empty for other policies.
std::vector<std::vector<int64_t>> doomed_headroom(const Policy& policy);

}  // namespace pai::scheduler
