#include "sim/sweep_pool.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "sim/sweep.h"

namespace pai::sim {

namespace {

// The task's result from what its worker printed and how it ended.
nlohmann::json sweep_worker_result(const SweepTask& task, const SweepPoolOptions& o,
                                   const util::Result<util::ProcessResult>& run) {
  if (!run.ok()) return nlohmann::json{{"error", "cannot start " + o.worker_name}};
  auto got = decode_results(run->out);
  if (auto it = got.find(task.key); it != got.end()) return it->second;
  int status = run->exited() ? run->exit_code : 128 + run->signal;
  return nlohmann::json{{"error", "the point's process ended with status " +
                                      std::to_string(status) + " and no result"}};
}

}  // namespace

std::vector<SweepTaskResult> run_sweep_pool(
    const std::vector<SweepTask>& tasks, const SweepPoolOptions& o, util::ProcessRunner& runner,
    const std::function<void(const SweepTaskResult&)>& on_result) {
  std::vector<SweepTaskResult> results(tasks.size());
  std::mutex mu;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (;;) {
      size_t k = next.fetch_add(1);
      if (k >= tasks.size()) return;
      const SweepTask& task = tasks[k];
      const double t0 = o.clock.now();
      auto run = runner.run(o.worker(task));
      SweepTaskResult r{task, sweep_worker_result(task, o, run), o.clock.now() - t0};
      std::lock_guard<std::mutex> lock(mu);
      results[k] = r;
      if (on_result) on_result(results[k]);
    }
  };
  const size_t n = std::min(tasks.size(), static_cast<size_t>(std::max(1, o.parallel)));
  std::vector<std::thread> pool;
  for (size_t i = 0; i < n; ++i) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return results;
}

}  // namespace pai::sim
