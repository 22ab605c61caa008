#include "job/clone.h"

#include <algorithm>
#include <utility>

#include "job/emit.h"
#include "job/validate.h"
#include "util/time.h"

namespace pai::job {

namespace {

CloneError clone_error(CloneError::Kind kind, std::string message) {
  CloneError e;
  e.kind = kind;
  e.message = std::move(message);
  return e;
}

CloneError clone_remote_error(const std::string& cluster, std::string doing, api::Error api) {
  CloneError e = clone_error(CloneError::Kind::Remote, std::move(doing));
  e.cluster = cluster;
  e.api = std::move(api);
  return e;
}

// "20261201-120304" (UTC): a stamp for generated names.
std::string clone_stamp(const CloneDeps& deps) {
  return util::format_utc(deps.now ? deps.now() : std::time(nullptr), "%Y%m%d-%H%M%S");
}

// The state of a job's detail (GET /api/v2/jobs/USER~NAME); `fallback` when absent.
std::string clone_job_state(const api::Json& d, const std::string& fallback) {
  return d.contains("jobStatus") && d["jobStatus"].is_object()
             ? d["jobStatus"].value("state", fallback)
             : fallback;
}

// The stored config of a job, parsed. The server masks `secrets:` in it, so a
// job that had secrets cannot be copied from the server.
util::Result<JobFile, CloneError> clone_fetch_config(const CloneCluster& c, const std::string& user,
                                                     const std::string& name) {
  const std::string id = api::job_id(user, name);
  auto text = c.api->job_config(user, name);
  if (!text.ok()) return clone_remote_error(c.name, "reading the config of " + id, text.error());
  JobFile f = JobFile::parse(*text, c.name + ":" + id + "/config");
  if (!f.root)
    return clone_error(CloneError::Kind::BadConfig,
                       c.name + ": the config of " + id + " is not a job document");
  if (const auto* s = f.get("secrets"); s && s->is_scalar())
    return clone_error(CloneError::Kind::HasSecrets,
                       id + " has secrets, which the server keeps masked (\"******\") in the "
                            "config it returns; they cannot be copied");
  return f;
}

// Checks `f` with `ov` as the server would (the findings go to `on_checked`);
// `what` names it in the error.
util::Result<diag::List, CloneError> clone_validate(const JobFile& f, const Overrides& ov,
                                                    const std::string& what,
                                                    const CheckedFn& on_checked) {
  diag::List findings;
  ValidateOptions vo;
  vo.overrides = ov;
  validate(f, findings, vo);
  findings.sort({f.path});
  if (on_checked) on_checked(findings);
  if (findings.has_errors()) {
    CloneError e = clone_error(CloneError::Kind::Input,
                               what + " has errors; the server would refuse it. Nothing was sent.");
    e.findings = std::move(findings);
    return e;
  }
  return findings;
}

// Asks `target` whether it can take `job` (VC, permission, SKU, resources,
// storages, name).
util::Result<Evaluation, CloneError> clone_check_target(const CloneCluster& target,
                                                        const JobRequest& job) {
  auto facts = gather_facts(*target.api, target.name, target.user, job);
  if (facts.error)
    return clone_remote_error(target.name, "checking the job against the cluster", *facts.error);
  Evaluation ev = evaluate(job, facts);
  if (!ev.eligible) {
    CloneError e = clone_error(CloneError::Kind::Refused,
                               target.name + " cannot take " + api::job_id(target.user, job.name) +
                                   ": " + ev.reason + "; nothing was sent");
    e.cluster = target.name;
    e.evaluation = std::move(ev);
    return e;
  }
  return ev;
}

// One job from a stored config (clone, resubmit): checked, its body, the target's checks.
ClonePlanResult clone_plan_one(const CloneCluster& target, const JobFile& f, const Overrides& ov,
                               std::vector<std::string> tags, const std::string& what, bool dry_run,
                               const CheckedFn& on_checked) {
  ClonePlan plan;
  plan.target = target;
  plan.dry_run = dry_run;
  auto findings = clone_validate(f, ov, what, on_checked);
  if (!findings.ok()) return std::move(findings).error();
  plan.findings = std::move(*findings);
  PlannedJob job;
  job.body = submission_body(f, ov);
  if (job.body.size() > kMaxBodyBytes)
    return clone_error(CloneError::Kind::Input, "the job is " + std::to_string(job.body.size()) +
                                                    " bytes; the server accepts at most " +
                                                    std::to_string(kMaxBodyBytes));
  plan.job = request_of(f, ov);
  auto ev = clone_check_target(target, plan.job);
  if (!ev.ok()) return std::move(ev).error();
  plan.evaluation = std::move(*ev);
  job.name = plan.job.name;
  job.job_id = api::job_id(target.user, job.name);
  job.overrides = ov;
  job.tags = std::move(tags);
  if (dry_run) job.masked_body = emit_job(f, ov, /*mask_secrets=*/true);
  plan.jobs.push_back(std::move(job));
  return plan;
}

// Sleeps `seconds` on `clock` in steps of at most 50 ms; false when
// `interrupted` says so meanwhile.
bool clone_pause(const util::Clock& clock, double seconds,
                 const std::function<bool()>& interrupted) {
  const double end = clock.now() + seconds;
  while (!(interrupted && interrupted())) {
    const double now = clock.now();
    if (now >= end) return true;
    clock.sleep(std::min(end - now, 0.05));
  }
  return false;
}

}  // namespace

bool job_state_final(const std::string& state) {
  return state == "SUCCEEDED" || state == "FAILED" || state == "STOPPED";
}

ClonePlanResult plan_clone(const CloneRequest& request, const CloneDeps& deps,
                           const CheckedFn& on_checked) {
  auto f = clone_fetch_config(deps.source, request.user, request.name);
  if (!f.ok()) return std::move(f).error();
  CloneCluster target = deps.source;
  if (!request.target_cluster.empty() && request.target_cluster != deps.source.name) {
    if (!deps.open_target) return clone_error(CloneError::Kind::NotOpened, "no way to open it");
    auto opened = deps.open_target(request.target_cluster);
    if (!opened.ok()) return clone_error(CloneError::Kind::NotOpened, opened.error().message);
    target = *opened;
  }
  Overrides ov = request.overrides;
  if (!ov.name) ov.name = job_name_of(request.name + "-clone-" + clone_stamp(deps));
  return clone_plan_one(target, *f, ov, {},
                        "the config of " + api::job_id(request.user, request.name), request.dry_run,
                        on_checked);
}

ClonePlanResult plan_resubmit(const ResubmitRequest& request, const CloneDeps& deps,
                              const CheckedFn& on_checked) {
  const CloneCluster& c = deps.source;
  const std::string id = api::job_id(request.user, request.name);
  auto d = c.api->get_job(request.user, request.name);
  if (!d.ok()) return clone_remote_error(c.name, "reading job " + id, d.error());
  const std::string state = clone_job_state(*d, "?");
  if (state != "FAILED" && state != "STOPPED" && !request.force) {
    CloneError e = clone_error(CloneError::Kind::NotEnded,
                               id + " is " + state + "; resubmit is for failed or stopped jobs");
    e.state = state;
    return e;
  }
  auto f = clone_fetch_config(c, request.user, request.name);
  if (!f.ok()) return std::move(f).error();
  Overrides ov = request.overrides;
  if (!ov.name) {
    // NAME-r1, NAME-r2, ...: the first free one (a resubmitted job's suffix is replaced).
    std::string base = request.name;
    size_t r = base.rfind("-r");
    if (r != std::string::npos && r + 2 < base.size() &&
        base.find_first_not_of("0123456789", r + 2) == std::string::npos)
      base.resize(r);
    for (int k = 1; k <= 100 && !ov.name; ++k) {
      std::string candidate = job_name_of(base + "-r" + std::to_string(k));
      auto e = c.api->job_exists(c.user, candidate);
      if (!e.ok()) return clone_remote_error(c.name, "looking for a free name", e.error());
      if (!*e) ov.name = candidate;
    }
    if (!ov.name) {
      CloneError e =
          clone_error(CloneError::Kind::NoFreeName, "no free name " + base + "-r1 ... -r100");
      e.base = base;
      return e;
    }
  }
  return clone_plan_one(c, *f, ov, {"resubmit-of-" + request.name}, "the config of " + id,
                        request.dry_run, on_checked);
}

ClonePlanResult plan_sweep(const SweepRequest& request, const CloneDeps& deps,
                           const CheckedFn& on_checked) {
  JobFile f = JobFile::load(request.file);
  if (!f.read_error.empty())
    return clone_error(CloneError::Kind::Input,
                       "cannot read " + request.file + ": " + f.read_error);
  const std::string base =
      f.get("name") && f.get("name")->is_scalar() ? f.get("name")->scalar() : "job";
  const std::string sweep_id = request.sweep_id.empty() ? clone_stamp(deps) : request.sweep_id;
  ClonePlan plan;
  plan.sweep = true;
  plan.tag = "sweep-" + job_name_of(base + "-" + sweep_id);
  plan.max_parallel = request.max_parallel;
  plan.interval_s = request.interval_s;
  plan.dry_run = request.dry_run;
  if (!deps.open_target) return clone_error(CloneError::Kind::NotOpened, "no way to open it");
  auto opened = deps.open_target(request.cluster);
  if (!opened.ok()) return clone_error(CloneError::Kind::NotOpened, opened.error().message);
  plan.target = *opened;
  const CloneCluster& c = plan.target;

  // Every combination: the last axis changes fastest.
  auto swept = sweep_jobs(base, sweep_id, request.axes, request.vc);
  if (!swept.ok()) return clone_error(CloneError::Kind::Input, swept.error().message);
  if (swept->empty()) return clone_error(CloneError::Kind::Input, "the sweep has no jobs");
  const std::vector<SweepJob>& jobs = *swept;
  // The file and the first combination are checked before anything is sent.
  auto findings = clone_validate(f, jobs[0].overrides, request.file, on_checked);
  if (!findings.ok()) return std::move(findings).error();
  plan.findings = std::move(*findings);
  plan.job = request_of(f, jobs[0].overrides);
  auto ev = clone_check_target(c, plan.job);
  if (!ev.ok()) return std::move(ev).error();
  plan.evaluation = std::move(*ev);
  for (size_t i = 1; i < jobs.size(); ++i) {
    auto e = c.api->job_exists(c.user, *jobs[i].overrides.name);
    if (!e.ok()) return clone_remote_error(c.name, "checking the names", e.error());
    if (*e) {
      CloneError taken = clone_error(
          CloneError::Kind::NameTaken,
          c.name + " already has a job " + api::job_id(c.user, *jobs[i].overrides.name));
      taken.cluster = c.name;
      taken.job_id = api::job_id(c.user, *jobs[i].overrides.name);
      return taken;
    }
  }
  for (const auto& [label, ov] : jobs) {
    PlannedJob j;
    j.name = *ov.name;
    j.job_id = api::job_id(c.user, j.name);
    j.label = label;
    j.overrides = ov;
    j.body = submission_body(f, ov);
    j.tags = {plan.tag};
    plan.jobs.push_back(std::move(j));
  }
  return plan;
}

CloneOutcome apply_clone(const ClonePlan& plan, const CloneDeps& deps,
                         const std::function<void(const CloneEvent&)>& on_event) {
  CloneOutcome out;
  if (plan.dry_run) return out;
  const util::Clock clock = deps.clock.now && deps.clock.sleep ? deps.clock : util::Clock::real();
  const CloneCluster& c = plan.target;
  std::vector<std::string> running;  // names posted and not ended (with max_parallel)
  for (const auto& job : plan.jobs) {
    while (plan.max_parallel > 0 && static_cast<int>(running.size()) >= plan.max_parallel) {
      if (!clone_pause(clock, plan.interval_s, deps.interrupted)) {
        out.failure = CloneFailure{CloneFailure::Kind::Interrupted, job.name, job.job_id, {}};
        return out;
      }
      std::vector<std::string> still;
      for (const auto& n : running) {
        auto d = c.api->get_job(c.user, n);
        if (!d.ok()) {
          out.failure =
              CloneFailure{CloneFailure::Kind::Poll, n, api::job_id(c.user, n), d.error()};
          return out;
        }
        if (!job_state_final(clone_job_state(*d, std::string()))) still.push_back(n);
      }
      running = std::move(still);
    }
    auto r = c.api->submit_job(job.body);
    if (!r.ok()) {
      out.failure = CloneFailure{CloneFailure::Kind::Submit, job.name, job.job_id, r.error()};
      return out;
    }
    for (const auto& tag : job.tags) {
      auto tr = c.api->add_tag(c.user, job.name, tag);
      if (!tr.ok() && on_event) {
        CloneEvent ev;
        ev.kind = CloneEvent::Kind::TagFailed;
        ev.job = &job;
        ev.tag = tag;
        ev.api = tr.error();
        on_event(ev);
      }
    }
    out.submitted.push_back(job.job_id);
    out.messages.push_back(*r);
    running.push_back(job.name);
    if (on_event) {
      CloneEvent ev;
      ev.kind = CloneEvent::Kind::Submitted;
      ev.job = &job;
      ev.message = *r;
      on_event(ev);
    }
  }
  return out;
}

}  // namespace pai::job
