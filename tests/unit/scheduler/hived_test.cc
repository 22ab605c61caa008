// HiveD algorithm: buddy split and merge, VC safety, gang placement and
// topology-aware packing, preemption and lazy preemption, pinned cells,
// several SKUs, bad nodes and doomed cells, user errors.

#include <gtest/gtest.h>

#include "helpers.h"
#include "scheduler/hived.h"

namespace pai::scheduler::test {
namespace {

class HivedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model = model_from_yaml(kTwoSkuConfig);
    h = policy("hived", *model);
    ASSERT_NE(h, nullptr);
  }
  // Ties broken by configuration order (--tie-order config): the placements
  // below are spelled out for that order.
  void use_configuration_order() {
    auto made = make_hived_policy(*model, false);
    ASSERT_TRUE(made.ok()) << made.error().message;
    h = std::move(*made);
  }
  ScheduleResult run(const GroupRequest& r, bool preempt = true) {
    ScheduleResult res = h->schedule(r, preempt);
    std::string inv = h->check_invariants();
    EXPECT_EQ(inv, "") << "after scheduling " << r.affinity_group;
    return res;
  }
  void drop(const std::string& g) {
    EXPECT_TRUE(h->release(g)) << g;
    EXPECT_EQ(h->check_invariants(), "") << "after releasing " << g;
  }
  std::string node(const ScheduleResult& r, size_t pod = 0) {
    return h->cluster().nodes[static_cast<size_t>(r.pods.at(pod).node)].name;
  }
  std::shared_ptr<config::HivedModel> model;
  std::unique_ptr<Policy> h;
};

TEST_F(HivedTest, StartsConsistent) {
  EXPECT_EQ(h->check_invariants(), "");
}

TEST_F(HivedTest, BuddyAllocationSplitsAndMerges) {
  use_configuration_order();
  // c's socket comes from splitting the first rack down to a socket.
  auto c1 = run(req("c1", "c", 0, {{1, 1}}));
  ASSERT_EQ(c1.outcome, Outcome::Bound);
  EXPECT_EQ(node(c1), "v1");
  EXPECT_EQ(c1.pods[0].physical_leaf_cell_indices, std::vector<int32_t>{0});
  EXPECT_EQ(c1.pods[0].preassigned_cell_types, std::vector<std::string>{"V100-SOCKET"});
  // b's rack must be a whole rack: r1 is split, so r2.
  auto b1 = run(req("b1", "b", 0, {{2, 4}}));
  ASSERT_EQ(b1.outcome, Outcome::Bound);
  EXPECT_EQ(nodes_of(*h, b1), (std::set<std::string>{"v3", "v4"}));
  // a's first node is the free buddy v2, its second splits r3.
  auto a1 = run(req("a1", "a", 0, {{1, 4}}, "V100"));
  auto a2 = run(req("a2", "a", 0, {{1, 4}}, "V100"));
  ASSERT_EQ(a1.outcome, Outcome::Bound);
  ASSERT_EQ(a2.outcome, Outcome::Bound);
  EXPECT_EQ(node(a1), "v2");
  EXPECT_EQ(node(a2), "v5");
  // Releasing everything merges the buddies back into whole racks: c lands on v1 GPU 0 again.
  drop("c1");
  drop("a1");
  drop("a2");
  drop("b1");
  auto b2 = run(req("b2", "b", 0, {{2, 4}}));
  EXPECT_EQ(nodes_of(*h, b2), (std::set<std::string>{"v1", "v2"}));
  auto c2 = run(req("c2", "c", 0, {{1, 2}}));
  EXPECT_EQ(node(c2), "v3");
}

TEST_F(HivedTest, VirtualClusterGetsNoMoreThanItsCells) {
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(run(req(numbered("b", i), "b", 0, {{1, 1}})).outcome, Outcome::Bound);
  auto over = run(req("b8", "b", 0, {{1, 1}}));
  EXPECT_EQ(over.outcome, Outcome::Waiting);
  EXPECT_NE(over.reason.find("VC b"), std::string::npos) << over.reason;
  // The other VCs still get everything they were promised.
  EXPECT_EQ(run(req("a1", "a", 0, {{2, 4}}, "V100")).outcome, Outcome::Bound);
  EXPECT_EQ(run(req("c1", "c", 0, {{2, 2}})).outcome, Outcome::Bound);
  // Four V100s belong to no VC: opportunistic work can use them, no more.
  EXPECT_EQ(run(req("o1", "b", -1, {{1, 4}}, "V100")).outcome, Outcome::Bound);
  EXPECT_EQ(run(req("o2", "b", -1, {{1, 1}}, "V100")).outcome, Outcome::Waiting);
  EXPECT_EQ(h->usage().used_leaf_cells, 24);
  EXPECT_EQ(h->usage().opportunistic_leaf_cells, 4);
}

TEST_F(HivedTest, PacksInsideNodesWithLowestCommonAncestor) {
  auto j1 = run(req("j1", "b", 0, {{1, 1}}));
  auto j2 = run(req("j2", "b", 0, {{1, 1}}));
  auto j3 = run(req("j3", "b", 0, {{1, 2}}));
  auto j4 = run(req("j4", "b", 0, {{1, 4}}));
  EXPECT_EQ(node(j1), "v1");
  EXPECT_EQ(node(j2), "v1");  // packing: the most used node first
  EXPECT_EQ(j2.pods[0].physical_leaf_cell_indices, std::vector<int32_t>{1});
  EXPECT_EQ(node(j3), "v1");  // the other socket, whole
  EXPECT_EQ(j3.pods[0].physical_leaf_cell_indices, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(node(j4), "v2");
  EXPECT_EQ(j4.pods[0].physical_leaf_cell_indices, (std::vector<int32_t>{0, 1, 2, 3}));
  // A 2-GPU job after a 1-GPU job in a fresh node takes the untouched socket.
  drop("j3");
  drop("j2");
  auto j5 = run(req("j5", "b", 0, {{1, 2}}));
  EXPECT_EQ(node(j5), "v1");
  EXPECT_EQ(j5.pods[0].physical_leaf_cell_indices, (std::vector<int32_t>{2, 3}));
}

TEST_F(HivedTest, GangsAreAllOrNothing) {
  // Pods sorted by size; the first node takes the two 2-GPU pods, the second the 4-GPU pod.
  auto g = run(req("g", "b", 0, {{1, 4}, {2, 2}}));
  ASSERT_EQ(g.outcome, Outcome::Bound);
  ASSERT_EQ(g.pods.size(), 3u);
  EXPECT_EQ(g.pods[0].leaf_cell_number, 2);
  EXPECT_EQ(g.pods[2].leaf_cell_number, 4);
  EXPECT_EQ(node(g, 0), node(g, 1));
  EXPECT_NE(node(g, 0), node(g, 2));
  drop("g");
  // Too big for the VC: nothing is held.
  auto big = run(req("big", "b", 0, {{3, 4}}));
  EXPECT_EQ(big.outcome, Outcome::Waiting);
  EXPECT_EQ(h->usage().used_leaf_cells, 0);
  EXPECT_FALSE(h->has_group("big"));
  // A pod bigger than any node never fits, even in an empty VC.
  EXPECT_EQ(run(req("wide", "b", 0, {{1, 8}})).outcome, Outcome::Waiting);
}

TEST_F(HivedTest, HigherPriorityPreemptsWholeGroupsInsideTheVc) {
  ASSERT_EQ(run(req("low", "b", 10, {{2, 4}})).outcome, Outcome::Bound);
  // The filtering phase reports nothing and reserves nothing.
  auto filtered = run(req("high", "b", 100, {{1, 4}}), false);
  EXPECT_EQ(filtered.outcome, Outcome::Waiting);
  EXPECT_FALSE(h->has_group("high"));
  auto high = run(req("high", "b", 100, {{1, 4}}));
  ASSERT_EQ(high.outcome, Outcome::Preempting);
  ASSERT_EQ(high.victims.size(), 1u);
  EXPECT_EQ(high.victims[0].group, "low");
  // Asking again while the victim runs keeps the reservation.
  EXPECT_EQ(run(req("high", "b", 100, {{1, 4}})).outcome, Outcome::Preempting);
  // A same-priority job cannot take the reserved cells.
  EXPECT_EQ(run(req("peer", "b", 10, {{1, 4}})).outcome, Outcome::Waiting);
  drop("low");
  auto bound = run(req("high", "b", 100, {{1, 4}}));
  EXPECT_EQ(bound.outcome, Outcome::Bound);
  EXPECT_EQ(nodes_of(*h, bound), nodes_of(*h, high));
  // Equal priority never preempts.
  EXPECT_EQ(run(req("same", "b", 100, {{2, 4}})).outcome, Outcome::Waiting);
}

// The same preemption with every group named by the ids the results give
// (GroupRequest::group_id, release_group) instead of by name; names still work after.
TEST_F(HivedTest, GroupsNamedByIdDecideAsByName) {
  auto with_id = [](GroupRequest r, int32_t id) {
    r.group_id = id;
    return r;
  };
  auto low = run(with_id(req("low", "b", 10, {{2, 4}}), kNewGroup));
  ASSERT_EQ(low.outcome, Outcome::Bound);
  ASSERT_GE(low.group_id, 0);
  auto high = run(with_id(req("high", "b", 100, {{1, 4}}), kNewGroup));
  ASSERT_EQ(high.outcome, Outcome::Preempting);
  ASSERT_GE(high.group_id, 0);
  EXPECT_NE(high.group_id, low.group_id);
  ASSERT_EQ(high.victims.size(), 1u);
  EXPECT_EQ(high.victims[0].group, "low");
  EXPECT_EQ(high.victims[0].group_id, low.group_id);
  // The id keeps the reservation as the name does.
  auto again = run(with_id(req("high", "b", 100, {{1, 4}}), high.group_id));
  EXPECT_EQ(again.outcome, Outcome::Preempting);
  EXPECT_EQ(again.group_id, high.group_id);
  // An id with another name stands for nothing: the name decides.
  EXPECT_FALSE(h->release_group(low.group_id, "nobody"));
  EXPECT_EQ(h->usage().used_leaf_cells, 8);
  EXPECT_TRUE(h->release_group(low.group_id, "low"));
  EXPECT_FALSE(h->release_group(low.group_id, "low"));  // gone
  EXPECT_EQ(h->check_invariants(), "");
  auto bound = run(with_id(req("high", "b", 100, {{1, 4}}), high.group_id));
  ASSERT_EQ(bound.outcome, Outcome::Bound);
  EXPECT_EQ(nodes_of(*h, bound), nodes_of(*h, high));
  // A stale id (its slot reused by another group) is looked up by name.
  auto other = run(with_id(req("other", "b", 10, {{1, 4}}), kNewGroup));
  ASSERT_EQ(other.outcome, Outcome::Bound);
  EXPECT_EQ(other.group_id, low.group_id);  // low's slot
  auto stale = run(with_id(req("high", "b", 100, {{1, 4}}), other.group_id));
  EXPECT_EQ(stale.outcome, Outcome::Bound);
  EXPECT_EQ(stale.group_id, bound.group_id);
  // By name after ids: the name index is built from the groups held.
  EXPECT_TRUE(h->has_group("high"));
  EXPECT_TRUE(h->has_group("other"));
  EXPECT_FALSE(h->has_group("low"));
  drop("high");
  EXPECT_FALSE(h->has_group("high"));
  auto by_name = run(req("next", "b", 10, {{1, 4}}));
  ASSERT_EQ(by_name.outcome, Outcome::Bound);
  EXPECT_TRUE(h->release_group(by_name.group_id, "next"));
  EXPECT_FALSE(h->has_group("next"));
  drop("other");
  EXPECT_EQ(h->usage().used_leaf_cells, 0);
}

TEST_F(HivedTest, CancellingAPreemptionGivesTheCellsBack) {
  ASSERT_EQ(run(req("low", "b", 10, {{2, 4}})).outcome, Outcome::Bound);
  ASSERT_EQ(run(req("high", "b", 100, {{2, 4}})).outcome, Outcome::Preempting);
  drop("high");  // the preemptor gives up: the victim keeps its cells
  EXPECT_EQ(h->usage().used_leaf_cells, 8);
  auto again = run(req("low", "b", 10, {{2, 4}}));
  EXPECT_EQ(again.outcome, Outcome::Bound);
}

TEST_F(HivedTest, GuaranteedWorkPreemptsOpportunisticWork) {
  for (int i = 0; i < 6; ++i)
    ASSERT_EQ(run(req(numbered("o", i), "c", -1, {{1, 4}}, "V100")).outcome, Outcome::Bound) << i;
  EXPECT_EQ(h->usage().opportunistic_leaf_cells, 24);
  auto a = run(req("a1", "a", 5, {{1, 4}}, "V100"));
  ASSERT_EQ(a.outcome, Outcome::Preempting);
  ASSERT_EQ(a.victims.size(), 1u);
  EXPECT_EQ(a.victims[0].group.substr(0, 1), "o");
  drop(a.victims[0].group);
  EXPECT_EQ(run(req("a1", "a", 5, {{1, 4}}, "V100")).outcome, Outcome::Bound);
}

TEST_F(HivedTest, OpportunisticWorkAvoidsCellsThatGuaranteedWorkNeeds) {
  // An opportunistic job goes where guaranteed work is not, and guaranteed work
  // then picks free cells without opportunistic pods: no preemption.
  ASSERT_EQ(run(req("o", "c", -1, {{2, 4}}, "V100")).outcome, Outcome::Bound);
  auto a = run(req("a1", "a", 0, {{1, 4}}, "V100"));
  EXPECT_EQ(a.outcome, Outcome::Bound);
  EXPECT_TRUE(a.victims.empty());
}

TEST_F(HivedTest, LazyPreemptionDowngradesInsteadOfKilling) {
  ASSERT_EQ(run(req("lazy", "b", 10, {{1, 4}}, "", "", true)).outcome, Outcome::Bound);
  auto high = run(req("high", "b", 100, {{2, 4}}));
  ASSERT_EQ(high.outcome, Outcome::Bound);
  ASSERT_EQ(high.downgraded.size(), 1u);
  EXPECT_EQ(high.downgraded[0].group, "lazy");
  EXPECT_TRUE(h->has_group("lazy"));
  EXPECT_EQ(h->usage().opportunistic_leaf_cells, 4);
  // Without lazy preemption the same situation kills the low group.
  drop("high");
  drop("lazy");
  ASSERT_EQ(run(req("eager", "b", 10, {{1, 4}})).outcome, Outcome::Bound);
  auto high2 = run(req("high2", "b", 100, {{2, 4}}));
  ASSERT_EQ(high2.outcome, Outcome::Preempting);
  EXPECT_EQ(high2.victims[0].group, "eager");
}

TEST_F(HivedTest, PinnedCellsServeOnlyTheirPinnedJobs) {
  auto pinned = run(req("p", "a", 0, {{1, 4}}, "", "pin-k2"));
  ASSERT_EQ(pinned.outcome, Outcome::Bound);
  EXPECT_EQ(node(pinned), "k2");
  EXPECT_EQ(pinned.pods[0].preassigned_cell_types[0], "K80-NODE");
  drop("p");
  // Without the pinned id, a's K80 jobs use its other K80 cell, never k2.
  auto k = run(req("k", "a", 0, {{1, 4}}, "K80"));
  ASSERT_EQ(k.outcome, Outcome::Bound);
  EXPECT_EQ(node(k), "k1");
  EXPECT_EQ(run(req("k2", "a", 0, {{1, 1}}, "K80")).outcome, Outcome::Waiting);
  // Opportunistic work may use the idle pinned cell.
  auto opp = run(req("o", "b", -1, {{1, 4}}, "K80"));
  ASSERT_EQ(opp.outcome, Outcome::Bound);
  EXPECT_EQ(node(opp), "k2");
  // ...and the pinned job preempts it.
  auto back = run(req("p2", "a", 0, {{1, 2}}, "", "pin-k2"));
  EXPECT_EQ(back.outcome, Outcome::Preempting);
  // User errors.
  auto other = run(req("x", "b", 0, {{1, 1}}, "", "pin-k2"));
  EXPECT_EQ(other.outcome, Outcome::Rejected);
  EXPECT_EQ(other.reason, "VC b does not have pinned cell pin-k2");
  auto oppin = run(req("y", "a", -1, {{1, 1}}, "", "pin-k2"));
  EXPECT_EQ(oppin.outcome, Outcome::Rejected);
  EXPECT_EQ(oppin.reason, "opportunistic pod not supported to use pinned cell pin-k2");
}

TEST_F(HivedTest, WaitReasonsSayWhereTheLastTryFailed) {
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(run(req(numbered("b", i), "b", 0, {{1, 4}})).outcome, Outcome::Bound);
  GroupRequest more = req("b2", "b", 0, {{1, 1}});
  auto full = run(more);
  EXPECT_EQ(full.outcome, Outcome::Waiting);
  EXPECT_EQ(full.reason, "insufficient capacity when scheduling in VC b (chain V100-RACK)");
  // A caller that only retries can go without the text; the decision is the same.
  more.want_reason = false;
  auto quiet = run(more);
  EXPECT_EQ(quiet.outcome, Outcome::Waiting);
  EXPECT_EQ(quiet.reason, "");
  // Opportunistic work is placed in the physical cluster; the last chain tried is named.
  EXPECT_EQ(run(req("o", "b", -1, {{1, 5}})).reason,
            "insufficient capacity when scheduling in the physical cluster (chain K80-NODE)");
  EXPECT_EQ(run(req("p", "a", 0, {{1, 5}}, "", "pin-k2")).reason,
            "insufficient capacity when scheduling in VC a (pinned cell pin-k2)");
  // Rejections say why whether the text is wanted or not.
  GroupRequest nope = req("x", "nope", 0, {{1, 1}});
  nope.want_reason = false;
  EXPECT_EQ(run(nope).reason, "VC nope does not exists!");
}

TEST_F(HivedTest, TheVcIndexIsAHintCheckedAgainstTheName) {
  const auto& vcs = h->cluster().vcs;
  int32_t b = h->cluster().find_vc("b");
  ASSERT_GE(b, 0);
  EXPECT_EQ(h->cluster().find_vc("b", b), b);
  EXPECT_EQ(h->cluster().find_vc("b", b == 0 ? 1 : 0), b);
  EXPECT_EQ(h->cluster().find_vc("b", static_cast<int32_t>(vcs.size())), b);
  EXPECT_EQ(h->cluster().find_vc("nope", b), -1);
  // A wrong hint places the group in the VC it names.
  GroupRequest r = req("g", "b", 0, {{2, 4}});
  r.vc_index = b == 0 ? 1 : 0;
  auto g = run(r);
  ASSERT_EQ(g.outcome, Outcome::Bound) << g.reason;
  EXPECT_EQ(run(req("g2", "b", 0, {{1, 1}})).outcome, Outcome::Waiting);  // b's rack is taken
  GroupRequest unknown = req("u", "nope", 0, {{1, 1}});
  unknown.vc_index = b;
  EXPECT_EQ(run(unknown).reason, "VC nope does not exists!");
}

TEST_F(HivedTest, LeafCellTypesSelectChains) {
  EXPECT_EQ(node(run(req("k", "a", 0, {{1, 1}}, "K80"))), "k1");
  EXPECT_EQ(node(run(req("v", "a", 0, {{1, 1}}, "V100"))).substr(0, 1), "v");
  // Any type: V100 first (configuration order), then K80 when V100 is full.
  EXPECT_EQ(node(run(req("any1", "a", 0, {{1, 4}}))).substr(0, 1), "v");
  EXPECT_EQ(run(req("any2", "a", 0, {{1, 3}})).outcome,
            Outcome::Bound);  // fills a's second V100 node
  auto any3 = run(req("any3", "a", 0, {{1, 3}}));
  ASSERT_EQ(any3.outcome, Outcome::Bound);
  EXPECT_EQ(node(any3), "k1");
  auto lacks = run(req("z", "c", 0, {{1, 1}}, "K80"));
  EXPECT_EQ(lacks.outcome, Outcome::Rejected);
  EXPECT_EQ(lacks.reason, "affinity group z requests leaf cell type K80, which VC c does not have");
  auto unknown = run(req("u", "a", 0, {{1, 1}}, "A100"));
  EXPECT_EQ(unknown.outcome, Outcome::Rejected);
  EXPECT_EQ(unknown.reason,
            "affinity group u requests leaf cell type A100, which the whole cluster does not have");
}

TEST_F(HivedTest, RejectsInvalidRequestsWithHivedMessages) {
  auto unknown = run(req("x", "nope", 0, {{1, 1}}));
  EXPECT_EQ(unknown.outcome, Outcome::Rejected);
  EXPECT_EQ(unknown.reason, "VC nope does not exists!");
  EXPECT_EQ(run(req("x", "a", 1001, {{1, 1}})).reason,
            "pod-scheduling-spec: Priority is greater than 1000");
  EXPECT_EQ(run(req("x", "a", -2, {{1, 1}})).reason,
            "pod-scheduling-spec: Priority is less than -1");
  EXPECT_EQ(run(req("x", "a", 0, {})).reason,
            "pod-scheduling-spec: AffinityGroup.Members is empty");
  EXPECT_EQ(run(req("x", "a", 0, {{0, 1}})).reason,
            "pod-scheduling-spec: AffinityGroup.Members has non-positive PodNumber");
  EXPECT_EQ(run(req("x", "a", 0, {{1, 0}})).reason,
            "pod-scheduling-spec: AffinityGroup.Members has non-positive LeafCellNumber");
  EXPECT_EQ(run(req("", "a", 0, {{1, 1}})).reason,
            "pod-scheduling-spec: AffinityGroup.Name is empty");
  EXPECT_EQ(run(req("x", "", 0, {{1, 1}})).reason, "pod-scheduling-spec: VirtualCluster is empty");
  EXPECT_EQ(h->usage().used_leaf_cells, 0);
}

TEST_F(HivedTest, HandsOutPodsOneByOneAndNoMoreThanDeclared) {
  ASSERT_EQ(run(req("g", "b", 0, {{2, 4}})).outcome, Outcome::Bound);
  auto p0 = h->schedule_pod("g", 4);
  auto p1 = h->schedule_pod("g", 4);
  ASSERT_EQ(p0.outcome, Outcome::Bound);
  ASSERT_EQ(p1.outcome, Outcome::Bound);
  EXPECT_NE(p0.pods[0].node, p1.pods[0].node);
  auto p2 = h->schedule_pod("g", 4);
  EXPECT_EQ(p2.outcome, Outcome::Rejected);
  EXPECT_EQ(p2.reason,
            "Requesting more pods than the configured number for 4 leaf cells (2 pods) in affinity "
            "group g");
  EXPECT_EQ(h->schedule_pod("g", 2).outcome, Outcome::Rejected);
}

TEST_F(HivedTest, BadNodesAreAvoidedAndDoomCellsWhenCapacityIsShort) {
  const auto& shape = h->cluster();
  auto node_id = [&](const std::string& n) { return shape.find_node(n); };
  h->set_node_health(node_id("v1"), false);
  EXPECT_EQ(h->check_invariants(), "");
  // c's socket avoids the bad node.
  auto c1 = run(req("c1", "c", 0, {{1, 1}}));
  ASSERT_EQ(c1.outcome, Outcome::Bound);
  EXPECT_NE(node(c1), "v1");
  drop("c1");
  for (const char* n : {"v2", "v3", "v4", "v5"}) {
    h->set_node_health(node_id(n), false);
    ASSERT_EQ(h->check_invariants(), "") << n;
  }
  // Only v6 is healthy: a gets one node there, its other node is doomed to be bad.
  auto a1 = run(req("a1", "a", 0, {{1, 4}}, "V100"));
  ASSERT_EQ(a1.outcome, Outcome::Bound);
  EXPECT_EQ(node(a1), "v6");
  EXPECT_EQ(run(req("a2", "a", 0, {{1, 4}}, "V100")).outcome, Outcome::Waiting);
  EXPECT_EQ(run(req("b1", "b", 0, {{1, 1}})).outcome, Outcome::Waiting);
  // A running group keeps its cells when its node fails.
  h->set_node_health(node_id("v6"), false);
  EXPECT_TRUE(h->has_group("a1"));
  EXPECT_EQ(h->check_invariants(), "");
  for (const char* n : {"v1", "v2", "v3", "v4", "v5", "v6"}) {
    h->set_node_health(node_id(n), true);
    ASSERT_EQ(h->check_invariants(), "") << n;
  }
  EXPECT_EQ(run(req("a2", "a", 0, {{1, 4}}, "V100")).outcome, Outcome::Bound);
  EXPECT_EQ(run(req("b1", "b", 0, {{2, 4}})).outcome, Outcome::Bound);
  drop("a1");
  drop("a2");
  drop("b1");
  EXPECT_EQ(h->usage().used_leaf_cells, 0);
}

// buddyAlloc looks only at the lowest level that has free cells; when those are
// bad, the safe relaxed buddy allocation splits a higher cell, but only one that
// no VC's unbound cells need.
TEST_F(HivedTest, SafeRelaxedBuddyAllocationSplitsOnlyWhatNoVcNeeds) {
  use_configuration_order();
  const auto& shape = h->cluster();
  auto node_id = [&](const std::string& n) { return shape.find_node(n); };
  // c's first socket splits r1 and v1; v1's other socket is the only free socket.
  auto c1 = run(req("c1", "c", 0, {{1, 2}}));
  ASSERT_EQ(c1.outcome, Outcome::Bound);
  EXPECT_EQ(node(c1), "v1");
  h->set_node_health(node_id("v1"), false);
  ASSERT_EQ(h->check_invariants(), "");
  // Plain buddy allocation finds only the bad socket; the relaxed one splits v2
  // (a's two unbound nodes can still come from r2 and r3).
  auto c2 = run(req("c2", "c", 0, {{1, 2}}));
  ASSERT_EQ(c2.outcome, Outcome::Bound) << c2.reason;
  EXPECT_EQ(node(c2), "v2");
  drop("c2");

  // Now leave no free node that nobody needs: a binds v2 and v3, v4 fails, and
  // b's unbound rack is the only whole cell left.
  auto a1 = run(req("a1", "a", 0, {{1, 4}}, "V100"));
  auto a2 = run(req("a2", "a", 0, {{1, 4}}, "V100"));
  ASSERT_EQ(a1.outcome, Outcome::Bound);
  ASSERT_EQ(a2.outcome, Outcome::Bound);
  EXPECT_EQ(node(a1), "v2");
  EXPECT_EQ(node(a2), "v3");
  h->set_node_health(node_id("v4"), false);
  ASSERT_EQ(h->check_invariants(), "");
  // c is within its guarantee, but the only healthy cells are b's rack: c waits...
  auto c3 = run(req("c3", "c", 0, {{1, 2}}));
  EXPECT_EQ(c3.outcome, Outcome::Waiting);
  EXPECT_FALSE(h->has_group("c3"));
  // ...and b still gets its whole rack.
  auto b1 = run(req("b1", "b", 0, {{2, 4}}));
  ASSERT_EQ(b1.outcome, Outcome::Bound) << b1.reason;
  EXPECT_EQ(nodes_of(*h, b1), (std::set<std::string>{"v5", "v6"}));
  // When v4 recovers, c gets a socket there.
  drop("b1");
  h->set_node_health(node_id("v4"), true);
  auto c4 = run(req("c4", "c", 0, {{1, 2}}));
  ASSERT_EQ(c4.outcome, Outcome::Bound) << c4.reason;
  EXPECT_EQ(node(c4), "v4");
}

TEST_F(HivedTest, ReleaseEpochMovesOnlyWhenResourcesComeBack) {
  uint64_t e0 = h->release_epoch();
  run(req("j", "b", 0, {{1, 1}}));
  EXPECT_EQ(h->release_epoch(), e0);
  drop("j");
  EXPECT_GT(h->release_epoch(), e0);
  EXPECT_FALSE(h->release("j"));
}

// A leaf cell type in several chains (HiveD: a group fits inside one chain;
// chains are tried in configuration order), a node in two chains, pinned cells
// at leaf and rack level.
class MultiChainTest : public HivedTest {
 protected:
  void SetUp() override {
    model = model_from_yaml(kMultiChainConfig);
    h = policy("hived", *model);
    ASSERT_NE(h, nullptr);
  }
};

TEST_F(MultiChainTest, AGroupFitsInsideOneOfItsTypesChains) {
  const auto& types = h->cluster().leaf_types;
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0].name, "A100");
  EXPECT_EQ(types[0].chains.size(), 3u);
  // x has one node in chain A-NODE, two in A-TRIO: an 8-GPU gang skips A-NODE.
  auto g = run(req("g", "x", 0, {{2, 4}}, "A100"));
  ASSERT_EQ(g.outcome, Outcome::Bound) << g.reason;
  EXPECT_EQ(g.cell_chain, "A-TRIO");
  for (const auto& n : nodes_of(*h, g)) EXPECT_EQ(n.substr(0, 1), "t");
  // A 4-GPU job goes to the first chain, A-NODE.
  auto one = run(req("one", "x", 0, {{1, 4}}));
  ASSERT_EQ(one.outcome, Outcome::Bound);
  EXPECT_EQ(one.cell_chain, "A-NODE");
  drop("g");
  drop("one");
  // x has four non-pinned nodes, but in three chains: a 16-GPU gang never fits.
  auto wide = run(req("wide", "x", 0, {{4, 4}}, "A100"));
  EXPECT_EQ(wide.outcome, Outcome::Waiting);
  EXPECT_EQ(h->usage().used_leaf_cells, 0);
  // Opportunistic work is not bound to a VC's chains: 3 nodes of A-TRIO.
  auto opp = run(req("opp", "y", -1, {{3, 4}}, "A100"));
  ASSERT_EQ(opp.outcome, Outcome::Bound) << opp.reason;
  EXPECT_EQ(opp.cell_chain, "A-TRIO");
}

TEST_F(MultiChainTest, PinnedCellsAtLeafAndRackLevel) {
  auto leaf = run(req("leaf", "x", 0, {{1, 1}}, "", "pin-s"));
  ASSERT_EQ(leaf.outcome, Outcome::Bound) << leaf.reason;
  EXPECT_EQ(node(leaf), "t0");
  EXPECT_EQ(leaf.pods[0].physical_leaf_cell_indices, std::vector<int32_t>{4});
  EXPECT_EQ(leaf.pods[0].preassigned_cell_types, std::vector<std::string>{"S"});
  EXPECT_EQ(run(req("leaf2", "x", 0, {{1, 1}}, "", "pin-s")).outcome, Outcome::Waiting);
  auto rack = run(req("rack", "x", 0, {{2, 4}}, "", "pin-pair"));
  ASSERT_EQ(rack.outcome, Outcome::Bound) << rack.reason;
  EXPECT_EQ(nodes_of(*h, rack), (std::set<std::string>{"q0", "q1"}));
  EXPECT_EQ(rack.pods[0].preassigned_cell_types[0], "A-PAIR");
  // x's and y's non-pinned A-QUAD nodes are q2 and q3.
  auto xq = run(req("xq", "x", 0, {{1, 4}}, "A100"));
  auto xq2 = run(req("xq2", "x", 0, {{1, 4}}, "A100"));
  auto xq3 = run(req("xq3", "x", 0, {{1, 4}}, "A100"));
  auto xq4 = run(req("xq4", "x", 0, {{1, 4}}, "A100"));
  ASSERT_EQ(xq4.outcome, Outcome::Bound);
  EXPECT_EQ(xq4.cell_chain, "A-QUAD");
  EXPECT_EQ(run(req("xq5", "x", 0, {{1, 1}}, "A100")).outcome, Outcome::Waiting);
  auto yq = run(req("yq", "y", 0, {{1, 4}}, "A100"));
  ASSERT_EQ(yq.outcome, Outcome::Bound);
  EXPECT_EQ(yq.cell_chain, "A-NODE");
  // y has no S cells; S exists in the cluster.
  auto ys = run(req("ys", "y", 0, {{1, 1}}, "S"));
  EXPECT_EQ(ys.outcome, Outcome::Rejected);
  EXPECT_EQ(ys.reason, "affinity group ys requests leaf cell type S, which VC y does not have");
  // Opportunistic S work takes the other S leaf of t0.
  auto os = run(req("os", "y", -1, {{1, 1}}, "S"));
  ASSERT_EQ(os.outcome, Outcome::Bound);
  EXPECT_EQ(os.pods[0].physical_leaf_cell_indices, std::vector<int32_t>{5});
}

TEST_F(MultiChainTest, ANodeInTwoChainsFailsInBoth) {
  const int32_t t0 = h->cluster().find_node("t0");
  h->set_node_health(t0, false);
  ASSERT_EQ(h->check_invariants(), "");
  EXPECT_EQ(h->usage().bad_leaf_cells, 6);  // 4 A100 + 2 S
  // S lives only on t0: the pinned S job waits.
  EXPECT_EQ(run(req("s", "x", 0, {{1, 1}}, "", "pin-s")).outcome, Outcome::Waiting);
  // x's two A-TRIO nodes avoid t0.
  auto g = run(req("g", "x", 0, {{2, 4}}, "A100"));
  ASSERT_EQ(g.outcome, Outcome::Bound) << g.reason;
  EXPECT_EQ(nodes_of(*h, g), (std::set<std::string>{"t1", "t2"}));
  // y's A-TRIO node can only be the bad t0 now: y gets its other chains' nodes
  // and then waits.
  auto y1 = run(req("y1", "y", 0, {{1, 4}}, "A100"));
  auto y2 = run(req("y2", "y", 0, {{1, 4}}, "A100"));
  ASSERT_EQ(y1.outcome, Outcome::Bound);
  ASSERT_EQ(y2.outcome, Outcome::Bound);
  EXPECT_EQ(y1.cell_chain, "A-NODE");
  EXPECT_EQ(y2.cell_chain, "A-QUAD");
  EXPECT_EQ(run(req("y3", "y", 0, {{1, 4}}, "A100")).outcome, Outcome::Waiting);
  h->set_node_health(t0, true);
  ASSERT_EQ(h->check_invariants(), "");
  auto y3 = run(req("y3", "y", 0, {{1, 4}}, "A100"));
  ASSERT_EQ(y3.outcome, Outcome::Bound);
  EXPECT_EQ(node(y3), "t0");
  auto s = run(req("s", "x", 0, {{1, 1}}, "", "pin-s"));
  ASSERT_EQ(s.outcome, Outcome::Bound);
  EXPECT_EQ(node(s), "t0");
}

}  // namespace
}  // namespace pai::scheduler::test
