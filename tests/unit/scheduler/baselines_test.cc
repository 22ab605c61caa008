// Baseline policies (quota, k8s-default, private) and the sharing anomaly
// that motivates HiveD.

#include <gtest/gtest.h>

#include <algorithm>

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

// Kubernetes' filter phase: a baseline places a group only on the nodes of its
// suggested set (GroupRequest::suggested_nodes, whatever ignoreK8sSuggestedNodes
// says: that flag is HiveD's), with or without victims, and waits otherwise.
// Worked by hand on kTwoSkuConfig: V100 nodes v1..v6 (4 GPUs each), K80 nodes
// k1, k2. Private partitions by buddy allocation in configuration order: a gets
// v1 v2 and k1 (and pinned k2), b the rack r2 = v3 v4, c two sockets of v5.
class BaselineSuggested : public ::testing::Test {
 protected:
  GroupRequest on(GroupRequest r, std::initializer_list<const char*> nodes, bool ignore = false) {
    r.suggested_nodes.emplace();
    for (const char* n : nodes) r.suggested_nodes->push_back(shape().find_node(n));
    r.ignore_suggested_nodes = ignore;
    return r;
  }
  const ClusterShape& shape() const { return p->cluster(); }
  ScheduleResult run(const GroupRequest& r, bool preempt = true) {
    ScheduleResult res = p->schedule(r, preempt);
    EXPECT_EQ(p->check_invariants(), "") << "after " << r.affinity_group;
    return res;
  }
  std::string at(const ScheduleResult& r, size_t pod = 0) { return node(*p, r, pod); }
  std::vector<std::string> victims(const ScheduleResult& r) {
    std::vector<std::string> out;
    for (const auto& v : r.victims) out.push_back(v.group);
    std::sort(out.begin(), out.end());
    return out;
  }
  Fixture f;
  std::unique_ptr<Policy> p;
};

// LeastAllocated among the suggested nodes only (ties by node order):
//   b1 {v3,v5}: both idle, v3 first              -> v3 GPU 0
//   b2 {v3,v5}: v3 1/4 used, v5 idle              -> v5 GPU 0
//   b3 {v3,v5}: 1/4 each, v3 first                -> v3 GPU 1
//   b4 2 pods x 1 GPU {v5}: one node, pod by pod  -> v5 GPUs 1 and 2
//   b5 1x3 {v3,v5}: v3 has 2 free GPUs, v5 1      -> waits, though v1 is idle
//   b5 1x3, no set: least allocated v1            -> v1 GPUs 0-2 (b holds 8 of 8)
TEST_F(BaselineSuggested, QuotaSpreadsOverTheSuggestedNodesOnly) {
  p = policy("quota", *f.model);
  auto b1 = run(on(req("b1", "b", 0, {{1, 1}}), {"v3", "v5"}));
  ASSERT_EQ(b1.outcome, Outcome::Bound);
  EXPECT_EQ(at(b1), "v3");
  EXPECT_EQ(b1.pods[0].physical_leaf_cell_indices, std::vector<int32_t>{0});
  auto b2 = run(on(req("b2", "b", 0, {{1, 1}}), {"v3", "v5"}));
  EXPECT_EQ(at(b2), "v5");
  auto b3 = run(on(req("b3", "b", 0, {{1, 1}}), {"v3", "v5"}));
  EXPECT_EQ(at(b3), "v3");
  EXPECT_EQ(b3.pods[0].physical_leaf_cell_indices, std::vector<int32_t>{1});
  auto b4 = run(on(req("b4", "b", 0, {{2, 1}}), {"v5"}));
  ASSERT_EQ(b4.outcome, Outcome::Bound);
  EXPECT_EQ(at(b4, 0), "v5");
  EXPECT_EQ(at(b4, 1), "v5");
  EXPECT_EQ(b4.pods[0].physical_leaf_cell_indices, std::vector<int32_t>{1});
  EXPECT_EQ(b4.pods[1].physical_leaf_cell_indices, std::vector<int32_t>{2});
  auto b5 = run(on(req("b5", "b", 0, {{1, 3}}), {"v3", "v5"}));
  EXPECT_EQ(b5.outcome, Outcome::Waiting);
  EXPECT_EQ(b5.reason, "insufficient capacity on the suggested nodes");
  // The set is Kubernetes' own filter: ignoreK8sSuggestedNodes does not lift it.
  EXPECT_EQ(run(on(req("b5", "b", 0, {{1, 3}}), {"v3", "v5"}, true)).outcome, Outcome::Waiting);
  auto free = run(req("b5", "b", 0, {{1, 3}}));
  ASSERT_EQ(free.outcome, Outcome::Bound);
  EXPECT_EQ(at(free), "v1");
  EXPECT_EQ(free.pods[0].physical_leaf_cell_indices, (std::vector<int32_t>{0, 1, 2}));
  // An allocated group keeps its placement whatever a later set says.
  EXPECT_EQ(at(run(on(req("b1", "b", 0, {{1, 1}}), {"v6"}))), "v3");
  // The quota still decides first: b holds 8 of its 8 V100s.
  EXPECT_NE(run(on(req("b6", "b", 0, {{1, 1}}), {"v6"})).reason.find("quota of 8 V100"),
            std::string::npos);
}

// Priority preemption only on suggested nodes. Six opportunistic 1x4 groups of
// c fill v1..v6 in node order (o0 on v1 ... o5 on v6). A 1x4 guaranteed group:
//   no set  -> the first node, v1: victim o0
//   {v4}    -> victim o3 only
//   {k1,k2} -> K80 nodes cannot hold a V100 pod: waits
//   {}      -> nothing passes the filters: waits
TEST_F(BaselineSuggested, K8sDefaultPreemptsOnlyOnSuggestedNodes) {
  p = policy("k8s-default", *f.model);
  for (int i = 0; i < 6; ++i) {
    auto o = run(req(numbered("o", i), "c", -1, {{1, 4}}, "V100"));
    ASSERT_EQ(o.outcome, Outcome::Bound);
    EXPECT_EQ(at(o), numbered("v", i + 1));
  }
  auto any = run(req("hi", "b", 0, {{1, 4}}, "V100"));
  ASSERT_EQ(any.outcome, Outcome::Preempting);
  EXPECT_EQ(victims(any), std::vector<std::string>{"o0"});
  auto v4 = run(on(req("hi", "b", 0, {{1, 4}}, "V100"), {"v4"}));
  ASSERT_EQ(v4.outcome, Outcome::Preempting);
  EXPECT_EQ(victims(v4), std::vector<std::string>{"o3"});
  EXPECT_EQ(at(v4), "v4");
  auto k80 = run(on(req("hi", "b", 0, {{1, 4}}, "V100"), {"k1", "k2"}));
  EXPECT_EQ(k80.outcome, Outcome::Waiting);
  EXPECT_EQ(run(on(req("hi", "b", 0, {{1, 4}}, "V100"), {})).outcome, Outcome::Waiting);
  // Once o3 is gone the group binds on v4 (and a set of v1 only would wait).
  EXPECT_TRUE(p->release("o3"));
  EXPECT_EQ(run(on(req("hi", "b", 0, {{1, 4}}, "V100"), {"v1"}), false).outcome, Outcome::Waiting);
  auto bound = run(on(req("hi", "b", 0, {{1, 4}}, "V100"), {"v1", "v4"}));
  ASSERT_EQ(bound.outcome, Outcome::Bound);
  EXPECT_EQ(at(bound), "v4");
}

// Private: b's cells are v3 v4; most used first, then node order.
//   b1 1 GPU {v4}          -> v4 GPU 0 (v3 would come first without the set)
//   b2 1 GPU, no set       -> the most used node, v4: GPU 1 (same socket)
//   b3 1x4 {v4}            -> v4 has 2 free, b1 b2 are not lower: waits (v3 is idle)
//   b3 1x4 {v1,v2,v5,v6}   -> none is b's: waits
//   b3 1x4 {v3}            -> v3 GPUs 0-3
//   hi prio 5 1x4 {v4}     -> preempts b1 b2 (not b3)
//   hi prio 5 1x4 {v3}     -> preempts b3
TEST_F(BaselineSuggested, PrivateStaysInsideItsCellsOnSuggestedNodes) {
  p = policy("private", *f.model);
  auto b1 = run(on(req("b1", "b", 0, {{1, 1}}), {"v4"}));
  ASSERT_EQ(b1.outcome, Outcome::Bound);
  EXPECT_EQ(at(b1), "v4");
  EXPECT_EQ(b1.pods[0].physical_leaf_cell_indices, std::vector<int32_t>{0});
  auto b2 = run(req("b2", "b", 0, {{1, 1}}));
  EXPECT_EQ(at(b2), "v4");
  EXPECT_EQ(b2.pods[0].physical_leaf_cell_indices, std::vector<int32_t>{1});
  auto wait = run(on(req("b3", "b", 0, {{1, 4}}), {"v4"}));
  EXPECT_EQ(wait.outcome, Outcome::Waiting);
  EXPECT_EQ(wait.reason, "insufficient capacity on the suggested nodes");
  EXPECT_EQ(run(on(req("b3", "b", 0, {{1, 4}}), {"v1", "v2", "v5", "v6"})).outcome,
            Outcome::Waiting);
  auto b3 = run(on(req("b3", "b", 0, {{1, 4}}), {"v3"}));
  ASSERT_EQ(b3.outcome, Outcome::Bound);
  EXPECT_EQ(at(b3), "v3");
  EXPECT_EQ(b3.pods[0].physical_leaf_cell_indices, (std::vector<int32_t>{0, 1, 2, 3}));
  auto hi4 = run(on(req("hi", "b", 5, {{1, 4}}), {"v4"}));
  ASSERT_EQ(hi4.outcome, Outcome::Preempting);
  EXPECT_EQ(victims(hi4), (std::vector<std::string>{"b1", "b2"}));
  auto hi3 = run(on(req("hi", "b", 5, {{1, 4}}), {"v3"}));
  ASSERT_EQ(hi3.outcome, Outcome::Preempting);
  EXPECT_EQ(victims(hi3), std::vector<std::string>{"b3"});
  // A pinned cell is filtered the same way: pin-k2 is on k2.
  EXPECT_EQ(run(on(req("pin", "a", 0, {{1, 4}}, "", "pin-k2"), {"k1"})).outcome, Outcome::Waiting);
  EXPECT_EQ(at(run(on(req("pin", "a", 0, {{1, 4}}, "", "pin-k2"), {"k2"}))), "k2");
}

// Random requests with random suggested sets, releases and node failures: no
// baseline places a new group (bound or preempting) outside its set, and the
// views are whole again after every decision (check_invariants recounts them).
TEST(BaselineSuggestedRandom, NewPlacementsStayInTheirSets) {
  Fixture f;
  for (const char* name : {"quota", "k8s-default", "private"}) {
    auto p = policy(name, *f.model);
    const int32_t nodes = static_cast<int32_t>(p->cluster().nodes.size());
    uint64_t x = 12345;
    auto next = [&](uint32_t n) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<int32_t>((x >> 33) % n);
    };
    std::vector<std::string> live;
    int64_t placed = 0, filtered_waits = 0;
    for (int op = 0; op < 600; ++op) {
      const int32_t dice = next(100);
      if (dice < 60) {
        const char* vcs[] = {"a", "b", "c"};
        const int32_t prios[] = {-1, 0, 0, 50};
        const int32_t sizes[] = {1, 1, 2, 4};
        GroupRequest r = req(numbered("g", op), vcs[next(3)], prios[next(4)],
                             {{1 + next(2), sizes[next(4)]}}, next(2) ? "V100" : "");
        r.suggested_nodes.emplace();
        for (int32_t n = 0; n < nodes; ++n)
          if (next(100) < 70) r.suggested_nodes->push_back(n);
        r.ignore_suggested_nodes = next(2) != 0;
        ScheduleResult res = p->schedule(r, true);
        if (res.outcome == Outcome::Bound || res.outcome == Outcome::Preempting) {
          ++placed;
          for (const auto& pod : res.pods)
            EXPECT_NE(std::find(r.suggested_nodes->begin(), r.suggested_nodes->end(), pod.node),
                      r.suggested_nodes->end())
                << name << " op " << op << ": " << r.affinity_group << " on "
                << p->cluster().nodes[static_cast<size_t>(pod.node)].name;
        }
        if (res.reason == "insufficient capacity on the suggested nodes") ++filtered_waits;
        if (res.outcome == Outcome::Bound) live.push_back(r.affinity_group);
      } else if (dice < 90) {
        if (live.empty()) continue;
        const size_t i = static_cast<size_t>(next(static_cast<uint32_t>(live.size())));
        EXPECT_TRUE(p->release(live[i]));
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        p->set_node_health(next(static_cast<uint32_t>(nodes)), next(3) != 0);
      }
      ASSERT_EQ(p->check_invariants(), "") << name << " op " << op;
    }
    EXPECT_GT(placed, 100) << name;
    EXPECT_GT(filtered_waits, 0) << name;
    for (const auto& g : live) EXPECT_TRUE(p->release(g));
    for (int32_t n = 0; n < nodes; ++n) p->set_node_health(n, true);
    EXPECT_EQ(p->usage().used_leaf_cells, 0) << name;
    EXPECT_EQ(p->check_invariants(), "") << name;
  }
}

TEST(Policies, NamesAndErrors) {
  Fixture f;
  auto fifo = make_policy("fifo", *f.model);
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.error().message.find("unknown policy"), std::string::npos);
  config::HivedModel broken = *f.model;
  broken.complete = false;
  auto refused = make_policy("hived", broken);
  ASSERT_FALSE(refused.ok());
  EXPECT_FALSE(refused.error().message.empty());
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
