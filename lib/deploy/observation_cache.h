#pragma once
// What a run has read of its hosts, and when it may serve it again. A phase
// asks for an observation (HostRun::observe_sh, a script that changes nothing)
// and the host's ObservationCache decides whether it holds the answer: what a
// session read ahead (a dry run reads every phase's observations of a host in
// one session; a run that applies reads a group of stages ahead; the session
// that takes the host lock reads the first group that changes something), what
// a phase's last step read after it in the same session, and what an
// observation or a verification read live. The rules:
//
//  - an output is served for exactly the script text that read it;
//  - a phase's apply on a host forgets what was held for it (before and after
//    the apply), and for the other hosts the phase reads (the master, for a
//    join) unless PhaseTraits::apply_changes_others_reads says the apply leaves them;
//  - a read that was running while the host's reads were forgotten is not kept;
//  - what the apply's own waits read is never kept (KeepLiveReads is only held
//    around observe and verify);
//  - a plan's reads pass to the apply after it (KeptHosts) only for phases
//    that change nothing (PhaseTraits::read_only), never when the output holds a
//    secret, and only while younger than EngineOptions::reuse_reads_s.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "remote/transport.h"
#include "util/clock.h"

namespace pai::deploy {

class HostRun;
class Phase;
using PhaseList = std::vector<std::unique_ptr<Phase>>;

// An observation script a phase will run on a host (itself or another: a
// worker's join reads the master), listed so that it can be read ahead in one
// session per host. The text must be the one observe() runs through
// HostRun::observe_sh.
struct ObservationRead {
  HostRun* host = nullptr;
  std::string script;
  bool secret = false;     // the output holds a secret (never logged, never kept for the apply)
  bool read_only = false;  // set by the engine: a read of a PhaseTraits::read_only phase
};

// One host's held observations, by script text. Safe to use from many threads.
class ObservationCache {
 public:
  // The output held for `script`, if any.
  bool find(const std::string& script, remote::ExecResult& out) const;
  // The same without a copy: the held output itself (the same pointer while it is
  // held), or null. What a worker's join reads of the master is megabytes on a
  // large cluster, and every worker reads it.
  std::shared_ptr<const remote::ExecResult> find_shared(const std::string& script) const;
  bool holds(const std::string& script) const;
  void keep(const std::string& script, remote::ExecResult result);
  // Drops every output (their text overwritten first): the host is changing.
  void forget();

  // A read run now: take a ticket before it starts and offer its output when it
  // ends. The output is kept only while a KeepLiveReads lives on this thread,
  // when the command ran, and when nothing was forgotten since the ticket.
  uint64_t ticket() const;
  void offer(uint64_t ticket, const std::string& script, const remote::ExecResult& result);

  // The observations to read in the same session as a phase's last command on
  // this host (run_last_step), right after it succeeds: named by the engine
  // around Phase::apply, read by HostRun::sh_then_read, taken back by the
  // engine (empty when no last step read them).
  void set_reads_after(std::vector<std::string> scripts);
  std::vector<std::string> reads_after() const;
  void read_after(std::vector<std::pair<std::string, remote::ExecResult>> outputs);
  std::vector<std::pair<std::string, remote::ExecResult>> take_reads_after();

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const remote::ExecResult>> held_;
  uint64_t generation_ = 0;  // counts forget()
  std::vector<std::string> reads_after_;
  std::vector<std::pair<std::string, remote::ExecResult>> read_after_;
};

// While one lives, the observations this thread runs (HostRun::observe_sh) are
// kept for the phases after it. The engine holds one around Phase::observe and
// the verification, never around apply (whose waits must read the host afresh).
class KeepLiveReads {
 public:
  KeepLiveReads();
  ~KeepLiveReads();
  KeepLiveReads(const KeepLiveReads&) = delete;
  KeepLiveReads& operator=(const KeepLiveReads&) = delete;
  static bool active();

 private:
  bool previous_;
};

// What the runs of one command share (a plan and the apply after it): the
// hosts' SSH connections, so that a host gets one connection per command, and
// the outputs of the plan's observations of phases that change nothing
// (PhaseTraits::read_only: the OS, the pre-install checks' fact script), which the
// apply takes instead of running them again while they are fresh. Runs whose
// EngineOptions are copies of one another share one (the default is made per
// EngineOptions, so copying it is what shares it). Safe to use from many threads.
class KeptHosts {
 public:
  explicit KeptHosts(util::Clock clock = util::Clock::real()) : clock_(std::move(clock)) {}
  // The connection a run kept for `host` over `transport`, or null.
  std::unique_ptr<remote::Connection> take_connection(const remote::Transport* transport,
                                                      const std::string& host);
  void keep_connection(const remote::Transport* transport, const std::string& host,
                       std::unique_ptr<remote::Connection> connection);
  // The plan's reads of `host` (script -> output), taken: a later run reads again.
  // Reads older than `max_age_s` are dropped.
  std::map<std::string, remote::ExecResult> take_reads(const std::string& host, double max_age_s);
  // A plan's read of `host`, for the apply (read_in_one_session keeps those
  // keep_for_apply allows).
  void keep_read(const std::string& host, const std::string& script, remote::ExecResult result);

 private:
  struct Kept {
    const remote::Transport* transport = nullptr;
    std::unique_ptr<remote::Connection> connection;
    std::map<std::string, std::pair<double, remote::ExecResult>> reads;  // script -> (time, output)
  };
  util::Clock clock_;
  std::mutex mu_;
  std::map<std::string, Kept> hosts_;
};

// Whether a plan's read may serve the apply after it: a read of a phase that
// changes nothing whose output holds no secret.
bool keep_for_apply(const ObservationRead& read);

// A plan's hint (EngineOptions::planned_changes): host -> the phases its plan
// had needs for. Reading ahead on a host stops at its first such phase.
using PlannedChanges = std::map<std::string, std::set<std::string>>;

// The observation scripts of phases [from, to) on the hosts `on` (indexes of
// `hosts`), by the host they read (a worker's join reads the master): each
// script once per host, none the host already holds, none of a host outside
// `hosts`; a host's phases are read up to its first planned change.
std::vector<std::vector<ObservationRead>> reads_of_phases(const PhaseList& phases, size_t from,
                                                          size_t to,
                                                          const std::vector<HostRun*>& hosts,
                                                          const std::vector<size_t>& on,
                                                          const PlannedChanges& planned);

// The observations that follow phase `phase`'s apply on `host`, read in the
// same session as its last step there: its verification's, then the next
// phases' before `until` that run on the host (not past a cluster-wide phase
// nor its next planned change). Only the host's own, never a secret.
std::vector<std::string> reads_after_apply(const PhaseList& phases, size_t phase, size_t until,
                                           HostRun& host, const PlannedChanges& planned);

// What `phase` is about to change on `host`: its reads there, and of the other
// hosts it reads unless its apply leaves them as they were. Called before and
// after the apply (what others read meanwhile may predate the change).
void forget_reads_changed_by(Phase& phase, HostRun& host);

// One session on `host` that runs every script of `reads` (all of that host);
// the outputs that came back whole are kept in its cache (a script whose
// output did not is run again when a phase asks for it), and those
// keep_for_apply allows in `for_apply` when not null (a plan's). The session's
// own result, its output overwritten.
remote::ExecResult read_in_one_session(HostRun& host, const std::vector<ObservationRead>& reads,
                                       const std::string& marker, KeptHosts* for_apply);

// The host lock's session: `lock_script`, then, when it printed "acquired",
// the reads of `reads` in the same session. The lock's result, and what was
// read (empty when the lock was not taken or the output was cut).
struct LockSession {
  remote::ExecResult lock;
  std::vector<std::pair<std::string, remote::ExecResult>> reads;
};
LockSession lock_then_read(HostRun& host, const std::string& lock_script,
                           const std::vector<ObservationRead>& reads, const std::string& marker);

// The text of a session of reads: the scripts one after the other, each with
// its stdin from /dev/null and its stderr dropped, its output between lines
// "MARKER begin I" and "MARKER end I RC"; each in a subshell, but for the
// scripts that runs_in_session_shell() lets run in the session's shell.
bool runs_in_session_shell(const std::string& script);
std::string combined_observation_script(const std::vector<std::string>& scripts,
                                        const std::string& marker);
// The same output, with the scripts run at once: each script whose output holds
// no secret (`secret[i]` false) in the background from the start, its output in
// a file of a directory only root reads (under /run, else $TMPDIR or /tmp,
// removed at the end and when the session is ended), the others one after the
// other meanwhile, their output held in the shell's memory; then every output
// in order. Where that directory cannot be made, the scripts run one after the
// other as above. For a session whose reads wait on other programs (kubectl
// and the API server on the master), so that they do not add up.
std::string concurrent_observation_script(const std::vector<std::string>& scripts,
                                          const std::vector<bool>& secret,
                                          const std::string& marker);
// Splits that output into one result per script (out, exit_status); false when
// it is cut short or malformed (the phases then read their state themselves).
bool split_combined_output(const std::string& out, const std::string& marker, size_t n,
                           std::vector<remote::ExecResult>& results);

}  // namespace pai::deploy
