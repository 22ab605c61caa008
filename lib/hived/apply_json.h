#pragma once
// The document of `paictl hived apply -o json` (paictl.hivedApply/v1), without
// its apiVersion: the diff's document (diff_json.h), then what was done.

#include "hived/apply.h"
#include "hived/inspect.h"

namespace pai::hived {

// The plan: the diff, "applied": false, and "refused" or the steps
// ("pushCommand", "restartCommand") when there is something to apply.
Json apply_json(const ApplyPlan& plan);
// After apply_hived_apply: "applied" once HiveD was restarted, "waitedSeconds",
// then "notHealthy" (the wait timed out) or "result".
Json apply_json(const ApplyPlan& plan, const ApplyOutcome& outcome);

}  // namespace pai::hived
