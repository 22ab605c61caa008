#pragma once
// A job on a registered cluster as a command names it: USER~NAME, or NAME for
// one's own jobs; and the task attempts of such a job.

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "app.h"
#include "cluster/connection.h"
#include "job/history.h"

namespace paictl::jobcli {

// "user~name" or "name" (the cluster's user) -> {user, name}; prints and nullopt if malformed.
std::optional<std::pair<std::string, std::string>> parse_job_id(const std::string& id,
                                                                const Connection& c);

// One job on one cluster, as named on the command line.
struct JobTarget {
  Connection conn;
  std::string user;
  std::string name;
  std::string id;  // user~name
};
// Loads the registry, connects (--cluster or the current cluster) and parses the
// job's id; prints why not and returns nullopt (exit code 2).
std::optional<JobTarget> open_job(const std::string& job, const RemoteOptions& o, const Globals& g);

// The attempt answers (GET .../taskIndex/I/attempts) of the tasks that were
// retried, or of every task with `all`, keyed "ROLE/INDEX"; at most 50 requests.
// (Defined with job status, which shows them.)
pai::job::TaskAttempts fetch_task_attempts(const Connection& conn, const std::string& user,
                                           const std::string& name, const nlohmann::json& detail,
                                           bool all);

}  // namespace paictl::jobcli
