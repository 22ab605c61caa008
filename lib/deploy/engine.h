#pragma once
// The install engine: runs phases (phase.h) over many hosts at once, bounded,
// in a fixed order, with barriers where the cluster needs them, one connection
// per host kept across phases. State is observed from the hosts on every run;
// the journal (journal.h) only records what ran. Nothing here prints: progress
// leaves through `EngineOptions::on_event`, serialised.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deploy/journal.h"
#include "deploy/phase.h"

namespace pai::deploy {

struct Event {
  enum class Kind {
    HostConnected,  // logged in (message: how)
    HostLocked,     // the per-host lock was taken
    PhaseStart,     // observing
    PhaseUpToDate,  // nothing missing
    PhaseNeeds,     // needs listed (plan) or about to be applied
    PhaseApplied,   // applied and verified
    PhaseFailed,    // message, hint
    PhaseSkipped,   // not run: an earlier phase or host failed
    CleanupStart,   // message: what is cleaned
    CleanupDone,
    Interrupted,  // the journal shows a step of an earlier run that never ended
    Note,         // anything else worth a line
  };
  Kind kind = Kind::Note;
  std::string host;  // "" for the whole run
  std::string phase;
  std::string message;
  std::string hint;
  std::vector<std::string> needs;
  double elapsed_ms = 0;
};
std::string_view to_string(Event::Kind k);

struct PhaseResult {
  std::string phase;
  enum class State {
    UpToDate,
    Planned,
    Changed,
    Failed,
    Skipped,
    NotApplicable
  } state = State::Skipped;
  std::vector<std::string> needs;
  std::string error, hint;
  double ms = 0;
  bool cleaned = false;
};
std::string_view to_string(PhaseResult::State s);

struct HostResult {
  std::string host;
  bool reached = false;
  std::string error, hint;  // a failure of the host itself (connection, lock)
  std::vector<PhaseResult> phases;
  bool failed() const;
  bool changed() const;  // applied (or, in a plan, would apply) something
};

struct RunResult {
  std::string run_id;
  bool dry_run = false;
  std::vector<HostResult> hosts;
  std::vector<Event> interrupted;  // steps of earlier runs that never ended
  double ms = 0;
  bool ok() const;
  bool changed() const;
  nlohmann::json to_json() const;
};

// What the runs of one command share (a plan and the apply after it): the
// hosts' SSH connections, so that a host gets one connection per command, and
// the outputs of the plan's observations of phases that change nothing
// (Phase::read_only: the OS, the pre-install checks' fact script), which the
// apply takes instead of running them again while they are fresh. Runs whose
// EngineOptions are copies of one another share one (the default is made per
// EngineOptions, so copying it is what shares it). Safe to use from many threads.
class KeptHosts {
 public:
  // The connection a run kept for `host` over `transport`, or null.
  std::unique_ptr<remote::Connection> take_connection(const remote::Transport* transport,
                                                      const std::string& host);
  void keep_connection(const remote::Transport* transport, const std::string& host,
                       std::unique_ptr<remote::Connection> connection);
  // The plan's reads of `host` (script -> output), taken: a later run reads again.
  // Reads older than `max_age_s` are dropped.
  std::map<std::string, remote::ExecResult> take_reads(const std::string& host, double max_age_s);
  void keep_read(const std::string& host, const std::string& script, remote::ExecResult result);

 private:
  struct Kept {
    const remote::Transport* transport = nullptr;
    std::unique_ptr<remote::Connection> connection;
    std::map<std::string, std::pair<double, remote::ExecResult>> reads;  // script -> (time, output)
  };
  std::mutex mu_;
  std::map<std::string, Kept> hosts_;
};

struct EngineOptions {
  size_t parallel = 64;
  bool dry_run = false;  // observe and report needs; change nothing on any host
  std::string run_id;    // "" = made from the time and pid
  // The journal; "" = none.
  std::string journal_path;
  // Per-host logs: DIR/HOST.log, mode 0600; "" = none.
  std::string log_dir;
  // Per-host lock on every host while applying (not in a dry run).
  bool host_lock = true;
  int host_lock_stale_s = 1800;
  Masker* masker = nullptr;  // the run's secrets; the engine's own when null
  // A run that applies reads the observations of a group of stages ahead, in one
  // session per host (see Engine::run). A plan made just before says where each
  // host will change first: host -> the phases its plan had needs for. Reading
  // ahead on a host stops at its first such phase (what comes after is read
  // again after that phase applies). Only a hint: empty = read the whole group.
  std::map<std::string, std::set<std::string>> planned_changes;
  // Shared by the copies of these options (KeptHosts); null = nothing kept.
  std::shared_ptr<KeptHosts> kept = std::make_shared<KeptHosts>();
  // How old a plan's read may be for the apply to take it (a confirmation on a
  // terminal may take long; the checks then run again).
  double reuse_reads_s = 60;
  std::function<void(const Event&)> on_event;
};

class Engine {
 public:
  Engine(remote::Transport& transport, EngineOptions options)
      : transport_(transport), opts_(std::move(options)) {}

  RunResult run(const std::vector<HostSpec>& hosts, const PhaseList& phases);

 private:
  remote::Transport& transport_;
  EngineOptions opts_;
};

// A dry run's one session per host: the observation scripts run one after the
// other, each with its stdin from /dev/null and its stderr dropped, its output
// between lines "MARKER begin I" and "MARKER end I RC"; each in a subshell, but
// for the scripts that runs_in_session_shell() lets run in the session's shell.
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
// Whether a script is a read of the cluster through kubectl
// (kubectl_json_read_script's): the slow reads of a session.
bool is_cluster_read(const std::string& script);
// Splits that output into one result per script (out, exit_status); false when
// it is cut short or malformed (the phases then read their state themselves).
bool split_combined_output(const std::string& out, const std::string& marker, size_t n,
                           std::vector<remote::ExecResult>& results);

// The per-host lock's script and its outcome, for tests and for `reset`.
// `holder` identifies this run: "LOCALHOST PID RUNID START".
std::string host_lock_script(const std::string& holder, int stale_s,
                             const std::string& takeover = {});
std::string host_unlock_script(const std::string& holder);
// A lock holder ("LOCALHOST PID ...") of this machine whose process is gone.
bool holder_is_dead_here(const std::string& holder);

}  // namespace pai::deploy
