#include "scheduler/policy.h"

#include "config/hived_model.h"
#include "scheduler/baselines.h"
#include "scheduler/hived.h"

namespace pai::scheduler {

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::Bound:
      return "bound";
    case Outcome::Preempting:
      return "preempting";
    case Outcome::Waiting:
      return "waiting";
    case Outcome::Rejected:
      return "rejected";
  }
  return "unknown";
}

std::string validate_request(const GroupRequest& r) {
  // Called for every decision: the prefix becomes a string only for an error.
  const std::string_view pfx = "pod-scheduling-spec: ";
  if (r.virtual_cluster.empty()) return std::string(pfx) + "VirtualCluster is empty";
  if (r.priority < kOpportunisticPriority)
    return std::string(pfx) + "Priority is less than " + std::to_string(kOpportunisticPriority);
  if (r.priority > kMaxGuaranteedPriority)
    return std::string(pfx) + "Priority is greater than " + std::to_string(kMaxGuaranteedPriority);
  if (r.affinity_group.empty()) return std::string(pfx) + "AffinityGroup.Name is empty";
  if (r.members.empty()) return std::string(pfx) + "AffinityGroup.Members is empty";
  int64_t pods = 0;
  for (const auto& m : r.members) {
    if (m.pod_number <= 0)
      return std::string(pfx) + "AffinityGroup.Members has non-positive PodNumber";
    if (m.leaf_cell_number <= 0)
      return std::string(pfx) + "AffinityGroup.Members has non-positive LeafCellNumber";
    pods += m.pod_number;
  }
  // Not a HiveD rule: a bound that keeps one request from exhausting memory.
  if (pods > 1'000'000)
    return std::string(pfx) + "AffinityGroup.Members declares more than 1000000 pods";
  return {};
}

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names = {"hived", "quota", "k8s-default", "private"};
  return names;
}

util::Result<std::unique_ptr<Policy>> make_policy(std::string_view name,
                                                  const config::HivedModel& model) {
  if (!model.complete)
    return util::Error{"the HiveD config has errors; fix them first (paictl check config)", {}};
  if (model.chains.empty()) return util::Error{"the HiveD config has no physical cells", {}};
  if (name == "hived") return make_hived_policy(model);
  if (name == "quota") return make_baseline_policy(Baseline::Quota, model);
  if (name == "k8s-default") return make_baseline_policy(Baseline::K8sDefault, model);
  if (name == "private") return make_baseline_policy(Baseline::Private, model);
  return util::Error{
      "unknown policy \"" + std::string(name) + "\" (known: hived, quota, k8s-default, private)",
      {}};
}

}  // namespace pai::scheduler
