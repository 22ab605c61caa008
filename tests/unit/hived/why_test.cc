// hived why as a library call: a running group explained from what HiveD
// shows of it, and a waiting group's request replayed on a live state made by
// lib/scheduler (the lab of tests/integration/hived/scenarios, v7 bad): the
// verdict, the victims, the cells of the VC and who holds them, the bad nodes
// of the chains, the cell each pod needs.

#include "hived/why.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "scheduler/helpers.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"

namespace pai::hived {
namespace {

using scheduler::test::req;

struct WhyLab {
  std::shared_ptr<config::HivedModel> model;
  LiveState live;
};

// prod's four V100 node cells: train-a (two), train-b and infer-c (priority
// 10, 4 GPUs); research runs res-1 on one of its three; v7 is bad.
const WhyLab& why_lab() {
  static const WhyLab l = [] {
    std::ifstream f(PAI_SOURCE_DIR "/tests/integration/hived/scenarios/lab-hived.yaml");
    std::stringstream s;
    s << f.rdbuf();
    WhyLab out;
    out.model = scheduler::test::model_from_yaml(s.str());
    auto made = scheduler::make_hived_policy(*out.model);
    EXPECT_TRUE(made.ok()) << made.error().message;
    auto policy = std::move(*made);
    policy->set_node_health(policy->cluster().find_node("v7"), false);
    for (const auto& r : {req("train-a", "prod", 300, {{2, 8}}, "V100"),
                          req("train-b", "prod", 300, {{1, 8}}, "V100"),
                          req("infer-c", "prod", 10, {{1, 4}}, "V100"),
                          req("res-1", "research", 50, {{1, 8}}, "V100")})
      EXPECT_EQ(policy->schedule(r).outcome, scheduler::Outcome::Bound) << r.affinity_group;
    auto state = *scheduler::snapshot_hived(*policy);
    out.live =
        index_live(cluster_status_of(*out.model, state), affinity_groups_of(*out.model, state));
    return out;
  }();
  return l;
}

WaitingAnswer why_judge(const scheduler::GroupRequest& r) {
  auto a = judge_waiting(r.affinity_group, r, "the command line", *why_lab().model, why_lab().live);
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message);
  return a.ok() ? a.value() : WaitingAnswer{};
}

bool why_has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(HivedWhy, AWaitingGroupBehindHigherPrioritiesNamesTheCellsAndTheirHolders) {
  auto a = why_judge(req("low", "prod", 5, {{1, 8}}, "V100"));
  EXPECT_EQ(a.verdict, WaitVerdict::Waits) << a.reason;
  EXPECT_TRUE(a.vc_known);
  EXPECT_EQ(a.vc_cells, 4);
  EXPECT_EQ(a.vc_bound, 4);
  EXPECT_EQ(a.vc_cells_per_type, (std::map<std::string, int64_t>{{"V100-NODE", 4}}));
  EXPECT_EQ(a.held_by,
            (std::map<std::string, int32_t>{{"infer-c", 10}, {"train-a", 300}, {"train-b", 300}}));
  EXPECT_EQ(a.bad_nodes, std::vector<std::string>{"v7"});
  ASSERT_EQ(a.needs.size(), 1u);
  EXPECT_EQ(a.needs[0].type, "V100-NODE");
  EXPECT_EQ(a.needs[0].leaves, 8);
  EXPECT_TRUE(a.victims.empty());
  EXPECT_EQ(a.restored_groups, 4);
  EXPECT_EQ(a.live_bad_nodes, 1);

  std::string text = to_text(a, false);
  EXPECT_TRUE(why_has(text, "low waits: ")) << text;
  EXPECT_TRUE(why_has(text,
                      "VC prod needs 1 pod(s) of 8 GPUs at priority 5 (a pod of 8 GPUs takes a "
                      "whole V100-NODE cell of chain"))
      << text;
  EXPECT_TRUE(why_has(text,
                      "of its 4 guaranteed V100-NODE cells, 4 are bound to running groups: "
                      "infer-c (10), train-a (300), train-b (300)"))
      << text;
  EXPECT_TRUE(why_has(text, "1 physical node(s) of those chains are bad: v7")) << text;
  EXPECT_FALSE(why_has(text, "request:")) << text;
  std::string wide = to_text(a, true);
  EXPECT_TRUE(why_has(wide,
                      "  request: 1 pod(s) of 8 GPUs in VC prod at priority 5, leaf type V100, "
                      "from the command line\n"))
      << wide;
  EXPECT_TRUE(
      why_has(wide, "judged on 4 running groups rebuilt from their placements and 1 bad node"))
      << wide;

  Json j = to_json(a);
  EXPECT_EQ(j["verdict"], "waits");
  EXPECT_EQ(j["running"], false);
  EXPECT_EQ(j["vcGuaranteedCells"], 4);
  EXPECT_EQ(j["heldBy"].size(), 3u);
  EXPECT_EQ(j["badNodes"], Json::array({"v7"}));
  EXPECT_EQ(j["explanation"], text);
  EXPECT_EQ(j["request"]["priority"], 5);
  EXPECT_EQ(j["request"]["source"], "the command line");
  EXPECT_TRUE(j["request"]["pinnedCellId"].is_null());
}

TEST(HivedWhy, AHigherPriorityGroupPreemptsTheLowerOne) {
  auto a = why_judge(req("urgent", "prod", 100, {{1, 8}}, "V100"));
  EXPECT_EQ(a.verdict, WaitVerdict::Preempts) << a.reason;
  EXPECT_EQ(a.victims, std::vector<std::string>{"infer-c"});
  std::string text = to_text(a, false);
  EXPECT_EQ(text.rfind("urgent can be placed by preempting lower-priority groups: infer-c\n", 0),
            0u)
      << text;
  EXPECT_EQ(to_json(a)["victims"], Json::array({"infer-c"}));
}

TEST(HivedWhy, AGroupThatFitsIsPlaced) {
  // One healthy V100 node is free: not prod's, not v8 (pinned), not v7 (bad).
  auto a = why_judge(req("res-2", "research", 50, {{1, 8}}, "V100"));
  EXPECT_EQ(a.verdict, WaitVerdict::Fits) << a.reason;
  ASSERT_EQ(a.placement.size(), 1u);
  const std::string node = a.placement[0].node;
  EXPECT_NE(node, "v7");
  EXPECT_NE(node, "v8");
  for (const auto& l : why_lab().live.leaves)
    EXPECT_TRUE(l.node != node || l.group.empty()) << node;
  EXPECT_EQ(a.placement[0].leaves.size(), 8u);
  std::string text = to_text(a, false);
  EXPECT_EQ(text, "res-2 would be placed now (on the live state): " + node +
                      "[0-7] \n  if it still waits, HiveD has not seen it yet or Kubernetes "
                      "refuses the node (see the pod's events)\n")
      << text;
  // Two such pods do not fit: it waits.
  EXPECT_EQ(why_judge(req("res-3", "research", 50, {{2, 8}}, "V100")).verdict, WaitVerdict::Waits);
}

TEST(HivedWhy, AnUnknownVcAndAPodLargerThanANode) {
  auto none = why_judge(req("x", "nope", 10, {{1, 1}}));
  EXPECT_EQ(none.verdict, WaitVerdict::Rejected);
  EXPECT_FALSE(none.vc_known);
  EXPECT_EQ(to_text(none, false).rfind("x is rejected: ", 0), 0u);
  EXPECT_EQ(to_json(none)["verdict"], "rejected");

  auto big = why_judge(req("k-big", "research", 20, {{1, 8}}, "K80"));
  EXPECT_NE(big.verdict, WaitVerdict::Fits);
  ASSERT_EQ(big.needs.size(), 1u);
  EXPECT_EQ(big.needs[0].type, "");
  EXPECT_TRUE(
      why_has(to_text(big, false), "a pod of 8 GPUs is larger than a node of chain K80-NODE"))
      << to_text(big, false);
}

TEST(HivedWhy, ARunningGroupIsExplainedFromWhatHivedShows) {
  AffinityGroup g;
  g.name = "alice~train/default";
  g.vc = "prod";
  g.priority = 300;
  g.state = "Allocated";
  g.physical_placement = {{"v1", {0, 1, 2, 3}}, {"v2", {4, 6}}};
  g.virtual_placement = {{"prod/0", {"prod/0/0", "prod/0/1"}}};
  g.allocated_pods = {"pod-a", "pod-b"};
  auto a = explain_running(g);
  std::string text = to_text(a, false);
  EXPECT_EQ(text,
            "alice~train/default is Allocated in VC prod at priority 300 (guaranteed), on 6 GPUs: "
            "v1[0-3] v2[4,6]\n  its guarantee: virtual cells prod/0 (2 leaf cells)\n");
  std::string wide = to_text(a, true);
  EXPECT_EQ(wide, text +
                      "  virtual cell prod/0: prod/0/0 prod/0/1\n"
                      "  allocated pods (2): pod-a, pod-b\n");
  Json j = to_json(a);
  EXPECT_EQ(j["running"], true);
  EXPECT_EQ(j["gpus"], 6);
  EXPECT_EQ(j["explanation"], text);
  EXPECT_TRUE(j["lazyPreemption"].is_null());

  g.lazy_preemption_status = LazyPreemptionStatus{"bob~urgent", "2024-01-02T03:04:05Z"};
  g.state = "BeingPreempted";
  g.virtual_placement.clear();
  text = to_text(explain_running(g), false);
  EXPECT_TRUE(why_has(text, "at priority 300, on 6 GPUs")) << text;  // no longer guaranteed
  EXPECT_TRUE(why_has(text,
                      "  lazily preempted by bob~urgent at 2024-01-02T03:04:05Z: it runs on at "
                      "opportunistic priority, outside prod's guarantee"))
      << text;
  EXPECT_TRUE(why_has(text, "it is about to be deleted")) << text;
  EXPECT_EQ(to_json(explain_running(g))["lazyPreemption"]["preemptor"], "bob~urgent");

  g.lazy_preemption_status.reset();
  g.priority = -1;
  g.state = "Preempting";
  text = to_text(explain_running(g), false);
  EXPECT_TRUE(why_has(text, "at priority -1 (opportunistic)")) << text;
  EXPECT_TRUE(why_has(text, "preemption in progress")) << text;
}

TEST(HivedWhy, TheWordsOfAGroup) {
  EXPECT_EQ(leaves_text({7, 0, 1, 2, 5}), "0-2,5,7");
  EXPECT_EQ(leaves_text({}), "");
  auto r = req("g", "vc", 1, {{1, 8}, {2, 4}, {3, 2}});
  EXPECT_EQ(members_text(r), "1 pod(s) of 8 GPUs, 2 pod(s) of 4 GPUs and 3 pod(s) of 2 GPUs");
}

}  // namespace
}  // namespace pai::hived
