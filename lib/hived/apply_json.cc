#include "hived/apply_json.h"

#include "hived/diff_json.h"

namespace pai::hived {

Json apply_json(const ApplyPlan& plan) {
  Json doc = diff_json(plan.input, plan.diff);
  doc["applied"] = false;
  if (!plan.changes()) return doc;
  if (plan.refused) {
    doc["refused"] = "running guaranteed groups would be lazily preempted";
    return doc;
  }
  if (plan.push_error) return doc;
  doc["pushCommand"] = plan.push_command;
  doc["restartCommand"] = plan.restart_command;
  return doc;
}

Json apply_json(const ApplyPlan& plan, const ApplyOutcome& outcome) {
  Json doc = apply_json(plan);
  if (outcome.restarted) doc["applied"] = true;
  if (!outcome.waited) return doc;
  doc["waitedSeconds"] = static_cast<int64_t>(outcome.waited_s + 0.5);
  if (!outcome.healthy) {
    doc["notHealthy"] = outcome.not_healthy;
    return doc;
  }
  Json groups = Json::array();
  for (const auto& g : outcome.groups)
    groups.push_back(
        {{"name", g.name}, {"planned", g.planned}, {"now", g.now}, {"asPlanned", g.as_planned}});
  doc["result"] = {{"nodes", outcome.nodes},
                   {"badNodes", outcome.bad_nodes},
                   {"groups", groups},
                   {"notAsPlanned", outcome.not_as_planned}};
  return doc;
}

}  // namespace pai::hived
