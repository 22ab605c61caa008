// The effect of a quarantine (lib/hived/quarantine.h) on live states built the
// way HiveD shows them: a config, groups scheduled by lib/scheduler, then
// cluster_status_of / affinity_groups_of -> index_live.

#include "hived/quarantine.h"

#include <gtest/gtest.h>

#include "hived/fit.h"
#include "scheduler/helpers.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"

namespace pai::hived {
namespace {

using scheduler::test::req;

// Four 8-GPU nodes; prod is guaranteed two, research one: one is nobody's.
const char* kQuarantineConfig = R"(
physicalCluster:
  skuTypes:
    V100: {gpu: 1, cpu: 6, memory: 60Gi}
  cellTypes:
    V100-NODE: {childCellType: V100, childCellNumber: 8, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 4}
  physicalCells:
  - cellType: V100-RACK
    cellChildren: [{cellAddress: q1}, {cellAddress: q2}, {cellAddress: q3}, {cellAddress: q4}]
virtualClusters:
  prod:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 2}]
  research:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 1}]
)";

LiveState quarantine_live(std::initializer_list<scheduler::GroupRequest> requests,
                          const std::vector<std::string>& bad = {}) {
  auto model = scheduler::test::model_from_yaml(kQuarantineConfig);
  auto made = scheduler::make_hived_policy(*model);
  EXPECT_TRUE(made.ok()) << made.error().message;
  auto policy = std::move(*made);
  for (const auto& n : bad) policy->set_node_health(policy->cluster().find_node(n), false);
  for (const auto& r : requests)
    EXPECT_EQ(policy->schedule(r).outcome, scheduler::Outcome::Bound) << r.affinity_group;
  auto state = *scheduler::snapshot_hived(*policy);
  return index_live(cluster_status_of(*model, state), affinity_groups_of(*model, state));
}

// The node a group runs on (its first).
std::string quarantine_node_of(const LiveState& live, const std::string& group) {
  for (const auto& g : live.groups)
    if (g.name == group && !g.physical_placement.empty())
      return g.physical_placement.begin()->first;
  return {};
}

TEST(QuarantineEffect, AnIdleNodeWithinTheHeadroomDoomsNothing) {
  // Nothing runs: 4 healthy free nodes against prod's 2 and research's 1.
  LiveState live = quarantine_live({});
  auto e = quarantine_effect(live, {"q1"});
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->nodes, std::vector<std::string>{"q1"});
  EXPECT_EQ(e->leaves, 8);
  EXPECT_TRUE(e->doomed.empty());
  EXPECT_TRUE(e->groups.empty());
}

TEST(QuarantineEffect, BeyondTheHeadroomTheVcGetsDoomedCells) {
  // HiveD dooms bad cells for a VC whose free guarantee exceeds the healthy
  // free cells: two nodes out still leave prod's two (and research's one).
  LiveState live = quarantine_live({});
  auto two = quarantine_effect(live, {"q1", "q2"});
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_TRUE(two->doomed.empty());
  // Three out: one healthy free node against prod's two free cells.
  auto e = quarantine_effect(live, {"q1", "q2", "q3"});
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_EQ(e->doomed.size(), 1u);
  const auto& d = e->doomed[0];
  EXPECT_EQ(d.vc, "prod");
  EXPECT_EQ(d.chain, "V100-RACK");
  EXPECT_EQ(d.cell_type, "V100-NODE");
  EXPECT_EQ(d.cells_before, 0);
  EXPECT_EQ(d.cells_after, 1);
  EXPECT_EQ(d.leaves_after, 8);
  EXPECT_EQ(d.guaranteed_leaves, 16);
  // Released, the same nodes undo it: from that state, healthy again.
  LiveState bad = quarantine_live({}, {"q1", "q2", "q3"});
  auto r = quarantine_effect(bad, {"q1", "q2", "q3"}, false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->doomed.size(), 1u);
  EXPECT_EQ(r->doomed[0].vc, "prod");
  EXPECT_EQ(r->doomed[0].cells_before, 1);
  EXPECT_EQ(r->doomed[0].cells_after, 0);
  EXPECT_EQ(r->already_bad, (std::vector<std::string>{"q1", "q2", "q3"}));
}

TEST(QuarantineEffect, TheRunningGroupsOnTheNodesAreNamed) {
  LiveState live = quarantine_live(
      {req("train", "prod", 100, {{2, 8}}), req("small", "research", 50, {{1, 4}})});
  std::string busy = quarantine_node_of(live, "small");
  ASSERT_FALSE(busy.empty());
  auto e = quarantine_effect(live, {busy, busy, "nope"});
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->nodes, std::vector<std::string>{busy});  // duplicates dropped
  EXPECT_EQ(e->unknown_nodes, std::vector<std::string>{"nope"});
  ASSERT_EQ(e->groups.size(), 1u);
  EXPECT_EQ(e->groups[0].name, "small");
  EXPECT_EQ(e->groups[0].vc, "research");
  EXPECT_EQ(e->groups[0].leaves, 4);
  EXPECT_EQ(e->groups[0].gpus, 4);
  EXPECT_EQ(e->groups[0].nodes, std::vector<std::string>{busy});
  // prod's gang on two nodes: one of them quarantined names it with its leaves there.
  std::string gang = quarantine_node_of(live, "train");
  auto g = quarantine_effect(live, {gang});
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->groups.size(), 1u);
  EXPECT_EQ(g->groups[0].leaves, 8);
  EXPECT_EQ(g->groups[0].gpus, 16);
}

TEST(QuarantineEffect, UsedCellsStayTheirGroupsAndFreeOnesAreDoomed) {
  // prod runs on two nodes (its whole guarantee): quarantining both dooms
  // nothing of prod's (its cells are used), and research keeps its free node.
  LiveState live =
      quarantine_live({req("a", "prod", 100, {{1, 8}}), req("b", "prod", 100, {{1, 8}})});
  std::string na = quarantine_node_of(live, "a"), nb = quarantine_node_of(live, "b");
  auto e = quarantine_effect(live, {na, nb});
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_TRUE(e->doomed.empty());
  EXPECT_EQ(e->groups.size(), 2u);
  // The two free nodes too: research's one free cell has no healthy node left.
  std::vector<std::string> all = {"q1", "q2", "q3", "q4"};
  auto f = quarantine_effect(live, all);
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(f->doomed.size(), 1u);
  EXPECT_EQ(f->doomed[0].vc, "research");
  EXPECT_EQ(f->doomed[0].cells_after, 1);
  EXPECT_EQ(f->doomed[0].guaranteed_leaves, 8);
}

}  // namespace
}  // namespace pai::hived
