// The reset use case: reset --azure's plan (what Azure has of the cluster, read
// only in a dry run), a reset not confirmed, and a reset of hosts planned over
// the scripted transport.

#include "deploy/reset.h"

#include <gtest/gtest.h>

#include "deploy/install_json.h"
#include "usecase_fixture.h"

namespace pai::deploy {
namespace {

using namespace usecase_test;

ResetRequest reset_request_for(const TempCluster& c) {
  ResetRequest r;
  r.cluster_dir = c.dir();
  r.templates_dir = std::string(PAI_SOURCE_DIR) + "/templates";
  r.azure_access = test_azure_access();
  return r;
}

TEST(ResetUseCase, AzureDryRunShowsWhatAzureHasAndDeletesNothing) {
  TempCluster c;
  c.make_hybrid();
  http::FakeClient arm;
  arm_has_nothing(arm);
  // The resource group and the scale set exist; the network does not.
  arm.add("GET", kResourceGroup, 200,
          R"({"name": "pai-rg", "location": "eastus", "tags": {"paictl.cluster": "pai"}})");
  arm.add("GET", kResourceGroup + "/providers/Microsoft.Compute/virtualMachineScaleSets", 200,
          R"({"value": []})");
  testing::ScriptedTransport ssh;
  Recorder rec;
  auto cb = rec.callbacks();
  ResetRequest r = reset_request_for(c);
  r.azure = true;
  r.dry_run = true;

  auto plan = plan_reset(r, deps_of(c.dir(), ssh, &arm), cb);
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  ASSERT_TRUE(plan->azure);
  ASSERT_TRUE(plan->azure->plan);
  EXPECT_FALSE(plan->hosts);
  auto out = apply_reset(*plan, cb);
  EXPECT_EQ(out.azure_end, ResetOutcome::AzureEnd::DryRun);
  EXPECT_EQ(arm_writes(arm), 0u);
  EXPECT_TRUE(rec.questions.empty());
  EXPECT_TRUE(ssh.calls().empty()) << "reset --azure leaves the hosts alone";

  auto doc = reset_json(*plan, out);
  EXPECT_EQ(doc["apiVersion"], "paictl.reset/v1");
  EXPECT_EQ(doc["kind"], "AzureReset");
  EXPECT_EQ(doc["dryRun"], true);
  ASSERT_EQ(doc["azure"]["resources"].size(), 4u);
  EXPECT_EQ(doc["azure"]["resources"][0]["kind"], "resource group");
  EXPECT_NE(doc["azure"]["resources"][0]["action"], "create") << "it exists";
}

TEST(ResetUseCase, AzureNotConfirmedReadsAndDeletesNothing) {
  TempCluster c;
  c.make_hybrid();
  http::FakeClient arm;
  arm_has_nothing(arm);
  testing::ScriptedTransport ssh;
  Recorder rec;
  rec.answer = Answer::NoTerminal;
  auto cb = rec.callbacks();
  ResetRequest r = reset_request_for(c);
  r.azure = true;

  auto plan = plan_reset(r, deps_of(c.dir(), ssh, &arm), cb);
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  EXPECT_FALSE(plan->azure->plan) << "a reset reads nothing before its confirmation";
  auto out = apply_reset(*plan, cb);
  EXPECT_EQ(out.azure_end, ResetOutcome::AzureEnd::NoTerminal);
  ASSERT_EQ(rec.questions.size(), 1u);
  EXPECT_EQ(rec.questions[0], Question::Kind::ResetAzure);
  EXPECT_TRUE(arm.requests().empty());
  EXPECT_TRUE(reset_json(*plan, out).is_null()) << "no document without a reset";
}

TEST(ResetUseCase, AzureNeedsAnAzureSection) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  ResetRequest r = reset_request_for(c);
  r.azure = true;
  auto plan = plan_reset(r, deps_of(c.dir(), ssh), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().error.message,
            c.dir() + "/config.yaml has no azure: section (docs/azure.md)");
}

TEST(ResetUseCase, HostsArePlannedWithTheResetPhases) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  ssh.unreachable("pai-worker1");
  Recorder rec;
  auto cb = rec.callbacks();
  ResetRequest r = reset_request_for(c);
  r.dry_run = true;
  r.limit = {"pai-worker1"};
  auto plan = plan_reset(r, deps_of(c.dir(), ssh), cb);
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  ASSERT_TRUE(plan->hosts);
  EXPECT_EQ(plan->hosts->operation, HostOperation::Reset);
  ASSERT_EQ(plan->hosts->cluster->specs.size(), 2u) << "the master is reached too";
  EXPECT_FALSE(plan->hosts->cluster->specs[0].selected);
  EXPECT_TRUE(plan->hosts->cluster->specs[1].selected);
  auto out = apply_reset(*plan, cb);
  EXPECT_EQ(out.hosts.end, HostStage::End::Failed);
  auto doc = reset_json(*plan, out);
  EXPECT_EQ(doc["kind"], "Reset");
  EXPECT_EQ(doc["apiVersion"], "paictl.install/v1");
}

}  // namespace
}  // namespace pai::deploy
