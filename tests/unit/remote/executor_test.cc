#include "remote/executor.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace pai::remote;

TEST(Executor, RunsEveryTaskOnceAndNeverMoreThanRequestedAtOnce) {
  std::vector<std::atomic<int>> runs(200);
  std::atomic<int> active{0}, peak{0};
  ExecutorOptions o;
  o.parallel = 7;
  size_t progress_calls = 0, last_done = 0;
  o.progress = [&](size_t done, size_t total) {
    ++progress_calls;
    EXPECT_EQ(total, 200u);
    EXPECT_EQ(done, last_done + 1);  // serialised and in order
    last_done = done;
  };
  size_t used = run_parallel(runs.size(), o, [&](size_t i) {
    int now = ++active;
    int p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    ++runs[i];
    --active;
  });
  EXPECT_EQ(used, 7u);
  for (auto& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_LE(peak.load(), 7);
  EXPECT_GE(peak.load(), 2);  // it did run in parallel
  EXPECT_EQ(progress_calls, 200u);
}

TEST(Executor, NoMoreWorkersThanTasks) {
  ExecutorOptions o;
  o.parallel = 64;
  std::atomic<int> n{0};
  EXPECT_EQ(run_parallel(3, o, [&](size_t) { ++n; }), 3u);
  EXPECT_EQ(n.load(), 3);
  EXPECT_EQ(run_parallel(0, o, [&](size_t) { ++n; }), 0u);
}

TEST(Executor, ParallelismFollowsTheOpenFileLimit) {
  // The first call raises the soft limit to the hard one; then lower it as a user's ulimit would.
  effective_parallelism(64, 100, 4, 32);
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = 48;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  EXPECT_EQ(effective_parallelism(64, 100, 4, 32), 4u);  // (48 - 32) / 4
  EXPECT_EQ(effective_parallelism(64, 100, 7, 32), 2u);  // jump hosts need more descriptors
  low.rlim_cur = 20;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  EXPECT_EQ(effective_parallelism(64, 100, 4, 32), 1u);  // never zero
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_EQ(effective_parallelism(64, 10, 4, 32), 10u);
  EXPECT_EQ(effective_parallelism(0, 10, 4, 32), 1u);
}
