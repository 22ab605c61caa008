#pragma once
// The phase contract of the install engine (engine.h), after k0sctl's: a phase
// observes a host's real state, says what is missing (its needs), applies only
// that, verifies, and may clean up what it did when a later phase of the same
// run fails. Phases never print: they return values, and the engine reports
// through its event callback.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/node_settings.h"
#include "deploy/observation_cache.h"
#include "inventory/host_spec.h"
#include "inventory/inventory.h"
#include "kube/master.h"
#include "remote/target.h"
#include "remote/transport.h"
#include "util/clock.h"
#include "util/result.h"

namespace pai::deploy {

// The host type of the engine's runs (inventory/host_spec.h).
using inventory::HostSpec;

// Secret values (passwords, join tokens) replaced by "***" wherever text leaves
// the engine: logs, events, errors, reports. Safe to use from many threads.
class Masker {
 public:
  void add(const std::string& secret);
  std::string mask(std::string text) const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> secrets_;
};

class HostRun;

// What a phase may ask of the run beyond its own host: another host (the
// master, to mint a join token), the options, the secret masker.
struct RunContext {
  std::vector<HostRun*> hosts;
  Masker* masker = nullptr;
  bool dry_run = false;
  // What the phases wait with (rollouts, nodes Ready, the API server, the
  // endpoints): EngineOptions::clock.
  util::Clock clock = util::Clock::real();
  HostRun* master() const;
};

// One host during one run: its connection (kept across phases), the facts the
// phases observed (later phases read what earlier ones found), and its log.
class HostRun {
 public:
  HostRun(const HostSpec& spec, RunContext& run) : spec_(spec), run_(run) {}

  const HostSpec& spec() const { return spec_; }
  RunContext& run() { return run_; }
  nlohmann::json& facts() { return facts_; }

  // Runs a POSIX sh script on the host (as root: directly when logged in as
  // root, else through `sudo -n`). `input` goes to the script's stdin (the only
  // way a secret reaches a host); `timeout_ms` bounds the command. Every run is
  // written to the host's log, masked.
  // `secret_output`: the output holds a secret not yet known to the masker (a
  // token being minted); the log then says it was withheld.
  remote::ExecResult sh(const std::string& script, const std::string& input = {},
                        int timeout_ms = 300000, bool secret_output = false);

  // An observation: a script that changes nothing and reads the host's state.
  // Served from the host's ObservationCache when it holds the script's output
  // (read ahead in a session of reads, see ReadsAhead::observation_reads, or
  // kept from an earlier observation), else run now with sh() and offered to
  // the cache (observation_cache.h says what it keeps).
  remote::ExecResult observe_sh(const std::string& script, int timeout_ms = 120000,
                                bool secret_output = false);
  // What observe_sh gives for `r`, the output of `script` read some other way
  // (in a session of other commands): an API read's answers as kubectl's List,
  // or, where they cannot be, kubectl's read run now (api_json_read_script).
  remote::ExecResult finish_read(const std::string& script, remote::ExecResult r,
                                 int timeout_ms = 120000, bool secret_output = false);
  // observe_sh and finish_read without copies, for reads that hold no secret and
  // that many hosts' phases make of this one (every worker's join reads the
  // master's Nodes: 2.7 MB on a 1,000-node cluster, 30-40 ms of CPU to turn into
  // a List). The held output is shared, and one output is turned into a List
  // once (the same pointer in, the same pointer out).
  std::shared_ptr<const remote::ExecResult> observe_shared(const std::string& script,
                                                           int timeout_ms = 120000);
  std::shared_ptr<const remote::ExecResult> finish_shared(
      const std::string& script, std::shared_ptr<const remote::ExecResult> raw);

  // Appends a line to the host's log (masked).
  void log(const std::string& line);

  // What the run holds of this host's observations (observation_cache.h):
  // observe_sh serves from it, and keeps what it reads live there.
  ObservationCache& observations() { return observations_; }

  // sh() of `script`, then, when it exits 0, the reads named by
  // observations().set_reads_after in the same session (each as in a one-session read: stdin from
  // /dev/null, stderr dropped, a subshell unless runs_in_session_shell lets it share the shell).
  // The result is the script's alone.
  remote::ExecResult sh_then_read(const std::string& script, const std::string& input = {},
                                  int timeout_ms = 300000);

  // Set by the engine.
  std::unique_ptr<remote::Connection> connection;
  std::function<void(const std::string&)> log_sink;

 private:
  // observe_sh without turning an API read's answers into kubectl's List.
  remote::ExecResult observe_raw(const std::string& script, int timeout_ms, bool secret_output);

  const HostSpec& spec_;
  RunContext& run_;
  nlohmann::json facts_ = nlohmann::json::object();
  std::mutex mu_;  // another host's phase may run commands here (the master)
  ObservationCache observations_;
  // The last output finish_shared turned, and what it gave (the mutex is held
  // while it turns one).
  std::mutex list_memo_mu_;
  std::shared_ptr<const remote::ExecResult> list_memo_raw_, list_memo_list_;
};

// A failed command, said for the operator: what failed, its exit status and the
// last lines of its stderr (masked by the caller's log). A remote failure.
util::Error command_failure(const std::string& what, const remote::ExecResult& r);

// Runs `script` on the host under `set -e`; a failure is command_failure(what, ...).
util::Result<void> run_step(HostRun& h, const std::string& what, const std::string& script,
                            const std::string& input = {}, int timeout_ms = 600000);
// run_step for the phase's last command on this host: the observations that
// follow it (its verification's, the next phases') are read in the same
// session once it succeeds (HostRun::sh_then_read), a round trip fewer each.
// Nothing may change the host after it in the same apply.
util::Result<void> run_last_step(HostRun& h, const std::string& what, const std::string& script,
                                 const std::string& input = {}, int timeout_ms = 600000);

// The master's kubectl and API access (kube/master.h).
using kube::kKubectl;

// A read of the cluster's objects on the master: `kubectl ARGS` (e.g. "get
// nodes -A -o json") with a 20 s request timeout, printing "{}" before the
// control plane exists or when kubectl fails.
std::string kubectl_json_read_script(const std::string& args);

// The same read from the API server itself: one curl run for the API paths (e.g.
// "/api/v1/nodes", "/api/v1/namespaces/pai/secrets/NAME"), with the server,
// its CA and the client certificate of admin.conf passed on pipes (never in
// argv or a file of their own), instead of one kubectl start (60-90 ms of the
// master's CPU). HostRun::observe_sh gives its output as `kubectl get ... -o
// json` gives it (a List whose items have their kind; a path that answers 404 is
// left out, as --ignore-not-found does); where curl, base64 or admin.conf's
// certificate is missing, or any path answers otherwise, observe_sh runs
// `kubectl_args` through kubectl_json_read_script instead.
std::string api_json_read_script(const std::vector<std::string>& paths,
                                 const std::string& kubectl_args);
using kube::api_access_script;
using kube::api_curl;
// What observe_sh does with the output of an api_json_read_script: true and
// `out` the List, or false where the kubectl read must answer instead.
bool api_read_as_list(const std::string& output, std::string& out);
// The kubectl arguments of an api_json_read_script (empty for another script).
std::string api_read_fallback(const std::string& script);

// What a phase is, said once as data that the engine reads (k0sctl's phases
// answer the same questions with methods of their own).
struct PhaseTraits {
  // The hosts the phase concerns: every host, the first master only (the
  // control plane, the add-ons), every host but the masters (a worker's join),
  // or the masters after the first (their join to the control plane).
  enum class Hosts { All, Master, AllButMaster, OtherMasters };
  Hosts hosts = Hosts::All;
  // Work for the whole cluster done on the master (the control plane, add-ons):
  // it runs even when --limit leaves the master out.
  bool cluster_scope = false;
  // No host starts this phase before every host has finished every earlier one
  // (the control plane before workers join it).
  bool barrier = false;
  // The phase never changes a host (its apply does nothing): a run that applies
  // may take its observations from the plan made just before (KeptHosts).
  bool read_only = false;
  // The phase must see every host at once (checks that compare hosts): a
  // ClusterWidePhase, a stage of its own. Set by ClusterWidePhase only.
  bool cluster_wide = false;
  // Whether an apply on one host makes what this phase read of the other hosts
  // it observes (the master, for a join) stale for the phases after it in the
  // stage, which then read them again. The join's is not: it changes what the
  // master shows about the joining host alone, which its verification reads
  // afresh itself.
  bool apply_changes_others_reads = true;
};

// A phase: observe what is missing on a host, apply it. The engine verifies an
// apply by observing again (anything still missing is a failure). What more a
// phase can do it says by implementing the small interfaces below (ReadsAhead,
// CleansUp) or by being a ClusterWidePhase, as k0sctl's phases implement its
// optional interfaces.
class Phase {
 public:
  Phase(std::string name, PhaseTraits traits = {}) : name_(std::move(name)), traits_(traits) {
    traits_.cluster_wide = false;  // only a ClusterWidePhase is
  }
  virtual ~Phase();
  const std::string& name() const { return name_; }
  const PhaseTraits& traits() const { return traits_; }
  // Whether the phase concerns this host at all (traits().hosts).
  bool runs_on(const HostSpec& host) const;

  // Reads the host's state and appends what is missing to `needs` (empty: up
  // to date). Changes nothing on the host. May record facts for later phases.
  virtual util::Result<void> observe(HostRun& host, std::vector<std::string>& needs) = 0;
  // Makes the needs true. Called only with a non-empty `needs`.
  virtual util::Result<void> apply(HostRun& host, const std::vector<std::string>& needs) = 0;

 protected:
  // For a ClusterWidePhase.
  PhaseTraits& mutable_traits() { return traits_; }

 private:
  std::string name_;
  PhaseTraits traits_;
};

// A phase whose observations can be read ahead, in one session per host with
// the other phases' (observation_cache.h).
class ReadsAhead {
 public:
  virtual ~ReadsAhead();
  // The observation scripts observe() (or observe_all()) will run for this
  // host. A script not listed is run when observe() asks for it; listing one
  // it does not ask for costs only its time.
  virtual void observation_reads(HostRun& host, std::vector<ObservationRead>& out) = 0;
};

// A phase that cleans up after itself. Called, newest phase first, on the
// hosts where this phase applied changes in this run, when a later phase of
// the same run failed. Undoes what must not be left half-done (a minted token,
// a temporary file); it need not undo the phase.
class CleansUp {
 public:
  virtual ~CleansUp();
  virtual void cleanup(HostRun& host) = 0;
};

// A phase that must see every host at once (checks that compare hosts): it
// observes them all in one call, in a stage of its own. Its per-host observe
// and apply find nothing to do unless it overrides them.
class ClusterWidePhase : public Phase {
 public:
  ClusterWidePhase(std::string name, PhaseTraits traits = {}) : Phase(std::move(name), traits) {
    mutable_traits().cluster_wide = true;
  }
  // One status and one list of needs per host of `hosts` (sized by the engine).
  virtual void observe_all(std::vector<HostRun*>& hosts, std::vector<util::Result<void>>& status,
                           std::vector<std::vector<std::string>>& needs) = 0;
  util::Result<void> observe(HostRun&, std::vector<std::string>&) override { return {}; }
  util::Result<void> apply(HostRun&, const std::vector<std::string>&) override { return {}; }
};

// After an apply: observes again; anything still missing is a failure.
util::Result<void> verify_applied(Phase& phase, HostRun& host);

// Whether the engine runs `phase` on `host`: the phase concerns the host, and
// the host is selected (--limit) or the phase is of cluster scope.
bool phase_runs(const Phase& phase, const HostSpec& host);

using PhaseList = std::vector<std::unique_ptr<Phase>>;

// Rendered Kubernetes manifests: (what, text), in the order they are applied.
using Manifests = std::vector<std::pair<std::string, std::string>>;

}  // namespace pai::deploy
