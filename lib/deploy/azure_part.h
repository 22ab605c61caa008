#pragma once
// The Azure part of a cluster directory (config.yaml's azure: section,
// docs/azure.md) in the install, reset and node use cases: a session (the spec
// from the cluster files, the sign-in, the ARM client); the resources' plan and
// apply, after which the pools' VMs are written into layout.yaml; a pool's
// scale set grown (node add --azure) or some of its VMs deleted (node remove
// --azure) with config.yaml's counts following; and reset, which deletes what
// carries the cluster's tag.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "azure/arm.h"
#include "azure/auth.h"
#include "azure/provider.h"
#include "deploy/usecase.h"
#include "http/client.h"
#include "util/clock.h"

namespace pai::deploy {

// Where Azure is reached; empty fields keep the environment's
// (PAICTL_ARM_ENDPOINT, PAICTL_AUTHORITY_HOST, PAICTL_CA_FILE), else Azure's
// public cloud (azure::endpoints_from_env).
struct AzureAccess {
  std::string arm_endpoint;
  std::string authority_host;
  std::string ca_file;
};

// What the Azure part talks through; the defaults are the real ones.
struct AzureDeps {
  // ARM and the sign-in. Null: a CurlClient verifying with the endpoints' CA,
  // one attempt per request (ArmClient retries with ARM's rules), 120 s.
  http::Client* http = nullptr;
  util::Clock clock = util::Clock::real();
  // The environment the sign-in reads (AZURE_CLIENT_SECRET, ...); null: the process's.
  std::function<const char*(const char*)> getenv;
  // True once the user asked to stop (a front end's SIGINT handler sets the flag
  // it reads): no further ARM request or sign-in is sent and every wait ends
  // within a quarter of a second; the call under way ends with an error.
  std::function<bool()> cancelled;
};

// How long one ARM request (or sign-in) may take in all, its retries included:
// 4 attempts' worth of the HTTP timeout, as the REST and HiveD clients.
inline constexpr double kAzureAttemptTimeoutS = 120;
inline constexpr double kAzureRequestDeadlineS = 4 * kAzureAttemptTimeoutS;

// An open session on the Azure part of one cluster directory.
struct AzureSession {
  azure::Spec spec;
  std::string cluster_dir;
  std::string layout_file;
  std::unique_ptr<http::Client> own_http;
  std::unique_ptr<azure::TokenSource> tokens;
  std::unique_ptr<azure::ArmClient> arm;
  // Where the ARM client's request lines go (UseCaseEvent::Kind::AzureLog):
  // the callbacks of the call that runs now. The ARM client reads on several
  // threads at once; log_mutex hands their lines to `events` one at a time.
  const Callbacks* events = nullptr;
  std::mutex log_mutex;
  // Said when the session was opened (a client-secret-file others may read),
  // emitted as Warning events by the first call that runs.
  std::vector<std::string> warnings;
  const config::AzurePool* pool(const std::string& name) const;
};

// Reads the cluster's files and prepares the sign-in (the first request signs
// in). Null when config.yaml has no azure: section. The SSH public key is
// azure.ssh-public-key-file, else config.yaml's ssh_key_file_path with ".pub".
// While a call runs, each wait of the ARM client of 1 s or more is an
// AzureWaiting event ("waiting 30 s for ARM (...) before GET ..."). Errors: config.yaml's
// Azure findings (About::AzureConfig), the SSH public key, the sign-in's setup.
UseCaseResult<std::shared_ptr<AzureSession>> open_azure(const std::string& cluster_dir,
                                                        const AzureAccess& access,
                                                        const AzureDeps& deps);
// The same, with a cluster that has no azure: section refused.
UseCaseResult<std::shared_ptr<AzureSession>> open_azure_required(const std::string& cluster_dir,
                                                                 const AzureAccess& access,
                                                                 const AzureDeps& deps);

// The pools' VMs as written into layout.yaml.
struct AzureMachines {
  std::vector<azure::Machine> machines;
  std::string layout_file;
  bool layout_changed = false;
};

// --- the resources (install) ----------------------------------------------------

struct AzureInstallPlan {
  std::shared_ptr<AzureSession> session;
  azure::Plan plan;
  bool changed() const { return plan.has_changes(); }
};
// Reads what Azure has (one GET per resource); changes nothing.
UseCaseResult<AzureInstallPlan> plan_azure_install(std::shared_ptr<AzureSession> session,
                                                   const Callbacks& callbacks);

struct AzureInstallOutcome {
  bool applied = false;  // the plan's changes were made (`result`)
  azure::ApplyResult result;
  bool listed = false;  // the VMs were listed and written into layout.yaml (`machines`)
  AzureMachines machines;
  azure::ArmStats stats;
  std::optional<UseCaseError> error;
};
// Makes the plan's changes (when it has any), then writes the pools' VMs into
// layout.yaml. Progress: AzureProgress, AzureUpToDate, AzureMachines.
AzureInstallOutcome apply_azure_install(AzureInstallPlan& plan, const Callbacks& callbacks);

// --- a pool grown (node add --azure POOL --count N) ------------------------------

struct AzureGrowPlan {
  std::shared_ptr<AzureSession> session;
  std::string pool, sku, machine_type;
  std::string scale_set;  // CLUSTER-POOL
  int64_t from = 0, to = 0;
  int add = 0;
  std::string config_file;
  std::string config_after;   // config.yaml with the pool's new count
  std::set<std::string> had;  // the pools' VMs before
};
// Refuses an unknown pool, the master's pool, too many VMs; reads the VMs there
// are now. Changes nothing.
UseCaseResult<AzureGrowPlan> plan_azure_grow(std::shared_ptr<AzureSession> session,
                                             const std::string& pool, int add,
                                             const Callbacks& callbacks);

struct AzureGrowOutcome {
  std::vector<azure::Machine> added;  // the new VMs
  bool files_written = false;         // config.yaml and layout.yaml have them
  std::optional<UseCaseError> error;
};
// Grows the scale set and waits, writes config.yaml's count and layout.yaml.
// Progress: ScaleSet, NewMachine, FilesUpdated.
AzureGrowOutcome apply_azure_grow(AzureGrowPlan& plan, const Callbacks& callbacks);

// --- VMs deleted (node remove --azure NODE...) ------------------------------------

struct AzureRemovalPlan {
  std::shared_ptr<AzureSession> session;
  std::vector<azure::Machine> machines;                       // to delete
  std::map<std::string, std::pair<int64_t, int64_t>> counts;  // pool -> (from, to)
  // What the apply does, one line each.
  std::vector<std::string> lines() const;
};
// Finds each node among the pools' VMs (by name or address); changes nothing.
UseCaseResult<AzureRemovalPlan> plan_azure_removal(std::shared_ptr<AzureSession> session,
                                                   const std::vector<std::string>& nodes,
                                                   const Callbacks& callbacks);

struct AzureRemovalOutcome {
  bool listed = false;               // Azure's VMs were read after the deletions (`deleted`)
  std::vector<std::string> deleted;  // the nodes Azure no longer shows
  std::optional<UseCaseError> error;
};
// Deletes the VMs (with their NICs and OS disks); whatever happened, config.yaml's
// counts and layout.yaml follow what Azure then shows. Progress: AzureProgress,
// FilesUpdated.
AzureRemovalOutcome apply_azure_removal(AzureRemovalPlan& plan, const Callbacks& callbacks);

// --- reset --azure ------------------------------------------------------------------

struct AzureResetPlan {
  std::shared_ptr<AzureSession> session;
  bool dry_run = false;
  // A dry run's view: what Azure has of the cluster (the resources a reset
  // deletes are those the plan does not create).
  std::optional<azure::Plan> plan;
};
// A dry run reads the resources; otherwise nothing is read before the apply.
UseCaseResult<AzureResetPlan> plan_azure_reset(std::shared_ptr<AzureSession> session, bool dry_run,
                                               const Callbacks& callbacks);

struct AzureResetOutcome {
  azure::ResetResult result;
  bool layout_changed = false;
  std::string layout_warning;  // layout.yaml could not be written (the resources are gone)
};
// Deletes the resources tagged with the cluster, waiting for each, and removes
// their VMs from layout.yaml. Progress: AzureProgress.
UseCaseResult<AzureResetOutcome> apply_azure_reset(AzureResetPlan& plan,
                                                   const Callbacks& callbacks);

}  // namespace pai::deploy
