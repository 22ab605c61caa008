// A preemption in progress as hived status and hived why see it: the lab of
// tests/integration/hived/scenarios filled with opportunistic groups, then a
// guaranteed group of 4 GPUs preempts one of them (8 GPUs) and its victim is
// not deleted yet. The victim still holds all 8 GPUs; the preemptor has
// reserved 4 and waits for the victim.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "hived/live.h"
#include "hived/why.h"
#include "scheduler/helpers.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"

namespace pai::hived {
namespace {

using scheduler::test::req;

struct PreemptionLab {
  std::shared_ptr<config::HivedModel> model;
  LiveState live;
  std::string victim;  // the BeingPreempted group
  std::string victim_node;
};

const PreemptionLab& preemption_lab() {
  static const PreemptionLab l = [] {
    std::ifstream f(PAI_SOURCE_DIR "/tests/integration/hived/scenarios/lab-hived.yaml");
    std::stringstream s;
    s << f.rdbuf();
    PreemptionLab out;
    out.model = scheduler::test::model_from_yaml(s.str());
    auto made = scheduler::make_hived_policy(*out.model);
    EXPECT_TRUE(made.ok()) << made.error().message;
    auto policy = std::move(*made);
    for (int i = 1; i <= 8; ++i)
      policy->schedule(req("opp-" + std::to_string(i), "research", -1, {{1, 8}}, "V100"));
    auto r = policy->schedule(req("urgent", "prod", 100, {{1, 4}}, "V100"));
    EXPECT_EQ(r.outcome, scheduler::Outcome::Preempting) << r.reason;
    auto state = *scheduler::snapshot_hived(*policy);
    out.live =
        index_live(cluster_status_of(*out.model, state), affinity_groups_of(*out.model, state));
    for (const auto& g : out.live.groups)
      if (g.state == "BeingPreempted") {
        out.victim = g.name;
        out.victim_node = g.physical_placement.begin()->first;
      }
    return out;
  }();
  return l;
}

TEST(HivedPreemptionView, TheVictimStillHoldsEveryGpuItRunsOn) {
  const auto& lab = preemption_lab();
  ASSERT_FALSE(lab.victim.empty());
  Summary s = summarize(lab.live);
  EXPECT_EQ(s.preempting, 1);
  const NodeSummary* node = nullptr;
  for (const auto& n : s.nodes)
    if (n.name == lab.victim_node) node = &n;
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->opportunistic, 8) << lab.victim_node;
  EXPECT_EQ(node->used, 8);
  ASSERT_EQ(node->uses.size(), 1u);
  EXPECT_EQ(node->uses[0].group, lab.victim);
  EXPECT_EQ(node->uses[0].indices.size(), 8u);
  ASSERT_EQ(node->reserved.size(), 1u);  // and who reserved half of them
  EXPECT_EQ(node->reserved[0].group, "urgent");
  EXPECT_EQ(node->reserved[0].priority, 100);
  EXPECT_EQ(node->reserved[0].indices.size(), 4u);
  // research's opportunistic GPUs: every GPU its opportunistic groups hold.
  int64_t held = 0, counted = 0;
  for (const auto& g : lab.live.groups)
    if (g.vc == "research" && g.priority == -1) held += gpus_of(g);
  for (const auto& v : s.vcs)
    if (v.vc == "research") counted += v.opportunistic;
  EXPECT_GT(held, 8);
  EXPECT_EQ(counted, held);
  // The reserved leaves say who reserved them.
  int reserved = 0;
  for (const auto& leaf : lab.live.leaves)
    if (leaf.reserved_by == "urgent") {
      ++reserved;
      EXPECT_EQ(leaf.group, lab.victim);
    }
  EXPECT_EQ(reserved, 4);
}

TEST(HivedPreemptionView, WhyOfThePreemptorNamesItsVictim) {
  const auto& lab = preemption_lab();
  const AffinityGroup* urgent = nullptr;
  for (const auto& g : lab.live.groups)
    if (g.name == "urgent") urgent = &g;
  ASSERT_NE(urgent, nullptr);
  ASSERT_EQ(urgent->state, "Preempting");
  auto a = explain_running(*urgent, lab.live.groups);
  ASSERT_EQ(a.waits_for.size(), 1u);
  EXPECT_EQ(a.waits_for[0].name, lab.victim);
  EXPECT_EQ(a.waits_for[0].priority, -1);
  std::string text = to_text(a, false);
  EXPECT_NE(text.find("(preemption in progress): " + lab.victim +
                      " (VC research, priority -1, "
                      "BeingPreempted) on " +
                      lab.victim_node + "["),
            std::string::npos)
      << text;
  Json j = to_json(a);
  ASSERT_EQ(j["waitsFor"].size(), 1u);
  EXPECT_EQ(j["waitsFor"][0]["name"], lab.victim);
  EXPECT_EQ(j["waitsFor"][0]["leafCells"][lab.victim_node].size(), 4u);

  // And the victim names who takes its cells.
  for (const auto& g : lab.live.groups)
    if (g.name == lab.victim) {
      std::string vt = to_text(explain_running(g, lab.live.groups), false);
      EXPECT_NE(vt.find("it is about to be deleted (by urgent (VC prod, priority 100, Preempting)"),
                std::string::npos)
          << vt;
    }
}

}  // namespace
}  // namespace pai::hived
