// The node add use case: an on-prem host's cells planned (and a VC that cannot
// take them refused) without a file changing; node add --azure's plan read
// from ARM (http::FakeClient): the scale set's new size, placeholders' cells,
// a dry run that sends no write; growth not confirmed; an unknown pool refused.

#include "deploy/node_add.h"

#include <gtest/gtest.h>

#include "deploy/node_json.h"
#include "usecase_fixture.h"

namespace pai::deploy {
namespace {

using namespace usecase_test;

// quickstart with a third worker in layout.yaml that the HiveD config does not have.
void add_worker3(const TempCluster& c) {
  c.append("layout.yaml",
           "  - hostname: pai-worker3\n    hostip: 10.0.0.4\n    machine-type: k80-machine\n"
           "    pai-worker: \"true\"\n");
}

NodeAddRequest add_request_for(const TempCluster& c) {
  NodeAddRequest r;
  r.cluster_dir = c.dir();
  r.templates_dir = std::string(PAI_SOURCE_DIR) + "/templates";
  r.layouts_dir = std::string(PAI_SOURCE_DIR) + "/layouts";
  r.azure = test_azure_access();
  return r;
}

TEST(NodeAddUseCase, AnOnPremHostsCellsArePlannedWithoutAFileChanging) {
  TempCluster c;
  add_worker3(c);
  std::string services = c.read("services-configuration.yaml");
  testing::ScriptedTransport ssh;
  NodeAddRequest r = add_request_for(c);
  r.nodes = {"pai-worker3"};
  r.vc = "default";
  auto plan = plan_node_add(r, deps_of(c.dir(), ssh), {});
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  EXPECT_FALSE(plan->grow);
  EXPECT_EQ(plan->nodes, std::vector<std::string>{"pai-worker3"});
  EXPECT_TRUE(plan->hived.services_changed());
  EXPECT_FALSE(plan->hived.layout_changed());
  EXPECT_NE(plan->hived.services_after.find("cellAddress: pai-worker3"), std::string::npos);
  EXPECT_EQ(plan->hived.master, "pai-master") << "where the push goes";
  EXPECT_EQ(c.read("services-configuration.yaml"), services);
  EXPECT_TRUE(ssh.calls().empty()) << "the plan reaches no host";
  auto doc = node_add_json(*plan, nullptr);
  EXPECT_EQ(doc["apiVersion"], "paictl.nodeAdd/v1");
  EXPECT_EQ(doc["dryRun"], false);
  EXPECT_EQ(doc["hived"]["restartsHived"], true);
  EXPECT_FALSE(doc.contains("azure"));
}

TEST(NodeAddUseCase, AVcThatCannotTakeTheCellsIsRefused) {
  TempCluster c;
  add_worker3(c);
  testing::ScriptedTransport ssh;
  NodeAddRequest r = add_request_for(c);
  r.nodes = {"pai-worker3"};
  r.vc = "nosuch";
  auto plan = plan_node_add(r, deps_of(c.dir(), ssh), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().error.kind, util::Error::Kind::Input);
  EXPECT_EQ(plan.error().error.message.rfind("HiveD config: ", 0), 0u)
      << plan.error().error.message;
}

TEST(NodeAddUseCase, AzurePoolGrowthIsPlannedFromWhatArmHas) {
  TempCluster c;
  c.make_hybrid(2);
  std::string config = c.read("config.yaml");
  http::FakeClient arm;
  arm_has_nothing(arm);
  arm_has_vms(arm, 2);
  testing::ScriptedTransport ssh;
  Recorder rec;
  NodeAddRequest r = add_request_for(c);
  r.azure_pool = "gpu";
  r.count = 2;
  r.dry_run = true;
  auto plan = plan_node_add(r, deps_of(c.dir(), ssh, &arm), rec.callbacks());
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  ASSERT_TRUE(plan->grow);
  EXPECT_EQ(plan->grow->scale_set, "pai-gpu");
  EXPECT_EQ(plan->grow->from, 2);
  EXPECT_EQ(plan->grow->to, 4);
  EXPECT_EQ(plan->grow->had, (std::set<std::string>{"pai-gpu000000", "pai-gpu000001"}));
  EXPECT_NE(plan->grow->config_after.find("count: 4"), std::string::npos);
  EXPECT_TRUE(plan->nodes.empty()) << "Azure names the VMs";
  EXPECT_NE(plan->hived.services_after.find("new-vm-2"), std::string::npos)
      << "a dry run shows the cells under placeholder names";

  auto out = apply_node_add(*plan, rec.callbacks());
  EXPECT_EQ(out.end, NodeAddOutcome::End::DryRun);
  EXPECT_TRUE(rec.questions.empty());
  EXPECT_EQ(arm_writes(arm), 0u);
  EXPECT_EQ(c.read("config.yaml"), config);
  auto doc = node_add_json(*plan, &out);
  EXPECT_EQ(doc["dryRun"], true);
  EXPECT_EQ(doc["nodes"].size(), 0u);
  EXPECT_EQ(doc["azure"]["from"], 2);
  EXPECT_EQ(doc["azure"]["to"], 4);
  EXPECT_FALSE(doc["azure"].contains("added"));
  EXPECT_FALSE(doc.contains("join"));
}

TEST(NodeAddUseCase, AzureGrowthNotConfirmedSendsNoWrite) {
  TempCluster c;
  c.make_hybrid(2);
  http::FakeClient arm;
  arm_has_nothing(arm);
  arm_has_vms(arm, 2);
  testing::ScriptedTransport ssh;
  Recorder rec;
  rec.answer = Answer::NoTerminal;
  NodeAddRequest r = add_request_for(c);
  r.azure_pool = "gpu";
  auto plan = plan_node_add(r, deps_of(c.dir(), ssh, &arm), rec.callbacks());
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  auto out = apply_node_add(*plan, rec.callbacks());
  EXPECT_EQ(out.end, NodeAddOutcome::End::NoTerminal);
  ASSERT_EQ(rec.questions.size(), 1u);
  EXPECT_EQ(rec.questions[0], Question::Kind::GrowPool);
  EXPECT_EQ(arm_writes(arm), 0u);
  EXPECT_TRUE(ssh.calls().empty());
}

TEST(NodeAddUseCase, AnUnknownPoolIsRefusedBeforeAzureIsRead) {
  TempCluster c;
  c.make_hybrid(2);
  http::FakeClient arm;
  arm_has_nothing(arm);
  testing::ScriptedTransport ssh;
  NodeAddRequest r = add_request_for(c);
  r.azure_pool = "cpu";
  auto plan = plan_node_add(r, deps_of(c.dir(), ssh, &arm), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().error.kind, util::Error::Kind::Input);
  EXPECT_EQ(plan.error().error.message, "config.yaml has no Azure pool \"cpu\" (pools: gpu)");
  EXPECT_TRUE(arm.requests().empty()) << "refused before Azure is read";
}

}  // namespace
}  // namespace pai::deploy
