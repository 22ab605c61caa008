#pragma once
// Internal to libpai (not installed): one run of the install engine
// (Engine::run), as an object whose stages are named methods, called by
// Engine::run in this order:
//
//   open_journal       report the steps an earlier run left unfinished; run-start
//   make_host_runs     a HostRun, a result row and a log per host
//   plan_reads         what the first sessions will read (a plan's reads, the
//                      dry run's, the lock group's), before any host is reached
//   connect_and_lock   log in (and take the host lock) on every host at once
//   run_stage          per stage: read its group ahead, then a cluster-wide
//                      phase on every host at once or the per-host phases
//   report_skipped     the phases that did not run, and why
//   clean_up           after a failure: every applied phase, newest first
//   unlock_and_finish  unlock, close the journal, keep the connections
//
// A stage is a run of phases between barriers; a cluster-wide phase is a stage
// of its own. A group is a stage and the stages after it that run on the same
// hosts (the master's add-on phases): what a run that applies reads ahead at
// once.

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "deploy/engine.h"
#include "deploy/journal.h"
#include "remote/executor.h"

namespace pai::deploy {

// Hidden: not part of libpai's interface (the pragma reads the same to GCC and
// clang).
#pragma GCC visibility push(hidden)
namespace engine_detail {

// A host's log file (EngineOptions::log_dir), appended to from many threads.
struct HostLog {
  std::mutex mu;
  int fd = -1;
  bool failed = false;  // a write failed (said once); nothing more is written
  ~HostLog();
};

class EngineRun {
 public:
  EngineRun(remote::Transport& transport, const EngineOptions& options,
            const std::vector<HostSpec>& hosts, const PhaseList& phases);

  void open_journal();
  void make_host_runs();
  void plan_reads();
  void connect_and_lock();
  // Whether a failure stopped the run (never in a dry run, which shows the whole plan).
  bool stopped() const { return stop_; }
  // Runs the stage that starts at phase `first`; returns where the next one starts.
  size_t run_stage(size_t first);
  void report_skipped();
  void clean_up();
  RunResult unlock_and_finish();

 private:
  void emit(Event e);
  double ms_since(double t0) const;
  // The journal cannot be written: the run's error, and it stops at the end of
  // the stage (before connecting, when it is the first record). `state` says
  // what that leaves.
  void journal_failed(const util::Error& e, const std::string& state);
  void host_log_failed(size_t host, int err);
  std::vector<size_t> all_hosts() const;

  // Stages and groups.
  size_t stage_end(size_t first) const;
  std::pair<std::vector<size_t>, size_t> group_of(size_t first,
                                                  const std::vector<size_t>& alive) const;
  // The hosts a stage runs on: those not failed (a dry run: every host reached).
  std::vector<size_t> alive_hosts() const;

  // Connecting.
  void connect_host(size_t i);
  remote::ExecResult lock_host(size_t i);
  void refuse_locked_host(size_t i, const remote::ExecResult& r);

  // A run that applies reads the group of the stage at `first` ahead.
  void read_ahead(size_t first, const std::vector<size_t>& alive);
  void run_cluster_wide(size_t pi, const std::vector<size_t>& alive);
  void run_per_host(size_t first, size_t last, const std::vector<size_t>& alive);
  // One phase on one host: observe, then (not in a dry run) apply and verify.
  bool run_phase(size_t pi, size_t hi);
  bool phase_failed(size_t pi, size_t hi, const util::Error& error, double t0);
  // A phase observed up to date on a host: a step the journal showed
  // interrupted there is done.
  void observed_done(size_t hi, const std::string& phase);
  util::Result<void> apply_phase(size_t pi, size_t hi, const std::vector<std::string>& needs);

  remote::Transport& transport_;
  const EngineOptions& opts_;
  const std::vector<HostSpec>& hosts_;
  const PhaseList& phases_;
  util::Clock clock_;
  double started_;
  RunResult res_;
  Masker own_masker_;
  Masker* masker_;
  std::mutex event_mu_;
  Journal journal_;
  bool journal_open_ = false;

  RunContext ctx_;
  std::vector<std::unique_ptr<HostRun>> runs_;
  std::vector<HostRun*> host_runs_;
  std::vector<std::unique_ptr<HostLog>> logs_;
  remote::ExecutorOptions eo_;
  std::vector<char> failed_, locked_;
  std::string holder_;  // this run's host lock: "LOCALHOST PID RUNID"
  std::string marker_;  // the markers of its sessions of reads
  bool stop_ = false;
  std::mutex journal_mu_;
  std::atomic<bool> journal_stop_{false};

  // Reading ahead.
  std::vector<std::map<std::string, remote::ExecResult>> plan_reads_;  // a plan's, for the apply
  std::vector<std::vector<ObservationRead>> dry_reads_;                // a dry run's: every phase's
  size_t lock_group_ = 0, lock_group_end_ = 0;  // the group the lock's session reads
  std::vector<std::vector<ObservationRead>> lock_reads_;
  std::vector<std::vector<std::pair<std::string, remote::ExecResult>>> locked_reads_;
  size_t read_until_ = 0;   // the phases before it had their observations read ahead
  size_t after_until_ = 0;  // the end of the phases the current stage's applies read after them

  // (phase, host) pairs whose apply ran in this run, in order, for the clean-up.
  std::mutex applied_mu_;
  std::vector<std::pair<size_t, size_t>> applied_;
};

}  // namespace engine_detail
#pragma GCC visibility pop

}  // namespace pai::deploy
