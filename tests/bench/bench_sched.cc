// Scheduling decisions: the latency of every schedule() call while the
// simulator replays a Philly-like trace on a Philly-shaped cluster (1x and 10x
// Philly's 552 nodes), for each policy. Reports percentiles as counters.
//
//   cmake -S . -B build-bench -DPAI_BUILD_BENCHMARKS=ON && ninja -C build-bench bench_sched
//   ./build-bench/tests/bench/bench_sched --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

#include "config/context.h"
#include "config/hived.h"
#include "config/hived_model.h"
#include "philly_model.h"
#include "scheduler/policy.h"
#include "sim/engine.h"
#include "sim/generate.h"
#include "timed_policy.h"
#include "yaml/yaml.h"

namespace {

using pai::scheduler::Policy;

double wall_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const pai::sim::Trace& philly_trace(int scale, int64_t jobs) {
  static std::map<std::pair<int, int64_t>, pai::sim::Trace> cache;
  auto it = cache.find({scale, jobs});
  if (it != cache.end()) return it->second;
  pai::sim::GenerateOptions g;
  g.jobs = jobs;
  g.seed = 7;
  return cache[{scale, jobs}] =
             pai::sim::generate_trace(g, pai::sim::philly_cluster_template(scale, 15));
}

void BM_Decisions(benchmark::State& state, const char* policy) {
  const int scale = static_cast<int>(state.range(0));
  const int64_t jobs = state.range(1);
  const bool overflow = state.range(2) != 0;
  auto model = philly_model(scale);
  const auto& trace = philly_trace(scale, jobs);
  std::vector<double> samples;
  pai::sim::PolicyRun run;
  for (auto _ : state) {
    samples.clear();
    pai::sim::SimOptions opt;
    opt.overflow = overflow;
    int made = 0;
    opt.make_policy =
        [&](const std::string& name,
            const pai::config::HivedModel& m) -> pai::util::Result<std::unique_ptr<Policy>> {
      auto p = pai::scheduler::make_policy(name, m);
      if (p.ok() && made++ == 0)
        return std::unique_ptr<Policy>(
            std::make_unique<pai::bench::TimedPolicy>(std::move(*p), &samples, wall_us));
      return p;
    };
    pai::sim::Simulator sim(*model, trace, opt);
    auto done = sim.prepare();
    if (done.ok()) done = sim.run(policy, run);
    if (!done.ok()) state.SkipWithError(done.error().message.c_str());
  }
  std::sort(samples.begin(), samples.end());
  auto pct = [&](double q) {
    return samples.empty()
               ? 0.0
               : samples[std::min(samples.size() - 1,
                                  static_cast<size_t>(q * static_cast<double>(samples.size())))];
  };
  double sum = 0;
  for (double x : samples) sum += x;
  state.counters["decisions"] = static_cast<double>(samples.size());
  state.counters["mean_us"] = samples.empty() ? 0 : sum / static_cast<double>(samples.size());
  state.counters["p50_us"] = pct(0.50);
  state.counters["p99_us"] = pct(0.99);
  state.counters["p999_us"] = pct(0.999);
  state.counters["max_us"] = samples.empty() ? 0 : samples.back();
  state.counters["nodes"] = 552.0 * scale;
  state.counters["finished"] = static_cast<double>(run.overall.finished);
}

// Args: cluster scale (x Philly), jobs, overflow.
BENCHMARK_CAPTURE(BM_Decisions, hived, "hived")
    ->Args({1, 100000, 0})
    ->Args({1, 100000, 1})
    ->Args({2, 100000, 1})
    ->Args({5, 100000, 1})
    ->Args({10, 100000, 1})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Decisions, quota, "quota")
    ->Args({1, 100000, 1})
    ->Args({10, 100000, 1})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Decisions, private, "private")
    ->Args({1, 100000, 1})
    ->Args({10, 100000, 1})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Decisions, k8s_default, "k8s-default")
    ->Args({1, 100000, 1})
    ->Args({10, 100000, 1})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
