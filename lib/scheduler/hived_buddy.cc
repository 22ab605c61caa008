// Buddy allocation (HiveD's cell_allocation.go): binding paths and the mapping of a
// virtual placement to physical cells over the request's overlay of the free lists.

#include <algorithm>
#include <string>
#include <vector>

#include "scheduler/hived_algorithm.h"

namespace pai::scheduler::hived_detail {

int32_t Hived::new_vertex(int32_t vcell) {
  int32_t id = static_cast<int32_t>(vertices_.size());
  vertices_.push_back({vcell, -1, -1, -1});
  vertex_of_[static_cast<size_t>(vcell)] = id;
  return id;
}

void Hived::add_child_vertex(int32_t parent, int32_t child) {
  Vertex& p = vertices_[static_cast<size_t>(parent)];
  if (p.last_child < 0) {
    p.first_child = p.last_child = child;
  } else {
    vertices_[static_cast<size_t>(p.last_child)].next = child;
    p.last_child = child;
  }
}

void Hived::sort_by_opportunistic(std::vector<int32_t>& cells) const {
  auto less = [&](int32_t a, int32_t b) { return P(a).used_opp < P(b).used_opp; };
  // A cell's children are a handful: an insertion sort (stable, as sort.Stable)
  // takes no temporary buffer, which std::stable_sort allocates on every call.
  if (cells.size() > 32) {
    std::stable_sort(cells.begin(), cells.end(), less);
    return;
  }
  for (size_t i = 1; i < cells.size(); ++i) {
    const int32_t c = cells[i];
    size_t j = i;
    for (; j > 0 && less(c, cells[j - 1]); --j) cells[j] = cells[j - 1];
    cells[j] = c;
  }
}

bool Hived::try_candidate(int32_t vertex, int32_t pcell) {
  if (P(pcell).level == 1) {
    vbind_[static_cast<size_t>(vertices_[static_cast<size_t>(vertex)].vcell)] = pcell;
    return true;
  }
  ScratchPool::Lease kids(scratch_);
  for (int32_t c = vertices_[static_cast<size_t>(vertex)].first_child; c >= 0;
       c = vertices_[static_cast<size_t>(c)].next)
    kids->push_back(c);
  return map_cells(*kids, pchildren(pcell), nullptr);
}

// mapVirtualCellsToPhysical: each vertex gets a distinct usable candidate whose
// subtree can host the vertex's children; backtracking.
bool Hived::map_cells(const std::vector<int32_t>& vs, std::span<const int32_t> candidates,
                      std::vector<int32_t>* picked) {
  ScratchPool::Lease cands_lease(scratch_), pick_lease(scratch_), used_lease(scratch_);
  std::vector<int32_t>& cands = *cands_lease;
  for (int32_t c : candidates)
    if (usable(c)) cands.push_back(c);
  if (cands.size() < vs.size()) return false;
  sort_by_opportunistic(cands);
  const int32_t n = static_cast<int32_t>(vs.size());
  if (n == 0) return true;
  if (P(cands[0]).level == 1) {
    // Leaves host any leaf vertex: the search takes the first candidates in order.
    for (size_t i = 0; i < vs.size(); ++i) {
      vbind_[static_cast<size_t>(vertices_[static_cast<size_t>(vs[i])].vcell)] = cands[i];
      if (picked) picked->push_back(cands[i]);
    }
    return true;
  }
  std::vector<int32_t>& pick = *pick_lease;
  pick.assign(static_cast<size_t>(n), 0);
  std::vector<int32_t>& used = *used_lease;
  used.assign(cands.size(), 0);
  int32_t ci = 0;
  while (ci >= 0) {
    int32_t j = pick[static_cast<size_t>(ci)];
    bool placed = false;
    for (; j < static_cast<int32_t>(cands.size()); ++j) {
      if (used[static_cast<size_t>(j)]) continue;
      if (try_candidate(vs[static_cast<size_t>(ci)], cands[static_cast<size_t>(j)])) {
        placed = true;
        break;
      }
    }
    if (placed) {
      pick[static_cast<size_t>(ci)] = j;
      used[static_cast<size_t>(j)] = 1;
      if (ci == n - 1) {
        if (picked)
          for (int32_t k : pick) picked->push_back(cands[static_cast<size_t>(k)]);
        return true;
      }
      ++ci;
      pick[static_cast<size_t>(ci)] = 0;
    } else {
      --ci;
      if (ci >= 0) {
        used[static_cast<size_t>(pick[static_cast<size_t>(ci)])] = 0;
        pick[static_cast<size_t>(ci)]++;
      }
    }
  }
  return false;
}

int32_t Hived::overlay_count(int32_t level) const {
  if (hived_order_) return ov_size_[static_cast<size_t>(level)];
  return static_cast<int32_t>(free_[cl(ov_chain_, level)].size()) -
         ov_removed_count_[static_cast<size_t>(level)] +
         static_cast<int32_t>(ov_extra_[static_cast<size_t>(level)].size());
}

// The cell at a position of the request's copy of a level (HiveD order).
int32_t Hived::ov_value(int32_t level, int32_t pos) const {
  for (const auto& [p, c] : ov_over_[static_cast<size_t>(level)])
    if (p == pos) return c;
  return flist_[cl(ov_chain_, level)][static_cast<size_t>(pos)];
}

// The position of a cell in the request's copy of its level, or -1 (HiveD order).
int32_t Hived::ov_pos_of(int32_t c) const {
  const int32_t level = P(c).level;
  const int32_t size = ov_size_[static_cast<size_t>(level)];
  for (const auto& [p, x] : ov_over_[static_cast<size_t>(level)])
    if (x == c && p < size) return p;
  if (!P(c).in_free || P(c).free_key >= size) return -1;
  for (const auto& [p, x] : ov_over_[static_cast<size_t>(level)])
    if (p == P(c).free_key) return -1;  // another cell took its place
  return P(c).free_key;
}

// The request's copy of a level in candidate order: stably sorted by
// opportunistic leaves (getUsablePhysicalCells), until f returns true.
template <class F>
bool Hived::overlay_each(int32_t level, F f) const {
  const auto& real = free_[cl(ov_chain_, level)];
  // The request's own cells of the level: keys (opportunistic, key) flattened as
  // extra_keys[2i], extra_keys[2i + 1], and the cells.
  ScratchPool::Lease keys_lease(scratch_), cells_lease(scratch_);
  std::vector<int32_t>& extra_keys = *keys_lease;
  std::vector<int32_t>& extra_cells = *cells_lease;
  if (hived_order_) {
    const int32_t size = ov_size_[static_cast<size_t>(level)];
    std::vector<std::pair<std::pair<int32_t, int32_t>, int32_t>> over;
    for (const auto& [p, c] : ov_over_[static_cast<size_t>(level)])
      if (p < size) over.push_back({{P(c).used_opp, p}, c});
    std::sort(over.begin(), over.end());
    for (const auto& [k, c] : over) {
      extra_keys.push_back(k.first);
      extra_keys.push_back(k.second);
      extra_cells.push_back(c);
    }
  } else {
    for (int32_t c : ov_extra_[static_cast<size_t>(level)]) {
      extra_keys.push_back(P(c).used_opp);
      extra_keys.push_back(c);
      extra_cells.push_back(c);
    }
  }
  auto skip = [&](const std::pair<int32_t, int32_t>& e) {
    if (!hived_order_) return ov_removed_[static_cast<size_t>(e.second)] != 0;
    if (e.second >= ov_size_[static_cast<size_t>(level)]) return true;
    for (const auto& [p, c] : ov_over_[static_cast<size_t>(level)])
      if (p == e.second) return true;
    return false;
  };
  const size_t k = cl(ov_chain_, level);
  auto it = real.begin();
  size_t xi = 0;
  for (;;) {
    while (it != real.end() && skip(*it)) ++it;
    bool have_real = it != real.end(), have_extra = xi < extra_cells.size();
    if (!have_real && !have_extra) return false;
    int32_t c;
    if (have_real && (!have_extra || *it < std::pair<int32_t, int32_t>{extra_keys[2 * xi],
                                                                       extra_keys[2 * xi + 1]})) {
      c = free_cell(k, (*it).second);
      ++it;
    } else {
      c = extra_cells[xi++];
    }
    if (f(c)) return true;
  }
}

void Hived::overlay_add(int32_t c) {
  const size_t level = static_cast<size_t>(P(c).level);
  if (hived_order_) {  // append
    ov_over_[level].push_back({ov_size_[level]++, c});
    return;
  }
  auto& extra = ov_extra_[level];
  std::pair<int32_t, int32_t> key{P(c).used_opp, c};
  auto it = std::lower_bound(extra.begin(), extra.end(), key,
                             [&](int32_t a, const std::pair<int32_t, int32_t>& k) {
                               return std::pair<int32_t, int32_t>{P(a).used_opp, a} < k;
                             });
  extra.insert(it, c);
}

// The request's copy of a level (HiveD order) becomes `front` followed by what
// it held: every position is written out (a rare path: a buddy allocation that
// failed on bad or non-suggested cells).
void Hived::overlay_prepend(int32_t level, const std::vector<int32_t>& front) {
  const size_t lv = static_cast<size_t>(level);
  std::vector<int32_t> cells(front);
  for (int32_t pos = 0; pos < ov_size_[lv]; ++pos) cells.push_back(ov_value(level, pos));
  auto& over = ov_over_[lv];
  over.clear();
  for (size_t i = 0; i < cells.size(); ++i) over.push_back({static_cast<int32_t>(i), cells[i]});
  ov_size_[lv] = static_cast<int32_t>(cells.size());
}

void Hived::overlay_remove(int32_t c) {
  const int32_t lv = P(c).level;
  const size_t level = static_cast<size_t>(lv);
  if (hived_order_) {  // CellList.remove on the copy: the last cell takes the hole
    const int32_t pos = ov_pos_of(c);
    if (pos < 0) return;
    const int32_t last_pos = ov_size_[level] - 1;
    const int32_t last = ov_value(lv, last_pos);
    auto& over = ov_over_[level];
    over.erase(std::remove_if(over.begin(), over.end(),
                              [&](const auto& e) { return e.first == pos || e.first == last_pos; }),
               over.end());
    if (pos != last_pos) over.push_back({pos, last});
    // positions >= size are gone; mark the old last position so the real cell there is skipped
    ov_size_[level]--;
    return;
  }
  auto& extra = ov_extra_[level];
  auto it = std::find(extra.begin(), extra.end(), c);
  if (it != extra.end()) {
    extra.erase(it);
    return;
  }
  if (!ov_removed_[static_cast<size_t>(c)]) {
    ov_removed_[static_cast<size_t>(c)] = 1;
    ov_removed_list_.push_back(c);
    ov_removed_count_[level]++;
  }
}

void Hived::overlay_reset() {
  for (int32_t c : ov_removed_list_) ov_removed_[static_cast<size_t>(c)] = 0;
  ov_removed_list_.clear();
  for (auto& e : ov_extra_) e.clear();
  for (auto& e : ov_over_) e.clear();
  std::fill(ov_removed_count_.begin(), ov_removed_count_.end(), 0);
}

// buddyAlloc on the request's view of the free lists.
bool Hived::buddy_alloc(int32_t vertex, int32_t level) {
  const int32_t target = V(vertices_[static_cast<size_t>(vertex)].vcell).level;
  if (level == target) {
    int32_t chosen = -1;
    overlay_each(level, [&](int32_t c) {
      if (!usable(c)) return false;
      if (try_candidate(vertex, c)) {
        chosen = c;
        return true;
      }
      return false;
    });
    if (chosen < 0) return false;
    overlay_remove(chosen);
    return true;
  }
  int32_t chosen = -1;
  overlay_each(level, [&](int32_t c) {
    if (!usable(c)) return false;
    for (int32_t ch : pchildren(c)) overlay_add(ch);
    if (buddy_alloc(vertex, level - 1)) {
      chosen = c;
      return true;
    }
    if (hived_order_) {  // freeList[currentLevel-1] = nil
      ov_over_[static_cast<size_t>(level - 1)].clear();
      ov_size_[static_cast<size_t>(level - 1)] = 0;
    } else {
      ov_extra_[static_cast<size_t>(level - 1)].clear();
    }
    return false;
  });
  if (chosen < 0) return false;
  overlay_remove(chosen);
  return true;
}

// safeRelaxedBuddyAlloc: split higher cells, as long as every level keeps
// enough free cells for the VCs' unbound cells.
bool Hived::safe_relaxed_buddy_alloc(int32_t vertex, std::vector<int32_t>& free_num) {
  const int32_t level = V(vertices_[static_cast<size_t>(vertex)].vcell).level;
  const int32_t top = chain_top_[static_cast<size_t>(ov_chain_)];
  std::vector<int32_t> splittable(static_cast<size_t>(top + 2), 0);
  int32_t splittable_cell = -1;
  for (int32_t i = top; i > level; --i) {
    splittable[static_cast<size_t>(i)] = overlay_count(i) - free_num[static_cast<size_t>(i)];
    if (i < top && splittable_cell >= 0)
      splittable[static_cast<size_t>(i)] +=
          splittable[static_cast<size_t>(i + 1)] * P(splittable_cell).child_count;
    if (splittable_cell < 0 && overlay_count(i) > 0) {
      overlay_each(i, [&](int32_t c) {
        splittable_cell = c;
        return true;
      });
    } else if (splittable_cell >= 0) {
      splittable_cell = P(splittable_cell).child_count > 0 ? pchildren(splittable_cell)[0] : -1;
    }
    if (splittable[static_cast<size_t>(i)] < 0) return false;  // VC safety broken
  }
  for (int32_t l = level + 1; l <= top; ++l) {
    int32_t n = std::min(overlay_count(l), splittable[static_cast<size_t>(l)]);
    if (n <= 0) continue;
    std::vector<int32_t> split;
    if (hived_order_) {
      // HiveD splits the cells at the head of the list as it stands, one after
      // the other: each removal moves the last cell to the head (CellList.remove).
      for (int32_t i = 0; i < n; ++i) {
        const int32_t c = ov_value(l, 0);
        split.push_back(c);
        overlay_remove(c);
      }
    } else {
      overlay_each(l, [&](int32_t c) {
        split.push_back(c);
        return static_cast<int32_t>(split.size()) >= n;
      });
      for (int32_t c : split) overlay_remove(c);
    }
    splittable[static_cast<size_t>(l)] -= n;
    for (int32_t sl = l; sl > level; --sl) {
      std::vector<int32_t> kids;
      for (int32_t c : split)
        for (int32_t ch : pchildren(c)) kids.push_back(ch);
      split.swap(kids);
    }
    if (hived_order_) {
      // ... and puts their descendants at the head of the lower level's list,
      // before the cells already there.
      overlay_prepend(level, split);
    } else {
      for (int32_t c : split) overlay_add(c);
    }
    int32_t chosen = -1;
    overlay_each(level, [&](int32_t c) {
      if (!usable(c)) return false;
      if (try_candidate(vertex, c)) {
        chosen = c;
        return true;
      }
      return false;
    });
    if (chosen >= 0) {
      overlay_remove(chosen);
      return true;
    }
  }
  return false;
}

// toBindingPaths + mapVirtualPlacementToPhysical.
bool Hived::map_to_physical(int32_t chain, const std::vector<int32_t>& vleaves,
                            std::vector<int32_t>& pleaves) {
  vertices_.clear();
  ScratchPool::Lease preassigned_lease(scratch_), path_lease(scratch_), free_num_lease(scratch_);
  std::vector<int32_t>& preassigned = *preassigned_lease;
  // Bound parent vcell -> vertices: the first np_used of the reused entries.
  auto& non_preassigned = non_preassigned_;
  size_t np_used = 0;
  std::vector<int32_t>& path = *path_lease;
  for (int32_t leaf : vleaves) {
    if (V(leaf).pcell >= 0) continue;
    path.clear();
    for (int32_t c = leaf; c >= 0; c = V(c).parent) {
      if (V(c).pcell >= 0 || vertex_of_[static_cast<size_t>(c)] >= 0) break;
      path.push_back(c);
    }
    int32_t root = path.back();
    int32_t rv = new_vertex(root);
    int32_t parent = V(root).parent;
    if (parent < 0) {
      preassigned.push_back(rv);
    } else if (V(parent).pcell >= 0) {
      bool found = false;
      for (size_t i = 0; i < np_used; ++i)
        if (non_preassigned[i].first == parent) {
          non_preassigned[i].second.push_back(rv);
          found = true;
          break;
        }
      if (!found) {
        if (np_used == non_preassigned.size()) non_preassigned.emplace_back();
        auto& [pv, list] = non_preassigned[np_used++];
        pv = parent;
        list.assign(1, rv);
      }
    } else {
      add_child_vertex(vertex_of_[static_cast<size_t>(parent)], rv);
    }
    for (size_t i = path.size() - 1; i-- > 0;) {
      int32_t v = new_vertex(path[i]);
      add_child_vertex(vertex_of_[static_cast<size_t>(V(path[i]).parent)], v);
    }
  }
  ov_chain_ = chain;
  const int32_t top = chain_top_[static_cast<size_t>(chain)];
  ov_removed_count_.assign(static_cast<size_t>(top + 1), 0);
  ov_extra_.resize(static_cast<size_t>(top + 1));
  for (auto& e : ov_extra_) e.clear();
  ov_over_.resize(static_cast<size_t>(top + 1));
  for (auto& e : ov_over_) e.clear();
  ov_size_.assign(static_cast<size_t>(top + 1), 0);
  for (int32_t l = 1; l <= top; ++l)
    ov_size_[static_cast<size_t>(l)] = static_cast<int32_t>(flist_[cl(chain, l)].size());
  std::vector<int32_t>& free_num = *free_num_lease;
  free_num.assign(static_cast<size_t>(top + 2), 0);
  for (int32_t l = 1; l <= top; ++l) free_num[static_cast<size_t>(l)] = all_vc_free_[cl(chain, l)];

  bool ok = true;
  for (int32_t vx : preassigned) {
    int32_t level = V(vertices_[static_cast<size_t>(vx)].vcell).level;
    int32_t lowest = -1;
    for (int32_t l = level; l <= top; ++l)
      if (overlay_count(l) > 0) {
        lowest = l;
        break;
      }
    if (lowest >= 0 && buddy_alloc(vx, lowest)) {
      free_num[static_cast<size_t>(level)]--;
      continue;
    }
    if (!safe_relaxed_buddy_alloc(vx, free_num)) {
      ok = false;
      break;
    }
  }
  if (ok) {
    for (size_t i = 0; i < np_used; ++i)
      if (!map_cells(non_preassigned[i].second, pchildren(V(non_preassigned[i].first).pcell),
                     nullptr)) {
        ok = false;
        break;
      }
  }
  if (ok) {
    pleaves.clear();
    for (int32_t leaf : vleaves)
      pleaves.push_back(V(leaf).pcell >= 0 ? V(leaf).pcell : vbind_[static_cast<size_t>(leaf)]);
  }
  for (const Vertex& v : vertices_) {
    vertex_of_[static_cast<size_t>(v.vcell)] = -1;
    vbind_[static_cast<size_t>(v.vcell)] = -1;
  }
  vertices_.clear();
  overlay_reset();
  return ok;
}

}  // namespace pai::scheduler::hived_detail
