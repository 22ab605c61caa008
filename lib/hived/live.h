#pragma once
// Between lib/scheduler's state and HiveD's inspect answers, both ways:
//  * the answers HiveD would give for a policy's state (the inspect test
//    server and tests use them, so the shapes come from the algorithm itself);
//  * the running groups of a live HiveD as bind info, for
//    scheduler::restore_hived_groups (why, diff);
//  * summaries for `paictl hived status|groups`: per chain and cell type,
//    per node, per VC and SKU.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/hived_model.h"
#include "hived/inspect.h"
#include "scheduler/hived_state.h"
#include "scheduler/policy.h"
#include "util/result.h"

namespace pai::hived {

// --- the answers of a policy's state -------------------------------------------------

ClusterStatus cluster_status_of(const config::HivedModel& m, const scheduler::HivedState& s);
// `lazy`: who lazily preempted a group and when (the scheduler does not keep it).
std::vector<AffinityGroup> affinity_groups_of(
    const config::HivedModel& m, const scheduler::HivedState& s,
    const std::map<std::string, LazyPreemptionStatus>& lazy = {});

// --- the live state ---------------------------------------------------------------------

// One physical leaf cell of the live cluster.
struct LiveLeaf {
  std::string node;
  int32_t index = -1;
  std::string chain;      // the top cell type of its tree
  std::string leaf_type;  // the SKU
  std::string address;
  std::string state;
  bool healthy = true;
  int32_t priority = -2;
  std::string vc;        // the VC holding it (bound, or opportunistic use)
  std::string vaddress;  // its bound virtual cell, "" when none
  std::string group;     // the affinity group holding it (its pods run there), "" when none
  // The preempting group that has reserved it, "" when none. While its victim
  // still runs, `group` is the victim and the leaf's priority the preemptor's.
  std::string reserved_by;
  int32_t holder_priority = -2;  // the priority of `group` (-1: opportunistic work)
  bool holder_lazy = false;      // `group` was lazily preempted (runs as opportunistic work)
};

struct LiveNode {
  std::string name;
  bool healthy = true;
  std::vector<std::string> chains;
  std::vector<size_t> leaves;  // into LiveState::leaves
};

struct LiveState {
  ClusterStatus status;
  std::vector<AffinityGroup> groups;
  std::vector<LiveLeaf> leaves;
  std::vector<LiveNode> nodes;                         // in physical cluster order
  std::unordered_map<std::string, size_t> leaf_index;  // "node:index" -> leaves
  std::map<std::string, std::string> root_types;       // virtual root address -> cellType
  // Problems found while indexing (a group on a leaf that is not in the tree...).
  std::vector<std::string> warnings;
};

LiveState index_live(ClusterStatus status, std::vector<AffinityGroup> groups);

// Asks `client` for the cluster status and the affinity groups at once, then
// parses both at once and indexes them. `arrived(bytes)`, when given, is called
// as soon as both answers are in (before parsing). The error says what it was
// doing ("reading the cluster status", "reading the affinity groups").
Result<LiveState> read_live(Client& client, const std::function<void(size_t)>& arrived = {});

// The running groups as bind info, in the order HiveD listed them. `config`
// (the configuration the groups run on, when known) names the pinned cells.
std::vector<scheduler::LiveGroup> live_groups(const LiveState& live,
                                              const config::HivedModel* config = nullptr);

// The bad nodes of the live cluster that the model knows.
std::vector<std::string> bad_nodes(const LiveState& live);

// HiveD as it is now, replayed on `model`: its policy with the live bad nodes
// marked and the running groups restored from their placements, as HiveD
// rebuilds its state at a restart (scheduler::restore_hived_groups). What
// fit, why and quarantine's preview schedule on. `restored`, when given,
// receives how each group was restored. An error when the model cannot be
// scheduled on.
util::Result<std::unique_ptr<scheduler::Policy>> policy_now(
    const LiveState& live, const config::HivedModel& model,
    std::vector<scheduler::RestoredGroup>* restored = nullptr);

// --- summaries ---------------------------------------------------------------------------

struct LevelCount {
  std::string chain;
  int32_t level = 0;
  std::string cell_type;
  int64_t total = 0, used = 0, free = 0, reserved = 0, bad = 0, doomed = 0;
};

// The leaf cells of one node that one group uses.
struct NodeUse {
  std::string group;
  std::string vc;
  int32_t priority = -1;         // the leaves' priority (-1: opportunistic)
  std::vector<int32_t> indices;  // its leaf cell indices on the node, ascending
};

struct NodeSummary {
  std::string name;
  bool healthy = true;
  std::string leaf_type;  // SKUs, comma-separated when several chains
  // opportunistic: leaves that opportunistic (or lazily preempted) groups hold,
  // a victim's leaves that a preempting group has reserved included.
  int64_t leaves = 0, used = 0, opportunistic = 0, bad = 0;
  std::vector<std::string> groups;  // groups with leaves on it, in name order
  std::vector<NodeUse> uses;        // who uses which leaves, in the order of their first leaf
  // Leaves a preempting group has reserved (priority: the preemptor's), while
  // their victims may still run there.
  std::vector<NodeUse> reserved;
};

struct VcSkuSummary {
  std::string vc;
  std::string sku;
  int64_t guaranteed = 0;  // leaf cells in the VC's (non-opportunistic) virtual cells
  int64_t used = 0;        // of which used at guaranteed priority
  int64_t bad = 0;         // of which bound to bad cells (doomed included)
  // Leaves the VC uses at priority -1, outside its guarantee; an opportunistic
  // group that is being preempted counts with every leaf it still holds.
  int64_t opportunistic = 0;
};

struct Summary {
  std::vector<LevelCount> levels;
  std::vector<NodeSummary> nodes;
  std::vector<VcSkuSummary> vcs;
  int64_t groups = 0, preempting = 0, lazily_preempted = 0;
};

Summary summarize(const LiveState& live);

// --- a group in words ----------------------------------------------------------------------

// Leaf cell indices as ranges, ascending: "0-3,6".
std::string leaves_text(const std::vector<int32_t>& indices);
// "n1[0-3] n2[0-7]"
std::string placement_text(const AffinityGroup& g);
// The leaf cells it uses.
int64_t gpus_of(const AffinityGroup& g);
// {"name","vc","priority","state","gpus","physicalPlacement","lazyPreemption"}:
// a group as `paictl hived groups -o json` lists it.
Json group_summary_json(const AffinityGroup& g);

}  // namespace pai::hived
