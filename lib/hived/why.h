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
// group_summary_json + "running": true + "explanation" (the text without wide).
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
};

// Replays `request` on `live` with `model` as HiveD's config. An error when the
// config cannot be scheduled on.
util::Result<WaitingAnswer> judge_waiting(const std::string& name,
                                          const scheduler::GroupRequest& request,
                                          const std::string& source,
                                          const config::HivedModel& model, const LiveState& live);
// The verdict in cells; `wide` adds the request and what it was judged on.
std::string to_text(const WaitingAnswer& a, bool wide);
// {"name","running":false,"verdict","reason","vcGuaranteedCells","vcBoundCells",
//  "cellsPerPod","heldBy","badNodes","victims","explanation","request"}
Json to_json(const WaitingAnswer& a);

// "2 pod(s) of 8 GPUs" / "1 pod(s) of 8 GPUs and 2 pod(s) of 4 GPUs"
std::string members_text(const scheduler::GroupRequest& request);
Json request_json(const scheduler::GroupRequest& request, const std::string& source);

}  // namespace pai::hived
