#pragma once
// paictl simulate (run) and simulate generate: their options and validate steps
// (cmd_simulate.cc, cmd_simulate_generate.cc), shared with their unit tests.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"

namespace pai::config {
struct HivedModel;
}
namespace pai::sim {
struct TraceError;
}

namespace paictl {

struct SimulateOptions {
  std::string config;
  std::vector<std::string> traces;
  std::string format;
  std::string policies = "hived";
  std::string output = "table";
  std::string report;
  std::string report_jobs = "csv";  // csv | none
  std::string vc_map = "auto";
  std::string faults;
  std::string bin;
  int32_t priority = 100;
  int64_t limit = 0;
  int32_t backfill = 0;
  bool overflow = false;
  bool preempt_one_node = false;
  double suggested_fraction = 1;
  uint64_t suggested_seed = 1;
  std::string record;
  std::string tie_order = "hived";
  // simulate --from-live CLUSTER (cmd_simulate_forecast.cc)
  std::string from_live;
  std::string horizon = "24h";
  std::string arrivals;
  std::string replay_last;
  std::string running_duration;
};

// --from-live's flags, their usage errors, and the forecast itself.
void add_forecast_options(Flags& cmd, SimulateOptions& o);
void validate_forecast(const SimulateOptions& o, Usage& u);
// A forecast's --horizon ("24h", "90m", "2d", "3600") in seconds; a usage error
// (with a hint) for 0, a negative or malformed duration, or more than a year
// (sim::kMaxForecastHorizon). Shared with hived diff --forecast.
std::optional<double> validate_horizon(const std::string& text, Usage& u);
int run_forecast(const SimulateOptions& o, const Globals& g);

struct GenerateOptions {
  int64_t jobs = 1000;
  uint64_t seed = 1;
  double load = 0.7;
  double days = 0;
  bool load_given = false;  // --load was on the command line (it and --days both set the span)
  bool days_given = false;
  int32_t max_gpus = 128;
  double opportunistic = 0;
  int32_t priority = 100;
  std::string config;
  std::string format = "philly";
  std::string out = "-";
  std::string cluster_out;
  int32_t scale = 1;
  int32_t vcs = 15;
};

// Every usage error before the cluster or the trace is read: --config and --trace,
// each unknown policy (with the closest name), --priority, --bin, a --faults random
// spec, --tie-order.
void validate_simulate(const SimulateOptions& o, Usage& u);
// Every range error of generate's flags, and --cluster-out with --config.
void validate_generate(const GenerateOptions& o, Usage& u);

// A trace that cannot be read: FILE:LINE:COL: message, and its hint.
void print_trace_error(const pai::sim::TraceError& e);

// Loads a cluster the way `check config` does; prints its errors (its warnings
// too with -v) and returns nullptr if it has any.
std::shared_ptr<pai::config::HivedModel> load_simulation_cluster(const std::string& path,
                                                                 const Globals& g);

}  // namespace paictl
