#pragma once
// The documents of `paictl job clone|resubmit -o json` (paictl.jobSubmission/v1)
// and `paictl job sweep -o json` (paictl.jobSweep/v1), without their apiVersion.

#include <nlohmann/json.hpp>

#include "job/clone.h"

namespace pai::job {

using CloneJson = nlohmann::ordered_json;

// A dry run of clone or resubmit: the copy, where it would go, its tags and
// its body with secrets masked.
CloneJson clone_json(const ClonePlan& plan);
// After apply_clone posted the copy: the job, where it went, and the server's message.
CloneJson clone_json(const ClonePlan& plan, const CloneOutcome& outcome);
// A sweep: its jobs and their parameters ("items"), the cluster, the tag, and
// whether it was a dry run. After apply_clone: the jobs that were posted.
CloneJson sweep_json(const ClonePlan& plan);
CloneJson sweep_json(const ClonePlan& plan, const CloneOutcome& outcome);

}  // namespace pai::job
