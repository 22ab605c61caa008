#pragma once
// paictl install as a use case: the cluster's Azure part first, then its hosts,
// so a hybrid cluster is installed in one go. As every use case of lib/deploy
// (usecase.h), it is a request ->
// plan_X(request, deps, callbacks): what would change, changing nothing (it
// reads the hosts and Azure; a plan for an apply holds the cluster directory's
// lock) -> apply_X(plan, callbacks): the changes, after a confirmation asked
// through the callbacks unless the request gave it. docs/install.md,
// docs/azure.md, docs/hybrid.md.
//
// A hybrid install's plan is Azure's plan and, when Azure has changes, the
// pre-install checks of the hosts layout.yaml already has (a failure refuses
// the install before anything exists in Azure). Its apply creates the Azure
// resources, writes their VMs into layout.yaml and their cells into the HiveD
// config, and then plans and applies the hosts (UseCaseEvent HostsPlanned, then
// a second confirmation). An on-prem install's plan is the hosts' plan.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deploy/azure_part.h"
#include "deploy/credentials.h"
#include "deploy/hived_edit.h"
#include "deploy/host_plan.h"
#include "deploy/prepare.h"
#include "deploy/usecase.h"

namespace pai::deploy {

struct InstallRequest {
  std::string cluster_dir;
  bool dry_run = false;
  bool yes = false;                // the changes are confirmed in advance
  bool azure_only = false;         // stop after the Azure part
  bool skip_azure = false;         // the Azure part is done already (node add --azure)
  std::vector<std::string> limit;  // host names or addresses; empty: every host
  std::vector<std::string> ignore_checks;
  int wait_s = 300;
  size_t parallel = 64;
  std::string templates_dir;
  std::string layouts_dir;  // machine profiles, for the chains of Azure pools' VM sizes
  AzureAccess azure;
};

// A VM Azure will create, under its placeholder name (a dry run's HiveD cells).
struct PlannedMachine {
  std::string name, pool, sku, machine_type;
};

struct InstallPlan {
  InstallRequest request;
  InstallDeps deps;
  // The Azure part; none when config.yaml has no azure: section (or skip_azure).
  std::optional<AzureInstallPlan> azure;
  // When Azure has changes (not in a dry run, nor with azure_only): the
  // pre-install checks of the hosts layout.yaml has now. Failed: the install
  // stops before Azure is changed.
  std::optional<RunResult> checks;
  // A hybrid dry run: the cells the pools' VMs not created yet will get.
  std::optional<HivedEdit> vm_cells;
  std::vector<PlannedMachine> planned_machines;
  // A hybrid dry run whose master is a VM Azure has not created yet: its pool.
  // The hosts cannot be planned before it exists.
  std::string pending_master;
  // The hosts' plan when it is made before anything changes: an on-prem
  // cluster, or a dry run. Else the apply plans them once Azure is done.
  std::shared_ptr<HostRunPlan> hosts;
  bool checks_failed() const { return checks && !checks->ok(); }
};

UseCaseResult<InstallPlan> plan_install(const InstallRequest& request, const InstallDeps& deps,
                                        const Callbacks& callbacks);

struct InstallOutcome {
  enum class End {
    ChecksFailed,   // the pre-install checks refused it: nothing created or changed
    AzureOnly,      // the Azure part was all that was asked (`azure`)
    AzureDeclined,  // the Azure changes were not confirmed
    AzureNoTerminal,
    PendingMaster,  // a dry run that cannot plan the hosts before Azure makes the master
    Hosts,          // the hosts' stage ran (`hosts`)
    Failed,         // `error`
  } end = End::Failed;
  std::optional<UseCaseError> error;
  std::optional<AzureInstallOutcome> azure;  // what the Azure part did (not in a dry run)
  std::optional<HivedEdit> vm_cells;         // the VMs' cells written into the HiveD config
  HostStage hosts;
  // Whether Azure changed (or, in a dry run, would change) something.
  bool azure_changed = false;
  // When the hosts' run ended with the whole cluster installed (applied or up
  // to date, not a dry run, not --limit) and it has the OpenPAI services: how
  // it is reached, the admin password services-configuration.yaml holds, and
  // whether this run made that password (it was written there before the
  // cluster got it).
  std::optional<ClusterAccess> access;
  remote::Secret admin_password;
  bool password_made = false;
};

InstallOutcome apply_install(InstallPlan& plan, const Callbacks& callbacks);

// Whether an install ended so that what follows it may run: not refused, not
// failed, no confirmation missing (a refused confirmation goes on).
bool install_went_on(const InstallOutcome& outcome);

}  // namespace pai::deploy
