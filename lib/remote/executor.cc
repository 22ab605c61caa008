#include "remote/executor.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace pai::remote {

namespace {
rlim_t raise_nofile_once() {
  static std::once_flag once;
  static rlim_t soft = 1024;
  std::call_once(once, [] {
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    if (rl.rlim_cur < rl.rlim_max) {
      rlimit want = rl;
      // select()-based code elsewhere in a process breaks above FD_SETSIZE only for
      // fds it selects on; libssh polls, so the hard limit is safe to use.
      want.rlim_cur =
          rl.rlim_max == RLIM_INFINITY ? std::max<rlim_t>(rl.rlim_cur, 65536) : rl.rlim_max;
      if (::setrlimit(RLIMIT_NOFILE, &want) == 0) rl = want;
    }
    soft = rl.rlim_cur;
  });
  // Re-read: a test (or the caller) may have lowered it since.
  rlimit now{};
  if (::getrlimit(RLIMIT_NOFILE, &now) == 0) return now.rlim_cur;
  return soft;
}
}  // namespace

size_t effective_parallelism(size_t requested, size_t tasks, size_t fds_per_task,
                             size_t reserved_fds) {
  rlim_t limit = raise_nofile_once();
  size_t by_fds = 1;
  if (limit != RLIM_INFINITY && fds_per_task > 0) {
    size_t usable = limit > reserved_fds ? static_cast<size_t>(limit) - reserved_fds : 0;
    by_fds = std::max<size_t>(1, usable / fds_per_task);
  } else {
    by_fds = SIZE_MAX;
  }
  size_t n = std::min({std::max<size_t>(1, requested), std::max<size_t>(1, tasks), by_fds});
  return std::max<size_t>(1, n);
}

size_t run_parallel(size_t n, const ExecutorOptions& opts,
                    const std::function<void(size_t)>& task) {
  if (n == 0) return 0;
  size_t workers = effective_parallelism(opts.parallel, n, opts.fds_per_task, opts.reserved_fds);
  std::atomic<size_t> next{0};
  std::mutex progress_mu;
  size_t done = 0;
  auto worker = [&] {
    while (true) {
      size_t i = next.fetch_add(1);
      if (i >= n) return;
      task(i);
      if (opts.progress) {
        std::lock_guard lock(progress_mu);
        opts.progress(++done, n);
      }
    }
  };
  if (workers == 1) {
    worker();
    return 1;
  }
  std::vector<std::thread> threads;
  threads.reserve(workers);
  for (size_t i = 0; i < workers; ++i) {
    try {
      threads.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // out of threads: the ones started share the work
    }
  }
  if (threads.empty()) worker();
  for (auto& t : threads) t.join();
  return std::max<size_t>(1, threads.size());
}

}  // namespace pai::remote
