#pragma once
// Why a job of a registered cluster waits (`paictl job status` of a WAITING
// job): HiveD's verdict on the live state with its reason codes and wouldFit
// (cell_verdict.h, lib/hived/reasons.h), and the kube-scheduler's own reason
// from the job's pod events (GET /api/v2/jobs/USER~JOB/events: a
// FailedScheduling event, "Unschedulable"), the two families ranked together.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/client.h"
#include "hived/inspect.h"
#include "hived/reasons.h"
#include "job/job_file.h"

namespace pai::job {

struct WaitingInput {
  std::string user, name;
  const JobRequest* job = nullptr;   // the job's config as the cluster keeps it
  std::optional<double> duration_s;  // how long running jobs run; none: each user's median
  std::function<double()> now_s;     // epoch seconds; empty: the system clock
};

struct WaitingExplanation {
  std::vector<hived::Reason> reasons;        // ranked, both families
  std::optional<hived::WouldFit> would_fit;  // none when HiveD gave no verdict
  std::string verdict;                       // HiveD's: fits | preempts | waits | rejected | ""
  std::string hived_unknown;                 // why HiveD gave no verdict
  std::string events_unknown;                // why the pod events could not be read
};

// `hived`: the cluster's HiveD inspect API, or nullptr when it has none.
WaitingExplanation explain_waiting(const WaitingInput& in, api::Client& rest, hived::Client* hived);

// {"reason" (the first code, or null),"reasons","wouldFit","hivedVerdict",
//  "hivedUnknown","eventsUnknown"}
hived::Json to_json(const WaitingExplanation& w);

}  // namespace pai::job
