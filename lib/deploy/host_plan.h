#pragma once
// One run of the install engine over a prepared cluster's hosts, as a plan
// (the engine's dry run: what each phase would change on each host) and its
// apply: install, reset, config push, and the HiveD push that ends node
// add|remove; and the same as a stage of a use case (prepared, planned,
// confirmed, applied, each step reported as an event). The plan and its apply share the hosts'
// connections and the plan's fresh observations (EngineOptions::kept), and a plan made for an apply
// holds the cluster directory's lock (one install or reset per directory at a time) until it is
// destroyed.

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "deploy/azure_part.h"
#include "deploy/engine.h"
#include "deploy/journal.h"
#include "deploy/prepare.h"
#include "deploy/usecase.h"
#include "remote/counting_transport.h"
#include "remote/transport.h"

namespace pai::deploy {

// How the use cases reach hosts: a transport that signs in with this password.
// Null: remote::SshTransport.
using TransportFactory =
    std::function<std::unique_ptr<remote::Transport>(const remote::Secret& ssh_password)>;
std::unique_ptr<remote::Transport> make_transport(const TransportFactory& f,
                                                  const remote::Secret& ssh_password);

struct HostRunOptions {
  bool dry_run = false;
  size_t parallel = 64;
  // The caller holds the cluster directory's lock for a larger run (an
  // upgrade's config push): this run does not take it again.
  bool lock_held = false;
};

struct HostRunPlan {
  HostOperation operation = HostOperation::Install;
  bool dry_run = false;
  // At a stable address: the phases hold references to its settings.
  std::shared_ptr<const PreparedCluster> cluster;
  std::string state_dir;  // CLUSTER_DIR/.paictl: the journal, the lock, the logs
  RunResult plan;         // the engine's dry run

  // What the plan's next step is.
  enum class Verdict {
    Failed,    // a host is unreachable or a phase failed: nothing may change
    UpToDate,  // nothing to do
    DryRun,    // changes, and a dry run stops here
    Changes,   // changes to apply
  };
  Verdict verdict() const;

  // Taken over by the apply. `transport` is `cost`, which counts what the plan
  // and the apply cost each host.
  std::shared_ptr<remote::Transport> transport;
  std::shared_ptr<remote::CountingTransport> cost;
  std::shared_ptr<Masker> masker;
  std::shared_ptr<LocalLock> lock;
  std::shared_ptr<PhaseList> phases;
  EngineOptions options;
};

// The phases of an operation on these settings.
PhaseList phases_of(HostOperation operation, const InstallSettings& settings);

// Takes the lock (unless a dry run), then plans. Engine events go to
// `callbacks` (UseCaseEvent::Kind::Engine, planning), after one Observing.
UseCaseResult<HostRunPlan> plan_host_run(HostOperation operation, PreparedCluster cluster,
                                         const HostRunOptions& options,
                                         const TransportFactory& transport,
                                         const Callbacks& callbacks);

// Applies a plan whose verdict is Changes; its events go to `callbacks`.
RunResult apply_host_run(HostRunPlan& plan, const Callbacks& callbacks);

// What the use cases talk through (the defaults are the real ones, but for the
// hosts, which the front end reads).
struct InstallDeps {
  HostsLoader load_hosts;
  TransportFactory transport;  // null: SSH
  AzureDeps azure;
};

// The hosts' part of a run: one run of the engine, planned, confirmed, applied.
struct HostStage {
  std::shared_ptr<HostRunPlan> plan;
  enum class End {
    Failed,      // the plan failed (a host unreachable, a phase failed): nothing changed
    UpToDate,    // nothing to do
    DryRun,      // a dry run stops after the plan
    Declined,    // the confirmation was refused
    NoTerminal,  // no confirmation could be asked, and none was given in advance
    Applied,     // applied (`result`, which may have failed)
  } end = End::Failed;
  RunResult result;
};

// One run of the engine in a use case: prepared from the hosts `load` reads,
// planned (events Observing, Engine, then HostsPlanned), confirmed unless
// `yes`, applied.
struct HostStageRequest {
  HostOperation operation = HostOperation::Install;
  PrepareRequest prepare;
  HostRunOptions run;
  bool yes = false;
};
// The stage of `operation` a use case's request asks for: its cluster directory,
// templates, wait, dry run and parallelism, over `limit` (empty: every host).
template <class Request>
HostStageRequest host_stage_request(HostOperation operation, const Request& r,
                                    std::vector<std::string> limit) {
  HostStageRequest h;
  h.operation = operation;
  h.prepare.cluster_dir = r.cluster_dir;
  h.prepare.limit = std::move(limit);
  h.prepare.wait_s = r.wait_s;
  h.prepare.templates_dir = r.templates_dir;
  h.run.dry_run = r.dry_run;
  h.run.parallel = r.parallel;
  return h;
}
UseCaseResult<std::shared_ptr<HostRunPlan>> plan_host_stage(const HostStageRequest& request,
                                                            const InstallDeps& deps,
                                                            const Callbacks& callbacks);
// Decides after the plan and applies it when it has changes and is confirmed.
HostStage finish_host_stage(std::shared_ptr<HostRunPlan> plan, bool yes,
                            const Callbacks& callbacks);

// Whether a host of the run could not be reached (a remote failure, not a
// finding about the host).
bool unreached(const RunResult& r);

}  // namespace pai::deploy
