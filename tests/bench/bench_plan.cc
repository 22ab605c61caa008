// paictl plan speed: planning 2,000 hosts from a facts directory (budget: 1 s on
// the 2-core reference machine), and the parsers and hierarchy on their own.
//
//   cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPAI_BUILD_BENCHMARKS=ON
//   ninja -C build-bench bench_plan && ./build-bench/tests/bench/bench_plan
//
// The facts directory is made once per run in $TMPDIR from layouts/ (like
// scripts/gen-facts.sh): 1,600 DGX A100 in 40 racks, 399 T4 servers, a master.

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "planner/hierarchy.h"
#include "planner/plan_output.h"
#include "planner/plan_run.h"
#include "planner/profiles.h"
#include "util/fs.h"

namespace fs = std::filesystem;
using namespace pai::planner;
using namespace pai::facts;

namespace {

const std::string kLayouts = std::string(PAI_SOURCE_DIR) + "/layouts";

std::string read(const std::string& p) {
  return pai::util::read_file(p).value();
}

struct FactsDir {
  std::string path;
  FactsDir() {
    path =
        (fs::temp_directory_path() / ("paictl-bench-plan-" + std::to_string(::getpid()))).string();
    auto make = [&](const std::string& profile, const std::string& prefix, int count, int racks,
                    int subnet) {
      const std::string src = kLayouts + "/" + profile + "/";
      for (int i = 0; i < count; ++i) {
        char name[64];
        std::snprintf(name, sizeof name, "%s-%04d", prefix.c_str(), i + 1);
        std::string d = path + "/" + name;
        fs::create_directories(d);
        for (const char* f : {"topo.txt", "gpus.csv", "lscpu.txt", "meminfo"})
          fs::copy_file(src + f, d + "/" + f);
        std::ofstream h(d + "/host.yaml");
        h << "hostip: 10." << subnet << "." << i / 254 << "." << i % 254 + 1 << "\n";
        if (racks) h << "rack: rack" << (i * racks / count + 1) << "\n";
      }
    };
    make("dgx-a100", "dgx", 1600, 40, 100);
    make("t4-2socket", "t4", 399, 0, 101);
    fs::create_directories(path + "/master");
    std::ofstream(path + "/master/host.yaml") << "hostip: 10.0.0.1\nroles: [master]\n";
    fs::copy_file(kLayouts + "/t4-2socket/lscpu.txt", path + "/master/lscpu.txt");
    fs::copy_file(kLayouts + "/t4-2socket/meminfo", path + "/master/meminfo");
  }
  ~FactsDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const FactsDir& facts() {
  static FactsDir d;
  return d;
}

PlanInputs inputs() {
  PlanInputs in;
  in.facts_dirs = {facts().path};
  in.layouts_dir = kLayouts;
  in.options.vcs = {"a=50%", "b=30%", "c=t4:40nodes"};
  return in;
}

void BM_PlanFacts2000(benchmark::State& state) {
  const PlanInputs in = inputs();
  size_t bytes = 0;
  for (auto _ : state) {
    PlanRun r = plan_from_inputs(in);
    if (!r.ok() || r.plan.hosts.size() != 2000) state.SkipWithError("plan failed");
    PlanFiles f = render_files(r.plan, "");
    bytes = f.layout.size() + f.hived.size() + f.services.size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["hosts"] = 2000;
  state.counters["output_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_PlanFacts2000)->Unit(benchmark::kMillisecond)->UseRealTime();

// What `paictl plan --out` does on top: the files checked as `paictl check config` checks them.
void BM_PlanFacts2000WithCheck(benchmark::State& state) {
  const PlanInputs in = inputs();
  for (auto _ : state) {
    PlanRun r = plan_from_inputs(in);
    PlanFiles f = render_files(r.plan, "");
    pai::diag::List check = check_plan_files(r.plan);
    if (check.has_errors()) state.SkipWithError("check failed");
    benchmark::DoNotOptimize(f);
  }
}
BENCHMARK(BM_PlanFacts2000WithCheck)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReadFacts2000(benchmark::State& state) {
  for (auto _ : state) {
    FactsSet s = load_facts_dir(facts().path);
    benchmark::DoNotOptimize(s.hosts.size());
  }
}
BENCHMARK(BM_ReadFacts2000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ParseTopoDgx2(benchmark::State& state) {
  const std::string text = read(kLayouts + "/dgx2/topo.txt");
  for (auto _ : state) {
    auto r = parse_topo_matrix(text, "topo.txt");
    benchmark::DoNotOptimize(r.value.devices.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseTopoDgx2)->Unit(benchmark::kMicrosecond);

void BM_DeriveHierarchyDgx2(benchmark::State& state) {
  pai::diag::List d;
  auto p = load_profile(kLayouts, "dgx2", d);
  for (auto _ : state) {
    Hierarchy h = derive_hierarchy(p->facts);
    benchmark::DoNotOptimize(h.levels.size());
  }
}
BENCHMARK(BM_DeriveHierarchyDgx2)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
