#include "job/submit_json.h"

namespace pai::job {

namespace {

SubmitJson submit_codes(const std::vector<hived::Reason>& reasons) {
  SubmitJson out = SubmitJson::array();
  for (const auto& r : reasons) out.push_back(std::string(hived::to_string(r.code)));
  return out;
}

}  // namespace

SubmitJson evaluation_json(const Evaluation& e) {
  using J = SubmitJson;
  J checks = J::array();
  for (const auto& c : e.checks)
    checks.push_back({{"check", c.name}, {"ok", c.ok}, {"detail", c.detail}});
  return {
      {"cluster", e.cluster},
      {"rank", e.rank ? J(e.rank) : J(nullptr)},
      {"decision", e.eligible ? "kept" : "dropped"},
      {"fitsNow", e.fits_now},
      {"free", {{"gpu", e.free.gpu}, {"cpu", e.free.cpu}, {"memoryMB", e.free.memory_mb}}},
      {"preference", e.preference >= 0 ? J(e.preference + 1) : J(nullptr)},
      {"reason", e.reason},
      {"hived", e.cells ? J{{"known", e.cells->known},
                            {"verdict", e.cells->known ? J(e.cells->verdict) : J(nullptr)},
                            {"reason", e.cells->known ? e.cells->reason : e.cells->why_unknown},
                            {"estimatedStart",
                             e.cells->start_s ? J(utc_time(*e.cells->start_s)) : J(nullptr)},
                            {"estimate", e.cells->estimate},
                            {"reasonCode", e.cells->reasons.empty()
                                               ? J(nullptr)
                                               : J(hived::to_json(e.cells->reasons.front()))},
                            {"reasonCodes", submit_codes(e.cells->reasons)},
                            {"wouldFit", e.cells->would_fit ? J(hived::to_json(*e.cells->would_fit))
                                                            : J(nullptr)}}
                        : J(nullptr)},
      {"checks", checks}};
}

SubmitJson submit_json(const SubmitPlan& plan) {
  using J = SubmitJson;
  J j = J::object();
  j["request"] = {{"gpu", plan.job.total_gpu()},
                  {"cpu", plan.job.total_cpu()},
                  {"memoryMB", plan.job.total_memory_mb()},
                  {"virtualCluster", plan.job.virtual_cluster}};
  J d = J::array();
  for (const auto& e : plan.evaluations) d.push_back(evaluation_json(e));
  j["decision"] = d;
  j["target"] = plan.target ? J(plan.target->name) : J(nullptr);
  if (plan.target)
    j["http"] = {{"method", "POST"},
                 {"url", plan.url},
                 {"contentType", "text/yaml"},
                 {"bytes", plan.body.size()},
                 {"body", plan.masked_body}};
  j["dryRun"] = true;
  return j;
}

SubmitJson submit_json(const SubmitPlan& /*plan*/, const SubmitOutcome& outcome) {
  return {{"dryRun", false},           {"cluster", outcome.cluster},
          {"job", outcome.job_id},     {"user", outcome.user},
          {"name", outcome.name},      {"virtualCluster", outcome.virtual_cluster},
          {"message", outcome.message}};
}

}  // namespace pai::job
