// The client-side cost of `paictl check hosts` per host, without the network:
// parsing one host's fact-script output, running the checks, writing the facts JSON.
// The end-to-end comparison with OpenSSH and Ansible is scripts/bench-check-hosts.sh.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "check/report.h"
#include "check/runner.h"
#include "facts/fact_script.h"
#include "facts/host_facts.h"
#include "util/fs.h"

namespace {

const std::string& captured() {
  static const std::string s =
      pai::util::read_file(std::string(PAI_SOURCE_DIR) + "/tests/unit/check/data/gpu-ok.out")
          .value();
  return s;
}

pai::check::HostOutcome host(int i) {
  pai::check::HostOutcome h;
  h.plan.name = "gpu-" + std::to_string(i);
  h.plan.address = "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 2);
  h.plan.hostip = h.plan.address;
  h.plan.from_layout = true;
  pai::config::MachineSku sku;
  sku.name = "gpu-machine";
  sku.mem_bytes = 60.0 * (1ull << 30);
  sku.vcore = 1;
  sku.device = pai::config::ComputingDevice{"nvidia.com/gpu", "V100", 4, {}};
  h.plan.sku = sku;
  h.reached = true;
  pai::facts::parse_fact_output(captured(), 0, h.facts);
  h.facts.hostname = h.plan.name;
  h.facts.machine_id = "m" + std::to_string(i);
  return h;
}

void BM_ParseFactOutput(benchmark::State& state) {
  for (auto _ : state) {
    pai::facts::HostFacts f;
    pai::facts::parse_fact_output(captured(), 1.7e9, f);
    benchmark::DoNotOptimize(f);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * captured().size()));
}
BENCHMARK(BM_ParseFactOutput);

void BM_EvaluateHosts(benchmark::State& state) {
  std::vector<pai::check::HostOutcome> hosts;
  for (int i = 0; i < state.range(0); ++i) hosts.push_back(host(i));
  for (auto _ : state) benchmark::DoNotOptimize(pai::check::evaluate(hosts, {}));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_EvaluateHosts)->Arg(50)->Arg(100)->Arg(1000);

void BM_FactsJson(benchmark::State& state) {
  pai::check::HostOutcome h = host(0);
  for (auto _ : state) benchmark::DoNotOptimize(pai::check::dump(pai::facts::to_json(h.facts)));
}
BENCHMARK(BM_FactsJson);

}  // namespace

BENCHMARK_MAIN();
