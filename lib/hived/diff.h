#pragma once
// The effect of a HiveD config change on a running cluster, before it is made.
//
// HiveD reads its config only when it starts; a change means a restart, and at
// the restart it rebuilds its state from the running pods' bind info
// (microsoft/hivedscheduler "Work-Preserving Reconfiguration"). The diff runs
// that rebuild (scheduler::restore_hived_groups) twice, on the current config
// and on the new one, with the same running groups and bad nodes, and reports
// what the new config changes:
//  * per VC and cell type, the guaranteed cells before and after;
//  * pinned cells removed, added or moved to another VC;
//  * nodes removed from or added to the physical cluster;
//  * per running group: it keeps running as it does, it is lazily preempted
//    (runs on at opportunistic priority, any guaranteed group may take its
//    cells), or it is left on removed cells (runs on, HiveD ignores the cells).
// A restart on the unchanged config is the baseline, so "no change" means no
// change.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/hived_model.h"
#include "scheduler/hived_state.h"
#include "util/result.h"

namespace pai::hived {

struct VcCellsChange {
  std::string vc;
  std::string chain;
  std::string cell_type;  // the preassigned cells' type
  std::string sku;        // the chain's leaf type
  int64_t before = 0, after = 0;
  int64_t leaves_before = 0, leaves_after = 0;
  bool changed() const { return before != after; }
};

struct PinnedChange {
  std::string id;
  std::string vc_before, vc_after;  // "" when not used by a VC
  std::string address_before, address_after;
  std::string change;  // "removed", "added", "moved", "unchanged"
};

enum class GroupEffect : uint8_t {
  Keeps,            // runs on as it does now
  LazilyPreempted,  // runs on at opportunistic priority (a guaranteed group may take its cells)
  OnRemovedCells,   // runs on, but HiveD ignores (some of) its cells
};
std::string_view to_string(GroupEffect e);  // "keeps", "lazilyPreempted", "onRemovedCells"

struct GroupChange {
  std::string name;
  std::string vc;
  int32_t priority = 0;
  bool guaranteed = false;  // at a guaranteed priority now (not already lazily preempted)
  scheduler::RestoreOutcome before = scheduler::RestoreOutcome::Kept;  // restart on the old config
  scheduler::RestoreOutcome after = scheduler::RestoreOutcome::Kept;   // restart on the new one
  GroupEffect effect = GroupEffect::Keeps;
  std::string reason;                       // why, for lazilyPreempted / onRemovedCells
  std::vector<std::string> removed_leaves;  // "node:index" no longer in the config
  int32_t leaves = 0;                       // leaf cells it runs on
};

struct ConfigDiff {
  std::vector<VcCellsChange> vcs;  // every VC and cell type of either config
  std::vector<PinnedChange> pinned;
  std::vector<std::string> nodes_removed, nodes_added;
  std::vector<GroupChange> groups;  // in the order given
  int64_t keeps = 0, lazily_preempted = 0, on_removed_cells = 0;
  int64_t guaranteed_preempted = 0;  // lazily preempted groups that run guaranteed now
  std::vector<std::string> warnings;
  bool changes() const;  // anything in the cells, pinned cells, nodes or groups
};

// What a diff is made from: the two configs, and the running groups and bad
// nodes of a live HiveD, of a saved snapshot of one, or none.
struct DiffInput {
  std::string old_path, new_path;  // as the diff names them
  std::shared_ptr<config::HivedModel> old_model, new_model;
  std::string source;         // "live", "snapshot" or "none"
  std::string source_detail;  // "the live HiveD at lab", "the snapshot s.json"
  std::vector<scheduler::LiveGroup> groups;
  std::vector<std::string> bad;
};

// `groups`: the running groups as bind info (hived::live_groups), `bad`: nodes
// HiveD sees bad. An error when a config cannot be scheduled on (it should have
// been checked first).
util::Result<ConfigDiff> diff_configs(const config::HivedModel& old_model,
                                      const config::HivedModel& new_model,
                                      const std::vector<scheduler::LiveGroup>& groups,
                                      const std::vector<std::string>& bad);

}  // namespace pai::hived
