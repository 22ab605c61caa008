// paictl simulate [run] --config PATH --trace FILE ...
//
// `simulate` is a group whose own options run a simulation, so that both
// `paictl simulate --config ... --trace ...` and `paictl simulate generate`
// work; `simulate run` is the same as `simulate` and lists it in the help.

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "command.h"
#include "config/cluster_files.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "flags.h"
#include "output/output.h"
#include "output/printer.h"
#include "scheduler/hived.h"
#include "scheduler/policy.h"
#include "sim/cmd_simulate.h"
#include "sim/engine.h"
#include "sim/fidelity.h"
#include "sim/report.h"
#include "sim/sim_progress.h"
#include "sim/text_input.h"
#include "sim/trace.h"
#include "util/fs.h"
#include "util/printable.h"
#include "util/strings.h"
#include "util/version.h"
#include "util/yaml_emit.h"

namespace paictl {

void print_trace_error(const pai::sim::TraceError& e) {
  std::string where = e.file;
  if (e.line) where += ":" + std::to_string(e.line) + ":" + std::to_string(e.column);
  print_error((where.empty() ? "" : where + ": ") + e.message);
  if (!e.hint.empty()) std::fprintf(stderr, "  hint: %s\n", pai::util::printable(e.hint).c_str());
}

std::shared_ptr<pai::config::HivedModel> load_simulation_cluster(const std::string& path,
                                                                 const Globals& g) {
  pai::config::CheckOutcome out = pai::config::check_paths({path});
  std::vector<pai::diag::Diagnostic> errors;
  for (const auto& d : out.diagnostics.items())
    if (d.severity == pai::diag::Severity::Error ||
        (g.verbose && d.severity == pai::diag::Severity::Warning))
      errors.push_back(d);
  bool has_errors = out.diagnostics.has_errors() || out.input_error;
  if (!errors.empty() && (has_errors || g.verbose)) {
    pai::diag::TextOptions topt;
    topt.color = use_color(g.no_color, 2);
    topt.show_summary = true;
    std::string text = pai::diag::write_text(errors, out.files.size(), topt);
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  if (has_errors) {
    print_error("the cluster config " + path + " has errors; fix them first (paictl check config " +
                path + ")");
    return nullptr;
  }
  for (const auto& c : out.clusters)
    if (c.model) return c.model;
  print_error("no HiveD config in " + path);
  std::fprintf(stderr,
               "  hint: give a cluster directory with services-configuration.yaml "
               "(hivedscheduler.config) or "
               "hivedscheduler.yaml, or a HiveD config file\n");
  return nullptr;
}

namespace {

// --- tables ------------------------------------------------------------------

// The policies side by side: the metric's name, then one right-aligned column per policy.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return;
  Table t;
  for (size_t i = 0; i < rows[0].size(); ++i) t.columns.push_back({rows[0][i], false, i > 0});
  for (size_t r = 1; r < rows.size(); ++r) t.add(rows[r]);
  paictl::print_table(t);
}

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", v * 100);
  return buf;
}

std::string fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

void print_summary(const pai::sim::ReportContext& c, const Globals& g) {
  using pai::sim::human_duration;
  const auto& shape = c.sim.cluster();
  const auto& runs = c.runs;
  int64_t gpus = runs.empty() ? 0 : runs[0].gpus;
  std::printf("%zu jobs from %s (%s) on %s: %lld GPUs, %zu nodes, %zu virtual clusters\n\n",
              c.trace.jobs.size(), pai::util::join(c.trace.files, ", ").c_str(),
              c.trace.format.c_str(), c.config_path.c_str(), static_cast<long long>(gpus),
              shape.nodes.size(), shape.vcs.size());
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head{""};
  for (const auto& r : runs) head.push_back(r.policy);
  rows.push_back(head);
  auto add = [&](const std::string& name, auto f) {
    std::vector<std::string> row{name};
    for (const auto& r : runs) row.push_back(f(r));
    rows.push_back(row);
  };
  using R = pai::sim::PolicyRun;
  add("jobs", [](const R& r) { return std::to_string(r.overall.jobs); });
  add("finished", [](const R& r) { return std::to_string(r.overall.finished); });
  add("unschedulable", [](const R& r) { return std::to_string(r.overall.unschedulable); });
  add("never started", [](const R& r) { return std::to_string(r.overall.never_started); });
  add("queue delay mean", [](const R& r) { return human_duration(r.overall.queue_delay.mean); });
  add("queue delay p50", [](const R& r) { return human_duration(r.overall.queue_delay.p50); });
  add("queue delay p95", [](const R& r) { return human_duration(r.overall.queue_delay.p95); });
  add("queue delay p99", [](const R& r) { return human_duration(r.overall.queue_delay.p99); });
  add("queue delay max", [](const R& r) { return human_duration(r.overall.queue_delay.max); });
  add("JCT p50", [](const R& r) { return human_duration(r.overall.jct.p50); });
  add("JCT p95", [](const R& r) { return human_duration(r.overall.jct.p95); });
  add("makespan", [](const R& r) { return human_duration(r.makespan); });
  add("GPU utilisation", [](const R& r) { return pct(r.gpu_utilization); });
  add("idle GPUs while work waits", [](const R& r) { return pct(r.fragmentation); });
  add("sharing-anomaly jobs", [](const R& r) { return std::to_string(r.overall.anomaly_jobs); });
  add("sharing-anomaly wait",
      [](const R& r) { return human_duration(r.overall.anomaly_wait_seconds); });
  add("preemptions", [](const R& r) { return std::to_string(r.overall.preemptions); });
  add("lazy preemptions", [](const R& r) { return std::to_string(r.overall.lazy_preemptions); });
  add("overflow starts", [](const R& r) { return std::to_string(r.overall.overflow_starts); });
  add("lost GPU-hours", [](const R& r) { return fixed1(r.overall.lost_gpu_seconds / 3600); });
  add("node failures", [](const R& r) { return std::to_string(r.node_failures); });
  print_table(rows);

  std::printf("\nqueue delay p95 by virtual cluster (anomaly jobs in brackets):\n");
  rows.clear();
  rows.push_back(head);
  for (size_t v = 0; v < shape.vcs.size(); ++v) {
    std::vector<std::string> row{pai::util::printable(shape.vcs[v].name)};
    for (const auto& r : runs)
      row.push_back(human_duration(r.vcs[v].queue_delay.p95) + " (" +
                    std::to_string(r.vcs[v].anomaly_jobs) + ")");
    rows.push_back(row);
  }
  print_table(rows);

  bool any_reason = false;
  for (const auto& r : runs)
    for (const auto& [reason, n] : r.unschedulable_by_reason) {
      if (!any_reason) std::printf("\nunschedulable jobs:\n");
      any_reason = true;
      std::printf("  %s: %lld x %s\n", r.policy.c_str(), static_cast<long long>(n), reason.c_str());
    }
  if (!c.trace.skipped.empty()) {
    std::printf("\ntrace records left out (of %lld):\n", static_cast<long long>(c.trace.records));
    for (const auto& [reason, n] : c.trace.skipped)
      std::printf("  %lld x %s\n", static_cast<long long>(n), reason.c_str());
    if (g.verbose)
      for (const auto& e : c.trace.examples)
        std::printf("    e.g. %s:%u: %s\n", pai::util::printable(e.file).c_str(), e.line,
                    pai::util::printable(e.message).c_str());
  }
  for (const auto& [note, n] : c.trace.notes)
    std::printf("\nnote: %lld jobs: %s\n", static_cast<long long>(n), note.c_str());
  const auto& notes = c.sim.vc_mapping().notes;
  if (!notes.empty()) {
    std::printf("\ntrace VCs assigned to cluster VCs (--vc-map auto):");
    size_t shown = g.verbose ? notes.size() : std::min<size_t>(notes.size(), 20);
    for (size_t i = 0; i < shown; ++i)
      std::printf("%s%s", i % 4 == 0 ? "\n  " : "   ", pai::util::printable(notes[i]).c_str());
    if (shown < notes.size())
      std::printf("\n  ... and %zu more (-v lists all)", notes.size() - shown);
    std::printf("\n");
  }
}

// --- simulate ------------------------------------------------------------------

// --policy's names, trimmed, each once, in the order given.
std::vector<std::string> policy_list(const std::string& policies) {
  std::vector<std::string> out;
  for (std::string_view p : pai::util::split(policies, ',')) {
    std::string name(pai::util::trim(p));
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

}  // namespace

void validate_simulate(const SimulateOptions& o, Usage& u) {
  if (!o.from_live.empty()) {
    validate_forecast(o, u);
    return;
  }
  u.error_if(o.config.empty(), "--config is required",
             "the cluster: a HiveD config or a cluster directory");
  u.error_if(o.traces.empty(), "--trace is required",
             "a job trace (Philly, Helios, Alibaba, CSV); paictl simulate generate makes one");
  const auto& names = pai::scheduler::policy_names();
  auto policies = policy_list(o.policies);
  for (const auto& name : policies)
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string guess = pai::util::did_you_mean(name, names);
      u.error("unknown policy \"" + name + "\"" +
                  (guess.empty() ? "" : " (did you mean \"" + guess + "\"?)"),
              "policies: " + pai::util::join(names, ", "));
    }
  u.error_if(policies.empty(), "--policy names no policy",
             "policies: " + pai::util::join(names, ", "));
  u.error_if(o.priority < -1 || o.priority > 1000,
             "--priority must be -1 (opportunistic) or 0..1000");
  u.error_if(o.limit < 0, "--limit must be 0 (every job) or more, not " + std::to_string(o.limit));
  u.error_if(o.backfill < 0,
             "--backfill must be 0 (strict FIFO) or more, not " + std::to_string(o.backfill));
  if (!o.bin.empty()) {
    auto b = pai::sim::parse_duration(o.bin);
    u.error_if(!b || *b < 1, "--bin \"" + o.bin + "\" is not a duration of at least 1s (e.g. 10m)");
  }
  if (o.faults.rfind("random", 0) == 0) {
    if (auto spec = pai::sim::parse_random_faults(o.faults); !spec.ok())
      u.error("--faults: " + spec.error().message);
  }
  u.error_if(o.tie_order != "hived" && o.tie_order != "config",
             "--tie-order must be hived or config, not \"" + o.tie_order + "\"");
}

namespace {

int run_simulate(const SimulateOptions& o, const Globals& g) {
  // The per-job arrays of a long trace are tens of MB each: from mmap, what
  // is freed (the reader's growth, the ids, the summary's buffers) goes back
  // to the OS at once instead of staying in the peak (paictl_main keeps freed
  // memory for the commands that rebuild large states).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  if (!o.from_live.empty()) return run_forecast(o, g);
  std::vector<std::string> policies = policy_list(o.policies);
  auto model = load_simulation_cluster(o.config, g);
  if (!model) return kExitUsage;

  const bool progress = is_tty(2) && !g.quiet;
  SimProgress shown(progress, g.verbose && !g.quiet);
  if (progress) std::fprintf(stderr, "reading %s...\r", pai::util::join(o.traces, ", ").c_str());
  pai::sim::Trace trace;
  pai::sim::TraceOptions topt;
  topt.format = o.format;
  topt.default_priority = o.priority;
  topt.limit = o.limit;
  pai::sim::TraceError terr;
  if (!pai::sim::read_trace(o.traces, topt, trace, terr)) {
    if (progress) std::fprintf(stderr, "\x1b[2K");
    print_trace_error(terr);
    return kExitUsage;
  }
  if (trace.jobs.empty()) {
    print_error("the trace has no job to simulate (" + std::to_string(trace.records) +
                " records read)");
    for (const auto& [reason, n] : trace.skipped)
      std::fprintf(stderr, "  %lld x %s\n", static_cast<long long>(n), reason.c_str());
    return kExitUsage;
  }

  pai::sim::SimOptions sopt;
  sopt.vc_map = o.vc_map;
  sopt.backfill = o.backfill > 0;
  sopt.overflow = o.overflow;
  sopt.preempt_one_node = o.preempt_one_node;
  sopt.suggested_fraction = o.suggested_fraction;
  sopt.suggested_seed = o.suggested_seed;
  sopt.backfill_depth = o.backfill;
  if (!o.bin.empty()) sopt.bin_seconds = *pai::sim::parse_duration(o.bin);
  if (!o.faults.empty()) {
    if (o.faults.rfind("random", 0) == 0) {
      auto spec = pai::sim::parse_random_faults(o.faults);
      if (!spec.ok()) {
        print_error("--faults: " + spec.error().message);
        return kExitUsage;
      }
      sopt.faults = std::move(*spec);
    } else {
      pai::sim::TraceError ferr;
      if (!pai::sim::read_fault_file(o.faults, pai::scheduler::describe_cluster(*model), trace,
                                     sopt.faults, ferr)) {
        print_trace_error(ferr);
        return kExitUsage;
      }
    }
  }
  // --tie-order config: HiveD's algorithm with ties broken by configuration order.
  const bool config_order = o.tie_order == "config";
  auto base = [config_order](const std::string& name, const pai::config::HivedModel& m) {
    if (config_order && name == "hived") return pai::scheduler::make_hived_policy(m, false);
    return pai::scheduler::make_policy(name, m);
  };
  if (config_order) sopt.make_policy = base;
  // --record-requests: the request stream of the first policy's run (docs/fidelity.md).
  std::ofstream record;
  if (!o.record.empty()) {
    std::string hived_file = o.config;
    if (std::filesystem::is_directory(hived_file)) hived_file += "/hivedscheduler.yaml";
    auto text = pai::util::read_file(hived_file);
    if (!text.ok()) {
      print_error(
          "--record-requests needs a standalone HiveD config (a hivedscheduler.yaml, or a "
          "directory holding one): " +
          text.error().message);
      return kExitUsage;
    }
    record.open(o.record, std::ios::binary | std::ios::trunc);
    if (!record) {
      print_error("cannot write " + o.record);
      return kExitUsage;
    }
    record << pai::sim::fidelity_config_line(*text) << '\n';
    auto made = std::make_shared<int>(0);
    const std::string first = policies.front();
    sopt.make_policy = [made, first, &record, base](const std::string& name,
                                                    const pai::config::HivedModel& m)
        -> pai::util::Result<std::unique_ptr<pai::scheduler::Policy>> {
      auto p = base(name, m);
      if (p.ok() && name == first && (*made)++ == 0)
        return pai::sim::make_recording_policy(std::move(*p), record);
      return p;
    };
  }
  // Only the per-job report names jobs.
  const bool jobs_csv = !o.report.empty() && o.report_jobs == "csv";
  if (!jobs_csv) trace.release_ids();
  sopt.on_progress = [&shown](size_t arrived, size_t total) { shown.update(arrived, total); };
  pai::sim::Simulator sim(*model, trace, sopt);
  if (auto prepared = sim.prepare(); !prepared.ok()) {
    if (progress) std::fprintf(stderr, "\x1b[2K");
    print_error(prepared.error().message);
    if (!prepared.error().hint.empty())
      std::fprintf(stderr, "  hint: %s\n", pai::util::printable(prepared.error().hint).c_str());
    return kExitUsage;
  }
  std::vector<pai::sim::PolicyRun> runs(policies.size());
  for (size_t i = 0; i < policies.size(); ++i) {
    shown.begin(policies[i], i + 1, policies.size(), trace.jobs.size());
    if (auto ran = sim.run(policies[i], runs[i]); !ran.ok()) {
      shown.clear();
      print_error(policies[i] + ": " + ran.error().message);
      return kExitUsage;
    }
    shown.end();
  }
  shown.clear();
  pai::sim::ReportContext ctx{trace, sim, runs, o.config, pai::kVersion};
  if (is_structured(o.output)) {
    print_document(document("simulation", Json(pai::sim::summary_json(ctx))), o.output);
  } else {
    print_summary(ctx, g);
  }
  if (!o.report.empty() && !write_simulation_report(ctx, o.report, jobs_csv, g.quiet))
    return kExitUsage;
  return kExitOk;
}

void add_simulate_options(Flags& cmd, SimulateOptions& o, Globals& g) {
  cmd.add_option("--config", o.config,
                 "Cluster: a directory, services-configuration.yaml or a HiveD config (as for "
                 "check config)")
      ->type_name("PATH");
  cmd.add_option("--trace", o.traces, "Job trace file (give it twice, or a directory, for alibaba)")
      ->type_name("FILE");
  cmd.add_option("--trace-format", o.format, "Trace format (default: detected)")
      ->check(IsMember({"philly", "helios", "alibaba", "csv"}))
      ->type_name("philly|helios|alibaba|csv");
  cmd.add_option("--policy", o.policies,
                 "Policies to compare, comma-separated: hived, quota, k8s-default, private")
      ->type_name("LIST")
      ->capture_default_str();
  add_output_option(cmd, o.output, g);
  cmd.add_option("--report", o.report,
                 "Also write report.html (SVG charts), metrics.json and jobs.csv to DIR "
                 "(with --from-live: report.html and forecast.svg)")
      ->type_name("DIR");
  cmd.add_option("--report-jobs", o.report_jobs,
                 "The per-job table of --report: csv (jobs.csv, one row per job and policy; "
                 "about 250 bytes a row) or none")
      ->check(IsMember({kReportJobsValues[0], kReportJobsValues[1]}))
      ->capture_default_str();
  cmd.add_option(
         "--vc-map", o.vc_map,
         "How trace VCs become cluster VCs: auto (unknown ones are assigned by demand), strict, or "
         "TRACE=CLUSTER,...")
      ->type_name("SPEC")
      ->capture_default_str();
  cmd.add_option("--priority", o.priority,
                 "Priority of jobs whose trace gives none (-1 opportunistic, 0..1000)")
      ->capture_default_str();
  cmd.add_option("--faults", o.faults,
                 "Node failures: a CSV file (time,node,down|up) or random:mtbf=30d,mttr=4h,seed=N")
      ->type_name("FILE|MODEL");
  cmd.add_option("--backfill", o.backfill,
                 "Try up to N jobs behind a VC's blocked queue head (0: strict FIFO)")
      ->type_name("N")
      ->capture_default_str();
  cmd.add_flag("--overflow", o.overflow,
               "A guaranteed job that cannot start in its VC runs as opportunistic work (priority "
               "-1) when that lets "
               "it start");
  cmd.add_flag("--preempt-one-node", o.preempt_one_node,
               "Delete a preemption's victims one node at a time, as HiveD answers Kubernetes");
  cmd.add_option("--suggested-fraction", o.suggested_fraction,
                 "Each decision's suggested nodes keep every node with probability F (Kubernetes' "
                 "own filters); every policy avoids the others (hived: ignoreK8sSuggestedNodes: "
                 "false)")
      ->type_name("F")
      ->check(Range(0.0, 1.0))
      ->capture_default_str();
  cmd.add_option("--suggested-seed", o.suggested_seed,
                 "Seed of the suggested node sets (--suggested-fraction)")
      ->type_name("N")
      ->capture_default_str();
  cmd.add_option("--limit", o.limit, "Simulate only the first N jobs of the trace")->type_name("N");
  cmd.add_option("--tie-order", o.tie_order,
                 "How hived breaks ties: hived (as HiveD's lists are ordered) or config "
                 "(configuration order)")
      ->capture_default_str();
  cmd.add_option("--record-requests", o.record,
                 "Write the requests the first policy receives as a fidelity stream "
                 "(docs/fidelity.md)")
      ->type_name("FILE");
  cmd.add_option("--bin", o.bin,
                 "Width of the time-series bins in the report (default: about 400 bins)")
      ->type_name("DURATION");
  add_forecast_options(cmd, o);
}

// --- registration --------------------------------------------------------------------

const char* kSimulateFooter =
    "A forecast from the live cluster (docs/simulate.md):\n"
    "  paictl simulate --from-live lab --config new/ --horizon 24h --replay-last 7d\n\n"
    "EXIT STATUS:\n"
    "  0 simulated, 2 bad usage, a cluster config with errors, or a malformed trace";

// `paictl simulate --config ... --trace ...`: the group itself takes the options.
void add_simulate(Flags& group, Globals& g) {
  auto o = std::make_shared<SimulateOptions>();
  group.require_subcommand(0, 1);
  add_simulate_options(group, *o, g);
  group.footer(kSimulateFooter);
  // `simulate run|generate|sweep` do the work themselves; the group's own steps
  // run only when no subcommand was given.
  Flags* app = &group;
  set_command_callback(group.app(), [o, &g, app]() {
    if (app->subcommand_given()) return;
    g.exit_code = dispatch_command(
        command_path(app->app()), [] {}, [&](Usage& u) { validate_simulate(*o, u); },
        [&]() { return run_simulate(*o, g); });
  });
}

// `paictl simulate run`: the same options and the same run, listed in its help.
void add_simulate_run(Flags& cmd, Globals& g) {
  auto o = std::make_shared<SimulateOptions>();
  add_simulate_options(cmd, *o, g);
  cmd.footer(kSimulateFooter);
  define_command(cmd, g, o, {.validate = validate_simulate, .run = [](const auto& o, Globals& g) {
                               return run_simulate(o, g);
                             }});
}

}  // namespace

void build_simulate(Flags& cmd, Globals& g) {
  add_simulate(cmd, g);
}
void build_simulate_run(Flags& cmd, Globals& g) {
  add_simulate_run(cmd, g);
}

}  // namespace paictl
