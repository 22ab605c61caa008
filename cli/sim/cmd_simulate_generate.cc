// paictl simulate generate: a synthetic trace (lib/sim/generate.h), shaped for
// a cluster's VCs or for a Philly-shaped cluster it can also write.

#include <cstdio>
#include <memory>
#include <string>

#include "app.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "output/output.h"
#include "output/printer.h"
#include "sim/cmd_simulate.h"
#include "sim/generate.h"
#include "sim/report.h"
#include "sim/trace.h"
#include "util/fs.h"
#include "util/path.h"

namespace paictl {

void validate_generate(const GenerateOptions& o, Usage& u) {
  u.error_if(o.jobs < 1 || o.jobs > 100'000'000, "--jobs must be between 1 and 100000000");
  u.error_if(o.load <= 0 || o.load > 100,
             "--load must be above 0 (1 = the guaranteed GPUs fully busy on average)");
  u.error_if(o.opportunistic < 0 || o.opportunistic > 1,
             "--opportunistic is a share of jobs between 0 and 1");
  u.error_if(o.scale < 1 || o.scale > 1000 || o.vcs < 1 || o.vcs > 10000,
             "--scale must be 1..1000 and --vcs 1..10000");
  u.error_if(o.max_gpus < 1, "--max-gpus must be at least 1");
  u.error_if(o.priority < 0 || o.priority > 1000,
             "--priority of generated jobs must be 0..1000 (use --opportunistic for -1)");
  u.error_if(o.load_given && o.days_given, "--load and --days both set the arrival span",
             "give one: --load F spreads the jobs so that the guaranteed GPUs are F busy, "
             "--days D spreads them over D days");
  u.error_if(o.days_given && !(o.days > 0), "--days must be above 0");
  u.error_if(!o.cluster_out.empty() && !o.config.empty(),
             "--cluster-out writes a Philly-shaped cluster; it does not go with --config");
}

namespace {

int run_generate(const GenerateOptions& o, const Globals& g) {
  pai::sim::ClusterTemplate tmpl;
  if (!o.config.empty()) {
    auto model = load_simulation_cluster(o.config, g);
    if (!model) return kExitUsage;
    tmpl = pai::sim::cluster_template(*model);
    if (tmpl.gpus == 0) {
      print_error("the virtual clusters of " + o.config +
                  " have no GPU cells to generate jobs for");
      return kExitUsage;
    }
  } else {
    tmpl = pai::sim::philly_cluster_template(o.scale, o.vcs);
  }
  if (!o.cluster_out.empty()) {
    // "philly/" and "philly" name the same file: no "philly//hivedscheduler.yaml".
    const std::string path = pai::util::join_path(o.cluster_out, "hivedscheduler.yaml");
    auto e = pai::util::make_directories(o.cluster_out);
    if (e.ok())
      e = pai::util::write_file_atomic(path, pai::sim::philly_cluster_config(o.scale, o.vcs));
    if (!e.ok()) {
      print_error("cannot write " + path + ": " + e.error().message);
      return kExitUsage;
    }
    if (!g.quiet) std::fprintf(stderr, "cluster: %s\n", path.c_str());
  }
  pai::sim::GenerateOptions gopt;
  gopt.seed = o.seed;
  gopt.jobs = o.jobs;
  gopt.load = o.load;
  gopt.days = o.days;
  gopt.max_gpus = o.max_gpus;
  gopt.opportunistic = o.opportunistic;
  gopt.priority = o.priority;
  pai::sim::Trace t = pai::sim::generate_trace(gopt, tmpl);
  if (o.format == "philly" && o.opportunistic > 0 && !g.quiet)
    print_warning(
        "the Philly format has no priorities: opportunistic jobs are kept only with --format csv");
  std::string content =
      o.format == "csv" ? pai::sim::write_native_csv(t) : pai::sim::write_philly_json(t);
  auto e = write_report_file(o.out, content);
  if (!e.ok()) {
    print_error("cannot write " + o.out + ": " + e.error().message);
    return kExitUsage;
  }
  if (!g.quiet && o.out != "-")
    std::fprintf(stderr, "trace: %s (%zu jobs over %s)\n", o.out.c_str(), t.jobs.size(),
                 pai::sim::human_duration(t.jobs.empty() ? 0 : t.jobs.back().submit).c_str());
  return kExitOk;
}

void add_simulate_generate(Flags& parent, Globals& g) {
  auto o = std::make_shared<GenerateOptions>();
  Flags* cmd = &parent;
  cmd->add_option("--jobs", o->jobs, "Number of jobs")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed; the same seed gives the same trace")
      ->capture_default_str();
  cmd->add_option("--load", o->load,
                  "Offered GPU load relative to the guaranteed GPUs (sets the arrival span)")
      ->capture_default_str()
      ->each([o](const std::string&) { o->load_given = true; });
  cmd->add_option("--days", o->days, "Arrival span in days instead of --load")
      ->each([o](const std::string&) { o->days_given = true; });
  cmd->add_option("--max-gpus", o->max_gpus, "Largest job, in GPUs")->capture_default_str();
  cmd->add_option("--opportunistic", o->opportunistic,
                  "Share of jobs at priority -1 (csv format only)")
      ->capture_default_str();
  cmd->add_option("--priority", o->priority, "Priority of the other jobs")->capture_default_str();
  cmd->add_option("--config", o->config,
                  "Shape the jobs for this cluster's VCs (default: a Philly-shaped cluster)")
      ->type_name("PATH");
  cmd->add_option("--format", o->format, "Trace format to write")
      ->check(IsMember({"philly", "csv"}))
      ->capture_default_str();
  cmd->add_option("--out", o->out, "Trace file ('-' for stdout)")
      ->type_name("FILE")
      ->capture_default_str();
  cmd->add_option("--cluster-out", o->cluster_out,
                  "Also write the Philly-shaped cluster's hivedscheduler.yaml to DIR")
      ->type_name("DIR");
  cmd->add_option("--scale", o->scale, "Cluster size in multiples of Philly's 552 nodes")
      ->capture_default_str();
  cmd->add_option("--vcs", o->vcs, "Virtual clusters of the generated cluster")
      ->capture_default_str();
  define_command(*cmd, g, o, {.validate = validate_generate, .run = [](const auto& o, Globals& g) {
                                return run_generate(o, g);
                              }});
}

}  // namespace

void build_simulate_generate(Flags& cmd, Globals& g) {
  add_simulate_generate(cmd, g);
}

}  // namespace paictl
