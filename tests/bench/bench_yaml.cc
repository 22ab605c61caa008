// The YAML reader against yaml-cpp and libfyaml on a 10,000-machine layout.yaml.
//   cmake -DPAI_BUILD_BENCHMARKS=ON ... && ./tests/bench/bench_yaml
#include <benchmark/benchmark.h>
#include <libfyaml.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "yaml/yaml.h"

namespace {

std::string make_layout(int machines) {
  std::string s =
      "machine-sku:\n  gpu-machine:\n    computing-device:\n      type: nvidia.com/gpu\n"
      "      model: V100\n      count: 8\n    mem: 512Gi\n    cpu:\n      vcore: "
      "80\nmachine-list:\n";
  for (int i = 0; i < machines; ++i) {
    s += "  - hostname: worker-" + std::to_string(i) + "\n    hostip: 10." +
         std::to_string(i / 65536) + "." + std::to_string(i / 256 % 256) + "." +
         std::to_string(i % 256) + "\n    machine-type: gpu-machine\n    pai-worker: \"true\"\n";
  }
  return s;
}

const std::string& layout() {
  static const std::string s = make_layout(10000);
  return s;
}

void BM_PaiYaml(benchmark::State& state) {
  for (auto _ : state) {
    pai::yaml::Stream s = pai::yaml::load(layout());
    benchmark::DoNotOptimize(s.documents.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * layout().size()));
}
BENCHMARK(BM_PaiYaml)->Unit(benchmark::kMillisecond);

void BM_YamlCpp(benchmark::State& state) {
  for (auto _ : state) {
    YAML::Node n = YAML::Load(layout());
    benchmark::DoNotOptimize(n.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * layout().size()));
}
BENCHMARK(BM_YamlCpp)->Unit(benchmark::kMillisecond);

// libfyaml (the conformance oracle of tests/conformance) building its document tree.
void BM_Libfyaml(benchmark::State& state) {
  for (auto _ : state) {
    struct fy_parse_cfg cfg = {};
    cfg.flags = FYPCF_QUIET;
    struct fy_document* d = fy_document_build_from_string(&cfg, layout().data(), layout().size());
    benchmark::DoNotOptimize(d);
    fy_document_destroy(d);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * layout().size()));
}
BENCHMARK(BM_Libfyaml)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
