// paictl job clone JOB [--from C] [--cluster C] [--name N] [--vc VC] [--param k=v]... [--dry-run]
// paictl job resubmit JOB [--name N] [--force] [--dry-run]
// paictl job sweep FILE --param k=v1,v2 ... [--max-parallel N] [--sweep-id ID] [--dry-run]
// Flags, printing and Ctrl-C over the library's use case (lib/job/clone.h).

#include <algorithm>
#include <cstdio>

#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "job/clone.h"
#include "job/clone_json.h"
#include "job/follow.h"
#include "job/job_target.h"
#include "job/job_usage.h"
#include "output/diag_output.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/printable.h"
#include "util/strings.h"

namespace paictl {

namespace {

using pai::job::CloneError;
using pai::job::CloneEvent;
using pai::job::CloneFailure;
using pai::job::ClonePlan;

pai::job::CloneCluster clone_cluster(const jobcli::Connection& c) {
  return {c.cluster->name, c.cluster->user, c.api};
}

// The target's checks of the job as a table.
std::string clone_checks_table(const pai::job::Evaluation& ev) {
  Table t({{"CHECK"}, {"RESULT"}, {"DETAIL"}});
  for (const auto& ch : ev.checks) t.add({ch.name, ch.ok ? "ok" : "FAILED", ch.detail});
  return pai::util::printable(render_table(t), true);
}

// Prints why a plan was refused (the failed checks on stderr, the flag that
// helps); its exit code.
int report_clone_error(const CloneError& e) {
  using Kind = CloneError::Kind;
  if (e.kind == Kind::NotOpened) return kExitUsage;  // said already
  if (e.kind == Kind::Remote) return jobcli::report_api_error(e.cluster, e.message, *e.api);
  if (e.kind == Kind::Refused) {
    std::string t = clone_checks_table(*e.evaluation);
    std::fwrite(t.data(), 1, t.size(), stderr);
  }
  print_error(e.message + (e.kind == Kind::NotEnded     ? " (--force for others)"
                           : e.kind == Kind::NoFreeName ? "; give one with --name"
                           : e.kind == Kind::NameTaken
                               ? "; pick another --sweep-id. Nothing was sent."
                               : ""));
  if (e.kind == Kind::HasSecrets)
    std::fprintf(stderr,
                 "  hint: submit the original file instead: paictl job submit FILE --name NAME\n");
  return e.kind == Kind::BadConfig ? kExitRemote : kExitUsage;
}

// A clone's or resubmit's plan printed (a dry run), or posted and its result printed.
int finish_clone(const ClonePlan& p, const pai::job::CloneDeps& deps, const Globals& g,
                 const std::string& output) {
  const pai::job::PlannedJob& j = p.jobs.front();
  const std::string& cluster = p.target.name;
  const std::string& vc = p.job.virtual_cluster;
  if (p.dry_run) {
    if (is_structured(output)) {
      print_document(document("jobSubmission", pai::job::clone_json(p)), output);
      return kExitOk;
    }
    std::string out = clone_checks_table(p.evaluation) + "would submit " + j.job_id + " to " +
                      cluster + " (VC " + vc + ")" +
                      (j.tags.empty() ? "" : ", tags " + pai::util::join(j.tags, ", ")) +
                      "\n--- body ---\n" + j.masked_body;
    if (!out.empty() && out.back() != '\n') out += "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kExitOk;
  }
  auto outcome = pai::job::apply_clone(p, deps, [&](const CloneEvent& ev) {
    if (ev.kind == CloneEvent::Kind::TagFailed)
      jobcli::report_api_error(cluster, "tagging " + ev.job->job_id, *ev.api);
  });
  if (outcome.failure)
    return jobcli::report_api_error(cluster, "submitting " + j.job_id, *outcome.failure->api);
  if (is_structured(output))
    print_document(document("jobSubmission", pai::job::clone_json(p, outcome)), output);
  else if (!g.quiet)
    std::printf("%s submitted to %s (VC %s)\n", j.job_id.c_str(), cluster.c_str(), vc.c_str());
  return kExitOk;
}

// --- clone ---------------------------------------------------------------------------

struct CloneOptions {
  std::string job;
  std::string from;              // the job's cluster ("" = the current one)
  jobcli::RemoteOptions remote;  // --cluster: where the copy goes ("" = the job's cluster)
  std::string name;
  std::string vc;
  std::vector<std::string> params;
  bool dry_run = false;
  std::string output = "table";
};

int run_clone(const CloneOptions& o, const Globals& g) {
  auto ov = jobcli::make_overrides(o.params, o.name, o.vc);
  if (!ov) return kExitUsage;
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  jobcli::RemoteOptions src_opt = o.remote;
  src_opt.cluster = o.from;
  auto src = jobcli::connect(*reg, src_opt, g);
  if (!src) return kExitUsage;
  auto id = jobcli::parse_job_id(o.job, *src);
  if (!id) return kExitUsage;
  std::optional<jobcli::Connection> dst;
  pai::job::CloneDeps deps;
  deps.source = clone_cluster(*src);
  deps.open_target = [&](const std::string& name) -> pai::util::Result<pai::job::CloneCluster> {
    dst = jobcli::connect_named(*reg, name, o.remote, g);
    if (!dst) return pai::util::Error{"the cluster cannot be opened", ""};
    return clone_cluster(*dst);
  };
  pai::job::CloneRequest request{id->first, id->second, o.remote.cluster, *ov, o.dry_run};
  auto plan = pai::job::plan_clone(
      request, deps, [&](const pai::diag::List& findings) { print_findings_stderr(findings, g); });
  if (!plan.ok()) return report_clone_error(plan.error());
  return finish_clone(*plan, deps, g, o.output);
}

// --- resubmit ------------------------------------------------------------------------

struct ResubmitOptions {
  std::string job;
  jobcli::RemoteOptions remote;
  std::string name;
  bool force = false;
  bool dry_run = false;
  std::string output = "table";
};

int run_resubmit(const ResubmitOptions& o, const Globals& g) {
  auto ov = jobcli::make_overrides({}, o.name, "");
  if (!ov) return kExitUsage;
  auto target = jobcli::open_job(o.job, o.remote, g);
  if (!target) return kExitUsage;
  pai::job::CloneDeps deps;
  deps.source = clone_cluster(target->conn);
  pai::job::ResubmitRequest request{target->user, target->name, *ov, o.force, o.dry_run};
  auto plan = pai::job::plan_resubmit(
      request, deps, [&](const pai::diag::List& findings) { print_findings_stderr(findings, g); });
  if (!plan.ok()) return report_clone_error(plan.error());
  return finish_clone(*plan, deps, g, o.output);
}

// --- sweep ---------------------------------------------------------------------------

struct SweepOptions {
  std::string file;
  jobcli::RemoteOptions remote;
  std::vector<std::string> params;  // k=v1,v2,...
  std::string vc;
  std::string sweep_id;
  int max_parallel = 0;
  double interval = 10;
  bool dry_run = false;
  std::string output = "table";
};

using Axes = std::vector<pai::job::SweepAxis>;

// The axes, in the order given; values split at ','. Reports every bad --param
// into `u` (a --param given twice keeps its first values).
Axes sweep_axes(const std::vector<std::string>& params, Usage& u) {
  Axes axes;
  for (const auto& p : params) {
    auto po = pai::job::parse_param(p);
    if (!po.ok()) {
      u.error(po.error().message, "--param NAME=V1,V2,...");
      continue;
    }
    std::vector<std::string> values;
    for (auto v : pai::util::split(po->value, ',')) values.emplace_back(pai::util::trim(v));
    if (std::find(values.begin(), values.end(), "") != values.end()) {
      u.error("--param " + p + ": an empty value");
      continue;
    }
    bool twice = false;
    for (const auto& a : axes) twice |= a.name == po->name;
    if (twice) {
      u.error("--param " + po->name + " is given twice",
              "give its values as one comma list: --param " + po->name + "=V1,V2,...");
      continue;
    }
    axes.push_back({po->name, values});
  }
  return axes;
}

void validate_sweep(const SweepOptions& o, Usage& u) {
  Axes axes = sweep_axes(o.params, u);
  u.error_if(o.params.empty(), "a sweep needs at least one --param NAME=V1,V2,...");
  size_t total = 1;
  for (const auto& a : axes) total = std::min<size_t>(total * a.values.size(), 1001);
  u.error_if(total > 1000, "the sweep has more than 1000 jobs", "narrow the --param lists");
}

// --dry-run: the jobs and their parameters; nothing is sent.
void print_sweep_dry_run(const ClonePlan& p, const std::string& output) {
  if (is_structured(output)) {
    print_document(document("jobSweep", pai::job::sweep_json(p)), output);
    return;
  }
  Table t({{"JOB"}, {"PARAMETERS"}});
  for (const auto& j : p.jobs) {
    std::string ps;
    for (const auto& q : j.overrides.params) ps += (ps.empty() ? "" : " ") + q.name + "=" + q.value;
    t.add({j.job_id, ps});
  }
  std::string out =
      "would submit " + std::to_string(p.jobs.size()) + " jobs to " + p.target.name + ", tagged " +
      p.tag +
      (p.max_parallel > 0 ? ", at most " + std::to_string(p.max_parallel) + " at a time" : "") +
      "\n\n" + render_table(t);
  out = pai::util::printable(out, true);
  std::fwrite(out.data(), 1, out.size(), stdout);
}

// Why the sweep stopped, and how far it got; its exit code.
int report_sweep_failure(const ClonePlan& p, const pai::job::CloneOutcome& outcome) {
  const CloneFailure& f = *outcome.failure;
  const std::string of =
      std::to_string(outcome.submitted.size()) + " of " + std::to_string(p.jobs.size()) + " jobs";
  switch (f.kind) {
    case CloneFailure::Kind::Interrupted:
      print_error("interrupted: " + of + " submitted (tag " + p.tag + ")");
      return kExitUsage;
    case CloneFailure::Kind::Poll:
      return jobcli::report_api_error(p.target.name, "reading job " + f.name, *f.api);
    case CloneFailure::Kind::Submit:
      break;
  }
  int e = jobcli::report_api_error(p.target.name, "submitting " + f.job_id, *f.api);
  print_error(of + " were submitted (tag " + p.tag + ")");
  return e;
}

int run_sweep(const SweepOptions& o, const Globals& g) {
  Usage ignored;  // validate_sweep reported them
  pai::job::SweepRequest request{o.file,     o.remote.cluster, sweep_axes(o.params, ignored),
                                 o.vc,       o.sweep_id,       o.max_parallel,
                                 o.interval, o.dry_run};
  std::unique_ptr<pai::cluster::Registry> reg;
  std::optional<jobcli::Connection> conn;
  pai::job::CloneDeps deps;
  deps.open_target = [&](const std::string&) -> pai::util::Result<pai::job::CloneCluster> {
    reg = jobcli::load_registry();
    if (reg) conn = jobcli::connect(*reg, o.remote, g);
    if (!conn) return pai::util::Error{"the cluster cannot be opened", ""};
    return clone_cluster(*conn);
  };
  deps.interrupted = jobcli::interrupted;
  auto plan = pai::job::plan_sweep(
      request, deps, [&](const pai::diag::List& findings) { print_findings_stderr(findings, g); });
  if (!plan.ok()) return report_clone_error(plan.error());
  const ClonePlan& p = *plan;
  if (p.dry_run) {
    print_sweep_dry_run(p, o.output);
    return kExitOk;
  }

  jobcli::catch_interrupt();
  auto outcome = pai::job::apply_clone(p, deps, [&](const CloneEvent& ev) {
    if (ev.kind == CloneEvent::Kind::TagFailed) {
      jobcli::report_api_error(p.target.name, "tagging " + ev.job->job_id, *ev.api);
      return;
    }
    if (!is_structured(o.output) && !g.quiet)
      std::printf("%s submitted (%s)\n", ev.job->job_id.c_str(), ev.job->label.c_str());
    std::fflush(stdout);
  });
  if (outcome.failure) return report_sweep_failure(p, outcome);
  if (is_structured(o.output)) {
    print_document(document("jobSweep", pai::job::sweep_json(p, outcome)), o.output);
  } else if (!g.quiet) {
    std::printf("%zu jobs tagged %s; follow them with: paictl job list --tag %s\n",
                outcome.submitted.size(), p.tag.c_str(), p.tag.c_str());
  }
  return kExitOk;
}

}  // namespace

void build_job_clone(Flags& cmd, Globals& g) {
  auto o = std::make_shared<CloneOptions>();
  cmd.add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  cmd.add_option("--from", o->from, "The cluster the job is on (default: the current cluster)")
      ->type_name("NAME");
  jobcli::add_remote_flags(&cmd, o->remote);
  cmd.get_option("--cluster")
      ->description("Where the copy goes (default: the job's cluster); checked first");
  cmd.add_option("--name", o->name, "The copy's name (default: NAME-clone-<UTC time>)");
  cmd.add_option("--vc", o->vc, "Virtual cluster of the copy");
  cmd.add_option("--param", o->params, "Set parameter NAME in the copy (repeatable)")
      ->type_name("NAME=VALUE");
  cmd.add_flag("--dry-run", o->dry_run, "Check the target and show the copy; send nothing");
  add_output_option(cmd, o->output, g);
  cmd.footer(
      "The job's config comes from the server (GET .../config). Before sending, the target "
      "cluster is asked:\nthe VC exists and you may use it, the SKU types exist and fit, the "
      "storages exist, the name is free.\nJobs with secrets cannot be cloned: the server masks "
      "them in the stored config.\n\n"
      "EXIT STATUS:\n"
      "  0 submitted, 2 bad usage, unknown job, or the target cannot take it, 3 a cluster "
      "failed\n\n");
  define_command(cmd, g, o,
                 {.validate = [](const CloneOptions& o,
                                 Usage& u) { jobcli::validate_overrides(o.params, o.name, u); },
                  .run = [](const auto& o, Globals& g) { return run_clone(o, g); }});
}

void build_job_resubmit(Flags& cmd, Globals& g) {
  auto o = std::make_shared<ResubmitOptions>();
  cmd.add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  jobcli::add_remote_flags(&cmd, o->remote);
  cmd.add_option("--name", o->name,
                 "The new job's name (default: NAME-r1, -r2, ... the first free)");
  cmd.add_flag("--force", o->force, "Resubmit a job that has not failed too");
  cmd.add_flag("--dry-run", o->dry_run, "Check and show the new job; send nothing");
  add_output_option(cmd, o->output, g);
  cmd.footer(
      "The new job gets the failed job's config from the server and the tag resubmit-of-NAME.\n\n"
      "EXIT STATUS:\n"
      "  0 submitted, 2 bad usage, unknown job, a job that did not fail, 3 the cluster "
      "failed\n\n");
  define_command(cmd, g, o,
                 {.validate = [](const ResubmitOptions& o,
                                 Usage& u) { jobcli::validate_overrides({}, o.name, u); },
                  .run = [](const auto& o, Globals& g) { return run_resubmit(o, g); }});
}

void build_job_sweep(Flags& cmd, Globals& g) {
  auto o = std::make_shared<SweepOptions>();
  cmd.add_option("FILE", o->file, "Job protocol v2 file")->required();
  jobcli::add_remote_flags(&cmd, o->remote);
  cmd.add_option("--param", o->params,
                 "A parameter and its values, comma separated (repeatable; every combination "
                 "becomes a job)")
      ->type_name("NAME=V1,V2,...")
      ->required();
  cmd.add_option("--vc", o->vc, "Virtual cluster of every job");
  cmd.add_option("--sweep-id", o->sweep_id,
                 "Part of every name and of the shared tag (default: the UTC time)");
  cmd.add_option("--max-parallel", o->max_parallel,
                 "At most N jobs of the sweep unfinished at a time (0: submit all at once)")
      ->check(NonNegativeNumber);
  cmd.add_option("--interval", o->interval,
                 "With --max-parallel: seconds between two looks at the running jobs")
      ->check(Range(0.05, 3600.0))
      ->capture_default_str();
  cmd.add_flag("--dry-run", o->dry_run, "Check and list the jobs; send nothing");
  add_output_option(cmd, o->output, g);
  cmd.footer(
      "Jobs are named NAME-ID-<param><value>... (characters a name cannot hold become '_') and "
      "tagged\nsweep-NAME-ID, so 'paictl job list --tag sweep-NAME-ID' follows them.\n\n"
      "EXIT STATUS:\n"
      "  0 every job submitted, 2 bad usage or invalid job, 3 the cluster failed\n\n");
  define_command(cmd, g, o, {.validate = validate_sweep, .run = [](const auto& o, Globals& g) {
                               return run_sweep(o, g);
                             }});
}

}  // namespace paictl
