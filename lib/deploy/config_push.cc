#include "deploy/config_push.h"

#include <utility>

namespace pai::deploy {

UseCaseResult<std::shared_ptr<HostRunPlan>> plan_config_push(const ConfigPushRequest& r,
                                                             const InstallDeps& deps,
                                                             const Callbacks& cb) {
  HostStageRequest h;
  h.operation = HostOperation::ConfigPush;
  h.prepare.cluster_dir = r.cluster_dir;
  h.prepare.limit = r.limit;
  h.prepare.wait_s = r.wait_s;
  h.prepare.templates_dir = r.templates_dir;
  h.run.dry_run = r.dry_run;
  h.run.parallel = r.parallel;
  return plan_host_stage(h, deps, cb);
}

HostStage apply_config_push(std::shared_ptr<HostRunPlan> plan, bool yes, const Callbacks& cb) {
  return finish_host_stage(std::move(plan), yes, cb);
}

}  // namespace pai::deploy
