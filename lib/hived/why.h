#pragma once
// Why an affinity group runs where it does, or why it waits (`paictl hived why`).
//
// A running group (allocated or preempting) is in HiveD's inspect API: where it
// is, at which priority, whether it was lazily preempted. A waiting group is
// not: its request is replayed through lib/scheduler's HiveD algorithm on the
// live state (the running groups restored on the config as HiveD does at
// restart, bad nodes marked), with preemption as HiveD's preempting phase does
// it, and the answer names the cells behind it: the VC's guaranteed cells of
// the chains the request may use and the groups holding them, the bad nodes of
// those chains, the cell each pod needs.
//
// Both answers are values; to_text and to_json render them as the command
// prints them (its text, -o wide, -o json).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/hived_model.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "hived/reasons.h"
#include "scheduler/hived_state.h"
#include "scheduler/policy.h"
#include "util/result.h"

namespace pai::hived {

// --- a running group ------------------------------------------------------------------

struct RunningAnswer {
  AffinityGroup group;
  // Of a preempting group: the groups on the leaves it reserved, that it waits
  // for (its victims). Of a group being preempted: the groups taking its leaves.
  // Each as "NAME" with where they meet.
  struct Other {
    std::string name, vc, state;
    int32_t priority = 0;
    std::map<std::string, std::vector<int32_t>> leaves;  // node -> leaf indices both list
  };
  std::vector<Other> waits_for, taken_by;
};

// `all`: every group HiveD lists (with `group` itself, or not), to name the
// victims of a preempting group and the preemptors of one being preempted.
RunningAnswer explain_running(const AffinityGroup& group,
                              const std::vector<AffinityGroup>& all = {});
// Where it runs, its guarantee, lazy preemption, preemption in progress;
// `wide` adds its leaf cells per virtual cell and its pods.
std::string to_text(const RunningAnswer& a, bool wide);
// A preempting group's code: WaitingForPreemption, naming its victims.
Reason preempting_reason(const RunningAnswer& a);
// group_summary_json + "running": true + "explanation" (the text without wide);
// a preempting group also "reason" and "wouldFit".
Json to_json(const RunningAnswer& a);

// --- a waiting group ------------------------------------------------------------------

enum class WaitVerdict { Fits, Preempts, Waits, Rejected };
std::string_view to_string(WaitVerdict v);  // "fits", "preempts", "waits", "rejected"

// The cell one pod of the request needs: the smallest cell of a chain with
// enough leaf cells (a pod stays inside one node's cells).
struct CellNeed {
  int32_t gpus = 0;
  std::string chain;
  std::string type;  // "" when a pod is larger than a node of the chain
  int64_t leaves = 0;
};

// Where one pod would be placed.
struct PodLeaves {
  std::string node;
  std::vector<int32_t> leaves;  // physical leaf cell indices
};

struct WaitingAnswer {
  std::string name;  // the group as asked for
  scheduler::GroupRequest request;
  std::string source;  // where the request came from ("the command line", a job's config)
  WaitVerdict verdict = WaitVerdict::Waits;
  std::string reason;                // the algorithm's reason
  std::vector<PodLeaves> placement;  // Fits: where its pods would be placed now
  std::vector<std::string> victims;  // Preempts: the lower-priority groups it preempts
  bool vc_known = false;             // the request's VC is in the config
  int64_t vc_cells = 0;              // the VC's guaranteed cells of the usable chains
  int64_t vc_bound = 0;              // of which bound to running groups
  std::map<std::string, int64_t> vc_cells_per_type;
  std::map<std::string, int32_t> held_by;  // running group -> priority, on those cells
  std::vector<std::string> bad_nodes;      // bad nodes of the usable chains
  std::vector<CellNeed> needs;             // per member and chain
  // What it was judged on.
  int64_t restored_groups = 0;
  int64_t live_bad_nodes = 0;
  // Its reason codes, ranked (reasons.h; empty when it fits now), and when it
  // would run.
  std::vector<Reason> reasons;
  WouldFit would_fit;
};

// When the running groups are expected to end: group name -> epoch seconds
// (groups not in it never end for wouldFit), and the judging time.
struct ExpectedEnds {
  std::map<std::string, double> by_group;
  double now_s = 0;
};

// Replays `request` on `live` with `model` as HiveD's config. An error when the
// config cannot be scheduled on.
util::Result<WaitingAnswer> judge_waiting(const std::string& name,
                                          const scheduler::GroupRequest& request,
                                          const std::string& source,
                                          const config::HivedModel& model, const LiveState& live,
                                          const ExpectedEnds& ends = {});
// The verdict in cells; `wide` adds the request and what it was judged on.
std::string to_text(const WaitingAnswer& a, bool wide);
// {"name","running":false,"verdict","reason" (the first code: reasons.h's
//  {"code","family","tier","title","detail","hint"}, null when it fits),"reasons",
//  "wouldFit","schedulerReason" (the algorithm's words),"vcGuaranteedCells",
//  "vcBoundCells","cellsPerPod","heldBy","badNodes","victims","explanation","request"}
Json to_json(const WaitingAnswer& a);

// --- reason codes ------------------------------------------------------------------------

struct WaitClassification {
  std::vector<Reason> reasons;  // ranked
  std::string needs;            // "1 more V100-NODE cell(s) in chain V100-RACK"
  std::string change;           // for a request that never fits: what to change
  std::vector<std::string> doomed_nodes;
  std::map<std::string, int32_t> held_by;
};
// The codes of `res` (the request's result on state `s` of a policy on `model`);
// `victims`: the groups a placement would preempt.
WaitClassification classify_wait(const config::HivedModel& model, const scheduler::HivedState& s,
                                 const scheduler::ClusterShape& shape,
                                 const scheduler::GroupRequest& req,
                                 const scheduler::ScheduleResult& res,
                                 const std::vector<std::string>& victims);

// wouldFit of a request that waits on `policy` (restored from the live
// state): the running groups with an expected end are released in the order
// of their ends, the request tried after each; then, when it still waits,
// `bad` nodes made healthy. Changes the policy.
WouldFit would_fit(scheduler::Policy& policy, const scheduler::GroupRequest& req,
                   const WaitClassification& why, const ExpectedEnds& ends,
                   const std::vector<std::string>& group_order);

// "  reason: CODE (tier N, title): detail\n    hint: ...\n  also: ...\n  wouldFit: ...\n"
// (wouldFit only when `waits`).
std::string reasons_block(const std::vector<Reason>& reasons, const WouldFit& w, bool waits);

// "2 pod(s) of 8 GPUs" / "1 pod(s) of 8 GPUs and 2 pod(s) of 4 GPUs"
std::string members_text(const scheduler::GroupRequest& request);
Json request_json(const scheduler::GroupRequest& request, const std::string& source);

}  // namespace pai::hived
