#pragma once
// paictl config push as a use case (usecase.h): the cluster files of the
// cluster directory pushed to the running cluster (the config phase on the
// master) when they differ from what it holds.

#include <memory>
#include <string>
#include <vector>

#include "deploy/host_plan.h"

namespace pai::deploy {

struct ConfigPushRequest {
  std::string cluster_dir;
  bool dry_run = false;
  bool yes = false;
  std::vector<std::string> limit;
  int wait_s = 300;
  size_t parallel = 64;
  std::string templates_dir;
  bool lock_held = false;  // the caller holds the cluster directory's lock (HostRunOptions)
};
// The config phase on the master: the cluster files pushed when they differ.
UseCaseResult<std::shared_ptr<HostRunPlan>> plan_config_push(const ConfigPushRequest& request,
                                                             const InstallDeps& deps,
                                                             const Callbacks& callbacks);
HostStage apply_config_push(std::shared_ptr<HostRunPlan> plan, bool yes,
                            const Callbacks& callbacks);

}  // namespace pai::deploy
