#pragma once
// The scheduling interface shared by HiveD and the baseline policies.
//
// A request is HiveD's pod-scheduling-spec for the pods of one affinity group
// (the gang that is scheduled as a unit); a result is HiveD's bind info: for
// every pod, the node and the leaf cell (GPU) indices. Policies are pure: no
// I/O, no clocks, no threads, and the same sequence of calls always gives the
// same placements (nothing depends on hash order or addresses).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/cluster.h"
#include "util/result.h"

namespace pai::config {
struct HivedModel;
}

namespace pai::scheduler {

// Priorities as HiveD defines them.
constexpr int32_t kOpportunisticPriority = -1;
constexpr int32_t kMinGuaranteedPriority = 0;
constexpr int32_t kMaxGuaranteedPriority = 1000;

// GroupRequest::group_id: how a policy finds a group it may already hold.
constexpr int32_t kGroupByName = -1;  // look the affinity group's name up (the default)
constexpr int32_t kNewGroup = -2;     // the caller holds no group of this name in the policy

// affinityGroup.members[i]
struct AffinityGroupMember {
  int32_t pod_number = 0;        // podNumber
  int32_t leaf_cell_number = 0;  // leafCellNumber (GPUs per pod)
};

// HiveD's pod-scheduling-spec, for a whole affinity group.
struct GroupRequest {
  std::string virtual_cluster;               // virtualCluster
  int32_t priority = 0;                      // priority: -1 opportunistic, 0..1000 guaranteed
  std::string pinned_cell_id;                // pinnedCellId
  std::string leaf_cell_type;                // leafCellType; empty = any type
  std::string affinity_group;                // affinityGroup.name
  std::vector<AffinityGroupMember> members;  // affinityGroup.members
  bool lazy_preemption_enable = false;       // lazyPreemptionEnable
  // The nodes Kubernetes suggests for the pod (those that passed its own
  // filters), as indices into ClusterShape::nodes; absent = every node. With
  // ignore_suggested_nodes false (ignoreK8sSuggestedNodes) HiveD places the
  // group on suggested nodes only; true (HiveD's default) ignores them for a
  // new placement. A group preempting others whose placement leaves the set is
  // planned again either way (HiveD never records the group's flag).
  // Baselines place on suggested nodes only, whatever the flag (their filters).
  std::optional<std::vector<int32_t>> suggested_nodes;
  bool ignore_suggested_nodes = true;  // ignoreK8sSuggestedNodes
  // Opaque to the scheduler; returned with victims so that callers need no name lookups.
  uint64_t tag = 0;
  // False: a Waiting result may leave ScheduleResult::reason empty (a caller that
  // only retries later need not pay for the text). Rejected results always say why.
  bool want_reason = true;
  // The index of virtual_cluster in cluster().vcs, if the caller knows it (-1 =
  // look the name up); a hint only: a wrong one is checked against the name.
  int32_t vc_index = -1;
  // kGroupByName, kNewGroup (nothing to look up: the policy holds no group of
  // this name, every earlier one was released), or the group_id of an earlier
  // result for this group (a preempting group scheduled again). An id that no
  // longer names a group of this name is looked up by name.
  int32_t group_id = kGroupByName;
};

// affinityGroupBindInfo[].podPlacements[]
struct PodPlacement {
  int32_t node = -1;                                // index into ClusterShape::nodes (physicalNode)
  int32_t leaf_cell_number = 0;                     // the member this pod belongs to
  std::vector<int32_t> physical_leaf_cell_indices;  // physicalLeafCellIndices (GPU indices)
  std::vector<std::string> preassigned_cell_types;  // preassignedCellTypes ("" = opportunistic)
};

enum class Outcome : uint8_t {
  Bound,       // the group holds its cells; every pod has a placement
  Preempting,  // the placement needs the victims deleted first; call schedule() again after that
  Waiting,     // no placement now; try again when resources are released
  Rejected,    // a user error (unknown VC, bad priority, ...): retrying cannot help
};
std::string_view to_string(Outcome o);

struct Victim {
  std::string group;  // affinity group name
  uint64_t tag = 0;
  int32_t group_id = -1;  // as ScheduleResult::group_id
};

struct ScheduleResult {
  Outcome outcome = Outcome::Waiting;
  std::string cell_chain;  // cellChain of the placement
  std::vector<PodPlacement>
      pods;  // Bound or Preempting: pods ordered by leaf_cell_number, then pod index
  std::vector<Victim> victims;     // Preempting: whole groups to delete (gang preemption)
  std::vector<Victim> downgraded;  // groups lazily preempted to opportunistic by this call
  std::string reason;              // Waiting or Rejected
  // Bound or Preempting: the policy's id of the group, for release_group() and
  // GroupRequest::group_id, until the group is released; -1 when it gives none.
  int32_t group_id = -1;
};

// What a policy holds right now; for metrics and checks.
struct UsageSummary {
  int64_t used_leaf_cells = 0;           // held by allocated or preempting groups
  int64_t opportunistic_leaf_cells = 0;  // of which at priority -1
  int64_t bad_leaf_cells = 0;            // on unhealthy nodes
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  virtual const ClusterShape& cluster() const = 0;

  // Schedules a new affinity group, or continues one that is preempting. With
  // allow_preemption false (HiveD's filtering phase) a placement that needs
  // victims is not reserved and the result is Waiting.
  virtual ScheduleResult schedule(const GroupRequest& request, bool allow_preemption = true) = 0;
  // The same decision as schedule(), written over `out`. A policy may reuse
  // out's buffers (pods, victims, strings), so that a caller deciding in a loop
  // with one result does not allocate per decision.
  virtual void schedule_into(const GroupRequest& request, bool allow_preemption,
                             ScheduleResult& out) {
    out = schedule(request, allow_preemption);
  }

  // The next pod of an allocated group (HiveD schedules pod by pod): its
  // placement, or Rejected when the group has no pod left with that many leaf
  // cells ("more pods than the group declares").
  virtual ScheduleResult schedule_pod(std::string_view group, int32_t leaf_cell_number) = 0;

  // All pods of a group are gone (finished, failed, preempted): frees its cells.
  // For a preempting group, cancels the preemption. False if the group is unknown.
  virtual bool release(std::string_view group) = 0;
  // The same as release(group); a policy may find the group by group_id (from a
  // result or a victim; -1 = none) without looking its name up.
  virtual bool release_group(int32_t group_id, std::string_view group) {
    (void)group_id;
    return release(group);
  }

  // A node failed (false) or came back (true).
  virtual void set_node_health(int32_t node, bool healthy) = 0;

  // Increases whenever resources may have become usable (a release, a
  // preemption, a lazy preemption, a node recovery). A request that failed at
  // epoch E cannot succeed before the epoch moves past E.
  virtual uint64_t release_epoch() const = 0;

  virtual UsageSummary usage() const = 0;
  virtual bool has_group(std::string_view group) const = 0;

  // Consistency of the internal state (free lists, counters, bindings, indexes);
  // empty when consistent. For tests; linear in the cluster size.
  virtual std::string check_invariants() const = 0;
};

// HiveD's validation of a pod-scheduling-spec (pkg/internal ExtractPodSchedulingSpec):
// empty string when valid, else HiveD's message.
std::string validate_request(const GroupRequest& r);

// "hived", "quota", "k8s-default", "private".
const std::vector<std::string>& policy_names();

// Builds a policy over a checked model (a model with errors is refused). An
// error when the name is unknown or the model unusable.
util::Result<std::unique_ptr<Policy>> make_policy(std::string_view name,
                                                  const config::HivedModel& model);

}  // namespace pai::scheduler
