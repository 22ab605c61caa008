#pragma once
// The maintenance planner: in which order, and in which batches, nodes are taken
// out of service (upgrade, node maintain), planned around HiveD's running groups
// and the virtual clusters' guarantees.
//
// Ordering. Every node to maintain is looked up in HiveD's live state and its
// running groups (affinity groups with leaf cells on it) are judged one by one:
//  * a group with an expected end no later than now + wait_for_groups_s can be
//    waited for: its node is taken once the group has ended (an end already
//    past counts as now);
//  * a group with no known expected end, or one past the wait, cannot: with
//    `evict` it is evicted when its node's batch starts (named in the plan),
//    without it the group blocks its nodes (they are in no batch; the plan
//    names the group, its nodes and why).
// Nodes with no running group come first, then nodes whose groups end soonest
// (a node is free at the latest end of its waited groups), then nodes whose
// groups are evicted; ties by the order given. A gang (a waited-for group with
// pods on several of the nodes) keeps its nodes together: they go in one batch,
// after the gang ends. A gang that spans more nodes than one batch may take
// fills consecutive batches, the first of which waits for it to end, so no node
// of a running gang is ever taken while the gang still runs elsewhere.
//
// Batches. A batch never takes out more than `max_unavailable`:
//  * N: at most N nodes a batch;
//  * P%: at most P% of the cluster's nodes (the nodes of HiveD's physical
//    cluster; without HiveD, of the nodes given), rounded down, and, per VC, no
//    more doomed bad cells than P% of that VC's guaranteed leaf cells (rounded
//    down, counted in leaf cells); a batch always takes at least one node (its
//    figures then say by how much it goes beyond).
// Cordoning a node makes HiveD count its cells as bad (healthy = Ready and not
// Unschedulable). For each batch the plan replays HiveD with the batch's nodes
// bad (earlier batches' nodes are back, uncordoned; groups waited for or
// evicted by earlier batches have ended):
//  * doomed bad cells: on HiveD's state once the batch's own groups have ended
//    (its nodes are out, idle), the bad cells HiveD binds to a VC's guaranteed
//    virtual cells because the VC's free guarantee no longer fits the healthy
//    free cells: the VC's guarantee is short by that much while the batch is
//    out. One HiveD state carries the whole plan (groups released, nodes
//    marked bad and healthy again as batches go), so the cost grows with the
//    nodes and groups, not with their product;
//  * lazily preempted groups: a HiveD that rebuilds its state with the
//    batch's nodes bad (a restart while they are cordoned, as `hived diff
//    --live` replays it: scheduler::restore_hived_groups on the same config)
//    runs them on at opportunistic priority, where a restart with only
//    today's bad nodes would not. The groups the batch waits for still run
//    then (they may be among them); the groups it evicts do not. A batch
//    whose bad cells fit in HiveD's headroom (no VC's free guarantee would
//    exceed the healthy free cells, scheduler::doomed_headroom) changes no
//    group and is not replayed.
//
// Without HiveD (`live` null) the nodes keep the order given, batches of N (or
// P% of the nodes given) nodes, and the plan says so and why.
//
// Pure: no I/O, no clock. The caller gives now and the groups' expected ends
// (job::expected_ends, lib/job/cell_verdict.h; read_maintenance_input below).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hived/live.h"
#include "util/result.h"

namespace pai::api {
class Client;
}

namespace pai::hived {

// --- the request ------------------------------------------------------------------------

// `--max-unavailable N|P%`.
struct MaxUnavailable {
  enum class Kind : uint8_t { Nodes, Percent };
  Kind kind = Kind::Nodes;
  int64_t value = 1;  // Nodes: >= 1; Percent: 1..100
};
// "3" -> 3 nodes, "10%" -> 10 percent; an error (with a hint) for anything else,
// 0, a negative number or more than 100%.
util::Result<MaxUnavailable> parse_max_unavailable(std::string_view text);
std::string to_string(const MaxUnavailable& m);  // "3", "10%"

struct MaintenanceRequest {
  std::vector<std::string> nodes;  // the nodes to take out of service (duplicates dropped)
  MaxUnavailable max_unavailable;  // default: one node a batch
  double wait_for_groups_s = 0;    // how long from now a running group may be waited for
  bool evict = false;              // evict the groups that cannot be waited for
  double now_s = 0;                // epoch seconds
  // Group -> expected end (epoch seconds). A group is looked up by its name,
  // then by its job (the part before the first '/': job::expected_ends keys
  // by USER~JOB and a job's groups are USER~JOB/<group>). A group in neither
  // never ends for the estimate.
  std::map<std::string, double> expected_ends;
  // Estimated time one batch takes once its nodes are free (the per-node
  // action); only shifts the estimated starts. 0: not known.
  double batch_s = 0;
  // Replay a restart for every batch, even where the planner can tell that
  // the batch's bad cells change no group (tests compare both ways).
  bool replay_every_batch = false;
};

// --- the plan ---------------------------------------------------------------------------

enum class GroupAction : uint8_t {
  WaitedFor,        // on the batch's nodes: the batch waits until its expected end
  Evicted,          // on the batch's nodes, cannot be waited for: evicted (request.evict)
  LazilyPreempted,  // elsewhere: HiveD with the batch's nodes bad runs it opportunistically
  Blocks,           // cannot be waited for and no evict: its nodes are in no batch
};
std::string_view to_string(GroupAction a);  // "waitedFor", "evicted", "lazilyPreempted", "blocks"

struct PlannedGroup {
  std::string name;
  std::string vc;
  int32_t priority = 0;
  GroupAction action = GroupAction::WaitedFor;
  std::optional<double> until_s;   // WaitedFor: when it is expected to end (>= now)
  std::optional<double> end_s;     // its expected end as given, when known
  std::vector<std::string> nodes;  // the nodes it runs on (all of them, in name order)
  int64_t leaves = 0;              // leaf cells it uses
  std::string reason;              // one line: why this action
  // WaitedFor: a HiveD restarted while the batch waits for it (its nodes bad)
  // would run it opportunistically; `lazy_reason` says why. A LazilyPreempted
  // group's reason says it in `reason`.
  bool lazily_preempted = false;
  std::string lazy_reason;
};

// Doomed bad cells of one VC while a batch is out, per chain and cell type.
struct VcDoomed {
  std::string vc;
  std::string chain;
  std::string cell_type;
  int64_t cells = 0;   // doomed bad cells of that type while the batch is out
  int64_t leaves = 0;  // leaf cells in them
  // Of `leaves`, those the batch adds to what is doomed now (bad nodes before
  // any maintenance); the P% bound is on their sum per VC.
  int64_t added_leaves = 0;
  int64_t guaranteed_leaves = 0;  // the VC's guaranteed leaf cells (every chain)
  int64_t allowed_leaves = -1;    // P%: the most a batch may doom; -1: no such bound (N)
};

struct MaintenanceBatch {
  int32_t index = 0;               // 1-based
  std::vector<std::string> nodes;  // in the plan's order
  // Estimated start of the per-node action: when its waited groups have ended,
  // and not before the previous batch's start + request.batch_s.
  double start_s = 0;
  // The groups on its nodes (WaitedFor / Evicted) and the groups elsewhere it
  // lazily preempts, in that order; by name within each.
  std::vector<PlannedGroup> groups;
  std::vector<VcDoomed> doomed;  // VCs with doomed bad cells while it is out, by VC
  std::string reason;            // one line: why these nodes now
};

struct BlockedNode {
  std::string node;
  std::vector<std::string> groups;  // the groups that block it
  std::string reason;               // one line
};

struct MaintenancePlan {
  bool hived = false;  // planned on HiveD's live state; false: plain order
  // Without HiveD: why the order is plain (the caller's words, or the default).
  std::string fallback_reason;
  MaxUnavailable max_unavailable;
  double wait_for_groups_s = 0;
  bool evict = false;
  double now_s = 0;
  int64_t cluster_nodes = 0;    // nodes P% is taken of
  int64_t nodes_per_batch = 0;  // the node bound of a batch (N, or P% of cluster_nodes, >= 1)
  std::vector<MaintenanceBatch> batches;
  std::vector<PlannedGroup> blocking;      // groups that block without evict (action Blocks)
  std::vector<BlockedNode> blocked;        // nodes in no batch, in the order given
  std::vector<std::string> evicted;        // every evicted group, in batch order
  std::vector<std::string> unknown_nodes;  // given nodes HiveD does not know (taken as idle)
  std::vector<std::string> warnings;       // duplicates dropped, replay problems...
  // The estimated start of the last batch (now when there is none).
  double end_s = 0;
  // Batches whose restart was replayed; the others' bad cells fit in HiveD's
  // headroom and change no group.
  int64_t replayed_batches = 0;
};

// The plan. `live` null: no HiveD known (plain order; `fallback_reason` says
// why, e.g. "no --hived URL and no hived_url in config.yaml"). An error for an
// empty node list or a bad max_unavailable, and when the live state gives no
// config to replay on (hived::model_of).
util::Result<MaintenancePlan> plan_maintenance(const MaintenanceRequest& request,
                                               const LiveState* live,
                                               std::string_view fallback_reason = {});

// --- reading the input ------------------------------------------------------------------

struct MaintenanceInput {
  std::optional<LiveState> live;                // none without a HiveD client
  std::map<std::string, double> expected_ends;  // empty without a REST client
};

// Reads HiveD's live state (read_live) from `hived` and, when `rest` is given,
// the running jobs' expected ends (job::expected_ends; `duration_s`: how long
// a running job runs, none: each user's median). Either client may be null.
// An error when HiveD does not answer (the caller may then plan without it).
util::Result<MaintenanceInput> read_maintenance_input(Client* hived, api::Client* rest,
                                                      std::optional<double> duration_s = {});

}  // namespace pai::hived
