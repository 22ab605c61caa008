// The node remove use case with http::FakeClient for HiveD's inspect API (its
// answers made by lib/scheduler for a group running on one node): removing the
// node a running group uses is refused without --force, before anything
// changes; --force goes on; a node no group uses is not refused; the master is
// refused; HiveD unreachable is a remote failure; a node Kubernetes cannot
// delete stops the removal before the files change.

#include "deploy/node_remove.h"

#include <gtest/gtest.h>

#include "config/cluster_files.h"
#include "deploy/node_json.h"
#include "hived/live.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"
#include "usecase_fixture.h"

namespace pai::deploy {
namespace {

using namespace usecase_test;

const std::string kHived = "http://hived.test:30096";

// HiveD's answers for the quickstart cluster with `train` (VC default, 4 GPUs)
// running; `node` gets the node it runs on.
void hived_runs_a_group(const TempCluster& c, http::FakeClient& hived, std::string& node) {
  auto loaded = config::check_paths({c.dir()});
  ASSERT_FALSE(loaded.clusters.empty());
  auto model = loaded.clusters[0].model;
  ASSERT_NE(model, nullptr);
  auto made = scheduler::make_hived_policy(*model);
  ASSERT_TRUE(made.ok()) << made.error().message;
  auto policy = std::move(*made);
  scheduler::GroupRequest g;
  g.affinity_group = "train";
  g.virtual_cluster = "default";
  g.priority = 100;
  g.members = {{1, 4}};
  g.leaf_cell_type = "k80-machine";
  ASSERT_EQ(policy->schedule(g).outcome, scheduler::Outcome::Bound);
  auto snap = scheduler::snapshot_hived(*policy);
  ASSERT_TRUE(snap);
  auto groups = hived::affinity_groups_of(*model, *snap);
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].physical_placement.size(), 1u);
  node = groups[0].physical_placement.begin()->first;
  hived.add("GET", "/v1/inspect/clusterstatus", 200,
            hived::to_json(hived::cluster_status_of(*model, *snap)).dump());
  hived.add("GET", "/v1/inspect/affinitygroups/", 200, hived::to_json(groups).dump());
}

NodeRemoveRequest remove_request_for(const TempCluster& c, const std::string& node) {
  NodeRemoveRequest r;
  r.cluster_dir = c.dir();
  r.nodes = {node};
  r.hived = kHived;
  r.templates_dir = std::string(PAI_SOURCE_DIR) + "/templates";
  return r;
}

NodeRemoveDeps remove_deps(const TempCluster& c, testing::ScriptedTransport& ssh,
                           http::FakeClient& hived) {
  NodeRemoveDeps d;
  d.install = deps_of(c.dir(), ssh);
  d.hived_http = &hived;
  return d;
}

TEST(NodeRemoveUseCase, RunningGroupsRefuseTheRemovalWithoutForce) {
  TempCluster c;
  http::FakeClient hived;
  std::string node;
  hived_runs_a_group(c, hived, node);
  std::string services = c.read("services-configuration.yaml"), layout = c.read("layout.yaml");
  testing::ScriptedTransport ssh;

  auto plan = plan_node_remove(remove_request_for(c, node), remove_deps(c, ssh, hived), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().about, UseCaseError::About::RunningGroups);
  EXPECT_EQ(plan.error().error.kind, util::Error::Kind::Other);
  EXPECT_EQ(plan.error().error.message, "node remove: running groups use the cells of " + node +
                                            ": train (VC default, onRemovedCells)");
  EXPECT_EQ(c.read("services-configuration.yaml"), services);
  EXPECT_EQ(c.read("layout.yaml"), layout);
  EXPECT_TRUE(ssh.calls().empty());
  EXPECT_EQ(hived.requests().size(), 2u);
}

TEST(NodeRemoveUseCase, ForceGoesOnWithTheGroupsInThePlan) {
  TempCluster c;
  http::FakeClient hived;
  std::string node;
  hived_runs_a_group(c, hived, node);
  testing::ScriptedTransport ssh;
  NodeRemoveRequest r = remove_request_for(c, node);
  r.force = true;
  r.dry_run = true;
  auto plan = plan_node_remove(r, remove_deps(c, ssh, hived), {});
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  EXPECT_TRUE(plan->forced());
  ASSERT_EQ(plan->running_groups->size(), 1u);
  EXPECT_EQ((*plan->running_groups)[0].name, "train");
  EXPECT_TRUE(plan->hived.services_changed());
  EXPECT_TRUE(plan->hived.layout_changed()) << "an on-prem node leaves layout.yaml";
  auto doc = node_remove_json(*plan, nullptr);
  EXPECT_EQ(doc["apiVersion"], "paictl.nodeRemove/v1");
  EXPECT_EQ(doc["nodes"], nlohmann::ordered_json::array({node}));
  EXPECT_EQ(doc["runningGroups"][0]["effect"], "onRemovedCells");
  EXPECT_EQ(doc["hived"]["restartsHived"], true);
}

TEST(NodeRemoveUseCase, ANodeNoGroupUsesIsNotRefused) {
  TempCluster c;
  http::FakeClient hived;
  std::string node;
  hived_runs_a_group(c, hived, node);
  std::string other = node == "pai-worker1" ? "pai-worker2" : "pai-worker1";
  testing::ScriptedTransport ssh;
  Recorder rec;
  NodeRemoveRequest r = remove_request_for(c, other);
  r.dry_run = true;
  auto plan = plan_node_remove(r, remove_deps(c, ssh, hived), rec.callbacks());
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  EXPECT_FALSE(plan->forced());
  ASSERT_TRUE(plan->running_groups);
  EXPECT_TRUE(plan->running_groups->empty());
  EXPECT_TRUE(rec.saw(UseCaseEvent::Kind::NoRunningGroups));
  EXPECT_EQ(plan->nodes, std::vector<std::string>{other});
  EXPECT_EQ(plan->node_script(other),
            "kubectl --kubeconfig=/etc/kubernetes/admin.conf --cache-dir=/etc/paictl/kube-cache "
            "delete node " +
                other + " --ignore-not-found --wait=false\n");
}

TEST(NodeRemoveUseCase, TheMasterIsRefused) {
  TempCluster c;
  http::FakeClient hived;
  testing::ScriptedTransport ssh;
  auto plan = plan_node_remove(remove_request_for(c, "pai-master"), remove_deps(c, ssh, hived), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().error.message,
            "node remove: pai-master is the master; paictl reset removes the cluster");
  EXPECT_TRUE(hived.requests().empty());
}

TEST(NodeRemoveUseCase, HivedUnreachableIsARemoteFailure) {
  TempCluster c;
  http::FakeClient hived;
  http::Route down;
  down.path = "/v1/inspect/clusterstatus";
  down.answers = {{{}, http::ErrorKind::Connect, "connection to hived.test:30096 refused"}};
  hived.add(down);
  hived.add("GET", "/v1/inspect/affinitygroups/", 200, R"({"items": []})");
  testing::ScriptedTransport ssh;
  auto plan =
      plan_node_remove(remove_request_for(c, "pai-worker1"), remove_deps(c, ssh, hived), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().about, UseCaseError::About::HivedUnreachable);
  EXPECT_EQ(plan.error().error.kind, util::Error::Kind::Remote);
  EXPECT_EQ(plan.error().error.message.rfind("HiveD at http://hived.test:30096: reading the "
                                             "cluster status: ",
                                             0),
            0u)
      << plan.error().error.message;
}

TEST(NodeRemoveUseCase, ANodeKubernetesCannotDeleteStopsBeforeTheFilesChange) {
  TempCluster c;
  std::string services = c.read("services-configuration.yaml"), layout = c.read("layout.yaml");
  http::FakeClient hived;
  testing::ScriptedTransport ssh;
  ssh.on("delete node pai-worker2", {.err = "error: the server is unreachable\n", .exit_status = 1},
         "pai-master");
  Recorder rec;
  rec.answer = Answer::Yes;
  NodeRemoveRequest r = remove_request_for(c, "pai-worker2");
  r.hived.clear();
  r.drain = true;
  auto plan = plan_node_remove(r, remove_deps(c, ssh, hived), rec.callbacks());
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  EXPECT_FALSE(plan->running_groups) << "HiveD was not asked";
  auto out = apply_node_remove(*plan, rec.callbacks());
  EXPECT_EQ(out.end, NodeRemoveOutcome::End::DeleteFailed);
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.error->error.kind, util::Error::Kind::Remote);
  EXPECT_EQ(out.error->error.message,
            "node remove: draining and deleting the node pai-worker2 failed: error: the server is "
            "unreachable");
  ASSERT_EQ(rec.questions.size(), 1u);
  EXPECT_EQ(rec.questions[0], Question::Kind::RemoveNodes);
  EXPECT_TRUE(ssh.ran("drain pai-worker2 --ignore-daemonsets", "pai-master"));
  EXPECT_EQ(c.read("services-configuration.yaml"), services);
  EXPECT_EQ(c.read("layout.yaml"), layout);
  EXPECT_FALSE(out.push);
}

TEST(NodeRemoveUseCase, NotConfirmedChangesNothing) {
  TempCluster c;
  http::FakeClient hived;
  testing::ScriptedTransport ssh;
  Recorder rec;
  NodeRemoveRequest r = remove_request_for(c, "pai-worker2");
  r.hived.clear();
  auto plan = plan_node_remove(r, remove_deps(c, ssh, hived), {});
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  auto out = apply_node_remove(*plan, rec.callbacks());
  EXPECT_EQ(out.end, NodeRemoveOutcome::End::Declined);
  EXPECT_TRUE(ssh.calls().empty());
  auto doc = node_remove_json(*plan, &out);
  EXPECT_FALSE(doc.contains("reset"));
  EXPECT_FALSE(doc.contains("push"));
}

}  // namespace
}  // namespace pai::deploy
