// The `lock` phase: the install lock a killed run left on the host, for the
// operations that run no os phase (config push, a HiveD push).
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"

namespace pai::deploy::phases {

namespace {

// The operations that run no os phase (config push, a HiveD push: the end of
// upgrade, node add and remove): a lock a killed run of them left is seen here.
class LockPhase : public KeyValuePhase {
 public:
  LockPhase()
      : KeyValuePhase(
            "lock",
            {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .read_only = true}) {}
  std::string what() const override { return "the install lock"; }
  std::string observation(const HostRun&) const override { return kLeftLockRead; }
  util::Result<void> needs_from(HostRun&, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    left_lock_needs(kv, needs);
    return {};
  }
  util::Result<void> apply(HostRun&, const std::vector<std::string>&) override { return {}; }
};

}  // namespace

std::unique_ptr<Phase> make_lock_phase() {
  return std::make_unique<LockPhase>();
}

}  // namespace pai::deploy::phases
