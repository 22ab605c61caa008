#include "sim/sweep_cluster.h"
#include "flags.h"

#include <cstdio>

#include "api/client.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "exit_codes.h"
#include "output/output.h"
#include "sim/sweep_job.h"

namespace paictl {

void add_sweep_cluster_options(Flags& cmd, SweepClusterOptions& o) {
  const char* group = "On a cluster (--cluster)";
  cmd.add_option("--shards", o.shards, "Tasks of the job (default: one per point, at most 8)")
      ->type_name("N")
      ->group(group);
  cmd.add_option("--image", o.image, "Docker image of the tasks; it must hold paictl")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--paictl", o.paictl, "The paictl command inside the tasks' containers")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--task-cpu", o.cpu, "CPUs per task")->capture_default_str()->group(group);
  cmd.add_option("--task-memory-mb", o.memory_mb, "Memory per task, MB")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--poll", o.poll, "Seconds between looks at the job's state")
      ->capture_default_str()
      ->group(group);
}

int run_sweep_on_cluster(const SweepClusterOptions& o, const std::vector<SweepClusterPoint>& points,
                         const Globals& g,
                         const std::function<void(size_t, const nlohmann::json&)>& accept,
                         std::string& job_id) {
  if (o.shards < 0 || o.cpu < 1 || o.memory_mb < 1 || !(o.poll > 0)) {
    print_error("--shards, --task-cpu, --task-memory-mb and --poll must be positive");
    return kExitUsage;
  }
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  jobcli::RemoteOptions ro;
  ro.cluster = o.cluster;
  ro.timeout = o.timeout;
  auto conn = jobcli::connect_named(*reg, o.cluster, ro, g);
  if (!conn) return kExitUsage;
  const std::string& cluster = conn->cluster->name;

  pai::sim::SweepJobRequest request;
  request.cluster = o.cluster;
  request.out = o.out;
  request.settings.vc = o.vc;
  request.settings.spec = o.spec;
  request.settings.shards = o.shards;
  request.settings.image = o.image;
  request.settings.paictl = o.paictl;
  request.settings.cpu = o.cpu;
  request.settings.memory_mb = o.memory_mb;
  request.points = points;
  request.poll_s = o.poll;
  pai::sim::SweepJobDeps deps{*conn->api, conn->cluster->user, pai::util::Clock::real()};

  using Event = pai::sim::SweepJobEvent;
  auto outcome = pai::sim::run_sweep_job(request, deps, accept, [&](const Event& e) {
    if (e.kind == Event::Kind::LogFailed) {
      jobcli::report_api_error(cluster, e.doing, *e.api);
      return;
    }
    if (g.quiet) return;
    switch (e.kind) {
      case Event::Kind::Resuming:
        std::fprintf(stderr, "%s was submitted for %zu of the missing points: gathering it\n",
                     e.job_id.c_str(), e.points);
        break;
      case Event::Kind::State:
        std::fprintf(stderr, "%s on %s: %s\n", e.job_id.c_str(), cluster.c_str(), e.state.c_str());
        break;
      case Event::Kind::Submitted:
        std::fprintf(stderr, "%s submitted to %s (VC %s): %zu points in %d tasks\n",
                     e.job_id.c_str(), cluster.c_str(), e.vc.c_str(), e.points, e.shards);
        break;
      case Event::Kind::Exists:
        std::fprintf(stderr, "%s exists already: gathering it\n", e.job_id.c_str());
        break;
      case Event::Kind::Gathered:
        std::fprintf(stderr, "%s: %zu of %zu results gathered from the tasks' logs\n",
                     e.job_id.c_str(), e.got, e.points);
        break;
      case Event::Kind::LogFailed:
        break;
    }
  });
  if (!outcome.job_id.empty()) job_id = outcome.job_id;
  if (!outcome.failure) return kExitOk;
  const auto& f = *outcome.failure;
  using Kind = pai::sim::SweepJobError::Kind;
  switch (f.kind) {
    case Kind::Remote:
      return jobcli::report_api_error(cluster, f.doing, *f.api);
    case Kind::NotSweep:
      print_error(f.message);
      return kExitRemote;
    case Kind::Checks:
      print_error(f.message);
      for (const auto& d : f.findings.items())
        if (d.severity == pai::diag::Severity::Error)
          std::fprintf(stderr, "  %s: %s\n", d.code.c_str(), d.message.c_str());
      return kExitUsage;
    case Kind::TooLarge:
    case Kind::Record:
      print_error(f.message);
      return kExitUsage;
  }
  return kExitUsage;
}

}  // namespace paictl
