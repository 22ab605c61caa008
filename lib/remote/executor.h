#pragma once
// A bounded parallel executor: runs N independent tasks (one host each) on at
// most `parallel` threads, and never more at once than the process's file
// descriptor limit allows.

#include <cstddef>
#include <functional>

namespace pai::remote {

struct ExecutorOptions {
  size_t parallel = 64;      // requested concurrency (--parallel)
  size_t fds_per_task = 4;   // descriptors one task holds at most
  size_t reserved_fds = 32;  // left for the process itself (stdio, files, reports)
  // Called after each task, from the worker that ran it, serialised: (done, total).
  std::function<void(size_t, size_t)> progress;
};

// Raises the soft RLIMIT_NOFILE to the hard limit (once), then returns how many
// tasks may run at once: min(requested, tasks, (soft limit - reserved) / fds per task), at least 1.
size_t effective_parallelism(size_t requested, size_t tasks, size_t fds_per_task,
                             size_t reserved_fds);

// Runs task(i) for every i in [0, n). Returns when all are done. Tasks must not throw.
// Returns the concurrency actually used.
size_t run_parallel(size_t n, const ExecutorOptions& opts, const std::function<void(size_t)>& task);

}  // namespace pai::remote
