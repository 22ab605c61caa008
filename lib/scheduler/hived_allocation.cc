// Cell allocation (HiveD's allocateLeafCell, allocatePreassignedCell and their
// releases): leaf cells, preassigned cells, splitting and merging buddies in the free lists.

#include <algorithm>
#include <string>
#include <vector>

#include "scheduler/hived_algorithm.h"

namespace pai::scheduler::hived_detail {

// HiveD binds a pod's cells from its physical placement (mapPhysicalCellToVirtual):
// the virtual leaf is found by walking up the physical tree to the lowest cell
// bound to this VC, then down through unbound virtual cells. The planned
// virtual leaf is kept when it still lines up; it may not, because releases in
// between can bind doomed bad cells to the planned virtual cells.
int32_t Hived::resolve_virtual_leaf(int32_t p, int32_t v) const {
  if (V(v).pcell == p) return v;
  {
    int32_t c = v, q = p;
    bool ok = true;
    while (c >= 0 && V(c).pcell < 0) {
      if (q < 0 || P(q).vcell >= 0) {
        ok = false;
        break;
      }
      c = V(c).parent;
      q = P(q).parent;
    }
    if (ok && (c < 0 || V(c).pcell == q)) return v;
  }
  const int32_t vc = V(v).vc, pac = V(v).preassigned, top = V(pac).level;
  std::vector<int32_t> path;  // path[k]: the ancestor of p at level k + 1
  for (int32_t q = p; q >= 0 && P(q).level <= top; q = P(q).parent) path.push_back(q);
  if (static_cast<int32_t>(path.size()) != top) return -1;
  int32_t cur = -1;
  size_t k = 0;
  for (; k < path.size(); ++k) {
    int32_t b = P(path[k]).vcell;
    if (b < 0) continue;
    if (V(b).vc != vc || V(V(b).preassigned).pinned != V(pac).pinned) return -1;
    cur = b;
    break;
  }
  if (cur < 0) {
    if (V(pac).pcell < 0) {
      cur = pac;
    } else if (V(pac).pinned < 0) {
      cur = unbound_preassigned(vc, V(pac).chain, top);
    }
    if (cur < 0) return -1;
  }
  std::vector<int32_t> vpath;  // the planned virtual path, by level
  for (int32_t c = v; c >= 0; c = V(c).parent) vpath.push_back(c);
  while (V(cur).level > 1) {
    const size_t below = static_cast<size_t>(V(cur).level - 2);
    const int32_t pref = below < vpath.size() ? vpath[below] : -1;
    int32_t next = -1;
    for (int32_t ch : vchildren(cur)) {
      if (V(ch).pcell >= 0) continue;
      if (ch == pref) {
        next = ch;
        break;
      }
      if (next < 0) next = ch;
    }
    if (next < 0) return -1;
    cur = next;
  }
  return cur;
}

// A group that is bound at once (no preemption) is not bound to the virtual
// cells its placement was planned on: HiveD hands the pods their physical
// placement, and adding the first pod binds every leaf again from its physical
// cell (createAllocatedAffinityGroup, mapPhysicalCellToVirtual), leaf after
// leaf: up the physical tree to the lowest cell already bound, or to the
// preassigned level, where the VC's first unbound preassigned cell of that
// level is taken; then down, at each level the first unbound child. The planned
// virtual node is where the view's order led (after releases that order is
// rarely the order of the cells), the bound one is the first free in the
// cell's list. Returns -1 when there is no free one on that path (HiveD would
// then take a used cell of lower priority; the caller keeps the planned leaf).
int32_t Hived::derive_virtual_leaf(int32_t p, int32_t v) const {
  const int32_t vc = V(v).vc, pac = V(v).preassigned, top = V(pac).level;
  int32_t cur = -1;
  for (int32_t q = p; q >= 0; q = P(q).parent) {
    if (P(q).vcell >= 0) {
      cur = P(q).vcell;
      break;
    }
    if (P(q).level == top) {
      if (V(pac).pinned >= 0) return -1;  // a pinned cell is always bound
      cur = unbound_preassigned(vc, V(pac).chain, top);
      break;
    }
  }
  if (cur < 0 || V(cur).vc != vc || V(V(cur).preassigned).pinned != V(pac).pinned) return -1;
  while (V(cur).level > 1) {
    int32_t next = -1;
    for (int32_t ch : vchildren(cur))
      if (V(ch).pcell < 0) {
        next = ch;
        break;
      }
    if (next < 0) return -1;
    cur = next;
  }
  return V(cur).pcell < 0 || V(cur).pcell == p ? cur : -1;
}

// allocateLeafCell, first half: priorities, usage and bindings. Returns the
// preassigned virtual cell that this leaf bound, or -1. A group binds all its
// leaves before finish_allocation() allocates the newly bound preassigned
// cells: allocating a bad preassigned cell binds its bad children to unbound
// virtual cells, which must not be ones the group is about to use. `v` is the
// planned virtual leaf (-1: opportunistic); it is updated to the one bound.
int32_t Hived::assign_leaf(int32_t p, int32_t& v, int32_t priority, bool may_downgrade,
                           bool derive) {
  if (v >= 0) {
    const int32_t d = derive && hived_order_ ? derive_virtual_leaf(p, v) : -1;
    v = d >= 0 ? d : resolve_virtual_leaf(p, v);
    // No virtual cell left for it: the group holds this leaf opportunistically.
    // Expected only when a cell goes back to a group being preempted (or a lazy
    // preemption is reverted) after its VC reused the virtual cells.
    if (v < 0 && !may_downgrade) ++safety_violations_;
  }
  if (v < 0) {
    P(p).priority = kOpportunisticPriority;
    add_physical_usage(p, kOpportunisticPriority, 1);
    return -1;
  }
  V(v).priority = priority;
  add_virtual_usage(v, priority, 1);
  P(p).priority = priority;
  add_physical_usage(p, priority, 1);
  int32_t pac = V(v).preassigned;
  bool newly_bound = V(pac).pcell < 0;
  if (P(p).vcell < 0) bind_cell(p, v);
  return newly_bound ? pac : -1;
}

void Hived::finish_allocation(const std::vector<int32_t>& preassigned) {
  for (int32_t pac : preassigned)
    if (pac >= 0 && V(pac).pcell >= 0) allocate_preassigned(V(pac).pcell, V(pac).vc, false);
}

void Hived::allocate_leaf(int32_t p, int32_t v, int32_t priority) {
  int32_t pac = assign_leaf(p, v, priority);
  if (pac >= 0) allocate_preassigned(V(pac).pcell, V(pac).vc, false);
}

// releaseLeafCell
void Hived::release_leaf(int32_t p, int32_t vc) {
  int32_t v = P(p).vcell;
  // An opportunistic leaf can carry a binding that only marks a doomed bad
  // cell; that binding is not the group's (HiveD would release the doomed
  // cell under the wrong VC here).
  if (v >= 0 && P(p).priority >= kMinGuaranteedPriority) {
    add_virtual_usage(v, V(v).priority, -1);
    V(v).priority = kFreePriority;
    int32_t pac = V(v).preassigned;
    int32_t pac_physical = V(pac).pcell;
    if (P(p).healthy) unbind_cell(p);
    if (pac_physical >= 0 && !P(pac_physical).pinned && V(pac).used == 0) {
      const PCell& pp = P(pac_physical);
      if (!vc_doomed_[vcl(vc, pp.chain, pp.level)].count(pac_physical))
        release_preassigned(pac_physical, vc, false);
    }
  }
  add_physical_usage(p, P(p).priority, -1);
  P(p).priority = kFreePriority;
}

// allocatePreassignedCell
bool Hived::allocate_preassigned(int32_t c, int32_t vc, bool doomed) {
  bool safety_ok = true;
  const int32_t chain = P(c).chain, level = P(c).level;
  vc_free_[vcl(vc, chain, level)]--;
  all_vc_free_[cl(chain, level)]--;
  total_left_[cl(chain, level)]--;
  int32_t split_up_to = remove_from_free_list(c);
  int32_t parent = P(c).parent;
  for (int32_t l = level + 1; l <= split_up_to; ++l) {
    total_left_[cl(chain, l)]--;
    if (total_left_[cl(chain, l)] < all_vc_free_[cl(chain, l)]) safety_ok = false;
    if (!P(parent).healthy) {
      bad_free_[cl(chain, l)].erase(parent);
    } else {
      try_bind_doomed(chain, l);
    }
    parent = P(parent).parent;
  }
  if (!P(c).healthy) {
    allocate_bad_cell(c);
    if (!doomed) try_unbind_doomed(chain, level);
  } else {
    try_bind_doomed(chain, level);
  }
  // Descendants at each lower level are no longer obtainable.
  ScratchPool::Lease frontier_lease(scratch_), next_lease(scratch_);
  std::vector<int32_t>& frontier = *frontier_lease;
  std::vector<int32_t>& next = *next_lease;
  frontier.push_back(c);
  for (int32_t l = level - 1; l >= 1; --l) {
    next.clear();
    for (int32_t f : frontier)
      for (int32_t ch : pchildren(f)) next.push_back(ch);
    total_left_[cl(chain, l)] -= static_cast<int32_t>(next.size());
    if (total_left_[cl(chain, l)] < all_vc_free_[cl(chain, l)]) safety_ok = false;
    if (!doomed) try_bind_doomed(chain, l);
    frontier.swap(next);
  }
  // Buddy allocation keeps safety; bad cells may legitimately break it (HiveD
  // only reports it), so only count what happens on a healthy cluster.
  if (!safety_ok && !doomed && bad_nodes_ == 0) ++safety_violations_;
  return safety_ok;
}

void Hived::allocate_bad_cell(int32_t c) {
  bad_free_[cl(P(c).chain, P(c).level)].erase(c);
  if (P(c).vcell < 0) {
    int32_t parent = P(c).parent;
    int32_t pv = parent >= 0 ? P(parent).vcell : -1;
    if (pv >= 0) {
      for (int32_t ch : vchildren(pv))
        if (V(ch).pcell < 0) {
          bind_pair(c, ch);
          break;
        }
    }
  }
  for (int32_t ch : pchildren(c))
    if (!P(ch).healthy) allocate_bad_cell(ch);
}

// releasePreassignedCell
void Hived::release_preassigned(int32_t c, int32_t vc, bool doomed) {
  const int32_t chain = P(c).chain, level = P(c).level;
  vc_free_[vcl(vc, chain, level)]++;
  all_vc_free_[cl(chain, level)]++;
  total_left_[cl(chain, level)]++;
  int32_t merge_up_to = add_to_free_list(c);
  int32_t parent = P(c).parent;
  for (int32_t l = level + 1; l <= merge_up_to; ++l) {
    total_left_[cl(chain, l)]++;
    if (!P(parent).healthy) {
      bad_free_[cl(chain, l)].insert(parent);
    } else {
      try_unbind_doomed(chain, l);
    }
    parent = P(parent).parent;
  }
  if (!P(c).healthy) {
    release_bad_cell(c);
    if (!doomed) try_bind_doomed(chain, level);
  } else {
    try_unbind_doomed(chain, level);
  }
  ScratchPool::Lease frontier_lease(scratch_), next_lease(scratch_);
  std::vector<int32_t>& frontier = *frontier_lease;
  std::vector<int32_t>& next = *next_lease;
  frontier.push_back(c);
  for (int32_t l = level - 1; l >= 1; --l) {
    next.clear();
    for (int32_t f : frontier)
      for (int32_t ch : pchildren(f)) next.push_back(ch);
    total_left_[cl(chain, l)] += static_cast<int32_t>(next.size());
    if (!doomed) try_unbind_doomed(chain, l);
    frontier.swap(next);
  }
}

void Hived::release_bad_cell(int32_t c) {
  bad_free_[cl(P(c).chain, P(c).level)].insert(c);
  if (P(c).vcell >= 0) unbind_pair(c, P(c).vcell);
  for (int32_t ch : pchildren(c))
    if (!P(ch).healthy) release_bad_cell(ch);
}

// removeCellFromFreeList: splits the ancestors that are still whole.
int32_t Hived::remove_from_free_list(int32_t c) {
  for (;;) {
    int32_t l = P(c).level;
    int32_t parent = P(c).parent;
    bool terminate = true;
    if (parent >= 0 && !P(parent).split) {
      for (int32_t ch : pchildren(parent)) free_insert(ch);
      P(parent).split = true;
      terminate = false;
    }
    free_erase(c);
    if (terminate) return l;
    c = parent;
  }
}

// addCellToFreeList: merges buddies while all of them are free.
int32_t Hived::add_to_free_list(int32_t c) {
  for (;;) {
    int32_t l = P(c).level;
    int32_t parent = P(c).parent;
    bool terminate = true;
    if (parent >= 0) {
      bool all_free = true;
      for (int32_t b : pchildren(parent))
        if (b != c && !P(b).in_free) {
          all_free = false;
          break;
        }
      if (all_free) {
        for (int32_t b : pchildren(parent))
          if (b != c) free_erase(b);
        P(parent).split = false;
        terminate = false;
      }
    }
    if (terminate) {
      free_insert(c);
      return l;
    }
    c = parent;
  }
}

}  // namespace pai::scheduler::hived_detail
