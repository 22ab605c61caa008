#pragma once
// A sweep's points as one OpenPAI job (protocol v2), one task per shard (the
// front end's `simulate sweep --cluster NAME`). Each task runs paictl's sweep
// on its shard of the points and prints its results delimited
// (sim::encode_result); they are gathered from the tasks' logs. The job is
// recorded in OUT/cluster-jobs.json before it is submitted, so a re-run after
// an interruption waits for the same job and gathers its results instead of
// submitting the points again.
//
//   auto outcome = run_sweep_job(request, deps, accept, on_event);
//
// The cluster is what the front end connected to (its registry, credentials
// and HTTP settings); progress leaves through events, nothing is printed.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/client.h"
#include "diag/diagnostic.h"
#include "util/clock.h"
#include "util/result.h"

namespace pai::sim {

// The task role of a sweep's job.
inline constexpr const char* kSweepJobRole = "shard";

// What the job's tasks are.
struct SweepJobSettings {
  std::string vc;    // the job's virtual cluster; "": default
  std::string spec;  // absolute: the tasks read it at the same path
  int shards = 0;    // 0: one per point, at most 8
  std::string image = "openpai/paictl";
  std::string paictl = "paictl";  // the command in the task's container
  int cpu = 1;
  int memory_mb = 4096;
};

struct SweepJobPoint {
  size_t index = 0;  // in the sweep's grid
  std::string key;
};

// The job for a set of points, as it is submitted.
struct SweepJobDocument {
  std::string name;  // paictl-sweep-<hash of the points, the spec and earlier_jobs>
  std::string yaml;
  int shards = 0;
  std::vector<std::string> keys;  // the points', in grid order
};

// The job for `points` (any order; they run in grid order). `earlier_jobs`,
// the number of jobs recorded before, is part of the name, so points an ended
// job gave no result for go into a new job. Changes nothing.
SweepJobDocument sweep_job_document(const SweepJobSettings& settings,
                                    const std::vector<SweepJobPoint>& points, size_t earlier_jobs);

// OUT/cluster-jobs.json: an array of {"cluster", "user", "job", "shards", "keys"}.
std::string sweep_job_records_path(const std::string& out);
// The records; none when the file does not exist. An error when it cannot be
// read or is not a JSON array.
util::Result<nlohmann::json> read_sweep_job_records(const std::string& out);
// Writes the records atomically.
util::Result<void> write_sweep_job_records(const std::string& out, const nlohmann::json& records);

struct SweepJobRequest {
  std::string cluster;  // the cluster's registry name, kept in the records
  std::string out;      // the sweep's output directory (the records)
  SweepJobSettings settings;
  std::vector<SweepJobPoint> points;  // the points without a result
  double poll_s = 10;                 // between two looks at the job's state
};

struct SweepJobDeps {
  api::Client& api;
  std::string user;   // who submits
  util::Clock clock;  // the waits; empty: the real clock
};

struct SweepJobEvent {
  enum class Kind {
    Resuming,   // `job_id`, recorded by an earlier run, holds `points` of the missing points
    State,      // `job_id` is now in `state`
    Submitted,  // `job_id` was submitted: `points` in `shards` tasks on `vc`
    Exists,     // `job_id` was there already (an earlier run submitted it): it is gathered
    LogFailed,  // `doing` (finding or reading a task's log) failed with `api`; the others go on
    Gathered,   // `job_id` ended: `got` results of the `points` wanted came from the logs
  };
  Kind kind = Kind::State;
  std::string job_id;
  std::string state;
  std::string vc;
  size_t points = 0;
  size_t got = 0;
  int shards = 0;
  std::string doing;
  std::optional<api::Error> api;
};

struct SweepJobError {
  enum class Kind {
    Remote,    // `doing` (reading or submitting the job) failed with `api`
    NotSweep,  // the job `job_id` has no shard task role (`message`)
    Checks,    // the job does not pass the job checks (`findings`, `message`)
    TooLarge,  // the job is more than OpenPAI takes (`message`)
    Record,    // the records could not be written (`message`)
  };
  Kind kind = Kind::Remote;
  std::string message;
  std::string doing;
  std::string job_id;
  std::optional<api::Error> api;
  diag::List findings;
};

struct SweepJobOutcome {
  std::string job_id;                    // the last job gathered or submitted; "": none
  std::optional<SweepJobError> failure;  // the run stopped there
};

// A result for the point at `index` in the grid (an "error" member: the point failed).
using SweepJobAccept = std::function<void(size_t index, const nlohmann::json& result)>;

// Gathers the recorded jobs of this cluster and user that hold missing points
// (waiting for them to end), then records, submits and gathers one job for the
// points still missing. Every result goes to `accept`.
SweepJobOutcome run_sweep_job(const SweepJobRequest& request, const SweepJobDeps& deps,
                              const SweepJobAccept& accept,
                              const std::function<void(const SweepJobEvent&)>& on_event = {});

}  // namespace pai::sim
