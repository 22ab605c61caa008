// paictl job submit FILE [--cluster NAME|auto] [--vc VC] [--name N] [--param k=v] [--dry-run]
// [--wait]: flags, printing and --wait over the library's use case (lib/job/submit.h).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "api/client.h"
#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "hived/inspect.h"
#include "http/client.h"
#include "job/follow.h"
#include "job/job_usage.h"
#include "job/submit.h"
#include "job/submit_json.h"
#include "output/diag_output.h"
#include "output/output.h"
#include "output/printer.h"

namespace paictl {

namespace {

struct SubmitOptions {
  std::string file;
  jobcli::RemoteOptions remote;
  std::vector<std::string> params;
  std::string name;
  std::string vc;
  bool export_params = false;
  bool dry_run = false;
  bool wait = false;
  jobcli::WaitOptions wait_opts;
  std::string output = "table";
  std::string expected_duration;  // --expected-duration
  bool explain = false;
};

std::string n0(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(v - std::round(v)) < 1e-9 ? "%.0f" : "%.1f", v);
  return buf;
}

std::string decision_table(const std::vector<pai::job::Evaluation>& evs, const std::string& vc) {
  Table t({{"RANK"},
           {"CLUSTER"},
           {"VC"},
           {"DECISION"},
           {"FREE GPU"},
           {"FREE CPU"},
           {"FREE MEM GiB"},
           {"PREF"},
           {"CELLS"},
           {"START"},
           {"REASON"}});
  for (const auto& e : evs) {
    auto d = pai::job::decision_cells(e);
    t.add({e.rank ? std::to_string(e.rank) : "-", e.cluster, vc, e.eligible ? "kept" : "dropped",
           e.checks.size() > 1 ? n0(e.free.gpu) : "-", e.checks.size() > 1 ? n0(e.free.cpu) : "-",
           e.checks.size() > 1 ? n0(e.free.memory_mb / 1024) : "-",
           e.preference >= 0 ? std::to_string(e.preference + 1) : "-", d.cells, d.start, e.reason});
  }
  return render_table(t);
}

std::string checks_table(const pai::job::Evaluation& e) {
  Table t({{"CHECK"}, {"RESULT"}, {"DETAIL"}});
  for (const auto& c : e.checks) t.add({c.name, c.ok ? "ok" : "FAILED", c.detail});
  return render_table(t);
}

// The ranking (--cluster auto) or the one cluster's checks.
std::string submit_decision(const pai::job::SubmitPlan& p) {
  return p.request.automatic ? decision_table(p.evaluations, p.job.virtual_cluster)
                             : checks_table(p.evaluations.front());
}

// One opened cluster for the use case; with --cluster auto its HiveD too, asked
// with one attempt (a cluster without HiveD answers at once).
pai::job::SubmitCluster submit_cluster(const jobcli::Connection& c, bool automatic,
                                       double timeout) {
  pai::job::SubmitCluster s{c.cluster->name, c.cluster->user, c.http, c.api, std::nullopt};
  if (automatic) s.hived = jobcli::hived_endpoint(c, timeout);
  return s;
}

// The registry's clusters for the request: the one --cluster names (or the
// current one), or with auto every registered one. The connections are kept
// in `conns` for --wait.
pai::util::Result<pai::job::OpenedClusters> open_submit_clusters(
    const pai::job::SubmitRequest& r, const SubmitOptions& o, const Globals& g,
    std::vector<jobcli::Connection>& conns) {
  auto reg = jobcli::load_registry();
  if (!reg) return pai::util::Error{"the cluster registry cannot be read", {}};
  pai::job::OpenedClusters out;
  out.preference = reg->preference();
  if (r.automatic) {
    for (const auto& c : reg->clusters()) {
      auto conn = jobcli::connect_named(*reg, c.name, o.remote, g);
      if (conn)
        conns.push_back(*conn);
      else
        out.unusable.push_back(c.name);
    }
  } else {
    auto conn = jobcli::connect(*reg, o.remote, g);
    if (!conn) return pai::util::Error{"the cluster cannot be opened", {}};
    conns.push_back(*conn);
  }
  for (const auto& c : conns)
    out.clusters.push_back(submit_cluster(c, r.automatic, o.remote.timeout));
  return out;
}

int report_submit_error(const pai::job::SubmitError& e) {
  using Kind = pai::job::SubmitError::Kind;
  switch (e.kind) {
    case Kind::Input:
      print_error(e.message);
      return kExitUsage;
    case Kind::NotOpened:
      return kExitUsage;  // said already
    case Kind::NoCluster:
      print_error("--cluster auto: no cluster is registered");
      return kExitUsage;
    case Kind::Remote:
      break;
  }
  return jobcli::report_api_error(e.cluster, e.message, *e.api);
}

// -v: how long the verdicts took after the answers arrived (--cluster auto).
void report_submit_timing(const pai::job::SubmitPlan& p, const Globals& g) {
  if (!g.verbose || !p.request.automatic) return;
  auto t = pai::job::verdict_times(p.timing);
  if (t.clusters == 0) return;
  std::fprintf(
      stderr,
      "paictl: auto: HiveD answers of %zu clusters (%zu bytes) and their job lists in "
      "%.1f ms; the decision %.1f ms after the last arrived; per cluster at most %.1f "
      "ms after its own, %.1f ms of CPU in all\n",
      t.clusters, t.bytes, t.answers_ms,
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t.last_arrived)
          .count(),
      t.slowest_ms, t.cpu_ms);
}

// --dry-run: the decision and the request, secrets masked; nothing is sent.
int print_submit_dry_run(const pai::job::SubmitPlan& p, const std::string& request_line,
                         const SubmitOptions& o, const Globals& g) {
  if (!is_structured(o.output)) {
    std::string out = request_line + "\n\n" + submit_decision(p) + "\n";
    if (p.target) {
      out += "would submit " + p.job_id + " to " + p.target->name + ": POST " + p.url +
             " (Content-Type: text/yaml, " + std::to_string(p.body.size()) + " bytes)\n";
      out += "--- body (secrets masked) ---\n" + p.masked_body;
      if (!p.masked_body.empty() && p.masked_body.back() != '\n') out += "\n";
    } else {
      out += "no cluster can take this job\n";
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else {
    print_document(document("jobSubmission", pai::job::submit_json(p)), o.output);
  }
  std::fflush(stdout);
  report_submit_timing(p, g);
  return p.target ? kExitOk : kExitUsage;
}

// Every usage error before the file is read or a cluster asked: --param, --name,
// --wait with --dry-run, --expected-duration.
void validate_job_submit(const SubmitOptions& o, Usage& u) {
  jobcli::validate_overrides(o.params, o.name, u);
  u.error_if(o.wait && o.dry_run, "--wait and --dry-run exclude each other",
             "--dry-run sends nothing, so there is no job to wait for");
  if (!o.expected_duration.empty()) {
    auto ms = jobcli::parse_duration_ms(o.expected_duration);
    u.error_if(!ms || *ms <= 0, "--expected-duration " + o.expected_duration +
                                    ": not a duration (90s, 30m, 6h, 2d, 1w)");
  }
}

int run_job_submit(const SubmitOptions& o, const Globals& g) {
  auto ov = jobcli::make_overrides(o.params, o.name, o.vc);
  if (!ov) return kExitUsage;
  ov->export_params = o.export_params;
  pai::job::SubmitRequest request{
      o.file, *ov, o.remote.cluster, o.remote.cluster == "auto", std::nullopt, o.dry_run};
  if (!o.expected_duration.empty())
    request.expected_duration_s = *jobcli::parse_duration_ms(o.expected_duration) / 1000;
  std::vector<jobcli::Connection> conns;
  pai::job::SubmitDeps deps;
  deps.open = [&](const pai::job::SubmitRequest& r) {
    return open_submit_clusters(r, o, g, conns);
  };
  auto planned = pai::job::plan_submit(
      request, deps, [&](const pai::diag::List& findings) { print_findings_stderr(findings, g); });
  if (!planned.ok()) return report_submit_error(planned.error());
  const pai::job::SubmitPlan& p = *planned;
  const pai::job::JobRequest& req = p.job;
  const bool automatic = request.automatic;
  std::string request_line = "job needs " + n0(static_cast<double>(req.total_gpu())) + " GPU, " +
                             n0(static_cast<double>(req.total_cpu())) + " CPU, " +
                             n0(static_cast<double>(req.total_memory_mb()) / 1024) + " GiB in VC " +
                             req.virtual_cluster;
  if (o.dry_run) return print_submit_dry_run(p, request_line, o, g);

  if (!p.target) {
    std::string out = request_line + "\n\n" + submit_decision(p);
    std::fwrite(out.data(), 1, out.size(), stderr);
    const auto& first = p.evaluations.front();
    print_error(
        automatic
            ? "no registered cluster can take this job (see the reasons above); nothing was sent"
            : first.cluster + " cannot take this job: " + first.reason + "; nothing was sent");
    return kExitUsage;
  }
  if (automatic && !g.quiet)
    std::fprintf(stderr, "paictl: --cluster auto chose %s: %s\n", p.target->name.c_str(),
                 p.chosen()->reason.c_str());
  if ((g.verbose || o.explain) && automatic) {
    std::string t = decision_table(p.evaluations, req.virtual_cluster);
    std::fwrite(t.data(), 1, t.size(), stderr);
  }
  report_submit_timing(p, g);

  auto sent = pai::job::apply_submit(p);
  if (!sent.ok())
    return jobcli::report_api_error(p.target->name, "submitting " + p.job_id, sent.error());
  if (!is_structured(o.output)) {
    if (!g.quiet)
      std::printf("%s submitted to %s (VC %s)\n", p.job_id.c_str(), p.target->name.c_str(),
                  req.virtual_cluster.c_str());
  } else if (!o.wait) {
    print_document(document("jobSubmission", pai::job::submit_json(p, *sent)), o.output);
  }
  if (!o.wait) return kExitOk;
  jobcli::WaitOptions w = o.wait_opts;
  w.output = o.output;
  for (const auto& c : conns)
    if (c.cluster->name == p.target->name)
      return jobcli::wait_for_job(c, p.target->user, req.name, w, g);
  return kExitUsage;
}

void add_job_submit(Flags& parent, Globals& g) {
  auto o = std::make_shared<SubmitOptions>();
  Flags* cmd = &parent;
  cmd->add_option("FILE", o->file, "Job protocol v2 file ('-' reads stdin)")->required();
  jobcli::add_remote_flags(cmd, o->remote, /*allow_auto=*/true);
  cmd->add_option("--vc", o->vc, "Virtual cluster (replaces defaults.virtualCluster)");
  cmd->add_option("--name", o->name, "Job name (replaces name:)");
  cmd->add_option("--param", o->params, "Set parameter NAME (repeatable; quote to force a string)")
      ->type_name("NAME=VALUE");
  cmd->add_flag("--export-params", o->export_params,
                "Start each task role's commands with 'export NAME=value' for every parameter");
  cmd->add_flag("--dry-run", o->dry_run,
                "Check and show what would be sent (secrets masked); send nothing");
  cmd->add_flag("--wait", o->wait, "Wait for the job to end; the exit code follows its outcome");
  jobcli::add_wait_flags(cmd, o->wait_opts, "wait-");
  cmd->add_option("--expected-duration", o->expected_duration,
                  "With --cluster auto: how long running jobs run, to estimate when HiveD frees "
                  "their cells (default: each user's median run time of finished jobs)")
      ->type_name("DURATION");
  cmd->add_flag("--explain", o->explain,
                "With --cluster auto: print the ranking with each cluster's reasons (on stderr)");
  add_output_option(*cmd, o->output, g);
  cmd->footer(
      "Before sending, paictl validates the file and asks the cluster: the VC exists and you may "
      "use it, the\n"
      "SKU types exist and the resources fit them, the storages exist, the name is free. With "
      "--cluster auto\n"
      "it asks every registered cluster at once, keeps those that can run the job, and ranks them: "
      "enough\n"
      "free resources now first, then 'paictl cluster prefer' order, then headroom. The file is "
      "sent as it\n"
      "is unless --name, --vc, --param or --export-params change it.\n\n"
      "EXIT STATUS:\n"
      "  0 submitted (with --wait: the job succeeded), 1 with --wait: the job failed or was "
      "stopped,\n"
      "  2 invalid job, or no cluster can take it, 3 a cluster failed, 4 --wait-timeout "
      "expired\n\n");
  define_command(*cmd, g, o,
                 {.validate = validate_job_submit,
                  .run = [](const auto& o, Globals& g) { return run_job_submit(o, g); }});
}

}  // namespace

void build_job_submit(Flags& cmd, Globals& g) {
  add_job_submit(cmd, g);
}

}  // namespace paictl
