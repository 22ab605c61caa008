#pragma once
// The discrete-event simulator: replays a trace on a cluster under a policy.
//
// Events are arrivals, finishes, preemptions and node failures/recoveries.
// Each VC has two queues (guaranteed and opportunistic work), ordered by
// priority, then submission (FIFO within a priority). After every batch of
// events at one instant the queue heads are tried across VCs in (priority,
// submission) order; a head that cannot start blocks its queue until something
// is released (with --backfill, up to N jobs behind it are tried too). A
// preempted or failed job is requeued and restarts from the beginning; the GPU
// time it had run is counted as lost. Jobs that can never run (unknown VC,
// larger than their VC or the cluster, user errors) are found at arrival with
// a probe on an empty copy of the policy, and counted with their reason.
//
// Deterministic: the same trace, cluster, options and policy give the same
// result, to the bit.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/cluster.h"
#include "scheduler/hived_state.h"
#include "sim/trace.h"
#include "util/result.h"

namespace pai::config {
struct HivedModel;
}
namespace pai::scheduler {
class Policy;
}

namespace pai::sim {

struct FaultEvent {
  double time = 0;  // seconds since the trace's first submission
  int32_t node = -1;
  bool up = false;
};

struct FaultSpec {
  std::vector<FaultEvent> events;  // from a fault file
  bool random = false;             // the seeded random model
  double mtbf = 0;                 // mean time between failures of one node, seconds
  double mttr = 0;                 // mean time to repair, seconds
  uint64_t seed = 1;
  std::string source;  // for reports
};

// "random:mtbf=30d,mttr=4h,seed=7"
util::Result<FaultSpec> parse_random_faults(const std::string& spec);
// A CSV fault file: time,node,event (event: down|up; time: seconds since the
// trace start, or a timestamp when the trace has dates).
bool read_fault_file(const std::string& path, const scheduler::ClusterShape& cluster,
                     const Trace& trace, FaultSpec& out, TraceError& error);
// The same over text in memory (tests, fuzzing).
bool read_fault_text(std::string_view text, const std::string& name,
                     const scheduler::ClusterShape& cluster, const Trace& trace, FaultSpec& out,
                     TraceError& error);

// A run that starts from a live cluster (a forecast, lib/sim/forecast.h): the
// groups that run now, each as a job of the trace (submitted at 0, its duration
// the time it has left), restored on the policy's config as HiveD restores
// running groups at a restart (scheduler::restore_hived_groups; the `hived`
// policy only), and the nodes that are bad now.
struct InitialState {
  struct Running {
    uint32_t job = 0;            // index into the trace's jobs
    scheduler::LiveGroup group;  // where it runs (its name is replaced by the run's own)
  };
  std::vector<Running> running;
  std::vector<int32_t> bad_nodes;  // indices into the cluster's nodes
};

struct SimOptions {
  // A guaranteed job that cannot start in its VC tries once more as an
  // opportunistic job (priority -1), as users of HiveD clusters do when their VC
  // is full; if preempted it is requeued at its own priority.
  bool overflow = false;
  bool backfill = false;
  int32_t backfill_depth = 32;
  // HiveD answers a preemption with the victims on one node only (the Kubernetes
  // preemption extender asks node by node): Kubernetes deletes those, the pod
  // asks again and gets the next node's victims, until the group is bound. With
  // this set the simulator does the same (the node with the lowest index first,
  // where HiveD takes a random one) instead of deleting every victim at once.
  bool preempt_one_node = false;
  // Kubernetes' own filters: with a fraction below 1, every decision of the
  // first policy carries a suggested node set that keeps each node with this
  // probability (seeded by suggested_seed, drawn again at each attempt) and
  // avoids the others (ignoreK8sSuggestedNodes: false); the baselines place
  // on its nodes only too. Probes ignore it.
  double suggested_fraction = 1;
  uint64_t suggested_seed = 1;
  double bin_seconds = 0;       // width of the time-series bins; 0 = about 400 bins over the trace
  std::string vc_map = "auto";  // auto | strict | "trace=cluster,..."
  FaultSpec faults;
  // Seeds the run (nullptr: an empty cluster at time 0).
  std::shared_ptr<const InitialState> initial;
  // Stops the run at this time (0: when nothing is left to do); jobs running
  // then are JobState::Running, queued ones NeverStarted.
  double horizon = 0;
  // Makes the policies (default: scheduler::make_policy). The first policy a run
  // makes schedules the trace; the second answers "can this job ever run?".
  // Benchmarks use it to time decisions.
  std::function<util::Result<std::unique_ptr<scheduler::Policy>>(const std::string&,
                                                                 const config::HivedModel&)>
      make_policy;
  // Called as the run goes: the jobs that have arrived so far and the trace's
  // jobs, about every 1/256 of the trace and once at the end (a front end
  // shows progress with it; the simulator neither prints nor reads a clock).
  std::function<void(size_t arrived, size_t total)> on_progress;
  // Also keep, per cluster VC, the GPUs its running jobs hold and its queued
  // jobs as bin averages, and when its jobs were preempted
  // (PolicyRun::vc_used_gpus...): a forecast's report draws them.
  bool vc_series = false;
};

struct Summary {
  int64_t n = 0;
  double mean = 0, p50 = 0, p95 = 0, p99 = 0, max = 0;
};
// Sorts ascending as std::sort does (the same values in the same order; NaN
// not allowed), by radix on the bits for long vectors.
void sort_values(std::vector<double>& values);
Summary summarize(std::vector<double> values);
// The same for values already in ascending order (no copy, no sort).
Summary summarize_sorted(const std::vector<double>& values);
// Ascending runs merged into one ascending vector: the same values in the
// same order as sorting them together.
std::vector<double> merge_sorted(std::vector<std::vector<double>> runs);

// Running: still running when the run stopped at SimOptions::horizon.
enum class JobState : uint8_t { Finished, Unschedulable, NeverStarted, Running };

struct JobOutcome {
  double first_start = -1;
  double finish = -1;
  float lost_gpu_seconds = 0;
  float anomaly_wait = 0;    // seconds waited while its VC was within its guarantee
  uint16_t preemptions = 0;  // killed by a higher-priority group and requeued
  uint16_t failures = 0;     // killed by a node failure and requeued
  uint16_t lazy = 0;         // downgraded to opportunistic by lazy preemption
  uint16_t overflow = 0;     // started as opportunistic work (--overflow)
  JobState state = JobState::NeverStarted;
  int16_t reason = -1;     // index into PolicyRun::reasons
  int16_t leaf_type = -1;  // the leaf cell type it ran on
};

struct GroupMetrics {
  int64_t jobs = 0, finished = 0, unschedulable = 0, never_started = 0;
  int64_t running = 0;          // still running at the horizon
  double used_gpu_seconds = 0;  // GPUs its running jobs held, integrated over the run
  int64_t preemptions = 0, failure_restarts = 0, lazy_preemptions = 0, overflow_starts = 0;
  int64_t anomaly_jobs = 0;
  double anomaly_wait_seconds = 0;
  double gpu_seconds = 0;  // run time x GPUs of finished runs
  double lost_gpu_seconds = 0;
  Summary queue_delay, jct;
};

struct PolicyRun {
  std::string policy;
  // Of an initial state's running groups: how HiveD restored them, in its order.
  std::vector<scheduler::RestoredGroup> restored;
  std::vector<JobOutcome> jobs;  // in trace order
  std::vector<std::string> reasons;
  std::map<std::string, int64_t> unschedulable_by_reason;
  GroupMetrics overall;
  std::vector<GroupMetrics> vcs;  // by cluster VC
  GroupMetrics unmapped;          // jobs whose VC is not in the cluster
  double end = 0;                 // last event (seconds since the first submission)
  double makespan = 0;            // first submission to last finish
  double gpu_utilization = 0;     // used / total GPU time, over the makespan
  double fragmentation = 0;  // idle healthy GPUs while work for their type waits, share of GPU time
  int64_t node_failures = 0;
  int64_t decisions = 0;  // schedule calls
  double bin_seconds = 0;
  std::vector<double> used_gpus, queued_jobs, idle_waiting_gpus;  // bin averages
  int64_t gpus = 0;                                               // GPU leaf cells in the cluster
  // With SimOptions::vc_series, by cluster VC: the bin averages of the GPUs its
  // running jobs hold and of its queued jobs (the bins of used_gpus), and the
  // times its running jobs were preempted (killed by a higher priority), in order.
  std::vector<std::vector<double>> vc_used_gpus, vc_queued_jobs;
  std::vector<std::vector<double>> vc_preempted_at;
};

struct VcMapping {
  std::vector<int32_t> to_cluster;  // trace VC -> cluster VC (-1: not in the cluster)
  std::vector<std::string> notes;   // what was mapped automatically
};

class Simulator {
 public:
  Simulator(const config::HivedModel& model, const Trace& trace, SimOptions options);
  ~Simulator();
  // Maps VCs and leaf types, expands the fault model. An error on bad options.
  util::Result<void> prepare();
  const VcMapping& vc_mapping() const { return mapping_; }
  const scheduler::ClusterShape& cluster() const { return shape_; }
  const std::vector<FaultEvent>& faults() const { return faults_; }
  // Runs one policy over the whole trace.
  util::Result<void> run(const std::string& policy, PolicyRun& out);

 private:
  const config::HivedModel& model_;
  const Trace& trace_;
  SimOptions opt_;
  scheduler::ClusterShape shape_;
  VcMapping mapping_;
  std::vector<int32_t> type_map_;  // trace leaf type -> cluster leaf type (-1 any, -2 unknown)
  std::vector<uint8_t> gpu_type_;  // cluster leaf type -> carries GPUs
  std::vector<FaultEvent> faults_;
};

}  // namespace pai::sim
