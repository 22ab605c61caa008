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
#include "deploy/observation_cache.h"
#include "deploy/phase.h"
#include "util/clock.h"

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
  // A failure of the run itself, not of a host: its journal cannot be written
  // (the run stopped; `hint` says what to do).
  std::string error, hint;
  bool ok() const;
  bool changed() const;
  nlohmann::json to_json() const;
};

struct EngineOptions {
  size_t parallel = 64;
  bool dry_run = false;  // observe and report needs; change nothing on any host
  std::string run_id;    // "" = made from the time and pid
  // The journal; "" = none.
  std::string journal_path;
  // A plan (dry run) made for an apply: a step the journal shows interrupted
  // that it observes done is recorded so ("up-to-date"), so that the notice
  // ends even when the apply has nothing to do. A run that applies always does.
  bool journal_plan = false;
  // Per-host logs: DIR/HOST.log, mode 0600; "" = none.
  std::string log_dir;
  // Per-host lock on every host while applying (not in a dry run).
  bool host_lock = true;
  int host_lock_stale_s = 1800;
  Masker* masker = nullptr;  // the run's secrets; the engine's own when null
  // A run that applies reads the observations of a group of stages ahead, in one
  // session per host (engine_run.h). A plan made just before says where each
  // host will change first: host -> the phases its plan had needs for. Reading
  // ahead on a host stops at its first such phase (what comes after is read
  // again after that phase applies). Only a hint: empty = read the whole group.
  PlannedChanges planned_changes;
  // Shared by the copies of these options (KeptHosts); null = nothing kept.
  std::shared_ptr<KeptHosts> kept = std::make_shared<KeptHosts>();
  // How old a plan's read may be for the apply to take it (a confirmation on a
  // terminal may take long; the checks then run again).
  double reuse_reads_s = 60;
  std::function<void(const Event&)> on_event;
  // The run's clock: its timings and every wait of its phases (RunContext::clock).
  util::Clock clock = util::Clock::real();
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

// Whether a script is a read of the cluster through kubectl
// (kubectl_json_read_script's): the slow reads of a session.
bool is_cluster_read(const std::string& script);
// The per-host lock's script and its outcome, for tests and for `reset`.
// `holder` identifies this run: "LOCALHOST PID RUNID START".
std::string host_lock_script(const std::string& holder, int stale_s,
                             const std::string& takeover = {});
std::string host_unlock_script(const std::string& holder);
// A lock holder ("LOCALHOST PID ...") of this machine whose process is gone.
bool holder_is_dead_here(const std::string& holder);

}  // namespace pai::deploy
