#pragma once
// The document of `paictl job submit -o json` (paictl.jobSubmission/v1),
// without its apiVersion: a dry run's decision and request, or the submitted
// job.

#include <nlohmann/json.hpp>

#include "job/placement.h"
#include "job/submit.h"

namespace pai::job {

using SubmitJson = nlohmann::ordered_json;

// One cluster's evaluation: rank, decision, free resources, preference,
// HiveD's verdict and every check.
SubmitJson evaluation_json(const Evaluation& e);
// A dry run: "request", "decision", "target", "http" (when there is a target:
// the POST, its body with secrets masked) and "dryRun": true.
SubmitJson submit_json(const SubmitPlan& plan);
// After apply_submit: the job, where it went, and the server's message.
SubmitJson submit_json(const SubmitPlan& plan, const SubmitOutcome& outcome);

}  // namespace pai::job
