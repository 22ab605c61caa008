// The maintenance planner (lib/hived/maintenance.h) on live states built the
// way HiveD shows them: a config, groups scheduled by lib/scheduler, then
// cluster_status_of / affinity_groups_of -> index_live.

#include "hived/maintenance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "api/client.h"
#include "hived/fit.h"
#include "hived/maintenance_json.h"
#include "scheduler/helpers.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"
#include "support/fake_client.h"

namespace pai::hived {
namespace {

using scheduler::test::req;

// Eight 8-GPU V100 nodes in two racks; prod is guaranteed four nodes and
// research two: two nodes are nobody's guarantee.
const char* kMaintenanceLoose = R"(
physicalCluster:
  skuTypes:
    V100: {gpu: 1, cpu: 6, memory: 60Gi}
  cellTypes:
    V100-NODE: {childCellType: V100, childCellNumber: 8, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 4}
  physicalCells:
  - cellType: V100-RACK
    cellChildren: [{cellAddress: v1}, {cellAddress: v2}, {cellAddress: v3}, {cellAddress: v4}]
  - cellType: V100-RACK
    cellChildren: [{cellAddress: v5}, {cellAddress: v6}, {cellAddress: v7}, {cellAddress: v8}]
virtualClusters:
  prod:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 4}]
  research:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 2}]
)";

// The same nodes, every one guaranteed: prod four, research four.
const char* kMaintenanceTight = R"(
physicalCluster:
  skuTypes:
    V100: {gpu: 1, cpu: 6, memory: 60Gi}
  cellTypes:
    V100-NODE: {childCellType: V100, childCellNumber: 8, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 4}
  physicalCells:
  - cellType: V100-RACK
    cellChildren: [{cellAddress: v1}, {cellAddress: v2}, {cellAddress: v3}, {cellAddress: v4}]
  - cellType: V100-RACK
    cellChildren: [{cellAddress: v5}, {cellAddress: v6}, {cellAddress: v7}, {cellAddress: v8}]
virtualClusters:
  prod:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 4}]
  research:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 4}]
)";

const std::vector<std::string> kMaintenanceNodes = {"v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"};
constexpr double kMaintenanceNow = 1'800'000'000;

LiveState maintenance_live(const char* config,
                           std::initializer_list<scheduler::GroupRequest> requests) {
  auto model = scheduler::test::model_from_yaml(config);
  auto made = scheduler::make_hived_policy(*model);
  EXPECT_TRUE(made.ok()) << made.error().message;
  auto policy = std::move(*made);
  for (const auto& r : requests)
    EXPECT_EQ(policy->schedule(r).outcome, scheduler::Outcome::Bound) << r.affinity_group;
  auto state = *scheduler::snapshot_hived(*policy);
  return index_live(cluster_status_of(*model, state), affinity_groups_of(*model, state));
}

// The nodes a group runs on, in name order.
std::vector<std::string> maintenance_nodes_of(const LiveState& live, const std::string& group) {
  std::vector<std::string> out;
  for (const auto& g : live.groups)
    if (g.name == group)
      for (const auto& [node, leaves] : g.physical_placement) out.push_back(node);
  return out;
}

// The nodes given, without `minus`, in their order.
std::vector<std::string> maintenance_except(const std::vector<std::string>& nodes,
                                            const std::vector<std::string>& minus) {
  std::vector<std::string> out;
  for (const auto& n : nodes)
    if (std::find(minus.begin(), minus.end(), n) == minus.end()) out.push_back(n);
  return out;
}

MaintenanceRequest maintenance_request(std::vector<std::string> nodes, int64_t n = 1) {
  MaintenanceRequest r;
  r.nodes = std::move(nodes);
  r.max_unavailable.value = n;
  r.now_s = kMaintenanceNow;
  r.wait_for_groups_s = 4 * 3600;
  return r;
}

std::vector<std::string> maintenance_batched(const MaintenancePlan& p) {
  std::vector<std::string> out;
  for (const auto& b : p.batches) out.insert(out.end(), b.nodes.begin(), b.nodes.end());
  return out;
}

const PlannedGroup* maintenance_find(const MaintenanceBatch& b, const std::string& name) {
  for (const auto& g : b.groups)
    if (g.name == name) return &g;
  return nullptr;
}

TEST(MaxUnavailable, ParsesNodesAndPercent) {
  auto n = parse_max_unavailable("3");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->kind, MaxUnavailable::Kind::Nodes);
  EXPECT_EQ(n->value, 3);
  auto p = parse_max_unavailable("10%");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, MaxUnavailable::Kind::Percent);
  EXPECT_EQ(to_string(*p), "10%");
  for (const char* bad : {"", "0", "-1", "101%", "0%", "x", "3 nodes", "%", "1.5"})
    EXPECT_FALSE(parse_max_unavailable(bad).ok()) << bad;
  EXPECT_FALSE(parse_max_unavailable("abc").error().hint.empty());
}

TEST(Maintenance, IdleNodesFirstThenTheSoonestEnding) {
  LiveState live = maintenance_live(kMaintenanceLoose, {req("alice~long/0", "prod", 100, {{1, 8}}),
                                                        req("bob~short/0", "prod", 100, {{1, 8}})});
  const auto long_nodes = maintenance_nodes_of(live, "alice~long/0");
  const auto short_nodes = maintenance_nodes_of(live, "bob~short/0");
  ASSERT_EQ(long_nodes.size(), 1u);
  ASSERT_EQ(short_nodes.size(), 1u);
  auto r = maintenance_request(kMaintenanceNodes);
  // bob~short's end is keyed by its job, as job::expected_ends gives it.
  r.expected_ends = {{"alice~long/0", kMaintenanceNow + 7200},
                     {"bob~short", kMaintenanceNow + 3600}};
  auto plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_TRUE(plan->hived);
  ASSERT_EQ(plan->batches.size(), 8u);
  std::vector<std::string> expect =
      maintenance_except(kMaintenanceNodes, {long_nodes[0], short_nodes[0]});
  expect.push_back(short_nodes[0]);
  expect.push_back(long_nodes[0]);
  EXPECT_EQ(maintenance_batched(*plan), expect);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_TRUE(plan->batches[i].groups.empty());
    EXPECT_EQ(plan->batches[i].start_s, kMaintenanceNow);
    EXPECT_EQ(plan->batches[i].reason, "no running group on its nodes");
  }
  const auto& b7 = plan->batches[6];
  ASSERT_EQ(b7.groups.size(), 1u);
  EXPECT_EQ(b7.groups[0].name, "bob~short/0");
  EXPECT_EQ(b7.groups[0].action, GroupAction::WaitedFor);
  EXPECT_EQ(b7.groups[0].until_s, kMaintenanceNow + 3600);
  EXPECT_EQ(b7.start_s, kMaintenanceNow + 3600);
  EXPECT_NE(b7.reason.find("bob~short/0"), std::string::npos) << b7.reason;
  EXPECT_EQ(plan->batches[7].groups.at(0).name, "alice~long/0");
  EXPECT_EQ(plan->batches[7].start_s, kMaintenanceNow + 7200);
  EXPECT_EQ(plan->end_s, kMaintenanceNow + 7200);
  EXPECT_TRUE(plan->blocked.empty());
  EXPECT_TRUE(plan->evicted.empty());
}

TEST(Maintenance, TheBatchDurationShiftsTheStarts) {
  LiveState live = maintenance_live(kMaintenanceLoose, {});
  auto r = maintenance_request({"v1", "v2", "v3"});
  r.batch_s = 600;
  auto plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->batches.size(), 3u);
  EXPECT_EQ(plan->batches[0].start_s, kMaintenanceNow);
  EXPECT_EQ(plan->batches[1].start_s, kMaintenanceNow + 600);
  EXPECT_EQ(plan->batches[2].start_s, kMaintenanceNow + 1200);
}

TEST(Maintenance, AGangsNodesGoTogetherAfterItEnds) {
  LiveState live =
      maintenance_live(kMaintenanceLoose, {req("carol~gang/0", "prod", 100, {{2, 8}})});
  const auto gang = maintenance_nodes_of(live, "carol~gang/0");
  ASSERT_EQ(gang.size(), 2u);
  auto r = maintenance_request(kMaintenanceNodes, 2);
  r.expected_ends = {{"carol~gang/0", kMaintenanceNow + 1800}};
  auto plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->batches.size(), 4u);
  for (const auto& b : plan->batches) EXPECT_LE(b.nodes.size(), 2u);
  const auto& last = plan->batches.back();
  std::vector<std::string> got = last.nodes;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, gang);
  EXPECT_EQ(last.start_s, kMaintenanceNow + 1800);
  ASSERT_EQ(last.groups.size(), 1u);
  EXPECT_EQ(last.groups[0].nodes, gang);
  EXPECT_NE(last.reason.find("keeps its 2 nodes together"), std::string::npos) << last.reason;

  // Three a batch: two idle nodes and the gang do not fit; the gang is not split.
  r.max_unavailable.value = 3;
  r.nodes = maintenance_except(kMaintenanceNodes, {});
  plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  for (const auto& b : plan->batches) {
    auto in = [&](const std::string& n) {
      return std::find(b.nodes.begin(), b.nodes.end(), n) != b.nodes.end();
    };
    EXPECT_EQ(in(gang[0]), in(gang[1])) << "batch " << b.index;
  }
}

TEST(Maintenance, AGangLargerThanABatchFillsConsecutiveBatchesTheFirstWaiting) {
  LiveState live =
      maintenance_live(kMaintenanceLoose, {req("carol~gang/0", "prod", 100, {{3, 8}})});
  const auto gang = maintenance_nodes_of(live, "carol~gang/0");
  ASSERT_EQ(gang.size(), 3u);
  auto r = maintenance_request(kMaintenanceNodes, 2);
  r.expected_ends = {{"carol~gang/0", kMaintenanceNow + 1800}};
  auto plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->batches.size(), 5u);  // 5 idle nodes: 2 + 2 + 1, then the gang: 2 + 1
  const auto& first = plan->batches[3];
  const auto& second = plan->batches[4];
  EXPECT_EQ(first.nodes.size(), 2u);
  EXPECT_EQ(second.nodes.size(), 1u);
  ASSERT_EQ(first.groups.size(), 1u);
  EXPECT_EQ(first.groups[0].name, "carol~gang/0");
  EXPECT_TRUE(second.groups.empty());  // it has ended
  EXPECT_EQ(first.start_s, kMaintenanceNow + 1800);
  EXPECT_GE(second.start_s, first.start_s);
  EXPECT_NE(first.reason.find("consecutive batches"), std::string::npos) << first.reason;
}

TEST(Maintenance, MaxUnavailableNodes) {
  LiveState live = maintenance_live(kMaintenanceLoose, {});
  auto plan = plan_maintenance(maintenance_request({"v5", "v1", "v2", "v7", "v3"}, 2), &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->batches.size(), 3u);
  EXPECT_EQ(plan->batches[0].nodes, (std::vector<std::string>{"v5", "v1"}));
  EXPECT_EQ(plan->batches[1].nodes, (std::vector<std::string>{"v2", "v7"}));
  EXPECT_EQ(plan->batches[2].nodes, (std::vector<std::string>{"v3"}));
  EXPECT_EQ(plan->nodes_per_batch, 2);
}

TEST(Maintenance, MaxUnavailablePercentOfTheClustersNodes) {
  LiveState live = maintenance_live(kMaintenanceLoose, {});
  auto r = maintenance_request(kMaintenanceNodes);
  r.max_unavailable = *parse_max_unavailable("25%");
  auto plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->cluster_nodes, 8);
  EXPECT_EQ(plan->nodes_per_batch, 2);
  ASSERT_EQ(plan->batches.size(), 4u);
  for (const auto& b : plan->batches) {
    EXPECT_EQ(b.nodes.size(), 2u);
    EXPECT_TRUE(b.doomed.empty());  // two nodes are nobody's guarantee
  }
  // 10% of 8 nodes is less than one: one a batch.
  r.max_unavailable = *parse_max_unavailable("10%");
  plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->nodes_per_batch, 1);
  EXPECT_EQ(plan->batches.size(), 8u);
}

// Research uses its four nodes; prod's four are idle. Cordoning idle nodes
// leaves fewer healthy free nodes than prod's free guarantee: HiveD dooms them.
LiveState maintenance_tight_live() {
  return maintenance_live(
      kMaintenanceTight,
      {req("r1", "research", 100, {{1, 8}}), req("r2", "research", 100, {{1, 8}}),
       req("r3", "research", 100, {{1, 8}}), req("r4", "research", 100, {{1, 8}})});
}

std::vector<std::string> maintenance_idle(const LiveState& live) {
  std::vector<std::string> used;
  for (const auto& g : live.groups)
    for (const auto& [node, leaves] : g.physical_placement) used.push_back(node);
  return maintenance_except(kMaintenanceNodes, used);
}

TEST(Maintenance, DoomedCellsPerVc) {
  LiveState live = maintenance_tight_live();
  auto idle = maintenance_idle(live);
  ASSERT_EQ(idle.size(), 4u);
  auto plan = plan_maintenance(maintenance_request(idle, 2), &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->batches.size(), 2u);
  for (const auto& b : plan->batches) {
    ASSERT_EQ(b.doomed.size(), 1u) << "batch " << b.index;
    const auto& d = b.doomed[0];
    EXPECT_EQ(d.vc, "prod");
    EXPECT_EQ(d.cell_type, "V100-NODE");
    EXPECT_EQ(d.cells, 2);  // prod's 4 free cells against 2 healthy free nodes
    EXPECT_EQ(d.leaves, 16);
    EXPECT_EQ(d.added_leaves, 16);
    EXPECT_EQ(d.guaranteed_leaves, 32);
    EXPECT_EQ(d.allowed_leaves, -1);
  }

  // The same figure as HiveD's state rebuilt with those nodes bad and their
  // cells summarized (hived status).
  auto model = model_of(live.status);
  ASSERT_TRUE(model.ok());
  auto made = scheduler::make_hived_policy(*model.value());
  ASSERT_TRUE(made.ok());
  auto policy = std::move(*made);
  for (const auto& n : plan->batches[0].nodes)
    policy->set_node_health(policy->cluster().find_node(n), false);
  scheduler::restore_hived_groups(*policy, live_groups(live, model.value().get()));
  auto state = *scheduler::snapshot_hived(*policy);
  LiveState after = index_live(cluster_status_of(*model.value(), state),
                               affinity_groups_of(*model.value(), state));
  int64_t bad = 0;
  for (const auto& v : summarize(after).vcs)
    if (v.vc == "prod") bad += v.bad;
  EXPECT_EQ(bad, 16);
}

TEST(Maintenance, PercentBoundsTheDoomedCellsOfEachVc) {
  LiveState live = maintenance_tight_live();
  auto idle = maintenance_idle(live);
  auto r = maintenance_request(idle);
  r.max_unavailable = *parse_max_unavailable("25%");  // 2 of 8 nodes; 8 of prod's 32 cells
  auto plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->nodes_per_batch, 2);
  ASSERT_EQ(plan->batches.size(), 4u);  // two nodes would doom 16 of prod's cells
  for (const auto& b : plan->batches) {
    EXPECT_EQ(b.nodes.size(), 1u);
    ASSERT_EQ(b.doomed.size(), 1u);
    EXPECT_EQ(b.doomed[0].leaves, 8);
    EXPECT_EQ(b.doomed[0].allowed_leaves, 8);
  }
  EXPECT_NE(plan->batches[0].reason.find("VC prod"), std::string::npos) << plan->batches[0].reason;
  // 50%: 16 of prod's cells: two nodes a batch.
  r.max_unavailable = *parse_max_unavailable("50%");
  plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->batches.size(), 2u);
}

TEST(Maintenance, AGroupPastTheWaitBlocksWithoutEvict) {
  LiveState live =
      maintenance_live(kMaintenanceLoose, {req("dave~long/0", "prod", 100, {{1, 8}}),
                                           req("erin~unknown/0", "prod", 100, {{1, 8}}),
                                           req("frank~soon/0", "prod", 100, {{1, 8}})});
  const auto long_node = maintenance_nodes_of(live, "dave~long/0").at(0);
  const auto unknown_node = maintenance_nodes_of(live, "erin~unknown/0").at(0);
  const auto soon_node = maintenance_nodes_of(live, "frank~soon/0").at(0);
  auto r = maintenance_request(kMaintenanceNodes);
  r.wait_for_groups_s = 2 * 3600;
  r.expected_ends = {{"dave~long", kMaintenanceNow + 10 * 3600},
                     {"frank~soon", kMaintenanceNow + 600}};
  auto plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto batched = maintenance_batched(*plan);
  EXPECT_EQ(batched.size(), 6u);
  EXPECT_EQ(batched.back(), soon_node);
  ASSERT_EQ(plan->blocked.size(), 2u);
  std::set<std::string> blocked = {plan->blocked[0].node, plan->blocked[1].node};
  EXPECT_EQ(blocked, (std::set<std::string>{long_node, unknown_node}));
  ASSERT_EQ(plan->blocking.size(), 2u);
  EXPECT_EQ(plan->blocking[0].name, "dave~long/0");
  EXPECT_EQ(plan->blocking[0].action, GroupAction::Blocks);
  EXPECT_NE(plan->blocking[0].reason.find("after the 2h wait"), std::string::npos)
      << plan->blocking[0].reason;
  EXPECT_NE(plan->blocking[1].reason.find("no expected end"), std::string::npos)
      << plan->blocking[1].reason;
  EXPECT_TRUE(plan->evicted.empty());

  // With evict: every node, the evicted ones last, the groups named.
  r.evict = true;
  plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  batched = maintenance_batched(*plan);
  ASSERT_EQ(batched.size(), 8u);
  EXPECT_EQ(batched[5], soon_node);
  EXPECT_EQ(std::set<std::string>(batched.begin() + 6, batched.end()),
            (std::set<std::string>{long_node, unknown_node}));
  EXPECT_TRUE(plan->blocked.empty());
  EXPECT_EQ(std::set<std::string>(plan->evicted.begin(), plan->evicted.end()),
            (std::set<std::string>{"dave~long/0", "erin~unknown/0"}));
  const auto* evicted = maintenance_find(plan->batches[6], plan->evicted[0]);
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->action, GroupAction::Evicted);
  EXPECT_FALSE(evicted->until_s);
  EXPECT_EQ(plan->batches[6].start_s, kMaintenanceNow + 600);  // not before the batch before it
}

// A HiveD restarted while a batch is out rebuilds its state from the running
// groups with the batch's nodes bad (scheduler::restore_hived_groups, as
// `hived diff --live` replays a restart). Prod runs pA, pB, pC and pD,
// research r1 and r2; the batch cordons pD's node X and an idle node while it
// waits for pD. Rebuilt in that order, once prod's first three are back
// research's free guarantee (4) outgrows the healthy free nodes (3): HiveD
// dooms the first bad node, X, to research, and pD finds its cell bound to
// another VC.
TEST(Maintenance, LazilyPreemptedGroupsAreThoseOfARestartWithTheBatchBad) {
  LiveState live = maintenance_live(
      kMaintenanceTight,
      {req("pA", "prod", 100, {{1, 8}}), req("pB", "prod", 100, {{1, 8}}),
       req("pC", "prod", 100, {{1, 8}}), req("pD", "prod", 100, {{1, 8}}),
       req("r1", "research", 100, {{1, 8}}), req("r2", "research", 100, {{1, 8}})});
  const std::string x = maintenance_nodes_of(live, "pD").at(0);
  std::vector<std::string> idle = maintenance_idle(live);
  ASSERT_EQ(idle.size(), 2u);
  const std::string y = idle.front();
  auto r = maintenance_request({y, x}, 2);
  r.expected_ends = {{"pD", kMaintenanceNow + 600}};
  auto plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->batches.size(), 1u);
  const auto& b = plan->batches[0];
  EXPECT_EQ(b.nodes, (std::vector<std::string>{y, x}));

  // The replay, done here on its own: a restart now and one with X and Y bad.
  auto model = model_of(live.status);
  ASSERT_TRUE(model.ok());
  auto binds = live_groups(live, model.value().get());
  auto restart = [&](const std::vector<std::string>& bad) {
    auto made = scheduler::make_hived_policy(*model.value());
    auto policy = std::move(*made);
    for (const auto& n : bad) policy->set_node_health(policy->cluster().find_node(n), false);
    return *scheduler::restore_hived_groups(*policy, binds);
  };
  auto before = restart({});
  auto after = restart({x, y});
  std::set<std::string> want;
  for (size_t i = 0; i < binds.size(); ++i)
    if (before[i].outcome == scheduler::RestoreOutcome::Kept &&
        after[i].outcome == scheduler::RestoreOutcome::LazyPreempted)
      want.insert(after[i].name);
  EXPECT_EQ(want, std::set<std::string>{"pD"});
  std::set<std::string> got;
  for (const auto& g : b.groups)
    if (g.action == GroupAction::LazilyPreempted || g.lazily_preempted) got.insert(g.name);
  EXPECT_EQ(got, want);
  const auto* px = maintenance_find(b, "pD");
  ASSERT_NE(px, nullptr);
  EXPECT_EQ(px->action, GroupAction::WaitedFor);
  EXPECT_TRUE(px->lazily_preempted);
  EXPECT_NE(px->lazy_reason.find("bound to VC research"), std::string::npos) << px->lazy_reason;

  // Evicted instead of waited for, pD is gone before the restart: nothing to preempt.
  r.expected_ends.clear();
  r.evict = true;
  plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  for (const auto& g : plan->batches.at(0).groups) {
    EXPECT_NE(g.action, GroupAction::LazilyPreempted) << g.name;
    EXPECT_FALSE(g.lazily_preempted) << g.name;
  }
}

TEST(Maintenance, WithoutHivedThePlainOrderAndWhy) {
  auto r = maintenance_request({"n3", "n1", "n2", "n1"}, 2);
  r.expected_ends = {{"x", kMaintenanceNow + 5}};
  auto plan = plan_maintenance(r, nullptr, "no --hived URL and no hived_url in config.yaml");
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_FALSE(plan->hived);
  EXPECT_EQ(plan->fallback_reason, "no --hived URL and no hived_url in config.yaml");
  ASSERT_EQ(plan->batches.size(), 2u);
  EXPECT_EQ(plan->batches[0].nodes, (std::vector<std::string>{"n3", "n1"}));
  EXPECT_EQ(plan->batches[1].nodes, (std::vector<std::string>{"n2"}));
  EXPECT_NE(plan->batches[0].reason.find("no hived_url"), std::string::npos);
  ASSERT_EQ(plan->warnings.size(), 1u);  // n1 twice
  EXPECT_NE(plan->warnings[0].find("n1"), std::string::npos);
  // Without a reason, the default one.
  plan = plan_maintenance(r, nullptr);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->fallback_reason.find("no HiveD is known"), std::string::npos);
  // P% of the nodes given.
  r.nodes = {"a", "b", "c", "d", "e", "f"};
  r.max_unavailable = *parse_max_unavailable("50%");
  plan = plan_maintenance(r, nullptr);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->batches.size(), 2u);
  auto j = maintenance_json(*plan);
  EXPECT_EQ(j["order"], "plain");
  EXPECT_EQ(j["maxUnavailable"], "50%");
}

TEST(Maintenance, BadRequestsAreErrors) {
  EXPECT_FALSE(plan_maintenance(maintenance_request({}), nullptr).ok());
  auto r = maintenance_request({"v1"});
  r.max_unavailable.value = 0;
  EXPECT_FALSE(plan_maintenance(r, nullptr).ok());
  r.max_unavailable = {MaxUnavailable::Kind::Percent, 150};
  EXPECT_FALSE(plan_maintenance(r, nullptr).ok());
}

TEST(Maintenance, NodesHivedDoesNotKnowAreIdle) {
  LiveState live = maintenance_live(kMaintenanceLoose, {});
  auto plan = plan_maintenance(maintenance_request({"cpu1", "v1"}), &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->unknown_nodes, std::vector<std::string>{"cpu1"});
  ASSERT_EQ(plan->batches.size(), 2u);
  EXPECT_NE(plan->batches[0].reason.find("not in HiveD's cells"), std::string::npos);
}

TEST(Maintenance, TheSameInputGivesTheSamePlan) {
  LiveState live = maintenance_live(
      kMaintenanceTight, {req("r1", "research", 100, {{2, 8}}), req("p1", "prod", 100, {{1, 8}}),
                          req("p2", "prod", 100, {{1, 4}}), req("o1", "research", -1, {{1, 8}})});
  auto r = maintenance_request(kMaintenanceNodes);
  r.max_unavailable = *parse_max_unavailable("30%");
  r.evict = true;
  r.expected_ends = {
      {"r1", kMaintenanceNow + 100}, {"p1", kMaintenanceNow + 100}, {"p2", kMaintenanceNow + 50}};
  auto a = plan_maintenance(r, &live);
  auto b = plan_maintenance(r, &live);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(maintenance_json(*a).dump(), maintenance_json(*b).dump());
  // Ties (same end) keep the order given.
  EXPECT_EQ(a->batches.size(), b->batches.size());
  EXPECT_EQ(maintenance_batched(*a).size(), 8u);
}

// The planner skips the restart replay of a batch whose bad cells fit in
// HiveD's headroom; replaying every batch gives the same plans.
TEST(Maintenance, SkippingReplaysChangesNoPlan) {
  std::vector<LiveState> lives;
  lives.push_back(maintenance_tight_live());
  lives.push_back(maintenance_live(
      kMaintenanceTight,
      {req("pA", "prod", 100, {{1, 8}}), req("pB", "prod", 100, {{1, 8}}),
       req("pC", "prod", 100, {{1, 8}}), req("pD", "prod", 100, {{1, 8}}),
       req("r1", "research", 100, {{1, 8}}), req("r2", "research", 100, {{1, 8}})}));
  lives.push_back(maintenance_live(
      kMaintenanceLoose, {req("g", "prod", 100, {{2, 8}}), req("s", "research", 100, {{1, 4}}),
                          req("o", "research", -1, {{1, 8}})}));
  lives.push_back(maintenance_live(
      kMaintenanceTight, {req("r1", "research", 100, {{2, 8}}), req("p1", "prod", 100, {{1, 8}}),
                          req("p2", "prod", 100, {{1, 4}}), req("o1", "research", -1, {{1, 8}})}));
  int replayed_differently = 0;
  int64_t skipped = 0;
  for (size_t i = 0; i < lives.size(); ++i)
    for (const char* m : {"1", "2", "3", "25%", "50%"})
      for (bool evict : {false, true}) {
        auto r = maintenance_request(kMaintenanceNodes);
        r.max_unavailable = *parse_max_unavailable(m);
        r.evict = evict;
        for (const auto& g : lives[i].groups) r.expected_ends[g.name] = kMaintenanceNow + 60;
        if (evict) r.expected_ends.clear();
        auto fast = plan_maintenance(r, &lives[i]);
        r.replay_every_batch = true;
        auto exact = plan_maintenance(r, &lives[i]);
        ASSERT_TRUE(fast.ok() && exact.ok());
        EXPECT_EQ(exact->replayed_batches, static_cast<int64_t>(exact->batches.size()));
        EXPECT_LE(fast->replayed_batches, exact->replayed_batches);
        skipped += exact->replayed_batches - fast->replayed_batches;
        auto a = maintenance_json(*fast), b = maintenance_json(*exact);
        a.erase("replayedBatches");
        b.erase("replayedBatches");
        EXPECT_EQ(a.dump(), b.dump())
            << "live " << i << ", max unavailable " << m << (evict ? ", evict" : "");
        for (const auto& b : exact->batches)
          for (const auto& g : b.groups)
            if (g.lazily_preempted || g.action == GroupAction::LazilyPreempted)
              ++replayed_differently;
      }
  EXPECT_GT(replayed_differently, 0);  // the comparison saw lazily preempted groups
  EXPECT_GT(skipped, 0);               // and batches the shortcut skipped
}

TEST(Maintenance, TheJsonDocument) {
  LiveState live = maintenance_live(kMaintenanceLoose, {req("bob~short/0", "prod", 100, {{1, 8}})});
  auto r = maintenance_request(kMaintenanceNodes, 4);
  r.expected_ends = {{"bob~short", kMaintenanceNow + 60}};
  auto plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto j = maintenance_json(*plan);
  EXPECT_EQ(j["order"], "hived");
  EXPECT_FALSE(j.contains("fallbackReason"));
  EXPECT_EQ(j["maxUnavailable"], "4");
  ASSERT_EQ(j["batches"].size(), 2u);
  const auto& g = j["batches"][1]["groups"][0];
  EXPECT_EQ(g["name"], "bob~short/0");
  EXPECT_EQ(g["action"], "waitedFor");
  EXPECT_EQ(g["until"], kMaintenanceNow + 60);
  EXPECT_EQ(g["leafCells"], 8);
  EXPECT_EQ(j["batches"][1]["start"], kMaintenanceNow + 60);
}

// The input read from HiveD's inspect API and the REST API's job list.
TEST(Maintenance, TheInputIsReadFromHivedAndTheJobList) {
  auto model = scheduler::test::model_from_yaml(kMaintenanceLoose);
  auto made = scheduler::make_hived_policy(*model);
  ASSERT_TRUE(made.ok());
  auto policy = std::move(*made);
  ASSERT_EQ(policy->schedule(req("bob~short/0", "prod", 100, {{1, 8}})).outcome,
            scheduler::Outcome::Bound);
  auto state = *scheduler::snapshot_hived(*policy);
  http::FakeClient hived_http;
  hived_http.add("GET", "/v1/inspect/clusterstatus", 200,
                 to_json(cluster_status_of(*model, state)).dump());
  hived_http.add("GET", "/v1/inspect/affinitygroups/", 200,
                 to_json(affinity_groups_of(*model, state)).dump());
  http::FakeClient rest_http;
  rest_http.add("GET", "/rest-server/api/v2/jobs", 200,
                R"([{"name": "short", "username": "bob", "state": "RUNNING",
                     "launchedTime": 1800000000000}])");
  Client hived(hived_http, "http://hived.test:30096");
  api::Client rest(rest_http, "http://pai.test/rest-server", "t");
  auto in = read_maintenance_input(&hived, &rest, 600.0);
  ASSERT_TRUE(in.ok()) << in.error().message;
  ASSERT_TRUE(in->live);
  EXPECT_EQ(in->live->groups.size(), 1u);
  EXPECT_EQ(in->expected_ends, (std::map<std::string, double>{{"bob~short", 1800000600}}));
  auto r = maintenance_request(kMaintenanceNodes);
  r.expected_ends = in->expected_ends;
  auto plan = plan_maintenance(r, &*in->live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->batches.back().groups.at(0).until_s, 1800000600);

  // Neither client: nothing to read.
  in = read_maintenance_input(nullptr, nullptr);
  ASSERT_TRUE(in.ok());
  EXPECT_FALSE(in->live);
  EXPECT_TRUE(in->expected_ends.empty());

  // HiveD does not answer: an error naming it.
  http::FakeClient down;
  down.add("GET", "/v1/inspect/clusterstatus", 503, R"("unavailable")");
  down.add("GET", "/v1/inspect/affinitygroups/", 503, R"("unavailable")");
  Client gone(down, "http://hived.test:30096");
  in = read_maintenance_input(&gone, nullptr);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.error().kind, util::Error::Kind::Remote);
  EXPECT_NE(in.error().message.find("hived.test"), std::string::npos) << in.error().message;
  EXPECT_FALSE(in.error().hint.empty());
}

}  // namespace
}  // namespace pai::hived
