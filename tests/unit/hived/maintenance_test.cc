// The maintenance planner (lib/hived/maintenance.h) on live states built the
// way HiveD shows them: a config, groups scheduled by lib/scheduler, then
// cluster_status_of / affinity_groups_of -> index_live.

#include "hived/maintenance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "hived/fit.h"
#include "hived/maintenance_json.h"
#include "scheduler/helpers.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"

namespace pai::hived {
namespace {

using scheduler::test::req;

// Eight 8-GPU V100 nodes in two racks; prod is guaranteed four nodes and
// research two: two nodes are nobody's guarantee.
const char* kLooseConfig = R"(
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
const char* kTightConfig = R"(
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

const std::vector<std::string> kAllNodes = {"v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"};
constexpr double kNow = 1'800'000'000;

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
std::vector<std::string> nodes_of(const LiveState& live, const std::string& group) {
  std::vector<std::string> out;
  for (const auto& g : live.groups)
    if (g.name == group)
      for (const auto& [node, leaves] : g.physical_placement) out.push_back(node);
  return out;
}

// The nodes given, without `minus`, in their order.
std::vector<std::string> except(const std::vector<std::string>& nodes,
                                const std::vector<std::string>& minus) {
  std::vector<std::string> out;
  for (const auto& n : nodes)
    if (std::find(minus.begin(), minus.end(), n) == minus.end()) out.push_back(n);
  return out;
}

MaintenanceRequest request(std::vector<std::string> nodes, int64_t n = 1) {
  MaintenanceRequest r;
  r.nodes = std::move(nodes);
  r.max_unavailable.value = n;
  r.now_s = kNow;
  r.wait_for_groups_s = 4 * 3600;
  return r;
}

std::vector<std::string> all_batched(const MaintenancePlan& p) {
  std::vector<std::string> out;
  for (const auto& b : p.batches) out.insert(out.end(), b.nodes.begin(), b.nodes.end());
  return out;
}

const PlannedGroup* find_group(const MaintenanceBatch& b, const std::string& name) {
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
  LiveState live = maintenance_live(kLooseConfig, {req("alice~long/0", "prod", 100, {{1, 8}}),
                                                   req("bob~short/0", "prod", 100, {{1, 8}})});
  const auto long_nodes = nodes_of(live, "alice~long/0");
  const auto short_nodes = nodes_of(live, "bob~short/0");
  ASSERT_EQ(long_nodes.size(), 1u);
  ASSERT_EQ(short_nodes.size(), 1u);
  auto r = request(kAllNodes);
  // bob~short's end is keyed by its job, as job::expected_ends gives it.
  r.expected_ends = {{"alice~long/0", kNow + 7200}, {"bob~short", kNow + 3600}};
  auto plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_TRUE(plan->hived);
  ASSERT_EQ(plan->batches.size(), 8u);
  std::vector<std::string> expect = except(kAllNodes, {long_nodes[0], short_nodes[0]});
  expect.push_back(short_nodes[0]);
  expect.push_back(long_nodes[0]);
  EXPECT_EQ(all_batched(*plan), expect);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_TRUE(plan->batches[i].groups.empty());
    EXPECT_EQ(plan->batches[i].start_s, kNow);
    EXPECT_EQ(plan->batches[i].reason, "no running group on its nodes");
  }
  const auto& b7 = plan->batches[6];
  ASSERT_EQ(b7.groups.size(), 1u);
  EXPECT_EQ(b7.groups[0].name, "bob~short/0");
  EXPECT_EQ(b7.groups[0].action, GroupAction::WaitedFor);
  EXPECT_EQ(b7.groups[0].until_s, kNow + 3600);
  EXPECT_EQ(b7.start_s, kNow + 3600);
  EXPECT_NE(b7.reason.find("bob~short/0"), std::string::npos) << b7.reason;
  EXPECT_EQ(plan->batches[7].groups.at(0).name, "alice~long/0");
  EXPECT_EQ(plan->batches[7].start_s, kNow + 7200);
  EXPECT_EQ(plan->end_s, kNow + 7200);
  EXPECT_TRUE(plan->blocked.empty());
  EXPECT_TRUE(plan->evicted.empty());
}

TEST(Maintenance, TheBatchDurationShiftsTheStarts) {
  LiveState live = maintenance_live(kLooseConfig, {});
  auto r = request({"v1", "v2", "v3"});
  r.batch_s = 600;
  auto plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->batches.size(), 3u);
  EXPECT_EQ(plan->batches[0].start_s, kNow);
  EXPECT_EQ(plan->batches[1].start_s, kNow + 600);
  EXPECT_EQ(plan->batches[2].start_s, kNow + 1200);
}

TEST(Maintenance, AGangsNodesGoTogetherAfterItEnds) {
  LiveState live = maintenance_live(kLooseConfig, {req("carol~gang/0", "prod", 100, {{2, 8}})});
  const auto gang = nodes_of(live, "carol~gang/0");
  ASSERT_EQ(gang.size(), 2u);
  auto r = request(kAllNodes, 2);
  r.expected_ends = {{"carol~gang/0", kNow + 1800}};
  auto plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->batches.size(), 4u);
  for (const auto& b : plan->batches) EXPECT_LE(b.nodes.size(), 2u);
  const auto& last = plan->batches.back();
  std::vector<std::string> got = last.nodes;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, gang);
  EXPECT_EQ(last.start_s, kNow + 1800);
  ASSERT_EQ(last.groups.size(), 1u);
  EXPECT_EQ(last.groups[0].nodes, gang);
  EXPECT_NE(last.reason.find("keeps its 2 nodes together"), std::string::npos) << last.reason;

  // Three a batch: two idle nodes and the gang do not fit; the gang is not split.
  r.max_unavailable.value = 3;
  r.nodes = except(kAllNodes, {});
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
  LiveState live = maintenance_live(kLooseConfig, {req("carol~gang/0", "prod", 100, {{3, 8}})});
  const auto gang = nodes_of(live, "carol~gang/0");
  ASSERT_EQ(gang.size(), 3u);
  auto r = request(kAllNodes, 2);
  r.expected_ends = {{"carol~gang/0", kNow + 1800}};
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
  EXPECT_EQ(first.start_s, kNow + 1800);
  EXPECT_GE(second.start_s, first.start_s);
  EXPECT_NE(first.reason.find("consecutive batches"), std::string::npos) << first.reason;
}

TEST(Maintenance, MaxUnavailableNodes) {
  LiveState live = maintenance_live(kLooseConfig, {});
  auto plan = plan_maintenance(request({"v5", "v1", "v2", "v7", "v3"}, 2), &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->batches.size(), 3u);
  EXPECT_EQ(plan->batches[0].nodes, (std::vector<std::string>{"v5", "v1"}));
  EXPECT_EQ(plan->batches[1].nodes, (std::vector<std::string>{"v2", "v7"}));
  EXPECT_EQ(plan->batches[2].nodes, (std::vector<std::string>{"v3"}));
  EXPECT_EQ(plan->nodes_per_batch, 2);
}

TEST(Maintenance, MaxUnavailablePercentOfTheClustersNodes) {
  LiveState live = maintenance_live(kLooseConfig, {});
  auto r = request(kAllNodes);
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
LiveState tight_live() {
  return maintenance_live(kTightConfig, {req("r1", "research", 100, {{1, 8}}),
                                         req("r2", "research", 100, {{1, 8}}),
                                         req("r3", "research", 100, {{1, 8}}),
                                         req("r4", "research", 100, {{1, 8}})});
}

std::vector<std::string> idle_nodes(const LiveState& live) {
  std::vector<std::string> used;
  for (const auto& g : live.groups)
    for (const auto& [node, leaves] : g.physical_placement) used.push_back(node);
  return except(kAllNodes, used);
}

TEST(Maintenance, DoomedCellsPerVc) {
  LiveState live = tight_live();
  auto idle = idle_nodes(live);
  ASSERT_EQ(idle.size(), 4u);
  auto plan = plan_maintenance(request(idle, 2), &live);
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
  LiveState live = tight_live();
  auto idle = idle_nodes(live);
  auto r = request(idle);
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
  LiveState live = maintenance_live(kLooseConfig, {req("dave~long/0", "prod", 100, {{1, 8}}),
                                                   req("erin~unknown/0", "prod", 100, {{1, 8}}),
                                                   req("frank~soon/0", "prod", 100, {{1, 8}})});
  const auto long_node = nodes_of(live, "dave~long/0").at(0);
  const auto unknown_node = nodes_of(live, "erin~unknown/0").at(0);
  const auto soon_node = nodes_of(live, "frank~soon/0").at(0);
  auto r = request(kAllNodes);
  r.wait_for_groups_s = 2 * 3600;
  r.expected_ends = {{"dave~long", kNow + 10 * 3600}, {"frank~soon", kNow + 600}};
  auto plan = plan_maintenance(r, &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto batched = all_batched(*plan);
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
  batched = all_batched(*plan);
  ASSERT_EQ(batched.size(), 8u);
  EXPECT_EQ(batched[5], soon_node);
  EXPECT_EQ(std::set<std::string>(batched.begin() + 6, batched.end()),
            (std::set<std::string>{long_node, unknown_node}));
  EXPECT_TRUE(plan->blocked.empty());
  EXPECT_EQ(std::set<std::string>(plan->evicted.begin(), plan->evicted.end()),
            (std::set<std::string>{"dave~long/0", "erin~unknown/0"}));
  const auto* evicted = find_group(plan->batches[6], plan->evicted[0]);
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->action, GroupAction::Evicted);
  EXPECT_FALSE(evicted->until_s);
  EXPECT_EQ(plan->batches[6].start_s, kNow + 600);  // not before the batch before it
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
  LiveState live = maintenance_live(kTightConfig, {req("pA", "prod", 100, {{1, 8}}),
                                                   req("pB", "prod", 100, {{1, 8}}),
                                                   req("pC", "prod", 100, {{1, 8}}),
                                                   req("pD", "prod", 100, {{1, 8}}),
                                                   req("r1", "research", 100, {{1, 8}}),
                                                   req("r2", "research", 100, {{1, 8}})});
  const std::string x = nodes_of(live, "pD").at(0);
  std::vector<std::string> idle = idle_nodes(live);
  ASSERT_EQ(idle.size(), 2u);
  const std::string y = idle.front();
  auto r = request({y, x}, 2);
  r.expected_ends = {{"pD", kNow + 600}};
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
  const auto* px = find_group(b, "pD");
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
  auto r = request({"n3", "n1", "n2", "n1"}, 2);
  r.expected_ends = {{"x", kNow + 5}};
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
  EXPECT_FALSE(plan_maintenance(request({}), nullptr).ok());
  auto r = request({"v1"});
  r.max_unavailable.value = 0;
  EXPECT_FALSE(plan_maintenance(r, nullptr).ok());
  r.max_unavailable = {MaxUnavailable::Kind::Percent, 150};
  EXPECT_FALSE(plan_maintenance(r, nullptr).ok());
}

TEST(Maintenance, NodesHivedDoesNotKnowAreIdle) {
  LiveState live = maintenance_live(kLooseConfig, {});
  auto plan = plan_maintenance(request({"cpu1", "v1"}), &live);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->unknown_nodes, std::vector<std::string>{"cpu1"});
  ASSERT_EQ(plan->batches.size(), 2u);
  EXPECT_NE(plan->batches[0].reason.find("not in HiveD's cells"), std::string::npos);
}

TEST(Maintenance, TheSameInputGivesTheSamePlan) {
  LiveState live = maintenance_live(kTightConfig, {req("r1", "research", 100, {{2, 8}}),
                                                   req("p1", "prod", 100, {{1, 8}}),
                                                   req("p2", "prod", 100, {{1, 4}}),
                                                   req("o1", "research", -1, {{1, 8}})});
  auto r = request(kAllNodes);
  r.max_unavailable = *parse_max_unavailable("30%");
  r.evict = true;
  r.expected_ends = {{"r1", kNow + 100}, {"p1", kNow + 100}, {"p2", kNow + 50}};
  auto a = plan_maintenance(r, &live);
  auto b = plan_maintenance(r, &live);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(maintenance_json(*a).dump(), maintenance_json(*b).dump());
  // Ties (same end) keep the order given.
  EXPECT_EQ(a->batches.size(), b->batches.size());
  EXPECT_EQ(all_batched(*a).size(), 8u);
}

// The planner skips the restart replay of a batch whose bad cells fit in
// HiveD's headroom; replaying every batch gives the same plans.
TEST(Maintenance, SkippingReplaysChangesNoPlan) {
  std::vector<LiveState> lives;
  lives.push_back(tight_live());
  lives.push_back(maintenance_live(kTightConfig, {req("pA", "prod", 100, {{1, 8}}),
                                                  req("pB", "prod", 100, {{1, 8}}),
                                                  req("pC", "prod", 100, {{1, 8}}),
                                                  req("pD", "prod", 100, {{1, 8}}),
                                                  req("r1", "research", 100, {{1, 8}}),
                                                  req("r2", "research", 100, {{1, 8}})}));
  lives.push_back(maintenance_live(kLooseConfig, {req("g", "prod", 100, {{2, 8}}),
                                                  req("s", "research", 100, {{1, 4}}),
                                                  req("o", "research", -1, {{1, 8}})}));
  lives.push_back(maintenance_live(kTightConfig, {req("r1", "research", 100, {{2, 8}}),
                                                  req("p1", "prod", 100, {{1, 8}}),
                                                  req("p2", "prod", 100, {{1, 4}}),
                                                  req("o1", "research", -1, {{1, 8}})}));
  int replayed_differently = 0;
  for (size_t i = 0; i < lives.size(); ++i)
    for (const char* m : {"1", "2", "3", "25%", "50%"})
      for (bool evict : {false, true}) {
        auto r = request(kAllNodes);
        r.max_unavailable = *parse_max_unavailable(m);
        r.evict = evict;
        for (const auto& g : lives[i].groups) r.expected_ends[g.name] = kNow + 60;
        if (evict) r.expected_ends.clear();
        auto fast = plan_maintenance(r, &lives[i]);
        r.replay_every_batch = true;
        auto exact = plan_maintenance(r, &lives[i]);
        ASSERT_TRUE(fast.ok() && exact.ok());
        EXPECT_EQ(maintenance_json(*fast).dump(), maintenance_json(*exact).dump())
            << "live " << i << ", max unavailable " << m << (evict ? ", evict" : "");
        for (const auto& b : exact->batches)
          for (const auto& g : b.groups)
            if (g.lazily_preempted || g.action == GroupAction::LazilyPreempted)
              ++replayed_differently;
      }
  EXPECT_GT(replayed_differently, 0);  // the comparison saw lazily preempted groups
}

TEST(Maintenance, TheJsonDocument) {
  LiveState live = maintenance_live(kLooseConfig, {req("bob~short/0", "prod", 100, {{1, 8}})});
  auto r = request(kAllNodes, 4);
  r.expected_ends = {{"bob~short", kNow + 60}};
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
  EXPECT_EQ(g["until"], kNow + 60);
  EXPECT_EQ(g["leafCells"], 8);
  EXPECT_EQ(j["batches"][1]["start"], kNow + 60);
}

}  // namespace
}  // namespace pai::hived
