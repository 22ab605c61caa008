// Kubernetes' suggested nodes (ignoreK8sSuggestedNodes: false): HiveD's
// topology-aware placement, buddy allocation and preemption avoid the nodes
// outside the set; with the flag true (HiveD's default) the set is ignored for
// a new placement. Worked by hand on kTwoSkuConfig (racks r1 = v1 v2,
// r2 = v3 v4, r3 = v5 v6, 4 V100s per node; VC b holds one rack).

#include <gtest/gtest.h>

#include "helpers.h"
#include "scheduler/hived.h"

namespace pai::scheduler::test {
namespace {

class SuggestedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model = model_from_yaml(kTwoSkuConfig);
    h = policy("hived", *model);
    ASSERT_NE(h, nullptr);
  }
  // Every V100 and K80 node except `left_out`.
  std::vector<int32_t> all_but(std::initializer_list<const char*> left_out) {
    std::vector<int32_t> out;
    for (size_t i = 0; i < h->cluster().nodes.size(); ++i) {
      bool keep = true;
      for (const char* n : left_out) keep &= h->cluster().nodes[i].name != n;
      if (keep) out.push_back(static_cast<int32_t>(i));
    }
    return out;
  }
  GroupRequest with(GroupRequest r, std::vector<int32_t> suggested, bool ignore) {
    r.suggested_nodes = std::move(suggested);
    r.ignore_suggested_nodes = ignore;
    return r;
  }
  ScheduleResult run(const GroupRequest& r, bool preempt = true) {
    ScheduleResult res = h->schedule(r, preempt);
    EXPECT_EQ(h->check_invariants(), "") << "after scheduling " << r.affinity_group;
    return res;
  }
  std::string node(const ScheduleResult& r, size_t pod = 0) {
    return h->cluster().nodes[static_cast<size_t>(r.pods.at(pod).node)].name;
  }
  std::shared_ptr<config::HivedModel> model;
  std::unique_ptr<Policy> h;
};

// Intra-VC placement picks an unbound virtual node (it counts as suggested);
// buddy allocation then skips physical cells without a suggested node: rack r1
// still has v2, whose node cell is the one left.
TEST_F(SuggestedTest, AGuaranteedGroupGoesToTheSuggestedNodeOfItsRack) {
  auto b = run(with(req("b1", "b", 0, {{1, 4}}), all_but({"v1"}), false));
  ASSERT_EQ(b.outcome, Outcome::Bound);
  EXPECT_EQ(node(b), "v2");
}

TEST_F(SuggestedTest, IgnoringTheSuggestedNodesKeepsTheDefaultPlacement) {
  auto b = run(with(req("b1", "b", 0, {{1, 4}}), all_but({"v1"}), true));
  ASSERT_EQ(b.outcome, Outcome::Bound);
  EXPECT_EQ(node(b), "v1");
}

// With neither node of r1 suggested, the whole rack is unusable: VC b's rack
// is bound to r2.
TEST_F(SuggestedTest, ARackWithoutSuggestedNodesIsSkipped) {
  auto b = run(with(req("b1", "b", 0, {{2, 4}}), all_but({"v1", "v2"}), false));
  ASSERT_EQ(b.outcome, Outcome::Bound);
  EXPECT_EQ(nodes_of(*h, b), (std::set<std::string>{"v3", "v4"}));
}

// A gang that needs two nodes of one rack waits when no rack has two suggested
// nodes; ignoring the set it is placed.
TEST_F(SuggestedTest, AGangWaitsWhenNoRackHasEnoughSuggestedNodes) {
  auto w = run(with(req("b1", "b", 0, {{2, 4}}), all_but({"v2", "v4", "v6"}), false));
  EXPECT_EQ(w.outcome, Outcome::Waiting);
  EXPECT_FALSE(h->has_group("b1"));
  EXPECT_EQ(h->usage().used_leaf_cells, 0);
  auto b = run(with(req("b1", "b", 0, {{2, 4}}), all_but({"v2", "v4", "v6"}), true));
  ASSERT_EQ(b.outcome, Outcome::Bound);
  EXPECT_EQ(nodes_of(*h, b), (std::set<std::string>{"v1", "v2"}));
}

// Opportunistic pods are placed on the physical cluster view, where a node
// outside the set is sorted after the suggested ones and never picked.
TEST_F(SuggestedTest, AnOpportunisticGroupAvoidsNodesOutsideTheSet) {
  auto o = run(with(req("o1", "c", -1, {{1, 4}}, "V100"), all_but({"v1"}), false));
  ASSERT_EQ(o.outcome, Outcome::Bound);
  EXPECT_EQ(node(o), "v2");
  // Only v3 suggested and the 8-GPU gang needs two nodes: it waits.
  auto w = run(with(req("o3", "c", -1, {{2, 4}}, "V100"), {h->cluster().find_node("v3")}, false));
  EXPECT_EQ(w.outcome, Outcome::Waiting);
  EXPECT_FALSE(h->has_group("o3"));
}

TEST_F(SuggestedTest, AnOpportunisticGroupIgnoringTheSetTakesTheFirstNode) {
  auto o = run(with(req("o1", "c", -1, {{1, 4}}, "V100"), all_but({"v1"}), true));
  ASSERT_EQ(o.outcome, Outcome::Bound);
  EXPECT_EQ(node(o), "v1");
}

// HiveD sorts its cluster views stably, in place: the sort that put v1 (not
// suggested) behind v2..v6 stays. The next request, every node suggested, finds
// v2 full and takes the first free node in that order: v3, not v1.
TEST_F(SuggestedTest, TheViewKeepsTheOrderTheLastSortLeft) {
  ASSERT_EQ(run(with(req("o1", "c", -1, {{1, 4}}, "V100"), all_but({"v1"}), false)).outcome,
            Outcome::Bound);
  auto o2 = run(req("o2", "c", -1, {{1, 4}}, "V100"));
  ASSERT_EQ(o2.outcome, Outcome::Bound);
  EXPECT_EQ(node(o2), "v3");
  // With configuration order v1 is simply the first free node.
  auto made = make_hived_policy(*model, false);
  ASSERT_TRUE(made.ok()) << made.error().message;
  h = std::move(*made);
  ASSERT_EQ(run(with(req("o1", "c", -1, {{1, 4}}, "V100"), all_but({"v1"}), false)).outcome,
            Outcome::Bound);
  EXPECT_EQ(node(run(req("o2", "c", -1, {{1, 4}}, "V100"))), "v1");
}

TEST_F(SuggestedTest, AnAllocatedGroupKeepsItsPlacementOffTheSet) {
  auto b = run(req("b1", "b", 0, {{1, 4}}));
  ASSERT_EQ(b.outcome, Outcome::Bound);
  ASSERT_EQ(node(b), "v1");
  auto again = run(with(req("b1", "b", 0, {{1, 4}}), all_but({"v1"}), false));
  ASSERT_EQ(again.outcome, Outcome::Bound);
  EXPECT_EQ(node(again), "v1");
}

// A preempting group whose placement leaves the set is cancelled and planned
// again (preempting phase only). HiveD checks the set whatever the request's
// flag says: the group's own ignoreK8sSuggestedNodes is never recorded.
TEST_F(SuggestedTest, APreemptionOffTheSetIsPlannedAgain) {
  ASSERT_EQ(run(req("low", "b", 10, {{1, 4}})).outcome, Outcome::Bound);  // v1
  auto high = run(req("high", "b", 100, {{2, 4}}));
  ASSERT_EQ(high.outcome, Outcome::Preempting);
  ASSERT_EQ(nodes_of(*h, high), (std::set<std::string>{"v1", "v2"}));
  // The filtering phase never cancels.
  run(with(req("high", "b", 100, {{2, 4}}), all_but({"v1"}), false), false);
  EXPECT_TRUE(h->has_group("high"));
  // Ignoring the set, the group is still planned again: to the same cells.
  auto replanned = run(with(req("high", "b", 100, {{2, 4}}), all_but({"v1"}), true));
  ASSERT_EQ(replanned.outcome, Outcome::Preempting);
  EXPECT_EQ(nodes_of(*h, replanned), (std::set<std::string>{"v1", "v2"}));
  // Avoiding v1: VC b's virtual nodes are bound to r1, one of them to v1,
  // which is not suggested; the group cannot be placed and waits.
  auto w = run(with(req("high", "b", 100, {{2, 4}}), all_but({"v1"}), false));
  EXPECT_EQ(w.outcome, Outcome::Waiting);
  EXPECT_FALSE(h->has_group("high"));
  EXPECT_TRUE(h->has_group("low"));
  EXPECT_EQ(h->usage().used_leaf_cells, 4);
}

}  // namespace
}  // namespace pai::scheduler::test
