// The algorithm's invariants, checked by the randomized tests.

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/hived_algorithm.h"

namespace pai::scheduler::hived_detail {

std::string Hived::check_invariants() const {
  auto fail = [](const std::string& s) { return s; };
  // Leaf ownership: every used or reserved leaf belongs to live groups that list it.
  auto lists = [&](int32_t g, int32_t p) {
    if (g < 0 || static_cast<size_t>(g) >= groups_.size() || !groups_[static_cast<size_t>(g)].alive)
      return false;
    const auto& pl = groups_[static_cast<size_t>(g)].pleaves;
    return std::find(pl.begin(), pl.end(), p) != pl.end();
  };
  std::vector<int32_t> opp(pcells_.size(), 0), guar(pcells_.size(), 0);
  for (size_t i = 0; i < pcells_.size(); ++i) {
    const PCell& c = pcells_[i];
    if (c.level != 1) continue;
    const int32_t p = static_cast<int32_t>(i);
    switch (c.state) {
      case CellState::Free:
        if (c.using_group >= 0 || c.reserving_group >= 0 || c.priority != kFreePriority)
          return fail("free leaf " + std::to_string(i) + " has an owner or a priority");
        break;
      case CellState::Used:
        if (!lists(c.using_group, p) || c.reserving_group >= 0 || c.priority == kFreePriority)
          return fail("used leaf " + std::to_string(i) + " is not held by its group");
        break;
      case CellState::Reserving:
        if (!lists(c.using_group, p) || !lists(c.reserving_group, p))
          return fail("reserving leaf " + std::to_string(i) + " lacks its groups");
        break;
      case CellState::Reserved:
        if (c.using_group >= 0 || !lists(c.reserving_group, p))
          return fail("reserved leaf " + std::to_string(i) + " is inconsistent");
        break;
    }
    for (int32_t a = p; a >= 0; a = P(a).parent) {
      if (c.priority == kOpportunisticPriority) opp[static_cast<size_t>(a)]++;
      if (c.priority >= 0) guar[static_cast<size_t>(a)]++;
    }
  }
  std::set<std::string_view> names;  // without the name index: names are unique
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Group& grp = groups_[g];
    if (!grp.alive) continue;
    for (int32_t p : grp.pleaves) {
      const PCell& c = P(p);
      bool ok = grp.state == GroupState::Preempting
                    ? c.reserving_group == static_cast<int32_t>(g)
                    : c.using_group == static_cast<int32_t>(g) || c.state == CellState::Reserved;
      if (!ok)
        return fail("group " + grp.name + " lists leaf " + std::to_string(p) + " it does not hold");
    }
    if (index_live_) {
      auto it = group_index_.find(grp.name);
      if (it == group_index_.end() || it->second != static_cast<int32_t>(g))
        return fail("group index is stale");
    } else if (!names.insert(grp.name).second) {
      return fail("two groups are named " + grp.name);
    }
  }
  for (size_t i = 0; i < pcells_.size(); ++i) {
    if (pcells_[i].used_opp != opp[i] || pcells_[i].used_guar != guar[i])
      return fail("usage counters of cell " + std::to_string(i) + " are off");
    // Free list membership: free iff whole, unbound, and its parent is split (or it is a top cell).
    const PCell& c = pcells_[i];
    bool expect = !c.split && c.vcell < 0 && (c.parent < 0 || P(c.parent).split);
    if (c.in_free != expect)
      return fail("cell " + std::to_string(i) + " free-list flag is inconsistent");
    if (c.in_free && (!free_[cl(c.chain, c.level)].contains(c.used_opp, c.free_key) ||
                      free_cell(cl(c.chain, c.level), c.free_key) != static_cast<int32_t>(i)))
      return fail("cell " + std::to_string(i) + " is missing from its free list");
    if (c.vcell >= 0 && V(c.vcell).pcell != static_cast<int32_t>(i))
      return fail("binding of cell " + std::to_string(i) + " is one-sided");
    // A split cell has no binding and is not free; its children are free, split or bound.
    if (c.split && c.vcell >= 0) return fail("split cell " + std::to_string(i) + " is bound");
  }
  for (size_t k = 0; k < ncl_; ++k)
    for (const auto& [o, key] : free_[k]) {
      const int32_t cell = free_cell(k, key);
      if (!P(cell).in_free || P(cell).used_opp != o)
        return fail("free list holds a stale entry for cell " + std::to_string(cell));
    }
  // totalLeftCellNum: cells obtainable from the free lists.
  std::vector<int32_t> left(ncl_, 0);
  for (size_t i = 0; i < pcells_.size(); ++i) {
    if (!pcells_[i].in_free) continue;
    std::vector<int32_t> stack{static_cast<int32_t>(i)};
    while (!stack.empty()) {
      int32_t c = stack.back();
      stack.pop_back();
      left[cl(P(c).chain, P(c).level)]++;
      for (int32_t ch : pchildren(c)) stack.push_back(ch);
    }
  }
  for (size_t k = 0; k < ncl_; ++k)
    if (left[k] != total_left_[k])
      return fail("totalLeftCellNum is off at (chain, level) slot " + std::to_string(k));
  // vcFreeCellNum: unbound non-pinned preassigned cells of each VC.
  std::vector<int32_t> all_free(ncl_, 0);
  for (int32_t vc = 0; vc < nvc_; ++vc)
    for (int32_t ch = 0; ch < nchain_; ++ch)
      for (int32_t l = 1; l <= chain_top_[static_cast<size_t>(ch)]; ++l) {
        int32_t n = 0;
        const auto& list = vc_preassigned_[vcl(vc, ch, l)];
        for (size_t i = 0; i < list.size(); ++i) {
          if (V(list[i]).pcell < 0) ++n;
          if (vc_pre_unbound_[vcl(vc, ch, l)].contains(static_cast<int32_t>(i)) !=
              (V(list[i]).pcell < 0))
            return fail("the unbound preassigned cells of " +
                        shape_.vcs[static_cast<size_t>(vc)].name + " at chain " +
                        shape_.chains[static_cast<size_t>(ch)].name + " level " +
                        std::to_string(l) + " are off at position " + std::to_string(i));
        }
        if (n != vc_free_[vcl(vc, ch, l)])
          return fail("vcFreeCellNum of " + shape_.vcs[static_cast<size_t>(vc)].name +
                      " at chain " + shape_.chains[static_cast<size_t>(ch)].name + " level " +
                      std::to_string(l) + " is " + std::to_string(vc_free_[vcl(vc, ch, l)]) +
                      ", recount " + std::to_string(n));
        all_free[cl(ch, l)] += n;
      }
  for (size_t k = 0; k < ncl_; ++k)
    if (all_free[k] != all_vc_free_[k]) return fail("allVCFreeCellNum is off");
  // Safety: with no bad cells, every level keeps enough cells for the VCs' unbound cells.
  bool any_bad = false;
  for (uint8_t b : bad_node_) any_bad |= b != 0;
  if (!any_bad)
    for (size_t k = 0; k < ncl_; ++k)
      if (total_left_[k] < all_vc_free_[k])
        return fail("VC safety is broken at (chain, level) slot " + std::to_string(k));
  // Bindings of virtual cells; virtual usage counters.
  std::vector<int32_t> vused(vcells_.size(), 0);
  for (size_t i = 0; i < vcells_.size(); ++i) {
    const VCell& v = vcells_[i];
    if (v.pcell >= 0 && P(v.pcell).vcell != static_cast<int32_t>(i))
      return fail("binding of virtual cell is one-sided");
    if (v.pcell >= 0 && P(v.pcell).level != v.level)
      return fail("virtual cell bound across levels");
    // Bindings are connected from the preassigned cell down, and follow the physical tree.
    if (v.pcell >= 0 && v.parent >= 0 &&
        (V(v.parent).pcell < 0 || P(v.pcell).parent != V(v.parent).pcell))
      return fail("virtual cell " + std::to_string(i) + " of VC " +
                  shape_.vcs[static_cast<size_t>(v.vc)].name +
                  " is bound but its parent is not bound to its physical parent");
    if (v.level == 1 && v.priority != kFreePriority)
      for (int32_t a = static_cast<int32_t>(i); a >= 0; a = V(a).parent)
        vused[static_cast<size_t>(a)]++;
    if (v.level == 1 && v.priority != kFreePriority && v.pcell < 0)
      return fail("used virtual leaf " + std::to_string(i) + " of VC " +
                  shape_.vcs[static_cast<size_t>(v.vc)].name + " is unbound");
  }
  for (size_t i = 0; i < vcells_.size(); ++i)
    if (vused[i] != vcells_[i].used) return fail("virtual usage counter is off");
  // Used virtual leaves by priority: per VC, and per node of each virtual view.
  {
    std::vector<std::map<int32_t, int64_t>> by_vc(static_cast<size_t>(nvc_));
    std::map<std::pair<int32_t, int32_t>, std::map<int32_t, int32_t>> by_view_node;
    for (size_t i = 0; i < vcells_.size(); ++i) {
      const VCell& v = vcells_[i];
      if (v.level != 1 || v.priority == kFreePriority) continue;
      by_vc[static_cast<size_t>(v.vc)][v.priority]++;
      for (int32_t a = static_cast<int32_t>(i); a >= 0; a = V(a).parent)
        if (V(a).view >= 0) by_view_node[{V(a).view, V(a).view_pos}][v.priority]++;
    }
    for (size_t vc = 0; vc < by_vc.size(); ++vc) {
      const auto& used = vc_prio_used_[vc];
      if (!std::is_sorted(used.begin(), used.end()) ||
          std::map<int32_t, int64_t>(used.begin(), used.end()) != by_vc[vc] ||
          used.size() != by_vc[vc].size())
        return fail("used leaves by priority of VC " + shape_.vcs[vc].name + " are off");
    }
    for (size_t w = 0; w < views_.size(); ++w) {
      const View& view = views_[w];
      if (!view.is_virtual) continue;
      for (size_t pos = 0; pos < view.prio_counts.size(); ++pos) {
        const auto& counts = view.prio_counts[pos];
        std::map<int32_t, int32_t> have(counts.begin(), counts.end());
        auto it = by_view_node.find({static_cast<int32_t>(w), static_cast<int32_t>(pos)});
        const std::map<int32_t, int32_t> none;
        if (have.size() != counts.size() || have != (it == by_view_node.end() ? none : it->second))
          return fail("used leaves by priority of a virtual view's node are off");
      }
    }
  }
  // View indexes.
  for (const View& view : views_) {
    for (size_t pos = 0; pos < view.nodes.size(); ++pos) {
      int32_t c = view.nodes[pos];
      int32_t cls = view.node_class[pos];
      int32_t expect;
      if (view.is_virtual) {
        bool healthy = V(c).pcell < 0 || P(V(c).pcell).healthy;
        expect = healthy ? bucket_used(view.layout, cls, V(c).used) : -1;
      } else {
        expect = P(c).healthy
                     ? bucket_opportunistic(view.layout, cls, P(c).used_opp, P(c).used_guar)
                     : -1;
      }
      // A node the view's last update found not suggested stays out until the next one.
      if (!view.index.suggested(static_cast<int32_t>(pos))) expect = -1;
      if (view.index.bucket_of(static_cast<int32_t>(pos)) != expect)
        return fail("cluster view index is stale");
    }
  }
  if (safety_violations_ > 0) return fail("a preassigned allocation broke VC safety");
  return {};
}

}  // namespace pai::scheduler::hived_detail
