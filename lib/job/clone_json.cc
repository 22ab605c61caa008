#include "job/clone_json.h"

namespace pai::job {

namespace {

CloneJson sweep_document(const ClonePlan& plan, size_t jobs, bool dry_run) {
  CloneJson items = CloneJson::array();
  for (size_t i = 0; i < jobs && i < plan.jobs.size(); ++i) {
    CloneJson params = CloneJson::object();
    for (const auto& p : plan.jobs[i].overrides.params) params[p.name] = p.value;
    items.push_back({{"job", plan.jobs[i].job_id}, {"parameters", params}});
  }
  CloneJson doc = CloneJson::object();
  doc["items"] = items;
  doc["cluster"] = plan.target.name;
  doc["tag"] = plan.tag;
  doc["dryRun"] = dry_run;
  return doc;
}

}  // namespace

CloneJson clone_json(const ClonePlan& plan) {
  const PlannedJob& j = plan.jobs.front();
  return {{"dryRun", true},
          {"cluster", plan.target.name},
          {"job", j.job_id},
          {"name", j.name},
          {"virtualCluster", plan.job.virtual_cluster},
          {"tags", j.tags},
          {"body", j.masked_body}};
}

CloneJson clone_json(const ClonePlan& plan, const CloneOutcome& outcome) {
  const PlannedJob& j = plan.jobs.front();
  return {{"dryRun", false},
          {"cluster", plan.target.name},
          {"job", j.job_id},
          {"user", plan.target.user},
          {"name", j.name},
          {"virtualCluster", plan.job.virtual_cluster},
          {"tags", j.tags},
          {"message", outcome.messages.empty() ? std::string() : outcome.messages.front()}};
}

CloneJson sweep_json(const ClonePlan& plan) {
  return sweep_document(plan, plan.jobs.size(), true);
}

CloneJson sweep_json(const ClonePlan& plan, const CloneOutcome& outcome) {
  return sweep_document(plan, outcome.submitted.size(), false);
}

}  // namespace pai::job
