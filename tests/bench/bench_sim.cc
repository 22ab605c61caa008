// End to end: read a Philly-format trace from disk, replay it with HiveD on a
// Philly-shaped cluster and summarise, as `paictl simulate` does; and the trace
// readers' throughput. Growth with trace length and cluster size.
//
//   cmake -S . -B build-bench -DPAI_BUILD_BENCHMARKS=ON && ninja -C build-bench bench_sim
//   ./build-bench/tests/bench/bench_sim --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <unistd.h>
#include <cstdio>
#include <map>

#include "config/context.h"
#include "config/hived.h"
#include "config/hived_model.h"
#include "philly_model.h"
#include "sim/engine.h"
#include "sim/generate.h"
#include "sim/report.h"
#include "sim/trace.h"
#include "util/fs.h"
#include "yaml/yaml.h"

namespace {

// A generated trace written to a file once per (scale, jobs, format).
std::string trace_file(int scale, int64_t jobs, const std::string& format) {
  static std::map<std::string, std::string> cache;
  std::string key = std::to_string(scale) + "-" + std::to_string(jobs) + "." + format;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  pai::sim::GenerateOptions g;
  g.jobs = jobs;
  g.seed = 7;
  auto t = pai::sim::generate_trace(g, pai::sim::philly_cluster_template(scale, 15));
  std::string path = "/tmp/paictl-bench-" + std::to_string(getpid()) + "-" + key;
  (void)pai::util::write_file_atomic(
      path, format == "csv" ? pai::sim::write_native_csv(t) : pai::sim::write_philly_json(t));
  return cache[key] = path;
}

void BM_SimulateEndToEnd(benchmark::State& state) {
  const int scale = static_cast<int>(state.range(0));
  const int64_t jobs = state.range(1);
  auto model = philly_model(scale);
  std::string path = trace_file(scale, jobs, "json");
  int64_t finished = 0;
  for (auto _ : state) {
    pai::sim::Trace t;
    pai::sim::TraceError e;
    if (!pai::sim::read_trace({path}, {}, t, e)) state.SkipWithError(e.message.c_str());
    pai::sim::SimOptions opt;
    opt.overflow = true;
    pai::sim::Simulator sim(*model, t, opt);
    std::vector<pai::sim::PolicyRun> runs(1);
    pai::util::Result<void> step = sim.prepare();
    if (step.ok()) step = sim.run("hived", runs[0]);
    if (!step.ok()) state.SkipWithError(step.error().message.c_str());
    pai::sim::ReportContext ctx{t, sim, runs, "philly", "bench"};
    benchmark::DoNotOptimize(pai::sim::summary_json(ctx).dump());
    finished = runs[0].overall.finished;
  }
  state.counters["jobs"] = static_cast<double>(jobs);
  state.counters["finished"] = static_cast<double>(finished);
  state.counters["jobs_per_s"] =
      benchmark::Counter(static_cast<double>(jobs), benchmark::Counter::kIsIterationInvariantRate);
}
// Args: cluster scale (x Philly), jobs.
BENCHMARK(BM_SimulateEndToEnd)
    ->Args({1, 10000})
    ->Args({1, 100000})
    ->Args({1, 300000})
    ->Args({10, 100000})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

void BM_ReadTrace(benchmark::State& state, const char* format) {
  std::string path = trace_file(1, 100000, format);
  std::string content;
  auto r = pai::util::read_file(path, size_t{1} << 32);
  for (auto _ : state) {
    pai::sim::Trace t;
    pai::sim::TraceError e;
    if (!pai::sim::read_trace({path}, {}, t, e)) state.SkipWithError(e.message.c_str());
    benchmark::DoNotOptimize(t.jobs.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(r->size()));
}
BENCHMARK_CAPTURE(BM_ReadTrace, philly_json, "json")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReadTrace, native_csv, "csv")->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::string cmd = "rm -f /tmp/paictl-bench-" + std::to_string(getpid()) + "-*";
  return std::system(cmd.c_str()) == 0 ? 0 : 0;
}
