// The HiveD policy's state as values, and groups restored from bind info on the
// same or a changed configuration (HiveD's restart rules). Each expected outcome
// is worked out by hand from HiveD's createAllocatedAffinityGroup.

#include "scheduler/hived_state.h"

#include <gtest/gtest.h>

#include "helpers.h"
#include "scheduler/hived.h"

namespace pai::scheduler::test {
namespace {

// Two racks of two 4-GPU nodes; n4 is VC a's pinned node.
std::string config(int a_nodes, int b_nodes, bool with_pin = true) {
  std::string s = R"(physicalCluster:
  cellTypes:
    V100-NODE: {childCellType: V100, childCellNumber: 4, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 2}
  physicalCells:
  - cellType: V100-RACK
    cellChildren: [{cellAddress: n1}, {cellAddress: n2}]
  - cellType: V100-RACK
    cellChildren: [{cellAddress: n3}, {cellAddress: n4)";
  s += with_pin ? ", pinnedCellId: pin-a}]\n" : "}]\n";
  s += "virtualClusters:\n";
  s += "  a:\n    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: " +
       std::to_string(a_nodes) + "}]\n";
  if (with_pin) s += "    pinnedCells: [{pinnedCellId: pin-a}]\n";
  if (b_nodes > 0)
    s += "  b:\n    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: " +
         std::to_string(b_nodes) + "}]\n";
  return s;
}

LiveGroup live(const std::string& name, const std::string& vc, int32_t prio,
               std::vector<LiveGroup::Pod> pods, const std::string& pin = "") {
  LiveGroup g;
  g.name = name;
  g.vc = vc;
  g.priority = prio;
  g.pods = std::move(pods);
  g.pinned_cell_id = pin;
  return g;
}

LiveGroup::Pod pod(const std::string& node, std::vector<int32_t> leaves, const std::string& type) {
  LiveGroup::Pod p;
  p.node = node;
  p.leaf_indices = leaves;
  p.preassigned_cell_types.assign(leaves.size(), type);
  return p;
}

// The running groups of the examples: a1 fills n1, a2 half of n2, b1 fills n3,
// o1 is b's opportunistic GPU on n2, p1 sits in a's pinned node n4.
std::vector<LiveGroup> running() {
  return {live("a1", "a", 10, {pod("n1", {0, 1, 2, 3}, "V100-NODE")}),
          live("a2", "a", 10, {pod("n2", {0, 1}, "V100-NODE")}),
          live("b1", "b", 5, {pod("n3", {0, 1, 2, 3}, "V100-NODE")}),
          live("o1", "b", -1, {pod("n2", {3}, "")}),
          live("p1", "a", 10, {pod("n4", {0}, "V100-NODE")}, "pin-a")};
}

struct Restored {
  std::shared_ptr<config::HivedModel> model;
  std::unique_ptr<Policy> policy;
  std::vector<RestoredGroup> groups;
  const RestoredGroup& operator[](const std::string& name) const {
    for (const auto& g : groups)
      if (g.name == name) return g;
    throw std::runtime_error("no group " + name);
  }
};

Restored restore(const std::string& yaml, const std::vector<LiveGroup>& groups) {
  Restored r;
  r.model = model_from_yaml(yaml);
  r.policy = policy("hived", *r.model);
  auto out = restore_hived_groups(*r.policy, groups);
  EXPECT_TRUE(out.has_value());
  if (out) r.groups = *out;
  EXPECT_EQ(r.policy->check_invariants(), "");
  return r;
}

int32_t cell_of(const config::HivedModel& m, const std::string& address) {
  for (size_t i = 0; i < m.cells.size(); ++i)
    if (m.cells[i].address == address) return static_cast<int32_t>(i);
  ADD_FAILURE() << "no cell " << address;
  return -1;
}

TEST(HivedState, SnapshotShowsCellsVirtualAddressesAndGroups) {
  auto model = model_from_yaml(config(2, 1));
  auto h = policy("hived", *model);
  auto r = h->schedule(req("g", "a", 7, {{1, 2}}));
  ASSERT_EQ(r.outcome, Outcome::Bound);
  auto s = snapshot_hived(*h);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->groups.size(), 1u);
  EXPECT_EQ(s->groups[0].name, "g");
  EXPECT_EQ(s->groups[0].priority, 7);
  ASSERT_EQ(s->groups[0].leaves.size(), 2u);
  // Its leaves are Used at priority 7, and so are their node and rack.
  int32_t leaf = s->groups[0].leaves[0];
  EXPECT_EQ(s->cells[static_cast<size_t>(leaf)].state, CellUse::Used);
  EXPECT_EQ(s->cells[static_cast<size_t>(leaf)].priority, 7);
  int32_t node = model->cells[static_cast<size_t>(leaf)].parent;
  EXPECT_EQ(s->cells[static_cast<size_t>(node)].priority, 7);
  EXPECT_EQ(s->cells[static_cast<size_t>(node)].state, CellUse::Used);
  // Virtual addresses as HiveD writes them: roots "a/0", "a/1", then the pinned "a/2".
  ASSERT_EQ(s->vc_roots.size(), 2u);
  ASSERT_EQ(s->vc_roots[0].size(), 3u);
  EXPECT_EQ(s->vcells[static_cast<size_t>(s->vc_roots[0][0])].address, "a/0");
  EXPECT_EQ(s->vcells[static_cast<size_t>(s->vc_roots[0][2])].address, "a/2");
  EXPECT_EQ(s->vcells[static_cast<size_t>(s->vc_roots[0][2])].pinned_id, "pin-a");
  const auto& root = s->vcells[static_cast<size_t>(s->vc_roots[0][0])];
  ASSERT_EQ(root.children.size(), 4u);
  EXPECT_EQ(s->vcells[static_cast<size_t>(root.children[3])].address, "a/0/3");
  // The group's virtual leaf is bound to its physical leaf.
  int32_t v = s->groups[0].vleaves[0];
  ASSERT_GE(v, 0);
  EXPECT_EQ(s->vcells[static_cast<size_t>(v)].pcell, leaf);
  EXPECT_EQ(s->cells[static_cast<size_t>(leaf)].vcell, v);
  // The pinned node is bound from the start.
  int32_t n4 = cell_of(*model, "1/n4");
  EXPECT_GE(s->cells[static_cast<size_t>(n4)].vcell, 0);
  EXPECT_TRUE(s->cells[static_cast<size_t>(n4)].pinned);
}

TEST(HivedState, BadNodeIsShownAndItsCellsDoomedWhenTheVcNeedsThem) {
  // a needs 2 node cells, b 1; with n2, n3 and n4 bad only n1 is healthy, so
  // a (2 > 1 healthy) gets one bad node bound as a doomed cell, and then no VC
  // needs more than what is healthy.
  auto model = model_from_yaml(config(2, 1, false));
  auto h = policy("hived", *model);
  int32_t n3 = h->cluster().find_node("n3");
  for (const char* n : {"n2", "n3", "n4"}) h->set_node_health(h->cluster().find_node(n), false);
  auto s = snapshot_hived(*h);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->bad_nodes[static_cast<size_t>(n3)]);
  ASSERT_EQ(s->doomed.size(), 1u);
  EXPECT_FALSE(s->cells[static_cast<size_t>(s->doomed[0])].healthy);
  EXPECT_GE(s->cells[static_cast<size_t>(s->doomed[0])].vcell, 0);
}

TEST(HivedState, RestoringOnTheSameConfigKeepsEveryGroup) {
  auto r = restore(config(2, 1), running());
  EXPECT_EQ(r["a1"].outcome, RestoreOutcome::Kept);
  EXPECT_EQ(r["a2"].outcome, RestoreOutcome::Kept);
  EXPECT_EQ(r["b1"].outcome, RestoreOutcome::Kept);
  EXPECT_EQ(r["o1"].outcome, RestoreOutcome::Opportunistic);
  EXPECT_EQ(r["p1"].outcome, RestoreOutcome::Kept);
  auto s = snapshot_hived(*r.policy);
  ASSERT_TRUE(s.has_value());
  const auto& m = *r.model;
  EXPECT_EQ(s->cells[static_cast<size_t>(cell_of(m, "0/n1/3"))].priority, 10);
  EXPECT_EQ(s->cells[static_cast<size_t>(cell_of(m, "0/n2/3"))].priority, -1);
  EXPECT_EQ(s->cells[static_cast<size_t>(cell_of(m, "0/n2/2"))].state, CellUse::Free);
  EXPECT_EQ(s->cells[static_cast<size_t>(cell_of(m, "1/n3/0"))].priority, 5);
  // Both of a's node cells are bound (to n1 and n2), b's to n3.
  int32_t a0 = s->vc_roots[0][0], a1 = s->vc_roots[0][1];
  std::set<int32_t> bound = {s->vcells[static_cast<size_t>(a0)].pcell,
                             s->vcells[static_cast<size_t>(a1)].pcell};
  EXPECT_EQ(bound, (std::set<int32_t>{cell_of(m, "0/n1"), cell_of(m, "0/n2")}));
  EXPECT_EQ(s->vcells[static_cast<size_t>(s->vc_roots[1][0])].pcell, cell_of(m, "1/n3"));
  // n1 is full and n2 is bound to a with GPU 2 free: a new 1-GPU group of a
  // goes there (pinned n4 is only for requests that name it).
  auto more = r.policy->schedule(req("a3", "a", 10, {{1, 1}}), false);
  ASSERT_EQ(more.outcome, Outcome::Bound);
  EXPECT_EQ(r.policy->cluster().nodes[static_cast<size_t>(more.pods[0].node)].name, "n2");
  EXPECT_EQ(more.pods[0].physical_leaf_cell_indices, std::vector<int32_t>{2});
  EXPECT_EQ(r.policy->check_invariants(), "");
}

TEST(HivedState, RestoringOnAShrunkVcLazilyPreemptsWhatNoLongerFits) {
  // a goes from 2 nodes to 1: a1 takes a's only node cell; a2's node is no
  // longer a's and no virtual cell of a is free at node level, so a2 runs on
  // opportunistically ("insufficient free cell ... preassigned level (2)").
  auto r = restore(config(1, 2), running());
  EXPECT_EQ(r["a1"].outcome, RestoreOutcome::Kept);
  EXPECT_EQ(r["a2"].outcome, RestoreOutcome::LazyPreempted);
  EXPECT_NE(r["a2"].reason.find("insufficient free cell in the VC at the preassigned level (2)"),
            std::string::npos)
      << r["a2"].reason;
  EXPECT_EQ(r["b1"].outcome, RestoreOutcome::Kept);
  EXPECT_EQ(r["o1"].outcome, RestoreOutcome::Opportunistic);
  EXPECT_EQ(r["p1"].outcome, RestoreOutcome::Kept);
  auto s = snapshot_hived(*r.policy);
  const auto& m = *r.model;
  EXPECT_EQ(s->cells[static_cast<size_t>(cell_of(m, "0/n2/0"))].priority, -1);
  for (const auto& g : s->groups)
    if (g.name == "a2") {
      EXPECT_TRUE(g.lazy_preempted);
      EXPECT_EQ(g.priority, 10);
    }
}

TEST(HivedState, AHigherPriorityGroupTakesAVirtualCellBackFromAnEarlierOne) {
  // a has one node cell; a1 (priority 10, n1) is restored first and takes it.
  // a3 (priority 20, n2) maps to the lowest-priority node cell of a, which a1
  // holds on another physical node: HiveD lazily preempts a1 (the cell moved).
  auto groups = std::vector<LiveGroup>{live("a1", "a", 10, {pod("n1", {0, 1, 2, 3}, "V100-NODE")}),
                                       live("a3", "a", 20, {pod("n2", {0}, "V100-NODE")})};
  auto r = restore(config(1, 2), groups);
  EXPECT_EQ(r["a3"].outcome, RestoreOutcome::Kept);
  EXPECT_EQ(r["a3"].preempted, std::vector<std::string>{"a1"});
  EXPECT_EQ(r["a1"].outcome, RestoreOutcome::LazyPreempted);
  auto s = snapshot_hived(*r.policy);
  EXPECT_EQ(s->cells[static_cast<size_t>(cell_of(*r.model, "0/n1/0"))].priority, -1);
  EXPECT_EQ(s->cells[static_cast<size_t>(cell_of(*r.model, "0/n2/0"))].priority, 20);
}

TEST(HivedState, LeavesOutsideTheConfigAreIgnoredAndAMissingVcLazilyPreempts) {
  auto groups = running();
  groups.push_back(live("gone", "a", 10, {pod("n9", {0, 1}, "V100-NODE")}));
  groups.push_back(live("half", "b", -1, {pod("n1", {0}, ""), pod("n9", {2}, "")}));
  // Without VC b: b1 has no VC any more.
  auto r = restore(config(2, 0), groups);
  EXPECT_EQ(r["gone"].outcome, RestoreOutcome::Ignored);
  EXPECT_EQ(r["gone"].ignored_leaves, (std::vector<std::string>{"n9:0", "n9:1"}));
  EXPECT_EQ(r["b1"].outcome, RestoreOutcome::LazyPreempted);
  EXPECT_EQ(r["b1"].reason, "VC b not found");
  // n1:0 is a1's: two groups on one GPU, the second is not counted.
  EXPECT_EQ(r["half"].ignored_leaves, (std::vector<std::string>{"n1:0", "n9:2"}));
  EXPECT_EQ(r["half"].outcome, RestoreOutcome::Ignored);
}

TEST(HivedState, RestoreWithoutThePinnedCellLazilyPreemptsItsGroup) {
  auto r = restore(config(2, 1, false), running());
  EXPECT_EQ(r["p1"].outcome, RestoreOutcome::LazyPreempted);
  EXPECT_EQ(r["p1"].reason, "VC a has no cell for pin-a");
  EXPECT_EQ(r["a1"].outcome, RestoreOutcome::Kept);
}

}  // namespace
}  // namespace pai::scheduler::test
