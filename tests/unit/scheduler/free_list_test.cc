// HiveD's free lists as the port keeps them (flat bitsets by opportunistic
// leaves) against the ordered set of (opportunistic leaves, key) they replace.

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <utility>
#include <vector>

#include "scheduler/hived_algorithm.h"

namespace pai::scheduler::hived_detail {
namespace {

TEST(FreeList, VisitsInTheOrderOfAnOrderedSet) {
  std::mt19937 rng(11);
  for (int round = 0; round < 30; ++round) {
    // Sizes around the word boundaries and more counts than one word of rows.
    const int32_t max_key = 1 + static_cast<int32_t>(rng() % 200);
    const int32_t max_opp = static_cast<int32_t>(rng() % 80);
    FreeList list;
    list.init(max_key, max_opp);
    std::set<std::pair<int32_t, int32_t>> want;
    std::vector<int32_t> opp_of(static_cast<size_t>(max_key), -1);
    for (int step = 0; step < 400; ++step) {
      const int32_t key = static_cast<int32_t>(rng() % static_cast<uint32_t>(max_key));
      int32_t& opp = opp_of[static_cast<size_t>(key)];
      const int32_t to = static_cast<int32_t>(rng() % static_cast<uint32_t>(max_opp + 1));
      if (opp < 0) {
        list.insert(to, key);
        want.insert({to, key});
        opp = to;
      } else if (rng() % 3 == 0) {
        list.erase(opp, key);
        want.erase({opp, key});
        opp = -1;
      } else {
        list.move(opp, to, key);
        want.erase({opp, key});
        want.insert({to, key});
        opp = to;
      }
      ASSERT_EQ(list.size(), want.size());
      std::vector<std::pair<int32_t, int32_t>> got;
      for (auto e : list) got.push_back(e);
      const std::vector<std::pair<int32_t, int32_t>> expect(want.begin(), want.end());
      ASSERT_EQ(got, expect) << "round " << round << " step " << step;
      for (int32_t k = 0; k < max_key; ++k)
        for (int32_t o : {0, max_opp, opp_of[static_cast<size_t>(k)]})
          ASSERT_EQ(list.contains(o, k), want.count({o, k}) == 1);
    }
  }
}

}  // namespace
}  // namespace pai::scheduler::hived_detail
