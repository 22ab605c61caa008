#pragma once
// What a simulation reports: the JSON summary (`-o json` and metrics.json),
// a per-job CSV, and a self-contained HTML page with inline SVG charts
// (queueing-delay CDF per policy and VC, GPU utilisation, queue length and
// idle-while-waiting GPUs over time). No scripts, no external resources.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine.h"
#include "sim/trace.h"

namespace pai::sim {

struct ReportContext {
  const Trace& trace;
  const Simulator& sim;
  const std::vector<PolicyRun>& runs;
  std::string config_path;
  std::string version;
};

// {"trace":{...},"cluster":{...},"policies":[{"policy":"hived","jobs":N,...}]}
nlohmann::json summary_json(const ReportContext& c);
// summary_json plus the time series of every policy.
nlohmann::json metrics_json(const ReportContext& c);
// One row per job and policy.
std::string jobs_csv(const ReportContext& c);
// The page opens with headline(c), highlights the best value of each summary
// row, and writes numbers with thousands separators.
std::string html_report(const ReportContext& c);
// One sentence with the finding: the first policy's mean queueing delay (of
// guaranteed jobs, when the trace has opportunistic ones) against the best of
// the others, e.g. "HiveD cut the mean queueing delay of guaranteed jobs by
// 73 % against quota sharing (2.1h to 34.0m)."; "" without runs.
std::string headline(const ReportContext& c);
// 1234567 -> "1,234,567"; with decimals, 1234.5 -> "1,234.5".
std::string with_thousands(double v, int decimals = 0);

// A sweep's report over its document (`simulate sweep -o json`): every point in
// a table, and each metric against the first axis that varies.
std::string sweep_html_report(const nlohmann::json& sweep);

// Human durations for tables: 0s, 45s, 12m, 3.4h, 2.1d.
std::string human_duration(double seconds);

}  // namespace pai::sim
