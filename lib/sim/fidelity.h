#pragma once
// Fidelity against HiveD's own code (docs/fidelity.md): the request stream a
// policy receives, recorded as JSON lines, and the replay of a recorded stream
// (each request with HiveD's decision) through a policy, decision by decision.

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "scheduler/policy.h"
#include "util/result.h"

namespace pai::config {
struct HivedModel;
}

namespace pai::sim {

// The first line of a stream: the HiveD config (hivedscheduler.yaml text).
std::string fidelity_config_line(std::string_view hived_yaml);

// A policy that forwards every call to `inner` and writes it to `out` as one
// line of the stream: schedule, release and node (set_node_health). Calls of
// schedule_pod are forwarded but not written (the stream has no such request).
std::unique_ptr<scheduler::Policy> make_recording_policy(std::unique_ptr<scheduler::Policy> inner,
                                                         std::ostream& out);

struct FidelityReplay {
  int64_t lines = 0;              // requests replayed (the config line excluded)
  int64_t decisions = 0;          // schedule requests
  int64_t matched = 0;            // requests whose decision is identical to HiveD's
  int64_t first_divergence = -1;  // line number (1-based) of the first difference, -1: none
  std::string divergence;         // what differs there
  int64_t hived_preemptions = 0;  // decisions "preempting" (a new preemption) by HiveD
  int64_t policy_preemptions = 0;
  int64_t hived_victims = 0;  // victim groups over all preempting decisions
  int64_t policy_victims = 0;
  int64_t hived_crashes = 0;  // HiveD panicked (its own bugs); such decisions are not compared
};

using PolicyFactory =
    std::function<util::Result<std::unique_ptr<scheduler::Policy>>(const config::HivedModel&)>;

// Replays a recorded stream (JSON lines: the config, then requests with HiveD's
// decision under "hived") through policies made by `make` (default: "hived"),
// comparing every decision. An error on malformed input.
util::Result<void> replay_fidelity(std::string_view text, FidelityReplay& out,
                                   const PolicyFactory& make = {});

}  // namespace pai::sim
