// config push: the config phase on the master only, and a cluster directory
// with no cluster files to push refused before any host is reached.

#include "deploy/config_push.h"

#include <gtest/gtest.h>

#include "deploy/install_json.h"
#include "usecase_fixture.h"

namespace pai::deploy {
namespace {

using namespace usecase_test;

ConfigPushRequest push_request_for(const TempCluster& c) {
  ConfigPushRequest r;
  r.cluster_dir = c.dir();
  r.dry_run = true;
  r.templates_dir = std::string(PAI_SOURCE_DIR) + "/templates";
  return r;
}

TEST(ConfigPushUseCase, NothingToPushIsRefusedBeforeAnyHostIsReached) {
  TempCluster c;
  fs::remove(c.path("services-configuration.yaml"));
  testing::ScriptedTransport ssh;
  auto plan = plan_config_push(push_request_for(c), deps_of(c.dir(), ssh), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().error.kind, util::Error::Kind::Input);
  EXPECT_EQ(plan.error().error.message,
            c.dir() + " has no services-configuration.yaml: nothing to push");
  EXPECT_TRUE(ssh.calls().empty());
}

TEST(ConfigPushUseCase, TheConfigPhaseRunsOnTheMaster) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  ssh.unreachable("pai-master");
  Recorder rec;
  auto plan = plan_config_push(push_request_for(c), deps_of(c.dir(), ssh), rec.callbacks());
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  EXPECT_EQ((*plan)->operation, HostOperation::ConfigPush);
  ASSERT_EQ((*plan)->plan.hosts.size(), 3u);
  for (const auto& h : (*plan)->plan.hosts) {
    // The lock a killed run left (phases/os.cc), then the files.
    ASSERT_EQ(h.phases.size(), 2u) << h.host;
    EXPECT_EQ(h.phases[0].phase, "lock");
    EXPECT_EQ(h.phases[1].phase, "config");
  }
  auto stage = apply_config_push(*plan, false, rec.callbacks());
  EXPECT_EQ(stage.end, HostStage::End::Failed) << "the master is unreachable";
  EXPECT_TRUE(rec.questions.empty());
  EXPECT_EQ(host_stage_json(*stage.plan, nullptr)["kind"], "ConfigPush");
}

}  // namespace
}  // namespace pai::deploy
