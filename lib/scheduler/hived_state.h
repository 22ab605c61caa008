#pragma once
// The state of the HiveD policy as values, and the state rebuilt from bind info.
//
// snapshot_hived() reads everything HiveD's inspect API shows: every physical
// cell (state, priority, health, the virtual cell it is bound to), every
// virtual cell of every VC (with HiveD's virtual addresses, "VC1/0/1") and the
// affinity groups with their placements. lib/hived turns it into HiveD's JSON.
//
// restore_hived_groups() is what HiveD does when it starts (AddAllocatedPod ->
// createAllocatedAffinityGroup): from the bind info of running groups it binds
// each leaf cell again on the policy's configuration, which may differ from the
// one the groups were placed on:
//  * a leaf cell that is not in the configuration (its node or chain removed)
//    is ignored: the group keeps running there but HiveD no longer counts it;
//  * a leaf is found by node and GPU index in the group's chain, else in any
//    other chain (HiveD's findPhysicalLeafCell);
//  * a guaranteed leaf is mapped to a virtual cell of the group's VC at the
//    level of its preassigned cell type (mapPhysicalCellToVirtual); when the VC
//    no longer exists, has no cell of that chain, has no free virtual cell at
//    that level, or binding would break the VC safety, the whole group is
//    lazily preempted (it keeps its cells at opportunistic priority);
//  * binding a leaf into a preassigned virtual cell that other groups hold on
//    other physical cells lazily preempts those groups (the cell moved);
//  * an opportunistic group, or one that is already lazily preempted, holds
//    its leaves at priority -1. (HiveD itself forgets lazy preemption on a
//    restart and re-binds from the pods' annotations; the inspect API does not
//    show the cell types that would need, so a lazily preempted group stays so.)
// Pure: no I/O. Call it on a fresh policy after the bad nodes are marked (HiveD
// learns the nodes before the pods).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/policy.h"

namespace pai::scheduler {

enum class CellUse : uint8_t { Free, Used, Reserving, Reserved };
std::string_view to_string(CellUse s);  // HiveD's names: "Free", "Used", ...

enum class GroupPhase : uint8_t { Allocated, Preempting, BeingPreempted };
std::string_view to_string(GroupPhase s);

struct PhysicalCellState {
  // Index in config::HivedModel::cells (address, type, node, leaf index come from there).
  CellUse state = CellUse::Free;
  int32_t priority = -2;  // -2 free, -1 opportunistic, 0..1000 guaranteed (max over the leaves)
  bool healthy = true;
  int32_t vcell = -1;   // bound virtual cell (index into HivedState::vcells)
  int32_t opp_vc = -1;  // leaves: the VC of the opportunistic group using it
  int32_t group = -1;   // leaves: the group using (or reserving) it, index into groups
  bool pinned = false;
};

struct VirtualCellState {
  int32_t vc = -1;
  int32_t chain = -1;
  int32_t level = 0;
  int32_t parent = -1;
  std::vector<int32_t> children;
  int32_t preassigned = -1;  // the root of its tree
  std::string address;       // HiveD's: "<vc>/<root index>/<index>/..."
  std::string pinned_id;     // set on pinned trees
  int32_t pcell = -1;        // bound physical cell (model cell index)
  int32_t priority = -2;
  int32_t used_leaves = 0;
};

struct HivedGroup {
  std::string name;
  int32_t vc = -1;
  int32_t priority = 0;
  GroupPhase phase = GroupPhase::Allocated;
  bool lazy_preempted = false;
  bool lazy_preemption_enable = false;
  std::string lazy_preemptor;  // who lazily preempted it ("" when unknown or not)
  int32_t chain = -1;
  std::vector<int32_t> pod_leaf_numbers;  // leaf cells per pod
  std::vector<int32_t> leaves;            // physical leaves (model cell indices), pod by pod
  std::vector<int32_t> vleaves;           // bound virtual leaves, same order; empty when none
};

struct HivedState {
  std::vector<PhysicalCellState> cells;  // same indices as the model's cells
  std::vector<VirtualCellState> vcells;
  std::vector<std::vector<int32_t>> vc_roots;  // [vc] -> root virtual cells in HiveD's order
  std::vector<HivedGroup> groups;              // in creation order
  std::vector<uint8_t> bad_nodes;              // [model node]
  // Doomed bad cells: bad physical cells bound to a VC's preassigned virtual cell.
  std::vector<int32_t> doomed;
};

// The state of a policy made by make_hived_policy; nullopt for other policies.
std::optional<HivedState> snapshot_hived(const Policy& policy);

// One running group, as its pods' bind info (or HiveD's inspect API) tells it.
struct LiveGroup {
  std::string name;
  std::string vc;
  int32_t priority = 0;
  std::string pinned_cell_id;
  std::string chain;  // cellChain of the bind info; "" to search every chain
  bool lazy_preemption_enable = false;
  bool lazy_preempted = false;
  std::string lazy_preemptor;
  struct Pod {
    std::string node;
    std::vector<int32_t> leaf_indices;                // physicalLeafCellIndices
    std::vector<std::string> preassigned_cell_types;  // per leaf; "" = opportunistic
  };
  std::vector<Pod> pods;
};

enum class RestoreOutcome : uint8_t {
  Kept,           // bound again at its priority, in its VC
  LazyPreempted,  // runs on, opportunistically (see reason)
  Opportunistic,  // was opportunistic (or already lazily preempted) and stays so
  Ignored,        // none of its leaf cells is in the configuration: HiveD no longer sees it
};
std::string_view to_string(RestoreOutcome o);

struct RestoredGroup {
  std::string name;
  RestoreOutcome outcome = RestoreOutcome::Kept;
  std::string reason;  // why it was lazily preempted or ignored
  // Leaf cells ("node:index") that are not in the configuration (ignored by HiveD).
  std::vector<std::string> ignored_leaves;
  int32_t kept_leaves = 0;
  // Groups restored earlier that this one lazily preempted (its cell moved).
  std::vector<std::string> preempted;
};

// Restores `groups` in order. Results are in the same order; a group lazily
// preempted by a later one has its outcome updated (LazyPreempted, with reason).
// nullopt when `policy` is not the HiveD policy.
std::optional<std::vector<RestoredGroup>> restore_hived_groups(
    Policy& policy, const std::vector<LiveGroup>& groups);

}  // namespace pai::scheduler
