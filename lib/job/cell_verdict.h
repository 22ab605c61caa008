#pragma once
// HiveD's verdict on a job for one cluster (placement.h's CellVerdict), from
// the cluster's live state: HiveD's inspect API (its cells and running
// affinity groups) and the REST API's job list (when the running jobs are
// expected to end). `paictl job submit --cluster auto` asks every registered
// cluster at once; each verdict is judged on its own thread.

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "api/client.h"
#include "hived/inspect.h"
#include "job/job_file.h"
#include "job/placement.h"

namespace pai::job {

// When the running jobs of a cluster are expected to end (epoch seconds), keyed
// by the job (USER~NAME; its affinity groups are USER~NAME/<group>): each
// running job's launch plus `duration_s` when given, else the median run time
// (launch to completion) of the same user's finished jobs in the job list.
// Empty when the job list cannot be read.
std::map<std::string, double> expected_ends(api::Client& rest, std::optional<double> duration_s);

// When one cluster's answers (HiveD's two and its job list) had all arrived,
// their size, and the wall and CPU time of the verdict's thread from then on.
struct VerdictTiming {
  std::chrono::steady_clock::time_point arrived{};
  double after_ms = -1;  // -1: no verdict was judged on the answers
  double after_cpu_ms = -1;
  size_t bytes = 0;
};

struct CellVerdictInput {
  const JobRequest* job = nullptr;
  const ClusterFacts* facts = nullptr;  // the cluster's answers (gather_facts)
  std::optional<double> duration_s;     // how long running jobs run; none: each user's median
  std::function<double()> now_s;        // epoch seconds; empty: the system clock
};

// HiveD's verdict for the job on the cluster's live state, or why there is
// none (`why_unknown`): a pinned cell, unknown SKU types, no inspect API at
// `hived_base` (a redacted address in the reason), an answer HiveD does not
// give, a job of several groups.
CellVerdict cell_verdict(const CellVerdictInput& in, hived::Client& hived, api::Client& rest,
                         VerdictTiming& timing);

}  // namespace pai::job
