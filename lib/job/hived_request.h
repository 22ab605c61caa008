#pragma once
// A job protocol v2 job as the requests OpenPAI's rest-server gives HiveD.
//
// The rest-server (its HiveD middleware) turns each task role into pods with a
// pod-scheduling-spec:
//   - virtualCluster: defaults.virtualCluster, "default" when unset;
//   - priority from extras.hivedScheduler.jobPriorityClass: crit 120, prod 100,
//     test 10 (also when unset), oppo -1;
//   - leafCellType: the task role's skuType (none: any type), pinnedCellId;
//   - leafCellNumber: max over GPU, CPU and memory of ceil(request / per-SKU),
//     per-SKU from the skuType, or the smallest of the VC's SKU types when the
//     role names none;
//   - affinityGroup: task roles that name the same affinityGroupName form the
//     group "USER~JOB/NAME"; when no role names one and extras.gangAllocation is
//     not false, every role is one gang "USER~JOB/default"; otherwise each pod is
//     its own group (HiveD then names it after the pod).
// HiveD's affinity groups of a job are therefore "USER~JOB/<something>".

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/client.h"
#include "job/job_file.h"
#include "scheduler/policy.h"

namespace pai::job {

// The rest-server's jobPriorityClass -> HiveD priority; nullopt for a class it
// does not know (the server refuses the job). "" is test.
std::optional<int32_t> hived_priority(std::string_view priority_class);

// "alice~train/default" -> "alice~train"; a name without '/' is returned as is.
std::string job_of_group(std::string_view group);

struct HivedRequests {
  std::vector<scheduler::GroupRequest> groups;  // in task role order of their first role
  // True when the job is not gang-scheduled and names no affinity group: each
  // pod is its own group, and `groups` holds one pod of each task role.
  bool per_pod = false;
};

// The groups of `job` (submitted by `user`) as HiveD would be asked for them.
// `skus`: the rest-server's resource units a role without a skuType is
// measured in: the SKU types of the job's virtual cluster, or every SKU type of
// the cluster for an opportunistic job. `leaf_types`: the leaf cell types HiveD knows; a skuType
// that is one becomes the group's leafCellType. An error says why when the
// job is not made of leaf cells (a role asks for a resource its SKU lacks, an
// unknown skuType, a role of no cells).
util::Result<HivedRequests> hived_requests(const JobRequest& job, const std::string& user,
                                           const std::vector<api::SkuType>& skus,
                                           const std::set<std::string>& leaf_types);

}  // namespace pai::job
