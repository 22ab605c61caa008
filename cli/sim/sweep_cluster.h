#pragma once
// `simulate sweep --cluster NAME`: its options, the connection to the cluster
// and the printing of the progress; the job itself (one task per shard, recorded
// in OUT/cluster-jobs.json before it is submitted, its results gathered from the
// tasks' logs) is lib/sim/sweep_job.h's run_sweep_job.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app.h"
#include "flags.h"
#include "sim/sweep_job.h"

namespace paictl {

struct SweepClusterOptions {
  std::string cluster;
  std::string vc;
  std::string spec;  // absolute: the tasks read it at the same path
  std::string out;
  int shards = 0;  // 0: one per point, at most 8
  std::string image = "openpai/paictl";
  std::string paictl = "paictl";  // the command in the task's container
  int cpu = 1;
  int memory_mb = 4096;
  double poll = 10;     // seconds between state polls
  double timeout = 30;  // seconds per request
};

using SweepClusterPoint = pai::sim::SweepJobPoint;

void add_sweep_cluster_options(Flags& cmd, SweepClusterOptions& o);

// Runs `points` on the cluster; calls `accept` for every result gathered
// (results with an "error" member are failed points). Returns an exit code.
int run_sweep_on_cluster(const SweepClusterOptions& o, const std::vector<SweepClusterPoint>& points,
                         const Globals& g,
                         const std::function<void(size_t, const nlohmann::json&)>& accept,
                         std::string& job_id);

}  // namespace paictl
