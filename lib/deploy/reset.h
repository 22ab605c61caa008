#pragma once
// paictl reset as a use case (usecase.h): what install put on the hosts
// removed (the reset phases), or, with `azure`, the cluster's Azure resources
// deleted (those tagged with its id) and their VMs dropped from layout.yaml.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deploy/azure_part.h"
#include "deploy/host_plan.h"

namespace pai::deploy {

struct ResetRequest {
  std::string cluster_dir;
  bool dry_run = false;
  bool yes = false;
  bool azure = false;  // the cluster's Azure resources instead of its hosts
  std::vector<std::string> limit;
  int wait_s = 300;
  size_t parallel = 64;
  std::string templates_dir;
  AzureAccess azure_access;
};

struct ResetPlan {
  ResetRequest request;
  std::shared_ptr<HostRunPlan> hosts;  // not `azure`
  std::optional<AzureResetPlan> azure;
};
UseCaseResult<ResetPlan> plan_reset(const ResetRequest& request, const InstallDeps& deps,
                                    const Callbacks& callbacks);

struct ResetOutcome {
  HostStage hosts;
  enum class AzureEnd { None, DryRun, Declined, NoTerminal, Deleted } azure_end = AzureEnd::None;
  std::optional<AzureResetOutcome> azure;
  std::optional<UseCaseError> error;
};
ResetOutcome apply_reset(ResetPlan& plan, const Callbacks& callbacks);

}  // namespace pai::deploy
