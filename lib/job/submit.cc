#include "job/submit.h"

#include <algorithm>
#include <ctime>
#include <future>

#include "job/emit.h"
#include "job/validate.h"
#include "util/time.h"

namespace pai::job {

namespace {

// What one opened cluster says about the job; with automatic, its HiveD too.
ClusterFacts ask_submit_cluster(const SubmitCluster& c, const JobRequest& job,
                                const SubmitRequest& request, const std::function<double()>& now_s,
                                VerdictTiming& timing) {
  ClusterFacts f = gather_facts(*c.api, c.name, c.user, job);
  if (!request.automatic || f.error) return f;
  if (!c.hived) {
    CellVerdict v;
    v.why_unknown = "HiveD's inspect API is not known";
    f.cells = v;
    return f;
  }
  hived::Client hived(*c.hived->http, c.hived->base, c.hived->token, c.hived->token_host);
  CellVerdictInput in{&job, &f, request.expected_duration_s, now_s};
  f.cells = cell_verdict(in, hived, *c.api, timing);
  return f;
}

SubmitError submit_error(SubmitError::Kind kind, std::string message) {
  SubmitError e;
  e.kind = kind;
  e.message = std::move(message);
  return e;
}

double submit_ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace

util::Result<SubmitPlan, SubmitError> plan_submit(
    const SubmitRequest& request, const SubmitDeps& deps,
    const std::function<void(const diag::List& findings)>& on_checked) {
  SubmitPlan plan;
  plan.request = request;

  // 1. The file, checked as the server would.
  JobFile f = JobFile::load(request.file);
  if (!f.read_error.empty())
    return submit_error(SubmitError::Kind::Input,
                        "cannot read " + request.file + ": " + f.read_error);
  ValidateOptions vo;
  vo.overrides = request.overrides;
  validate(f, plan.findings, vo);
  plan.findings.sort({f.path});
  if (on_checked) on_checked(plan.findings);
  if (plan.findings.has_errors()) {
    SubmitError e =
        submit_error(SubmitError::Kind::Input,
                     request.file + " has errors; the server would refuse it. Nothing was sent.");
    e.findings = plan.findings;
    return e;
  }
  plan.body = submission_body(f, request.overrides);
  if (plan.body.size() > kMaxBodyBytes)
    return submit_error(SubmitError::Kind::Input, "the job is " + std::to_string(plan.body.size()) +
                                                      " bytes; the server accepts at most " +
                                                      std::to_string(kMaxBodyBytes));
  plan.job = request_of(f, request.overrides);

  // 2. The clusters to consider.
  if (!deps.open) return submit_error(SubmitError::Kind::NotOpened, "no way to open a cluster");
  auto opened = deps.open(request);
  if (!opened.ok()) return submit_error(SubmitError::Kind::NotOpened, opened.error().message);
  if (request.automatic && opened->clusters.empty() && opened->unusable.empty())
    return submit_error(SubmitError::Kind::NoCluster, "no cluster is registered");
  if (!request.automatic && opened->clusters.size() != 1)
    return submit_error(SubmitError::Kind::NotOpened, "not one cluster was opened");
  plan.clusters = opened->clusters;
  std::vector<ClusterFacts> facts;
  for (const auto& name : opened->unusable) {
    ClusterFacts bad;
    bad.cluster = name;
    api::Error e;
    e.kind = api::Error::Kind::Transport;
    e.message = "cannot use its credentials";
    bad.error = e;
    facts.push_back(bad);
  }

  // 3. What each cluster says, asked at the same time; with automatic, each
  // cluster's HiveD too (its cells and running groups).
  plan.timing.asked = std::chrono::steady_clock::now();
  plan.timing.clusters.resize(plan.clusters.size());
  std::vector<std::future<ClusterFacts>> futures;
  for (size_t i = 0; i < plan.clusters.size(); ++i)
    futures.push_back(std::async(
        std::launch::async, ask_submit_cluster, std::cref(plan.clusters[i]), std::cref(plan.job),
        std::cref(request), std::cref(deps.now_s), std::ref(plan.timing.clusters[i])));
  for (auto& fu : futures) facts.push_back(fu.get());
  if (!request.automatic && facts[0].error) {
    SubmitError e = submit_error(SubmitError::Kind::Remote, "checking the job against the cluster");
    e.cluster = facts[0].cluster;
    e.api = facts[0].error;
    return e;
  }
  plan.evaluations = rank_clusters(plan.job, facts, opened->preference);
  if (!plan.evaluations.empty() && plan.evaluations.front().eligible)
    for (const auto& c : plan.clusters)
      if (c.name == plan.evaluations.front().cluster) plan.target = c;
  if (plan.target) {
    plan.job_id = api::job_id(plan.target->user, plan.job.name);
    plan.url = plan.target->api->base() + "/api/v2/jobs";
  }

  // 4. A dry run shows the body, secrets masked.
  if (request.dry_run) plan.masked_body = emit_job(f, request.overrides, /*mask_secrets=*/true);
  return plan;
}

util::Result<SubmitOutcome, api::Error> apply_submit(const SubmitPlan& plan) {
  if (!plan.target) {
    api::Error e;
    e.kind = api::Error::Kind::Transport;
    e.message = "no cluster can take this job";
    return e;
  }
  auto r = plan.target->api->submit_job(plan.body);
  if (!r.ok()) return r.error();
  SubmitOutcome o;
  o.cluster = plan.target->name;
  o.user = plan.target->user;
  o.name = plan.job.name;
  o.job_id = plan.job_id;
  o.virtual_cluster = plan.job.virtual_cluster;
  o.message = *r;
  return o;
}

VerdictTimes verdict_times(const SubmitTiming& t) {
  VerdictTimes out;
  for (const auto& c : t.clusters) {
    if (c.after_ms < 0) continue;
    ++out.clusters;
    out.bytes += c.bytes;
    out.last_arrived = std::max(out.last_arrived, c.arrived);
    out.cpu_ms += c.after_cpu_ms;
    out.slowest_ms = std::max(out.slowest_ms, c.after_ms);
  }
  out.answers_ms = submit_ms(out.last_arrived - t.asked);
  return out;
}

std::string utc_time(double epoch_s) {
  return util::rfc3339_utc(static_cast<std::time_t>(epoch_s));
}

DecisionCells decision_cells(const Evaluation& e) {
  DecisionCells d{"-", "-"};
  if (e.cells && e.cells->known) {
    d.cells = e.cells->verdict;
    d.start = e.cells->start_s ? (e.fits_now ? std::string("now") : utc_time(*e.cells->start_s))
                               : "unknown";
  } else if (e.eligible) {
    d.cells = "no HiveD";
    d.start = e.fits_now ? "now" : "unknown";
  }
  return d;
}

}  // namespace pai::job
