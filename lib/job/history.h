#pragma once
// A job's history as REST v2 tells it: the job status (attempt, retries,
// retryDetails, task statuses), the job attempts (GET .../job-attempts) and the
// attempts of each task (GET .../taskIndex/I/attempts), turned into
//   - events in time order (`paictl job events`), and
//   - per-task attempt histories with failure counts per exit type and the
//     queueing and running time of each attempt (`paictl job status --attempts`).
// Pure functions over the decoded answers: no I/O, no clock (the caller gives "now").

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/client.h"

namespace pai::job {

using api::Json;

struct JobEvent {
  double time_ms = 0;  // epoch milliseconds
  // "job", "attempt" (a job attempt) or "task" (one attempt of one task)
  std::string scope;
  int job_attempt = -1;
  std::string task_role;
  int task_index = -1;
  int task_attempt = -1;
  // Submitted, Started, Queued, Launched, Completed, Retried
  std::string event;
  std::string state;  // the state reached (Completed), else ""
  std::optional<long> exit_code;
  std::string exit_type;    // appExitSpec.type: USER_FAILURE, PLATFORM_FAILURE, ...
  std::string exit_phrase;  // appExitSpec.phrase: ContainerNonZeroExitCode, ...
  std::string node;
};

// Task attempt answers keyed "TASKROLE/INDEX".
using TaskAttempts = std::map<std::string, Json>;

// Every event the answers give, oldest first; events without a time are left out.
// `job_attempts` may be null (servers without the job-attempts route): the
// job status then gives the current attempt only.
std::vector<JobEvent> job_events(const Json& detail, const Json& job_attempts,
                                 const TaskAttempts& tasks);

struct TaskAttempt {
  int attempt = 0;
  std::string state;
  double created_ms = -1, launched_ms = -1, completed_ms = -1;  // -1: not yet
  double queued_ms = -1;   // launched - created (or now - created while waiting)
  double running_ms = -1;  // completed - launched (or now - launched while running)
  std::optional<long> exit_code;
  std::string exit_type, exit_phrase, node;
};

struct TaskHistory {
  std::string task_role;
  int index = 0;
  std::vector<TaskAttempt> attempts;            // oldest first
  std::map<std::string, int> failures_by_type;  // exit type -> failed attempts
  int failures = 0;
};

// The histories of the tasks in `tasks`, ordered by task role and index.
std::vector<TaskHistory> task_histories(const TaskAttempts& tasks, double now_ms);

// "TASKROLE/INDEX" -> {role, index}
std::pair<std::string, int> split_task_key(const std::string& key);

}  // namespace pai::job
