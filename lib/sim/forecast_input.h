#pragma once
// The live inputs of a forecast (lib/sim/forecast.h): HiveD's inspect API (the
// running groups, the bad nodes) and the REST API v2 job list (when the
// running jobs are expected to end, the jobs waiting now with their requests,
// and the last days' submissions to replay). forecast_state and replay_trace
// are pure; read_forecast_input does the reading.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/hived_model.h"
#include "hived/live.h"
#include "sim/forecast.h"
#include "sim/trace.h"
#include "util/result.h"

namespace pai::api {
class Client;
}

namespace pai::sim {

// The state a forecast starts from: HiveD's running groups (bind info, as
// hived::live_groups gives it), each ending at its expected end (epoch seconds,
// by group name or by its job USER~JOB), the bad nodes, and the waiting groups.
ForecastState forecast_state(const hived::LiveState& live, const config::HivedModel* model,
                             const std::map<std::string, double>& expected_ends,
                             std::vector<ForecastWaiting> waiting, double now_s);

// What the REST API's job list tells a forecast.
struct JobListFacts {
  std::map<std::string, double> expected_ends;  // running job -> epoch seconds
  std::map<std::string, double> user_median_s;  // user -> median run time of finished jobs
  std::vector<std::string> waiting_jobs;        // USER~JOB, the longest waiting first
  std::map<std::string, double> submitted_s;    // job -> submission (epoch seconds)
};
// `jobs`: GET /api/v2/jobs's items; `duration_s`: how long a job runs (none:
// each user's median of its finished jobs).
JobListFacts job_list_facts(const nlohmann::json& jobs, std::optional<double> duration_s,
                            double now_s);

// The jobs submitted in the last `window_s` before now, shifted forward by
// `window_s` (they arrive again at the same spacing from now on): VC, GPUs
// spread over the tasks, run time (launch to completion; a job not finished
// runs its user's median, else is left out and counted), priority `priority`
// (the list does not give HiveD's). Submit times are seconds after now.
Trace replay_trace(const nlohmann::json& jobs, double window_s, double now_s, int32_t priority);

struct ForecastLiveInput {
  hived::LiveState live;
  std::shared_ptr<config::HivedModel> model;  // the config HiveD runs, from its status
  ForecastState state;
  nlohmann::json jobs = nlohmann::json::array();  // the job list read (empty without REST)
  std::vector<std::string> warnings;              // jobs whose request could not be made...
};

// Reads HiveD's live state and, with `rest`, the job list and each waiting
// job's config. An error when HiveD cannot be read or its status gives no
// config (the caller then names one).
util::Result<ForecastLiveInput> read_forecast_input(hived::Client& hived, api::Client* rest,
                                                    double now_s, std::optional<double> duration_s,
                                                    double default_duration_s);

}  // namespace pai::sim
