#pragma once
// The install journal: <cluster dir>/.paictl/install.journal, one JSON object a
// line, each appended with one write(2) under O_APPEND and fsync'd, so a kill -9
// leaves at most a torn last line (skipped when read). It records what ran,
// where, when and how it ended, for the report and to say that a step was
// interrupted. It is never the source of truth: every run observes the hosts,
// and a lost or corrupt journal changes nothing but the report. But a run that
// changes hosts keeps it: one whose journal cannot be written (a full disk, a
// read-only directory) stops, before it changes anything when that is known in
// time (reserve), else at the end of its stage (the engine's contract).

#include <cstddef>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace pai::deploy {

class Journal {
 public:
  // Opens (creating the directory at 0700 and the file at 0600) for appending.
  // An empty path is a journal that records nothing.
  util::Result<void> open(const std::string& path);
  ~Journal();
  // Adds "time" (UTC, RFC 3339) and appends. The first error is also kept
  // (error()); a journal that failed once keeps failing.
  util::Result<void> append(nlohmann::json record);
  // Makes sure `bytes` more can be appended (fallocate(2) beyond the end,
  // without changing the size): "No space left on device" now rather than in
  // the middle of a run. A file system without preallocation is not an error.
  util::Result<void> reserve(size_t bytes);
  std::string error() const;

 private:
  mutable std::mutex mu_;
  int fd_ = -1;
  std::string path_;
  std::string error_;
};

// Appends {"event": "interrupted", "signal": NAME, "steps": [{host, phase}...]}
// to the journal at `path` (the front end, when a signal stops a run).
void journal_interruption(const std::string& path, const std::string& signal,
                          const std::vector<std::pair<std::string, std::string>>& running);

// Whether the journal at `path` can take a run's records: opens it (creating
// the directory and the file) and reserves room for them. The error names the
// file and says why.
util::Result<void> check_journal_writable(const std::string& path);

// How much of a journal is read: its last 8 MiB (some thousands of runs), so a
// journal that grew for years costs nothing on every run.
inline constexpr size_t kJournalReadBytes = 8u << 20;

// Every well-formed record of a journal file (torn or foreign lines skipped)
// in its last `max_bytes`; none when there is no file. An error when something
// other than a regular file is at `path` (a FIFO is refused, never waited on).
util::Result<std::vector<nlohmann::json>> read_journal(const std::string& path,
                                                       size_t max_bytes = kJournalReadBytes);

// Steps (host, phase) that an earlier run started and never ended, and that no
// later run completed: {run, host, phase, time} of the "start" record of
// each. A step is completed by an "end" record whose result is not "failed",
// or an "up-to-date" record (a later run observed it done), of any run.
std::vector<nlohmann::json> interrupted_steps(const std::vector<nlohmann::json>& records);

// One run that changes a cluster at a time per cluster directory: an flock(2)
// on <dir>/.paictl/install.lock (released by the kernel when the holder dies,
// even by kill -9), whose content says who holds it. install, reset, node
// add|remove and config push take it for their hosts' run; upgrade and node
// maintain for their whole run (the config push at the end of an upgrade runs
// under the upgrade's: HostRunOptions::lock_held).
class LocalLock {
 public:
  LocalLock() = default;
  LocalLock(const LocalLock&) = delete;
  LocalLock& operator=(const LocalLock&) = delete;
  ~LocalLock();
  // Taken, or why not: "another paictl run on this cluster is running (paictl
  // upgrade, pid 123 on host x since T; lock PATH)". `what` names this run in
  // the lock's note ("install", "upgrade"...).
  util::Result<void> acquire(const std::string& path, const std::string& what = "install");
  void release();

 private:
  int fd_ = -1;
};

}  // namespace pai::deploy
