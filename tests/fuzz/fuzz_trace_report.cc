// Fuzz a trace through to what `simulate -o json|yaml` and `--report` write:
// the reader (first byte: P philly, H helios, C native CSV, A alibaba with the
// tables split at byte 0x01), a simulation of at most 64 jobs on a small
// two-SKU cluster with two policies, then the JSON summary, metrics.json, the
// YAML output, jobs.csv and report.html. Names in a trace are arbitrary bytes
// (invalid UTF-8, control characters): no writer may throw or crash, the JSON
// must parse back, and the HTML must stay free of raw markup from the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "config/context.h"
#include "config/hived.h"
#include "config/hived_model.h"
#include "diag/report.h"
#include "sim/engine.h"
#include "sim/report.h"
#include "sim/trace.h"
#include "util/yaml_emit.h"
#include "yaml/yaml.h"

namespace {

const char* kCluster = R"(
physicalCluster:
  skuTypes:
    V100: {gpu: 1, cpu: 8, memory: 60Gi}
    K80: {gpu: 1, cpu: 4, memory: 30Gi}
  cellTypes:
    V100-NODE: {childCellType: V100, childCellNumber: 4, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 2}
    K80-NODE: {childCellType: K80, childCellNumber: 4, isNodeLevel: true}
  physicalCells:
  - cellType: V100-RACK
    cellChildren: [{cellAddress: v1}, {cellAddress: v2}]
  - cellType: K80-NODE
    cellAddress: k1
virtualClusters:
  a:
    virtualCells:
    - {cellType: V100-RACK.V100-NODE, cellNumber: 1}
  b:
    virtualCells:
    - {cellType: V100-RACK.V100-NODE, cellNumber: 1}
    - {cellType: K80-NODE, cellNumber: 1}
)";

const pai::config::HivedModel& model() {
  static const pai::config::HivedModel m = [] {
    pai::yaml::Stream s = pai::yaml::load(kCluster);
    pai::diag::List dl;
    pai::config::Context ctx("fuzz-hived.yaml", dl);
    const pai::yaml::Node* root = pai::config::single_document(s, ctx, "hivedscheduler.yaml");
    if (!root) std::abort();
    pai::config::HivedConfig cfg = pai::config::load_hived_config(root, ctx);
    pai::config::HivedModel built = pai::config::build_hived_model(cfg, ctx);
    if (dl.has_errors()) std::abort();
    return built;
  }();
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char kind = static_cast<char>(data[0]);
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  pai::sim::TraceOptions opt;
  opt.limit = 64;  // bound the simulation, not the reader
  pai::sim::Trace t;
  pai::sim::TraceError e;
  bool ok = false;
  switch (kind) {
    case 'P':
      ok = pai::sim::read_philly(text, "fuzz", opt, t, e);
      break;
    case 'H':
      ok = pai::sim::read_helios(text, "fuzz", opt, t, e);
      break;
    case 'A': {
      size_t cut = text.find('\x01');
      std::string_view jobs = cut == std::string_view::npos ? text : text.substr(0, cut);
      std::string_view tasks =
          cut == std::string_view::npos ? std::string_view() : text.substr(cut + 1);
      ok = pai::sim::read_alibaba(jobs, tasks, opt, t, e);
      break;
    }
    default:
      ok = pai::sim::read_native_csv(text, "fuzz", opt, t, e);
  }
  if (!ok || t.jobs.empty()) return 0;
  pai::sim::Simulator sim(model(), t, pai::sim::SimOptions{});
  if (!sim.prepare().ok()) return 0;
  std::vector<pai::sim::PolicyRun> runs(2);
  if (!sim.run("hived", runs[0]).ok() || !sim.run("quota", runs[1]).ok()) return 0;
  pai::sim::ReportContext ctx{t, sim, runs, "fuzz-cluster/", "fuzz"};
  std::string summary = pai::diag::dump_json(pai::sim::summary_json(ctx), 2);
  std::string metrics = pai::diag::dump_json(pai::sim::metrics_json(ctx), 1);
  // What was written must read back as JSON.
  if (nlohmann::json::parse(summary, nullptr, false).is_discarded()) std::abort();
  if (nlohmann::json::parse(metrics, nullptr, false).is_discarded()) std::abort();
  (void)pai::util::to_yaml(pai::sim::summary_json(ctx));
  std::string csv = pai::sim::jobs_csv(ctx);
  if (csv.empty()) std::abort();
  std::string html = pai::sim::html_report(ctx);
  if (html.find("<script") != std::string::npos) std::abort();
  return 0;
}
