#pragma once
// The simulator started from a live HiveD state, with no arrivals: the running
// groups hold the cells they hold now (restored as HiveD restores them, bad
// nodes marked) until their expected ends, and the waiting groups are queued
// at the start. The simulator's own engine (engine.h) plays it forward; a
// waiting group's first start is when the live state lets it run. Kept
// minimal: it checks `hived why`'s wouldFit against the engine (a forecast
// with arrivals is a larger tool).

#include <map>
#include <string>
#include <vector>

#include "config/hived_model.h"
#include "hived/live.h"
#include "scheduler/policy.h"
#include "util/result.h"

namespace pai::sim {

struct FromLive {
  const config::HivedModel* model = nullptr;
  const hived::LiveState* live = nullptr;
  std::map<std::string, double> expected_end;  // group -> epoch seconds; others never end
  double now_s = 0;
  std::vector<scheduler::GroupRequest> waiting;  // queued at now_s, in this order
};

struct FromLiveResult {
  // Per waiting group: its first start (epoch seconds), or -1 when it never
  // starts (it waits for a group with no expected end, or can never run).
  std::vector<double> starts;
  double end_s = 0;  // the last event
};

// An error when the model cannot be simulated or a running group cannot be
// restored on it.
util::Result<FromLiveResult> run_from_live(const FromLive& in);

}  // namespace pai::sim
