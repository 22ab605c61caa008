// A sweep's process pool on the scripted process runner: every task gets its
// own worker with the argv the caller gave, results come back in task order
// whatever order the workers end in, a worker that cannot start or ends
// without a result is a failed point, and no more workers run at once than
// asked.

#include "sim/sweep_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "sim/sweep.h"
#include "support/scripted_process.h"

namespace pai::sim {
namespace {

using util::ProcessRequest;
using util::ScriptedAnswer;
using util::ScriptedProcessRunner;

std::vector<SweepTask> pool_tasks(size_t n) {
  std::vector<SweepTask> t;
  for (size_t i = 0; i < n; ++i) t.push_back({i * 10, "key" + std::to_string(i)});
  return t;
}

SweepPoolOptions pool_options(int parallel) {
  SweepPoolOptions o;
  o.parallel = parallel;
  o.worker_name = "sweeper";
  o.worker = [](const SweepTask& t) {
    ProcessRequest r;
    r.program = "/opt/sweeper";
    r.argv = {"sweeper", "--run", std::to_string(t.index) + ":" + t.key};
    return r;
  };
  return o;
}

// A worker that prints the result {"point": INDEX} for the key it is asked for.
ScriptedAnswer worker_answer(const ProcessRequest& r) {
  const std::string& run = r.argv.back();
  auto colon = run.find(':');
  int index = std::stoi(run.substr(0, colon));
  return {.out = "log line\n" + encode_result(run.substr(colon + 1), {{"point", index}})};
}

TEST(SweepPool, ResultsComeBackInTaskOrder) {
  ScriptedProcessRunner runner;
  // Later tasks end first.
  runner.on("", [](const ProcessRequest& r) {
    int index = std::stoi(r.argv.back());
    std::this_thread::sleep_for(std::chrono::milliseconds(40 - index));
    return worker_answer(r);
  });
  std::vector<size_t> arrived;
  auto results = run_sweep_pool(pool_tasks(4), pool_options(4), runner,
                                [&](const SweepTaskResult& r) { arrived.push_back(r.task.index); });
  ASSERT_EQ(results.size(), 4u);
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].task.index, i * 10);
    EXPECT_EQ(results[i].task.key, "key" + std::to_string(i));
    EXPECT_FALSE(results[i].failed());
    EXPECT_EQ(results[i].result, nlohmann::json({{"point", i * 10}}));
  }
  EXPECT_EQ(arrived.size(), 4u);
  // Each worker ran with the caller's argv and program.
  auto calls = runner.calls();
  ASSERT_EQ(calls.size(), 4u);
  std::set<std::string> lines;
  for (const auto& c : calls) {
    EXPECT_EQ(c.program, "/opt/sweeper");
    lines.insert(c.command_line());
  }
  EXPECT_EQ(lines, (std::set<std::string>{"sweeper --run 0:key0", "sweeper --run 10:key1",
                                          "sweeper --run 20:key2", "sweeper --run 30:key3"}));
}

TEST(SweepPool, AFailingWorkerIsAFailedPoint) {
  ScriptedProcessRunner runner;
  runner.on("", worker_answer);
  runner.on("10:key1", {.exit_code = 3, .out = "half a line"});
  runner.on("20:key2", {.cannot_start = true});
  runner.on("30:key3", {.out = encode_result("other", {{"point", 1}}), .signal = 9});
  runner.on("40:key4", [](const ProcessRequest&) {
    return ScriptedAnswer{.exit_code = 2, .out = encode_result("key4", {{"error", "a bad trace"}})};
  });
  auto results = run_sweep_pool(pool_tasks(5), pool_options(2), runner);
  ASSERT_EQ(results.size(), 5u);
  EXPECT_FALSE(results[0].failed());
  EXPECT_TRUE(results[1].failed());
  EXPECT_EQ(results[1].result["error"], "the point's process ended with status 3 and no result");
  EXPECT_EQ(results[2].result["error"], "cannot start sweeper");
  EXPECT_EQ(results[3].result["error"], "the point's process ended with status 137 and no result");
  // A point that could not run says why itself.
  EXPECT_EQ(results[4].result["error"], "a bad trace");
}

TEST(SweepPool, NoMoreWorkersAtOnceThanAsked) {
  for (int parallel : {1, 3}) {
    ScriptedProcessRunner runner;
    // Each worker holds on until `parallel` of them run, or a while.
    std::mutex mu;
    std::condition_variable cv;
    runner.on("", [&](const ProcessRequest& r) {
      std::unique_lock<std::mutex> lock(mu);
      cv.notify_all();
      cv.wait_for(lock, std::chrono::milliseconds(200),
                  [&] { return runner.in_flight() >= parallel; });
      return worker_answer(r);
    });
    auto results = run_sweep_pool(pool_tasks(7), pool_options(parallel), runner);
    EXPECT_EQ(results.size(), 7u);
    EXPECT_EQ(runner.calls().size(), 7u);
    EXPECT_EQ(runner.max_in_flight(), parallel) << parallel;
  }
  // Fewer tasks than workers: one worker each.
  ScriptedProcessRunner runner;
  runner.on("", worker_answer);
  EXPECT_EQ(run_sweep_pool(pool_tasks(2), pool_options(8), runner).size(), 2u);
  EXPECT_LE(runner.max_in_flight(), 2);
  EXPECT_TRUE(run_sweep_pool({}, pool_options(8), runner).empty());
}

TEST(SweepPool, EachPointIsTimedOnTheClock) {
  ScriptedProcessRunner runner;
  runner.on("", worker_answer);
  double now = 0;
  auto o = pool_options(1);
  o.clock.now = [&] { return now += 1.5; };  // every look is 1.5 s later
  auto results = run_sweep_pool(pool_tasks(2), o, runner);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].seconds, 1.5);
  EXPECT_EQ(results[1].seconds, 1.5);
}

}  // namespace
}  // namespace pai::sim
