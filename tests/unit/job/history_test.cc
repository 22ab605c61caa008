#include "job/history.h"

#include <gtest/gtest.h>

namespace pai::job {
namespace {

Json parse(const char* text) {
  return Json::parse(text);
}

// What `paictl job events` prints, one "TIME SCOPE EVENT [STATE] [exit]" string an event.
std::vector<std::string> lines(const std::vector<JobEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    std::string l = std::to_string(static_cast<long>(e.time_ms)) + " " + e.scope;
    if (e.scope == "attempt") l += "#" + std::to_string(e.job_attempt);
    if (e.scope == "task")
      l += " " + e.task_role + "/" + std::to_string(e.task_index) + "#" +
           std::to_string(e.task_attempt);
    l += " " + e.event;
    if (!e.state.empty()) l += " " + e.state;
    if (e.exit_code) l += " exit " + std::to_string(*e.exit_code);
    if (!e.exit_type.empty()) l += " " + e.exit_type;
    out.push_back(l);
  }
  return out;
}

TEST(JobHistory, TwoJobAttemptsAndTheirTasksInTimeOrder) {
  Json detail = parse(R"({"jobStatus": {"submissionTime": 1000, "attemptId": 1,
                                        "state": "RUNNING", "launchedTime": 5000}})");
  Json attempts = parse(R"([
    {"attemptIndex": 0, "attemptStartedTime": 2000, "attemptCompletedTime": 4000,
     "state": "FAILED", "exitCode": 1,
     "appExitSpec": {"type": "USER_FAILURE", "phrase": "ContainerNonZeroExitCode"}},
    {"attemptIndex": 1, "attemptStartedTime": 5000, "attemptCompletedTime": 6000,
     "state": "RUNNING"}
  ])");
  TaskAttempts tasks;
  tasks["worker/0"] = parse(R"({"attempts": [
    {"attemptId": 0, "attemptState": "RUNNING", "containerNodeName": "n1",
     "currentAttemptCreatedTime": 5100, "currentAttemptLaunchedTime": 5300}]})");
  auto got = lines(job_events(detail, attempts, tasks));
  std::vector<std::string> want = {
      "1000 job Submitted",
      "2000 attempt#0 Started",
      "4000 attempt#0 Completed FAILED exit 1 USER_FAILURE",
      "4000 attempt#0 Retried exit 1 USER_FAILURE",
      "5000 attempt#1 Started",
      "5100 task worker/0#0 Queued",
      "5300 task worker/0#0 Launched",
  };
  // The running attempt's completion time (6000, a server's "now") is no event.
  EXPECT_EQ(got, want);
  auto events = job_events(detail, attempts, tasks);
  EXPECT_EQ(events[2].exit_phrase, "ContainerNonZeroExitCode");
  EXPECT_EQ(events.back().node, "n1");
  EXPECT_EQ(events.back().job_attempt, 1);
}

TEST(JobHistory, WithoutTheJobAttemptsRouteTheStatusGivesTheCurrentAttempt) {
  Json detail = parse(R"({"jobStatus": {"submissionTime": 1000, "attemptId": 2,
      "state": "FAILED", "launchedTime": 3000, "completedTime": 9000,
      "appExitCode": 137, "appExitType": "PLATFORM_FAILURE"}})");
  auto got = lines(job_events(detail, Json(), {}));
  std::vector<std::string> want = {"1000 job Submitted", "3000 attempt#2 Started",
                                   "9000 attempt#2 Completed FAILED exit 137 PLATFORM_FAILURE"};
  EXPECT_EQ(got, want);
}

TEST(JobHistory, EventsWithoutATimeAreLeftOutAndTiesKeepCausalOrder) {
  // A waiting job: no launch time, a task created but not launched, and every
  // event at the same millisecond ordered job, attempt, task.
  Json detail = parse(R"({"jobStatus": {"submissionTime": 7000, "state": "WAITING",
                                        "launchedTime": null}})");
  Json attempts = parse(R"([{"attemptIndex": 0, "attemptStartedTime": 7000, "state": "WAITING"}])");
  TaskAttempts tasks;
  tasks["ps/0"] = parse(R"({"attempts": [{"attemptId": 0, "attemptState": "WAITING",
                                          "currentAttemptCreatedTime": 7000,
                                          "currentAttemptLaunchedTime": "soon"}]})");
  tasks["broken/1"] = parse(R"({"attempts": "not a list"})");
  auto got = lines(job_events(detail, attempts, tasks));
  std::vector<std::string> want = {"7000 job Submitted", "7000 attempt#0 Started",
                                   "7000 task ps/0#0 Queued"};
  EXPECT_EQ(got, want);
  EXPECT_TRUE(job_events(Json(), Json(), {}).empty());
}

TEST(JobHistory, TaskHistoriesCountFailuresByExitType) {
  TaskAttempts tasks;
  // Out of order on purpose: histories are sorted by attempt.
  tasks["worker/1"] = parse(R"({"attempts": [
    {"attemptId": 2, "attemptState": "RUNNING", "currentAttemptCreatedTime": 10000,
     "currentAttemptLaunchedTime": 12000},
    {"attemptId": 0, "attemptState": "FAILED", "currentAttemptCreatedTime": 1000,
     "currentAttemptLaunchedTime": 1500, "currentAttemptCompletedTime": 4000,
     "containerExitCode": 1, "containerExitSpec": {"type": "USER_FAILURE"}},
    {"attemptId": 1, "attemptState": "Completed", "currentAttemptCreatedTime": 5000,
     "currentAttemptLaunchedTime": 5200, "currentAttemptCompletedTime": 6000,
     "containerExitCode": 255}
  ]})");
  tasks["worker/0"] = parse(R"({"attempts": [
    {"attemptId": 0, "attemptState": "WAITING", "currentAttemptCreatedTime": 15000}]})");
  tasks["chief/0"] = parse(R"({"attempts": [
    {"attemptId": 0, "attemptState": "SUCCEEDED", "currentAttemptCreatedTime": 1000,
     "currentAttemptLaunchedTime": 1000, "currentAttemptCompletedTime": 8000,
     "containerExitCode": 0}]})");
  auto h = task_histories(tasks, 20000);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].task_role, "chief");
  EXPECT_EQ(h[1].task_role + "/" + std::to_string(h[1].index), "worker/0");
  EXPECT_EQ(h[2].task_role + "/" + std::to_string(h[2].index), "worker/1");

  EXPECT_EQ(h[0].failures, 0);  // exit 0
  EXPECT_EQ(h[0].attempts[0].queued_ms, 0);
  EXPECT_EQ(h[0].attempts[0].running_ms, 7000);

  // Waiting: queued until now, not running.
  EXPECT_EQ(h[1].attempts[0].queued_ms, 5000);
  EXPECT_EQ(h[1].attempts[0].running_ms, -1);

  const auto& w = h[2];
  ASSERT_EQ(w.attempts.size(), 3u);
  EXPECT_EQ(w.attempts[0].attempt, 0);
  EXPECT_EQ(w.attempts[2].attempt, 2);
  EXPECT_EQ(w.attempts[0].queued_ms, 500);
  EXPECT_EQ(w.attempts[0].running_ms, 2500);
  EXPECT_EQ(w.attempts[2].running_ms, 8000);  // still running at 20000
  // A FAILED attempt, and a completed one with a non-zero exit code and no type.
  EXPECT_EQ(w.failures, 2);
  EXPECT_EQ(w.failures_by_type.at("USER_FAILURE"), 1);
  EXPECT_EQ(w.failures_by_type.at("UNKNOWN"), 1);
  ASSERT_TRUE(w.attempts[1].exit_code);
  EXPECT_EQ(*w.attempts[1].exit_code, 255);
}

TEST(JobHistory, TaskKeys) {
  EXPECT_EQ(split_task_key("worker/12"), (std::pair<std::string, int>{"worker", 12}));
  EXPECT_EQ(split_task_key("a/b/3"), (std::pair<std::string, int>{"a/b", 3}));
  EXPECT_EQ(split_task_key("alone"), (std::pair<std::string, int>{"alone", 0}));
}

}  // namespace
}  // namespace pai::job
