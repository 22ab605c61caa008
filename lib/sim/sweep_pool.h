#pragma once
// A sweep's points run in worker processes, a few at a time, on this machine.
//
// Each point runs in its own process (a crash or a runaway point takes only
// itself down, and points run in parallel without sharing a heap); the worker
// prints the point's result as encode_result does, and the pool reads it from
// the worker's stdout. What the worker is comes from the caller, as a process
// request per point: libpai does not assume it is paictl.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/clock.h"
#include "util/process.h"

namespace pai::sim {

// A point to run: its index in the grid and its key (sweep.h).
struct SweepTask {
  size_t index = 0;
  std::string key;
};

struct SweepPoolOptions {
  int parallel = 1;  // workers at once (at least 1)
  // The worker of a task; it prints the task's result, delimited by encode_result.
  std::function<util::ProcessRequest(const SweepTask&)> worker;
  std::string worker_name = "the worker";   // "cannot start <name>"
  util::Clock clock = util::Clock::real();  // times each point
};

// A task's result: the point's result, or {"error": "why"}.
struct SweepTaskResult {
  SweepTask task;
  nlohmann::json result;
  double seconds = 0;  // the worker's run
  bool failed() const { return result.is_object() && result.contains("error"); }
};

// Runs every task, at most `parallel` workers at a time. `on_result` is called
// as each result arrives, one call at a time. The results, in task order: a
// worker that cannot start, or ends without the task's result, gives an error
// result saying so.
std::vector<SweepTaskResult> run_sweep_pool(
    const std::vector<SweepTask>& tasks, const SweepPoolOptions& options,
    util::ProcessRunner& runner, const std::function<void(const SweepTaskResult&)>& on_result = {});

}  // namespace pai::sim
