// The maintenance planner (lib/hived/maintenance.h): the plan for every node of
// a 1,500-node cluster running 2,000 groups, in CPU time. The cluster (375
// racks of four 8-GPU nodes, 15 VCs guaranteed 90 % or all of it) and the groups
// (seeded: 1-4 GPUs, one node, two and four nodes; a tenth opportunistic)
// are made here, placed by lib/scheduler and read back as HiveD's inspect
// API shows them; a tenth of the groups have no known end.
//
// BM_Forecast: the forecast from that live state (lib/sim/forecast.h,
// simulate --from-live): 24 hours, 20,000 seeded arrivals (the same shapes,
// 10 minutes to 12 hours), under the current config and a proposed one (the
// VCs' guarantees from 90 % to all of the cluster), both runs together, with
// the per-VC series over time the report draws (96 steps) and without.
//
//   cmake -S . -B build -DPAI_BUILD_BENCHMARKS=ON && cmake --build build --target bench_maintenance
//   ./build/tests/bench/bench_maintenance --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "config/context.h"
#include "config/hived.h"
#include "config/hived_model.h"
#include "hived/live.h"
#include "hived/maintenance.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"
#include "sim/forecast.h"
#include "sim/forecast_input.h"
#include "yaml/yaml.h"

namespace {

constexpr int kRacks = 375;  // x 4 nodes
constexpr int kVcs = 15;
constexpr int kGroups = 2000;
constexpr double kNow = 1'800'000'000;

std::string maintenance_bench_config(int guaranteed_percent) {
  std::string s =
      "physicalCluster:\n"
      "  skuTypes:\n"
      "    V100: {gpu: 1, cpu: 6, memory: 60Gi}\n"
      "  cellTypes:\n"
      "    V100-NODE: {childCellType: V100, childCellNumber: 8, isNodeLevel: true}\n"
      "    V100-RACK: {childCellType: V100-NODE, childCellNumber: 4}\n"
      "  physicalCells:\n";
  for (int r = 0; r < kRacks; ++r) {
    s += "  - cellType: V100-RACK\n    cellChildren: [";
    for (int n = 0; n < 4; ++n)
      s += std::string(n ? ", " : "") + "{cellAddress: node" + std::to_string(r * 4 + n) + "}";
    s += "]\n";
  }
  s += "virtualClusters:\n";
  const int per_vc = kRacks * 4 * guaranteed_percent / 100 / kVcs;  // 90 or 100 nodes each
  for (int v = 0; v < kVcs; ++v)
    s += "  vc" + std::to_string(v) + ":\n    virtualCells: [{cellType: V100-RACK.V100-NODE, " +
         "cellNumber: " + std::to_string(per_vc) + "}]\n";
  return s;
}

struct MaintenanceBenchInput {
  std::shared_ptr<pai::config::HivedModel> model;
  pai::hived::LiveState live;
  std::map<std::string, double> ends;
  int64_t groups = 0;
};

uint64_t maintenance_bench_next(uint64_t& x) {  // splitmix64
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

const MaintenanceBenchInput& maintenance_bench_input(int guaranteed_percent) {
  static std::map<int, std::unique_ptr<MaintenanceBenchInput>> cache;
  auto& in = cache[guaranteed_percent];
  if (in) return *in;
  in = std::make_unique<MaintenanceBenchInput>();
  std::string text = maintenance_bench_config(guaranteed_percent);
  pai::yaml::Stream s = pai::yaml::load(text);
  pai::diag::List dl;
  pai::config::Context ctx("maintenance.yaml", dl);
  const pai::yaml::Node* root = pai::config::single_document(s, ctx, "hivedscheduler.yaml");
  auto model = std::make_shared<pai::config::HivedModel>(
      pai::config::build_hived_model(pai::config::load_hived_config(root, ctx), ctx));
  in->model = model;
  auto made = pai::scheduler::make_hived_policy(*model);
  if (!made.ok()) return *in;
  auto policy = std::move(*made);
  uint64_t seed = 42;
  for (int attempt = 0; attempt < 20 * kGroups && in->groups < kGroups; ++attempt) {
    pai::scheduler::GroupRequest r;
    r.affinity_group = "user" + std::to_string(attempt % 97) + "~job" + std::to_string(attempt);
    r.virtual_cluster = "vc" + std::to_string(maintenance_bench_next(seed) % kVcs);
    r.priority = maintenance_bench_next(seed) % 10 == 0 ? -1 : 100;
    const uint64_t shape = maintenance_bench_next(seed) % 100;
    int32_t pods = 1, gpus = 8;
    if (shape < 60)
      gpus = 1 << (maintenance_bench_next(seed) % 3);  // 1, 2, 4
    else if (shape < 90)
      gpus = 8;
    else if (shape < 98)
      pods = 2;
    else
      pods = 4;
    r.members = {{pods, gpus}};
    if (policy->schedule(r, false).outcome != pai::scheduler::Outcome::Bound) continue;
    ++in->groups;
    if (maintenance_bench_next(seed) % 10 != 0)
      in->ends[r.affinity_group] =
          kNow - 3600 + static_cast<double>(maintenance_bench_next(seed) % (49 * 3600));
  }
  auto state = *pai::scheduler::snapshot_hived(*policy);
  in->live = pai::hived::index_live(pai::hived::cluster_status_of(*model, state),
                                    pai::hived::affinity_groups_of(*model, state));
  return *in;
}

// Args: max unavailable (> 0 nodes, < 0 percent), the VCs' guaranteed share
// of the cluster (percent), 1 to replay a restart for every batch (the cost
// when no batch fits in HiveD's headroom).
void BM_MaintenancePlan(benchmark::State& state) {
  const auto& in = maintenance_bench_input(static_cast<int>(state.range(1)));
  pai::hived::MaintenanceRequest r;
  for (const auto& n : in.live.nodes) r.nodes.push_back(n.name);
  const int64_t m = state.range(0);
  r.max_unavailable = {
      m > 0 ? pai::hived::MaxUnavailable::Kind::Nodes : pai::hived::MaxUnavailable::Kind::Percent,
      m > 0 ? m : -m};
  r.wait_for_groups_s = 24 * 3600;
  r.evict = true;
  r.now_s = kNow;
  r.expected_ends = in.ends;
  r.replay_every_batch = state.range(2) != 0;
  int64_t batches = 0, lazy = 0, doomed = 0, evicted = 0, replayed = 0;
  for (auto _ : state) {
    auto plan = pai::hived::plan_maintenance(r, &in.live);
    if (!plan.ok()) {
      state.SkipWithError(plan.error().message.c_str());
      return;
    }
    batches = static_cast<int64_t>(plan->batches.size());
    lazy = doomed = 0;
    for (const auto& b : plan->batches) {
      for (const auto& g : b.groups)
        if (g.action == pai::hived::GroupAction::LazilyPreempted || g.lazily_preempted) ++lazy;
      if (!b.doomed.empty()) ++doomed;
    }
    evicted = static_cast<int64_t>(plan->evicted.size());
    replayed = plan->replayed_batches;
  }
  state.counters["nodes"] = static_cast<double>(r.nodes.size());
  state.counters["groups"] = static_cast<double>(in.live.groups.size());
  state.counters["batches"] = static_cast<double>(batches);
  state.counters["lazy"] = static_cast<double>(lazy);
  state.counters["doomed_batches"] = static_cast<double>(doomed);
  state.counters["evicted"] = static_cast<double>(evicted);
  state.counters["replayed"] = static_cast<double>(replayed);
}

BENCHMARK(BM_MaintenancePlan)
    ->Args({1, 90, 0})
    ->Args({10, 90, 0})
    ->Args({-5, 90, 0})
    ->Args({1, 100, 0})
    ->Args({-5, 100, 0})
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MaintenancePlan)
    ->Args({10, 90, 1})
    ->Args({-5, 90, 1})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

void BM_Forecast(benchmark::State& state) {
  const auto& in = maintenance_bench_input(90);
  const auto& proposed = maintenance_bench_input(100);
  const int64_t arrivals = state.range(0);
  auto trace = std::make_shared<pai::sim::Trace>();
  trace->format = "csv";
  uint64_t seed = 7;
  for (int64_t i = 0; i < arrivals; ++i) {
    pai::sim::TraceJob j;
    j.submit = 86400.0 * static_cast<double>(i) / static_cast<double>(arrivals);
    j.duration = 600 + static_cast<double>(maintenance_bench_next(seed) % (12 * 3600 - 600));
    j.vc = trace->intern_vc("vc" + std::to_string(maintenance_bench_next(seed) % kVcs));
    j.priority = maintenance_bench_next(seed) % 10 == 0 ? -1 : 100;
    const uint64_t shape = maintenance_bench_next(seed) % 100;
    int32_t pods = 1, gpus = 8;
    if (shape < 60)
      gpus = 1 << (maintenance_bench_next(seed) % 3);
    else if (shape >= 98)
      pods = 4;
    else if (shape >= 90)
      pods = 2;
    trace->add(j, "a" + std::to_string(i), {{pods, gpus}});
  }
  pai::sim::ForecastRequest req;
  req.current = in.model;
  req.proposed = proposed.model;
  req.state = pai::sim::forecast_state(in.live, in.model.get(), in.ends, {}, kNow);
  req.arrivals = trace;
  req.horizon_s = 86400;
  req.backfill = static_cast<int32_t>(state.range(1));
  req.steps = static_cast<int32_t>(state.range(2));
  int64_t started = 0, preemptions = 0;
  for (auto _ : state) {
    auto r = pai::sim::forecast(req);
    if (!r.ok()) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    started = r->configs[0].overall.started;
    preemptions = r->configs[0].overall.preemptions + r->configs[1].overall.preemptions;
  }
  state.counters["running"] = static_cast<double>(req.state.running.size());
  state.counters["arrivals"] = static_cast<double>(arrivals);
  state.counters["started"] = static_cast<double>(started);
  state.counters["preemptions"] = static_cast<double>(preemptions);
}

// Args: arrivals, the forecast's backfill depth (ForecastRequest::backfill),
// the steps of its series over time (ForecastRequest::steps; 0: none, the
// cost of the series is the difference).
BENCHMARK(BM_Forecast)
    ->Args({20000, 16, 96})
    ->Args({20000, 16, 0})
    ->Args({20000, 64, 96})
    ->Args({20000, 0, 96})
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
