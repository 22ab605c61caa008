#include "job/cell_verdict.h"

#include <algorithm>
#include <ctime>
#include <set>
#include <vector>

#include "hived/fit.h"
#include "hived/live.h"
#include "http/client.h"
#include "job/hived_request.h"

namespace pai::job {

namespace {

std::optional<double> verdict_number(const api::Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string verdict_string(const api::Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double system_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Sets the verdict's wall and CPU time from the answers' arrival on, however
// the verdict ends.
struct VerdictClock {
  VerdictTiming& t;
  double cpu0;
  ~VerdictClock() {
    t.after_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t.arrived)
            .count();
    t.after_cpu_ms = thread_cpu_ms() - cpu0;
  }
};

}  // namespace

std::map<std::string, double> expected_ends(api::Client& rest, std::optional<double> duration_s) {
  std::map<std::string, double> out;
  api::JobFilter f;
  f.state = duration_s ? "RUNNING" : "RUNNING,SUCCEEDED,FAILED,STOPPED";
  f.limit = 5000;
  auto r = rest.list_jobs(f);
  if (!r.ok() || !r->is_array()) return out;
  std::map<std::string, std::vector<double>> runs;  // user -> run times (s)
  for (const auto& j : *r) {
    if (!j.is_object()) continue;
    std::string state = verdict_string(j, "state");
    auto launched = verdict_number(j, "launchedTime"),
         completed = verdict_number(j, "completedTime");
    if (state != "RUNNING" && launched && completed && *completed >= *launched)
      runs[verdict_string(j, "username")].push_back((*completed - *launched) / 1000);
  }
  for (auto& [user, v] : runs) std::sort(v.begin(), v.end());
  for (const auto& j : *r) {
    if (!j.is_object() || verdict_string(j, "state") != "RUNNING") continue;
    auto launched = verdict_number(j, "launchedTime");
    if (!launched) continue;
    std::string user = verdict_string(j, "username");
    std::optional<double> d = duration_s;
    if (!d)
      if (auto it = runs.find(user); it != runs.end() && !it->second.empty())
        d = it->second[it->second.size() / 2];
    if (d) out[api::job_id(user, verdict_string(j, "name"))] = *launched / 1000 + *d;
  }
  return out;
}

CellVerdict cell_verdict(const CellVerdictInput& in, hived::Client& hived, api::Client& rest,
                         VerdictTiming& timing) {
  const JobRequest& job = *in.job;
  const ClusterFacts& facts = *in.facts;
  CellVerdict v;
  for (const auto& tr : job.task_roles)
    if (!tr.pinned_cell.empty()) {
      v.why_unknown = "task role " + tr.name +
                      " asks for a pinned cell, which HiveD's inspect API does not show";
      return v;
    }
  if (!facts.skus || facts.error) {
    v.why_unknown = "the VC's SKU types are not known";
    return v;
  }
  auto st = hived.get("/v1/inspect/clusterstatus");
  if (!st.ok()) {
    v.why_unknown = "no HiveD inspect API at " + http::redact_url(hived.base()) + " (" +
                    st.error().summary() + ")";
    return v;
  }
  auto gr = hived.get("/v1/inspect/affinitygroups/");
  if (!gr.ok()) {
    v.why_unknown = "HiveD's affinity groups could not be read (" + gr.error().summary() + ")";
    return v;
  }
  // The running jobs' expected ends come from the cluster's job list, the last answer.
  auto ends = expected_ends(rest, in.duration_s);
  timing.arrived = std::chrono::steady_clock::now();
  timing.bytes = st->size() + gr->size();
  VerdictClock done{timing, thread_cpu_ms()};
  auto ps = hived::parse_cluster_status(*st);
  auto pg = hived::parse_affinity_groups(*gr);
  if (!ps.ok() || !pg.ok()) {
    v.why_unknown = "HiveD's answer is not what its inspect API gives: " +
                    (ps.ok() ? pg.error().message : ps.error().message);
    return v;
  }
  auto live = hived::index_live(std::move(ps).value(), std::move(pg).value());

  // The job as the rest-server asks HiveD for it (hived_request.h).
  std::set<std::string> leaf_types;
  for (const auto& l : live.leaves) leaf_types.insert(l.leaf_type);
  auto groups = hived_requests(job, facts.user, *facts.skus, leaf_types);
  if (!groups) {
    v.why_unknown = groups.error().message;
    return v;
  }
  if (groups->groups.size() != 1 || groups->per_pod) {
    v.why_unknown = "the job is " +
                    std::string(groups->per_pod ? "not gang-scheduled (each pod is its own group)"
                                                : "several affinity groups") +
                    "; HiveD's verdict is judged for one gang only";
    return v;
  }
  const scheduler::GroupRequest& req = groups->groups.front();
  // The running groups' expected ends: a job's groups are USER~JOB/<group>.
  std::map<std::string, double> group_ends;
  for (const auto& g : live.groups)
    if (auto it = ends.find(job_of_group(g.name)); it != ends.end())
      group_ends[g.name] = it->second;

  const double now_s = in.now_s ? in.now_s() : system_now_s();
  auto fit = hived::fit(live, req, group_ends, now_s);
  if (!fit) {
    v.why_unknown = fit.error().message;
    return v;
  }
  v.known = true;
  v.verdict = std::string(hived::to_string(fit->kind));
  v.reason = fit->reason;
  v.start_s = fit->start_s;
  v.estimate = fit->estimate;
  v.reasons = fit->reasons;
  v.would_fit = fit->would_fit;
  return v;
}

}  // namespace pai::job
