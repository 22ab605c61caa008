// Baseline policies (quota, k8s-default, private) and the sharing anomaly
// that motivates HiveD.

#include <gtest/gtest.h>

#include "helpers.h"

namespace pai::scheduler::test {
namespace {

struct Fixture {
  std::shared_ptr<config::HivedModel> model = model_from_yaml(kTwoSkuConfig);
};

std::string node(const Policy& p, const ScheduleResult& r, size_t pod = 0) {
  return p.cluster().nodes[static_cast<size_t>(r.pods.at(pod).node)].name;
}

TEST(Quota, AdmitsAVcUpToItsQuotaPerSku) {
  Fixture f;
  auto q = policy("quota", *f.model);
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(q->schedule(req(numbered("b", i), "b", 0, {{1, 1}})).outcome, Outcome::Bound);
  auto over = q->schedule(req("b8", "b", 0, {{1, 1}}));
  EXPECT_EQ(over.outcome, Outcome::Waiting);
  EXPECT_NE(over.reason.find("quota of 8 V100"), std::string::npos) << over.reason;
  // Opportunistic work is not charged to the quota.
  EXPECT_EQ(q->schedule(req("o", "b", -1, {{1, 1}})).outcome, Outcome::Bound);
  // a's quota counts its pinned K80 cell as well: 8 K80.
  EXPECT_EQ(q->schedule(req("k", "a", 0, {{2, 4}}, "K80")).outcome, Outcome::Bound);
  EXPECT_EQ(q->schedule(req("k2", "a", 0, {{1, 1}}, "K80")).outcome, Outcome::Waiting);
  EXPECT_EQ(q->check_invariants(), "");
  auto lacks = q->schedule(req("z", "c", 0, {{1, 1}}, "K80"));
  EXPECT_EQ(lacks.outcome, Outcome::Rejected);
}

TEST(Quota, SpreadsPodsOverTheLeastAllocatedNodes) {
  Fixture f;
  auto q = policy("quota", *f.model);
  std::set<std::string> nodes;
  for (int i = 0; i < 6; ++i) {
    auto r = q->schedule(req(numbered("b", i), "b", 0, {{1, 1}}));
    ASSERT_EQ(r.outcome, Outcome::Bound);
    nodes.insert(node(*q, r));
    EXPECT_EQ(r.pods[0].physical_leaf_cell_indices, std::vector<int32_t>{0});  // lowest free device
  }
  EXPECT_EQ(nodes.size(), 6u);  // one per V100 node
  EXPECT_EQ(q->check_invariants(), "");
}

TEST(Quota, HigherPriorityPreemptsLowerPriorityAcrossVcs) {
  Fixture f;
  auto q = policy("k8s-default", *f.model);
  for (int i = 0; i < 6; ++i)
    ASSERT_EQ(q->schedule(req(numbered("o", i), "c", -1, {{1, 4}}, "V100")).outcome,
              Outcome::Bound);
  auto hi = q->schedule(req("hi", "b", 0, {{1, 4}}, "V100"));
  ASSERT_EQ(hi.outcome, Outcome::Preempting);
  ASSERT_EQ(hi.victims.size(), 1u);
  EXPECT_TRUE(q->release(hi.victims[0].group));
  EXPECT_EQ(q->schedule(req("hi", "b", 0, {{1, 4}}, "V100")).outcome, Outcome::Bound);
  // Without preemption allowed the request just waits.
  EXPECT_EQ(q->schedule(req("hi2", "b", 0, {{1, 4}}, "V100"), false).outcome, Outcome::Waiting);
  EXPECT_EQ(q->check_invariants(), "");
}

TEST(K8sDefault, HasNoVcLimits) {
  Fixture f;
  auto k = policy("k8s-default", *f.model);
  for (int i = 0; i < 24; ++i)
    ASSERT_EQ(k->schedule(req(numbered("b", i), "b", 0, {{1, 1}}, "V100")).outcome, Outcome::Bound)
        << i;
  EXPECT_EQ(k->schedule(req("b24", "b", 0, {{1, 1}}, "V100")).outcome, Outcome::Waiting);
  EXPECT_EQ(k->check_invariants(), "");
}

TEST(Private, KeepsEachVcOnItsOwnCells) {
  Fixture f;
  auto p = policy("private", *f.model);
  // b owns one rack; its jobs never leave it even when everything else is idle.
  std::set<std::string> nodes;
  for (int i = 0; i < 8; ++i) {
    auto r = p->schedule(req(numbered("b", i), "b", 0, {{1, 1}}));
    ASSERT_EQ(r.outcome, Outcome::Bound);
    nodes.insert(node(*p, r));
  }
  EXPECT_EQ(nodes.size(), 2u);
  EXPECT_EQ(p->schedule(req("b8", "b", 0, {{1, 1}})).outcome, Outcome::Waiting);
  // Opportunistic work of b stays in b's cells too.
  EXPECT_EQ(p->schedule(req("bo", "b", -1, {{1, 1}})).outcome, Outcome::Waiting);
  // c owns two sockets: a 2-GPU job fits, a 4-GPU pod does not (two sockets need not share a node).
  EXPECT_EQ(p->schedule(req("c1", "c", 0, {{1, 2}})).outcome, Outcome::Bound);
  // Pinned jobs run in the pinned cell.
  auto pin = p->schedule(req("pin", "a", 0, {{1, 4}}, "", "pin-k2"));
  ASSERT_EQ(pin.outcome, Outcome::Bound);
  EXPECT_EQ(node(*p, pin), "k2");
  EXPECT_EQ(p->check_invariants(), "");
}

TEST(Private, PacksInsideItsCells) {
  Fixture f;
  auto p = policy("private", *f.model);
  auto j1 = p->schedule(req("j1", "b", 0, {{1, 1}}));
  auto j2 = p->schedule(req("j2", "b", 0, {{1, 1}}));
  auto j3 = p->schedule(req("j3", "b", 0, {{1, 2}}));
  EXPECT_EQ(node(*p, j1), node(*p, j2));
  EXPECT_EQ(j2.pods[0].physical_leaf_cell_indices, std::vector<int32_t>{1});
  EXPECT_EQ(j3.pods[0].physical_leaf_cell_indices, (std::vector<int32_t>{2, 3}));
  // Priority preemption inside the VC's own cells.
  auto big = p->schedule(req("big", "b", 5, {{2, 4}}));
  EXPECT_EQ(big.outcome, Outcome::Preempting);
  EXPECT_EQ(big.victims.size(), 3u);
}

// The sharing anomaly (HiveD, OSDI '20): under quota, a VC within its quota
// waits for an 8-GPU... here 4-GPU node because other VCs' 1-GPU jobs are
// scattered over every node; under HiveD it starts at once.
TEST(SharingAnomaly, QuotaFragmentsWhileHivedKeepsCellsWhole) {
  Fixture f;
  for (const char* name : {"quota", "hived"}) {
    auto p = policy(name, *f.model);
    for (int i = 0; i < 4; ++i)
      ASSERT_EQ(p->schedule(req(numbered("c", i), "c", 0, {{1, 1}})).outcome, Outcome::Bound);
    for (int i = 0; i < 2; ++i)
      ASSERT_EQ(p->schedule(req(numbered("a", i), "a", 0, {{1, 1}}, "V100")).outcome,
                Outcome::Bound);
    // b has used nothing of its 8 GPUs, and the cluster has 18 idle V100s.
    auto b = p->schedule(req("b", "b", 0, {{1, 4}}));
    if (std::string(name) == "quota") {
      EXPECT_EQ(b.outcome, Outcome::Waiting) << "quota: every node has a scattered 1-GPU job";
    } else {
      EXPECT_EQ(b.outcome, Outcome::Bound) << "hived: b's rack is intact";
    }
    EXPECT_EQ(p->check_invariants(), "");
  }
}

TEST(Policies, NamesAndErrors) {
  Fixture f;
  std::string err;
  EXPECT_EQ(make_policy("fifo", *f.model, err), nullptr);
  EXPECT_NE(err.find("unknown policy"), std::string::npos);
  config::HivedModel broken = *f.model;
  broken.complete = false;
  err.clear();
  EXPECT_EQ(make_policy("hived", broken, err), nullptr);
  EXPECT_FALSE(err.empty());
  for (const auto& n : policy_names()) {
    auto p = policy(n, *f.model);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->name(), n);
    EXPECT_EQ(p->schedule(req("x", "nope", 0, {{1, 1}})).reason, "VC nope does not exists!");
    EXPECT_EQ(p->schedule(req("x", "a", 0, {{1, 1}}, "A100")).outcome, Outcome::Rejected);
  }
}

}  // namespace
}  // namespace pai::scheduler::test
