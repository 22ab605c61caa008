// The ranked node index against the thing it stands for: a cluster view kept
// between calls and sorted stably in place on every call (HiveD's clusterView).

#include "scheduler/node_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

namespace pai::scheduler {
namespace {

// Nodes of two sizes (2 and 4 leaf cells), most used first; a node is
// healthy or not, suggested or not (in odd rounds each call suggests a random
// subset, as Kubernetes does per pod). The naive view: a vector sorted with
// std::stable_sort by (unhealthy, not suggested, group) on every call,
// starting from node position.
TEST(RankedNodes, WalkInTheOrderOfAPersistentStableSort) {
  const std::vector<int32_t> totals{2, 4};
  BucketLayout layout = layout_most_used_first(totals);
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    const int32_t n = 5 + static_cast<int32_t>(rng() % 40);
    std::vector<int32_t> cls(static_cast<size_t>(n)), used(static_cast<size_t>(n), 0);
    std::vector<bool> healthy(static_cast<size_t>(n), true);
    std::vector<bool> suggested(static_cast<size_t>(n), true);
    BucketedNodes index;
    index.init(n, layout.bucket_free, layout.groups, true);
    for (int32_t i = 0; i < n; ++i) {
      cls[static_cast<size_t>(i)] = static_cast<int32_t>(rng() % 2);
      index.set(i, bucket_used(layout, cls[static_cast<size_t>(i)], 0));
    }
    std::vector<int32_t> view(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) view[static_cast<size_t>(i)] = i;
    auto group_of = [&](int32_t i) {
      // most_used_first: a group per used count, most used first.
      return std::make_tuple(!healthy[static_cast<size_t>(i)], !suggested[static_cast<size_t>(i)],
                             -used[static_cast<size_t>(i)]);
    };
    for (int call = 0; call < 200; ++call) {
      // A few nodes change between two calls (some change and change back).
      int changes = static_cast<int>(rng() % 5);
      for (int k = 0; k < changes; ++k) {
        int32_t i = static_cast<int32_t>(rng() % static_cast<uint32_t>(n));
        size_t s = static_cast<size_t>(i);
        int32_t total = totals[static_cast<size_t>(cls[s])];
        if (rng() % 8 == 0)
          healthy[s] = !healthy[s];
        else
          used[s] = static_cast<int32_t>(rng() % static_cast<uint32_t>(total + 1));
        index.set(i, bucket_used(layout, cls[s], used[s]), healthy[s]);
      }
      if (round % 2 == 1) {
        const bool all = rng() % 3 == 0;
        for (int32_t i = 0; i < n; ++i) {
          suggested[static_cast<size_t>(i)] = all || rng() % 4 != 0;
          index.set_suggested(i, suggested[static_cast<size_t>(i)]);
        }
      }
      std::stable_sort(view.begin(), view.end(),
                       [&](int32_t a, int32_t b) { return group_of(a) < group_of(b); });
      index.sort();
      std::vector<int32_t> expect, got;
      for (int32_t i : view)
        if (healthy[static_cast<size_t>(i)] && suggested[static_cast<size_t>(i)])
          expect.push_back(i);
      index.for_each([&](int32_t i) {
        got.push_back(i);
        return false;
      });
      ASSERT_EQ(got, expect) << "round " << round << ", call " << call;
      // first_fit walks the same order: one pod of 1 lands on the first
      // healthy node with a free leaf cell.
      std::vector<int32_t> out;
      const int32_t one = 1;
      int32_t want = -1;
      for (int32_t i : expect)
        if (used[static_cast<size_t>(i)] <
            totals[static_cast<size_t>(cls[static_cast<size_t>(i)])]) {
          want = i;
          break;
        }
      bool ok = index.first_fit(std::span<const int32_t>(&one, 1), out);
      EXPECT_EQ(ok, want >= 0);
      if (ok) {
        EXPECT_EQ(out[0], want);
      }
    }
  }
}

// A node that was more used and comes back to its old group goes to the front
// of it when ranked (it was before the group at the last sort), and back to
// its position without ranking.
TEST(RankedNodes, ANodeComingBackFromAnEarlierGroupLeadsItsNewGroup) {
  BucketLayout layout = layout_most_used_first({2});
  for (bool ranked : {true, false}) {
    BucketedNodes index;
    index.init(3, layout.bucket_free, layout.groups, ranked);
    for (int32_t i = 0; i < 3; ++i) index.set(i, bucket_used(layout, 0, 0));
    index.sort();
    index.set(2, bucket_used(layout, 0, 1));
    index.sort();
    index.set(2, bucket_used(layout, 0, 0));
    index.sort();
    std::vector<int32_t> got;
    index.for_each([&](int32_t i) {
      got.push_back(i);
      return false;
    });
    EXPECT_EQ(got, ranked ? (std::vector<int32_t>{2, 0, 1}) : (std::vector<int32_t>{0, 1, 2}));
  }
}

}  // namespace
}  // namespace pai::scheduler
