#include "deploy/config_push.h"

#include <utility>

namespace pai::deploy {

UseCaseResult<std::shared_ptr<HostRunPlan>> plan_config_push(const ConfigPushRequest& r,
                                                             const InstallDeps& deps,
                                                             const Callbacks& cb) {
  HostStageRequest h = host_stage_request(HostOperation::ConfigPush, r, r.limit);
  h.run.lock_held = r.lock_held;
  return plan_host_stage(std::move(h), deps, cb);
}

HostStage apply_config_push(std::shared_ptr<HostRunPlan> plan, bool yes, const Callbacks& cb) {
  return finish_host_stage(std::move(plan), yes, cb);
}

}  // namespace pai::deploy
