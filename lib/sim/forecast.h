#pragma once
// A forecast from the live cluster (`paictl simulate --from-live`): the
// simulator starts from what runs now and plays the next hours.
//
// The start: the running groups placed where they run (restored on the config
// as HiveD restores them at a restart, scheduler::restore_hived_groups), each
// ending at its expected end (job::expected_ends; a group with none runs past
// the horizon); the waiting groups queued (longest waiting first within a
// priority), each running for its own expected run time; the nodes HiveD sees
// bad kept bad. Then the arrivals (a trace, or the cluster's own last days of
// submissions shifted forward) arrive at their times after now, under the
// current config and, when given, under a proposed one, with the same start.
// The answer per VC: waits, preemptions and GPU use over the horizon, side by
// side.
//
// forecast() is pure (no I/O, no clock): the caller reads the live inputs
// (forecast_input.h) and gives now.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/hived_model.h"
#include "scheduler/hived_state.h"
#include "scheduler/policy.h"
#include "sim/engine.h"
#include "sim/trace.h"
#include "util/result.h"

namespace pai::sim {

// The most a forecast looks ahead: a year (what a cluster runs past that is
// not a forecast of today's queue).
constexpr double kMaxForecastHorizon = 366 * 86400.0;

struct ForecastRunning {
  scheduler::LiveGroup group;
  std::optional<double> ends_in_s;  // seconds from now (<= 0: due now); none: not known
};

struct ForecastWaiting {
  std::string name;  // the affinity group (USER~JOB/GROUP)
  scheduler::GroupRequest request;
  double waited_s = 0;    // how long it has waited already
  double duration_s = 0;  // how long it will run once started
};

// The live state as a forecast starts from it.
struct ForecastState {
  std::vector<ForecastRunning> running;  // in the order HiveD lists them
  std::vector<ForecastWaiting> waiting;
  std::vector<std::string> bad_nodes;
  std::string source;  // "the live HiveD at ..."
};

struct ForecastRequest {
  std::shared_ptr<const config::HivedModel> current;   // the config HiveD runs
  std::shared_ptr<const config::HivedModel> proposed;  // nullptr: the current config only
  std::string current_name = "current", proposed_name = "proposed";
  ForecastState state;
  // Jobs that arrive, their submit times in seconds after now (the first may
  // be later than 0). nullptr: none. Every VC a job names must be in the
  // current config (check_arrival_vcs); the proposed one may lack some.
  std::shared_ptr<const Trace> arrivals;
  std::string arrivals_source;  // "TRACE", "the last 7d of lab's submissions"
  double horizon_s = 86400;
  // Jobs behind a VC's blocked queue head that are tried too (simulate
  // --backfill N): Kubernetes' scheduling queue lets a pending pod that fits
  // start while an earlier one waits, so the forecast does too.
  int32_t backfill = 16;
  // The horizon cut into this many equal steps for the series over time
  // (ConfigForecast::series); 0: none.
  int32_t steps = 96;
};

// One VC (or the whole cluster) under one config, over the horizon.
struct VcForecast {
  std::string vc;
  int64_t guaranteed_gpus = 0;  // leaf cells of its virtual cells
  int64_t running_now = 0, waiting_now = 0, arrivals = 0;
  int64_t started = 0;         // of the waiting and arriving jobs, started within the horizon
  int64_t waiting_at_end = 0;  // queued when the horizon ends
  int64_t finished = 0;        // jobs (running ones included) that ended within the horizon
  int64_t unschedulable = 0;   // can never run here (too large, unknown VC or leaf type)
  Summary wait_s;              // of the jobs started: start minus arrival (now for waiting ones)
  double waited_at_end_s = 0;  // the longest wait of a job still queued at the end
  int64_t preemptions = 0;
  double lost_gpu_hours = 0;
  double used_gpu_hours = 0;
  double utilization = 0;  // used / (guaranteed x horizon); above 1 with opportunistic use
};

// One VC under one config over the horizon, step by step (the averages over
// each step): what the report draws.
struct VcSeries {
  std::string vc;
  std::vector<double> used_gpus;     // GPUs its running jobs hold (opportunistic ones too)
  std::vector<double> waiting_jobs;  // its jobs queued
  std::vector<double> preempted_at;  // seconds from now at which a job of it was preempted
};

struct ConfigForecast {
  std::string name;             // "current", "proposed"
  std::vector<VcForecast> vcs;  // by the VC's name; VCs of either config
  VcForecast overall;
  int64_t gpus = 0;        // GPU leaf cells of the config
  double utilization = 0;  // used / (GPUs x horizon)
  // Per running group (ForecastState::running order): when it ends, in seconds
  // from now (-1: after the horizon), and how HiveD restored it on this config.
  std::vector<double> running_end_s;
  std::vector<scheduler::RestoreOutcome> restored;
  // Per waiting group: when it starts (-1: not within the horizon).
  std::vector<double> waiting_start_s;
  std::vector<std::string> notes;  // restored groups lazily preempted, unschedulable reasons
  // ForecastRequest::steps steps of step_s seconds; one series per VC, in the
  // order of `vcs` (a VC this config lacks: zeros).
  double step_s = 0;
  std::vector<VcSeries> series;
  PolicyRun run;  // the simulation itself
};

struct ForecastResult {
  double horizon_s = 0;
  std::string source, arrivals_source;
  int64_t running = 0, waiting = 0, arrivals = 0, arrivals_in_horizon = 0, bad_nodes = 0;
  std::vector<std::string> running_names, waiting_names;  // in the state's order
  std::vector<ConfigForecast> configs;                    // current, then proposed
  std::vector<std::string> warnings;                      // bad nodes the config lacks...
};

// The VCs the arrivals name that `model` does not have, in the trace's order.
std::vector<std::string> unknown_arrival_vcs(const Trace& arrivals,
                                             const config::HivedModel& model);

// Plays the forecast; an error for a horizon out of range, arrivals naming
// VCs the current config does not have (named), or a config HiveD cannot run.
util::Result<ForecastResult> forecast(const ForecastRequest& request);

// The trace a forecast plays (the running groups first, then the waiting
// ones, then the arrivals), and the initial state that seeds it: for tests
// and for simulate on the same start.
struct ForecastTrace {
  std::shared_ptr<Trace> trace;
  std::shared_ptr<InitialState> initial;
  size_t waiting_first = 0, arrivals_first = 0;  // job indices where each part starts
};
ForecastTrace forecast_trace(const ForecastState& state, const Trace* arrivals,
                             const config::HivedModel& model, double horizon_s);

// The per-VC tables side by side (text), and `-o json`'s document body.
std::string forecast_text(const ForecastResult& r);
nlohmann::ordered_json forecast_json(const ForecastResult& r);

// The report (simulate --from-live --report DIR): one self-contained HTML page
// (the per-VC table, then per VC its GPUs in use against its guarantee and its
// waiting jobs over the horizon, each config a line, preemptions marked; no
// scripts) and the same charts as one standalone SVG picture.
std::string forecast_html_report(const ForecastResult& r, const std::string& version);
std::string forecast_svg(const ForecastResult& r);

}  // namespace pai::sim
