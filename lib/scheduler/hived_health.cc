// Bad nodes and doomed bad cells (HiveD's setBadNode, setHealthyNode and
// tryBindDoomedBadCell/tryUnbindDoomedBadCell).

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "scheduler/hived_algorithm.h"

namespace pai::scheduler::hived_detail {

void Hived::set_node_health(int32_t node, bool healthy) {
  if (node < 0 || static_cast<size_t>(node) >= bad_node_.size()) return;
  if (healthy == !bad_node_[static_cast<size_t>(node)]) return;
  bad_node_[static_cast<size_t>(node)] = healthy ? 0 : 1;
  bad_nodes_ += healthy ? -1 : 1;
  for (int32_t leaf : shape_.nodes[static_cast<size_t>(node)].leaf_cells) {
    if (healthy)
      set_healthy_cell(leaf);
    else
      set_bad_cell(leaf);
  }
  ++epoch_;
}

void Hived::set_bad_cell(int32_t c) {
  if (!P(c).healthy) return;
  P(c).healthy = false;
  if (P(c).is_node) touch_opp_view(c);
  if (P(c).vcell >= 0) touch_vc_view(P(c).vcell);
  if (P(c).parent >= 0) set_bad_cell(P(c).parent);
  if (in_free_cell_list(c)) {
    add_bad_free(c);
  } else if (P(c).vcell < 0 && !P(c).split) {
    // An ancestor is bound: bind this cell too so that the VC sees the failure.
    int32_t pv = P(c).parent >= 0 ? P(P(c).parent).vcell : -1;
    if (pv >= 0)
      for (int32_t ch : vchildren(pv))
        if (V(ch).pcell < 0) {
          bind_pair(c, ch);
          break;
        }
  }
}

void Hived::set_healthy_cell(int32_t c) {
  if (P(c).healthy) return;
  P(c).healthy = true;
  if (P(c).is_node) touch_opp_view(c);
  if (P(c).vcell >= 0) touch_vc_view(P(c).vcell);
  if (in_free_cell_list(c)) {
    remove_bad_free(c);
  } else if (int32_t v = P(c).vcell; v >= 0) {
    if (!P(c).pinned && P(c).used_guar == 0) {
      // Bound only because it was bad: unbind.
      unbind_pair(c, v);
      if (V(v).parent < 0) {
        int32_t vc = V(v).vc;
        vc_doomed_[vcl(vc, P(c).chain, P(c).level)].erase(c);
        all_vc_doomed_[cl(P(c).chain, P(c).level)]--;
        release_preassigned(c, vc, true);
      }
    } else if (V(v).parent < 0 && !P(c).pinned) {
      // A doomed cell that was put to use and is healthy again is an ordinary
      // allocation from now on (HiveD keeps it doomed, and later releases it
      // through a binding that is gone).
      int32_t vc = V(v).vc;
      if (vc_doomed_[vcl(vc, P(c).chain, P(c).level)].erase(c))
        all_vc_doomed_[cl(P(c).chain, P(c).level)]--;
    }
  }
  int32_t parent = P(c).parent;
  if (parent < 0) return;
  for (int32_t b : pchildren(parent))
    if (!P(b).healthy) return;
  set_healthy_cell(parent);
}

void Hived::add_bad_free(int32_t c) {
  const int32_t chain = P(c).chain, level = P(c).level;
  bad_free_[cl(chain, level)].insert(c);
  if (all_vc_free_[cl(chain, level)] >
      total_left_[cl(chain, level)] - static_cast<int32_t>(bad_free_[cl(chain, level)].size()))
    try_bind_doomed(chain, level);
}

void Hived::remove_bad_free(int32_t c) {
  const int32_t chain = P(c).chain, level = P(c).level;
  bad_free_[cl(chain, level)].erase(c);
  try_unbind_doomed(chain, level);
}

// getUnboundVirtualCell over the VC's preassigned cells of a level: the first
// unbound one in list order.
int32_t Hived::unbound_preassigned(int32_t vc, int32_t chain, int32_t level) const {
  const size_t k = vcl(vc, chain, level);
  const int32_t i = vc_pre_unbound_[k].next(0);
  return i < 0 ? -1 : vc_preassigned_[k][static_cast<size_t>(i)];
}

void Hived::try_bind_doomed(int32_t chain, int32_t level) {
  const size_t i = cl(chain, level);
  const int32_t healthy_left = total_left_[i] - static_cast<int32_t>(bad_free_[i].size());
  if (all_vc_free_[i] <= healthy_left) return;  // no VC can exceed it
  for (int32_t vc = 0; vc < nvc_; ++vc) {
    if (!vc_has_chain_[static_cast<size_t>(vc) * static_cast<size_t>(nchain_) +
                       static_cast<size_t>(chain)])
      continue;
    while (vc_free_[vcl(vc, chain, level)] >
               total_left_[i] - static_cast<int32_t>(bad_free_[i].size()) &&
           !bad_free_[i].empty()) {
      int32_t pc = *bad_free_[i].begin();
      int32_t v = unbound_preassigned(vc, chain, level);
      if (v < 0) break;
      bind_pair(pc, v);
      vc_doomed_[vcl(vc, chain, level)].insert(pc);
      all_vc_doomed_[i]++;
      allocate_preassigned(pc, vc, true);
    }
  }
}

void Hived::try_unbind_doomed(int32_t chain, int32_t level) {
  const size_t i = cl(chain, level);
  if (all_vc_doomed_[i] == 0) return;
  for (int32_t vc = 0; vc < nvc_; ++vc) {
    auto& doomed = vc_doomed_[vcl(vc, chain, level)];
    while (!doomed.empty() && vc_free_[vcl(vc, chain, level)] <
                                  total_left_[i] - static_cast<int32_t>(bad_free_[i].size())) {
      int32_t pc = *doomed.begin();
      doomed.erase(pc);
      all_vc_doomed_[i]--;
      // The VC may have put jobs in the healthy part of a doomed cell: such a
      // cell is an ordinary allocation now (HiveD would unbind it under the jobs).
      if (V(P(pc).vcell).used > 0) continue;
      unbind_pair(pc, P(pc).vcell);
      release_preassigned(pc, vc, true);
    }
  }
}

std::vector<DoomedCount> Hived::doomed_counts() const {
  std::vector<DoomedCount> out;
  for (int32_t vc = 0; vc < nvc_; ++vc)
    for (int32_t chain = 0; chain < nchain_; ++chain) {
      const auto& ch = shape_.chains[static_cast<size_t>(chain)];
      for (int32_t level = 1; level <= ch.top_level; ++level) {
        const auto& cells = vc_doomed_[vcl(vc, chain, level)];
        if (cells.empty()) continue;
        DoomedCount d;
        d.vc = vc;
        d.chain = chain;
        d.level = level;
        d.cells = static_cast<int64_t>(cells.size());
        d.leaf_cells = d.cells * ch.level_leaves[static_cast<size_t>(level)];
        out.push_back(d);
      }
    }
  return out;
}

std::vector<std::vector<int64_t>> Hived::doomed_headroom() const {
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(nchain_));
  for (int32_t chain = 0; chain < nchain_; ++chain) {
    const int32_t top = shape_.chains[static_cast<size_t>(chain)].top_level;
    auto& row = out[static_cast<size_t>(chain)];
    row.assign(static_cast<size_t>(top + 1), 0);
    for (int32_t level = 1; level <= top; ++level) {
      int32_t most = 0;
      for (int32_t vc = 0; vc < nvc_; ++vc) most = std::max(most, vc_free_[vcl(vc, chain, level)]);
      // No VC has a free guarantee at this level: bad free cells, never more
      // than the free cells, can exceed none.
      row[static_cast<size_t>(level)] =
          most == 0 ? std::numeric_limits<int64_t>::max() : total_left_[cl(chain, level)] - most;
    }
  }
  return out;
}

}  // namespace pai::scheduler::hived_detail
