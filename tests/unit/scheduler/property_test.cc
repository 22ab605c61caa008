// Randomized property tests over long operation sequences, for every policy:
// the internal state stays consistent (no leaf cell is given twice, free lists
// match the cells, counters and indexes match a recount), the same calls give
// the same placements, and (hived, private) a VC can always get its
// guaranteed cells back by preempting opportunistic or lower-priority work.

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "helpers.h"
#include "sim/generate.h"

namespace pai::scheduler::test {
namespace {

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int32_t below(int32_t n) { return static_cast<int32_t>(next() % static_cast<uint64_t>(n)); }
  bool chance(int32_t percent) { return below(100) < percent; }
};

std::string read_example(const std::string& rel) {
  std::string path = std::string(PAI_SOURCE_DIR) + "/" + rel;
  FILE* f = std::fopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  std::string s;
  if (!f) return s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

// For each VC and chain: the pods that fill the VC's largest cells of that
// chain (one pod per node-level cell, or per cell below node level).
std::vector<std::pair<std::string, GroupRequest>> guarantee_requests(const config::HivedModel& m,
                                                                     const ClusterShape& shape) {
  std::vector<std::pair<std::string, GroupRequest>> out;
  for (const auto& vc : m.vcs) {
    std::map<int32_t, std::map<int64_t, int32_t>> sizes;  // chain -> pod size -> pods
    for (const auto& c : vc.cells) {
      const auto& ch = shape.chains[static_cast<size_t>(c.chain)];
      int64_t node_leaves = ch.level_leaves[static_cast<size_t>(ch.node_level)];
      int64_t cell_leaves = ch.level_leaves[static_cast<size_t>(c.level)];
      if (c.level >= ch.node_level)
        sizes[c.chain][node_leaves] += static_cast<int32_t>(c.count * (cell_leaves / node_leaves));
      else
        sizes[c.chain][cell_leaves] += static_cast<int32_t>(c.count);
    }
    for (const auto& [chain, by_size] : sizes) {
      auto [size, pods] = *by_size.rbegin();
      const auto& ch = shape.chains[static_cast<size_t>(chain)];
      GroupRequest r = req("guarantee-" + vc.name + "-" + ch.name, vc.name, 1000,
                           {{pods, static_cast<int32_t>(size)}},
                           shape.leaf_types[static_cast<size_t>(ch.leaf_type)].name);
      out.push_back({vc.name, r});
    }
  }
  return out;
}

struct Trace {
  std::vector<std::string> lines;  // one per operation, for determinism checks
};

// max_bad: most nodes down at once (-1: a third of the nodes). guarantee_checks
// counts the times a VC claimed all its guaranteed cells (only while no node is down).
void run_random(const std::string& policy_name, const config::HivedModel& m, uint64_t seed,
                int32_t ops, bool check_guarantees, Trace* trace, int32_t max_bad = -1,
                int64_t* guarantee_checks = nullptr) {
  auto p = policy(policy_name, m);
  ASSERT_NE(p, nullptr);
  const ClusterShape& shape = p->cluster();
  Rng rng{seed};
  std::vector<std::string> live;
  std::set<std::string> preempting;
  std::vector<uint8_t> bad(shape.nodes.size(), 0);
  int32_t bad_count = 0;
  auto guarantees = guarantee_requests(m, shape);
  const int32_t prios[] = {-1, -1, 0, 10, 100, 500};
  const int32_t sizes[] = {1, 1, 1, 2, 4, 4, 8};
  int64_t serial = 0;
  // What the policy handed out, from its answers alone: (node, chain, leaf
  // index) -> the bound group holding it. No GPU may be given twice.
  std::map<std::tuple<int32_t, std::string, int32_t>, std::string> held;
  std::map<std::string, std::vector<std::tuple<int32_t, std::string, int32_t>>> held_by;
  auto hold = [&](const std::string& g, const ScheduleResult& r) {
    if (r.outcome != Outcome::Bound || held_by.count(g)) return;
    auto& mine = held_by[g];
    for (const auto& pod : r.pods)
      for (int32_t i : pod.physical_leaf_cell_indices) {
        auto key = std::make_tuple(pod.node, r.cell_chain, i);
        auto [it, fresh] = held.emplace(key, g);
        EXPECT_TRUE(fresh) << policy_name << " seed " << seed << ": GPU " << i << " of node "
                           << shape.nodes[static_cast<size_t>(pod.node)].name << " given to " << g
                           << " while " << it->second << " holds it";
        if (fresh) mine.push_back(key);
      }
  };
  auto unhold = [&](const std::string& g) {
    auto it = held_by.find(g);
    if (it == held_by.end()) return;
    for (const auto& key : it->second) held.erase(key);
    held_by.erase(it);
  };
  auto record = [&](const std::string& what, const ScheduleResult& r) {
    if (!trace) return;
    std::string line = what + " " + std::string(to_string(r.outcome));
    for (const auto& pod : r.pods) {
      line += " ";
      line += std::to_string(pod.node);
      line += ":";
      for (int32_t i : pod.physical_leaf_cell_indices) line += std::to_string(i) + ",";
    }
    for (const auto& v : r.victims) line += " v=" + v.group;
    trace->lines.push_back(line);
  };
  auto drop = [&](const std::string& g) {
    live.erase(std::find(live.begin(), live.end(), g));
    unhold(g);
    // A preempting group may have been cancelled by a higher-priority preemptor.
    if (!p->has_group(g) && preempting.count(g)) return;
    EXPECT_TRUE(p->release(g)) << g;
  };
  for (int32_t op = 0; op < ops; ++op) {
    int32_t dice = rng.below(100);
    if (dice < 55) {
      GroupRequest r;
      r.affinity_group = numbered("g", serial++);
      const auto& vc =
          shape.vcs[static_cast<size_t>(rng.below(static_cast<int32_t>(shape.vcs.size())))];
      r.virtual_cluster = vc.name;
      r.priority = prios[rng.below(6)];
      int32_t members = 1 + (rng.chance(20) ? 1 : 0);
      for (int32_t k = 0; k < members; ++k)
        r.members.push_back({1 + rng.below(3), sizes[rng.below(7)]});
      if (rng.chance(60))
        r.leaf_cell_type = shape
                               .leaf_types[static_cast<size_t>(
                                   rng.below(static_cast<int32_t>(shape.leaf_types.size())))]
                               .name;
      if (!vc.pinned_cells.empty() && rng.chance(10)) {
        r.pinned_cell_id = vc.pinned_cells[static_cast<size_t>(rng.below(
                                               static_cast<int32_t>(vc.pinned_cells.size())))]
                               .id;
        r.leaf_cell_type.clear();
      }
      r.lazy_preemption_enable = rng.chance(30);
      ScheduleResult res = p->schedule(r, rng.chance(90));
      record("schedule " + r.affinity_group, res);
      hold(r.affinity_group, res);
      if (res.outcome == Outcome::Bound || res.outcome == Outcome::Preempting)
        live.push_back(r.affinity_group);
      if (res.outcome == Outcome::Preempting && rng.chance(70)) {
        for (const auto& v : res.victims)
          if (std::find(live.begin(), live.end(), v.group) != live.end()) drop(v.group);
        ScheduleResult again = p->schedule(r, true);
        record("again " + r.affinity_group, again);
        hold(r.affinity_group, again);
        if (policy_name == "hived") {
          EXPECT_EQ(again.outcome, Outcome::Bound) << r.affinity_group;
        } else if (again.outcome != Outcome::Bound) {
          // Baselines hold nothing while preempting: the group is not live until bound.
          live.erase(std::find(live.begin(), live.end(), r.affinity_group));
        }
      } else if (res.outcome == Outcome::Preempting && policy_name != "hived") {
        live.erase(std::find(live.begin(), live.end(), r.affinity_group));
      } else if (res.outcome == Outcome::Preempting) {
        preempting.insert(r.affinity_group);
      }
    } else if (dice < 85) {
      if (live.empty()) continue;
      std::string g = live[static_cast<size_t>(rng.below(static_cast<int32_t>(live.size())))];
      drop(g);
      if (trace) trace->lines.push_back("release " + g);
    } else if (dice < 95) {
      int32_t n = rng.below(static_cast<int32_t>(shape.nodes.size()));
      bool make_bad =
          !bad[static_cast<size_t>(n)] &&
          bad_count < (max_bad >= 0 ? max_bad : static_cast<int32_t>(shape.nodes.size()) / 3);
      if (bad[static_cast<size_t>(n)] || make_bad) {
        p->set_node_health(n, !make_bad);
        bad[static_cast<size_t>(n)] = make_bad;
        bad_count += make_bad ? 1 : -1;
      }
    } else if (check_guarantees && bad_count == 0 && !guarantees.empty()) {
      GroupRequest r =
          guarantees[static_cast<size_t>(rng.below(static_cast<int32_t>(guarantees.size())))]
              .second;
      ScheduleResult res = p->schedule(r, true);
      ASSERT_TRUE(res.outcome == Outcome::Bound || res.outcome == Outcome::Preempting)
          << policy_name << ": " << r.affinity_group << " got " << to_string(res.outcome) << ": "
          << res.reason << " at op " << op;
      if (res.outcome == Outcome::Preempting) {
        for (const auto& v : res.victims)
          if (std::find(live.begin(), live.end(), v.group) != live.end()) drop(v.group);
        res = p->schedule(r, true);
        ASSERT_EQ(res.outcome, Outcome::Bound)
            << policy_name << ": " << r.affinity_group << ": " << res.reason;
      }
      hold(r.affinity_group, res);
      unhold(r.affinity_group);
      if (guarantee_checks) ++*guarantee_checks;
      EXPECT_TRUE(p->release(r.affinity_group));
    }
    std::string inv = p->check_invariants();
    ASSERT_EQ(inv, "") << policy_name << " seed " << seed << " op " << op;
    // Held GPUs are in use; the policy may hold more (reservations of preempting groups).
    ASSERT_LE(static_cast<int64_t>(held.size()), p->usage().used_leaf_cells)
        << policy_name << " op " << op;
  }
  while (!live.empty()) drop(live.back());
  for (size_t n = 0; n < bad.size(); ++n)
    if (bad[n]) p->set_node_health(static_cast<int32_t>(n), true);
  EXPECT_EQ(p->check_invariants(), "");
  EXPECT_EQ(p->usage().used_leaf_cells, 0) << policy_name;
}

class RandomOps : public ::testing::TestWithParam<std::string> {};

TEST_P(RandomOps, StayConsistentOnTheTwoSkuCluster) {
  auto m = model_from_yaml(kTwoSkuConfig);
  bool guarantees = GetParam() == "hived" || GetParam() == "private";
  int64_t checks = 0;
  // Seeds up to 3: nodes fail and recover; the others: no failures, so that
  // VCs claim their guaranteed cells often.
  for (uint64_t seed = 1; seed <= 6; ++seed)
    run_random(GetParam(), *m, seed, 1500, guarantees, nullptr, seed <= 3 ? -1 : 0, &checks);
  if (guarantees) {
    EXPECT_GT(checks, 100);
  }
}

TEST_P(RandomOps, StayConsistentOnTheHeterogeneousExample) {
  auto m = model_from_yaml(read_example("examples/clusters/heterogeneous/hivedscheduler.yaml"));
  bool guarantees = GetParam() == "hived" || GetParam() == "private";
  int64_t checks = 0;
  // Seeds up to 12: nodes fail and recover; the others: no failures, so that
  // VCs claim their guaranteed cells often.
  for (uint64_t seed = 11; seed <= 14; ++seed)
    run_random(GetParam(), *m, seed, 1500, guarantees, nullptr, seed <= 12 ? -1 : 0, &checks);
  if (guarantees) {
    EXPECT_GT(checks, 100);
  }
}

TEST_P(RandomOps, StayConsistentWithSkusInSeveralChains) {
  auto m = model_from_yaml(kMultiChainConfig);
  bool guarantees = GetParam() == "hived" || GetParam() == "private";
  int64_t checks = 0;
  // Seeds up to 23: nodes fail and recover; the others: no failures, so that
  // VCs claim their guaranteed cells often.
  for (uint64_t seed = 21; seed <= 26; ++seed)
    run_random(GetParam(), *m, seed, 1500, guarantees, nullptr, seed <= 23 ? -1 : 0, &checks);
  if (guarantees) {
    EXPECT_GT(checks, 100);
  }
}

TEST_P(RandomOps, StayConsistentOnAPhillyShapedCluster) {
  // 552 nodes, 15 VCs: long sequences with many groups alive at once.
  auto m = model_from_yaml(sim::philly_cluster_config(1, 15));
  bool guarantees = GetParam() == "hived" || GetParam() == "private";
  int64_t checks = 0;
  run_random(GetParam(), *m, 31, 2500, guarantees, nullptr, 0,
             &checks);  // no failures: claim guarantees often
  if (guarantees) {
    EXPECT_GT(checks, 50);
  }
  run_random(GetParam(), *m, 32, 1500, false, nullptr, 40);
}

TEST_P(RandomOps, SameCallsGiveSamePlacements) {
  auto m = model_from_yaml(kTwoSkuConfig);
  Trace t1, t2;
  run_random(GetParam(), *m, 99, 800, false, &t1);
  run_random(GetParam(), *m, 99, 800, false, &t2);
  ASSERT_FALSE(t1.lines.empty());
  EXPECT_EQ(t1.lines, t2.lines);
}

INSTANTIATE_TEST_SUITE_P(Policies, RandomOps,
                         ::testing::Values("hived", "quota", "k8s-default", "private"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace pai::scheduler::test
