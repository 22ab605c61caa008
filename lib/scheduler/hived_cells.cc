// The cell model (HiveD's cell.go and config.go): physical and virtual cell trees,
// free lists, usage counters that keep the cluster views current, bindings.

#include <algorithm>
#include <string>
#include <vector>

#include "config/hived_model.h"
#include "scheduler/hived_algorithm.h"

namespace pai::scheduler::hived_detail {

void Hived::build_physical(const config::HivedModel& m) {
  const size_t n = m.cells.size();
  pcells_.resize(n);
  chain_offset_.assign(static_cast<size_t>(nchain_), 0);
  chain_top_.assign(static_cast<size_t>(nchain_), 0);
  int32_t off = 0;
  for (int32_t c = 0; c < nchain_; ++c) {
    chain_offset_[static_cast<size_t>(c)] = off;
    chain_top_[static_cast<size_t>(c)] = m.chains[static_cast<size_t>(c)].top_level;
    off += m.chains[static_cast<size_t>(c)].top_level + 1;
  }
  ncl_ = static_cast<size_t>(off);
  level_cells_.assign(ncl_, {});
  for (size_t i = 0; i < n; ++i) {
    const config::PhysicalCellInfo& mc = m.cells[i];
    PCell& p = pcells_[i];
    p.chain = mc.chain;
    p.level = mc.level;
    p.parent = mc.parent;
    p.node = mc.node;
    p.leaf_index = mc.leaf_index;
    p.is_node = mc.is_node;
    p.pinned = !mc.pinned_id.empty();
    p.child_begin = static_cast<int32_t>(pchild_.size());
    p.child_count = static_cast<int32_t>(mc.children.size());
    for (int32_t ch : mc.children) pchild_.push_back(ch);
    if (mc.chain >= 0) level_cells_[cl(mc.chain, mc.level)].push_back(static_cast<int32_t>(i));
  }
  for (size_t i = n; i-- > 0;) {
    PCell& p = pcells_[i];
    if (p.level == 1) p.leaves = 1;
    if (p.node >= 0) p.nodes = 1;
    if (p.parent >= 0) {
      P(p.parent).leaves += p.leaves;
      if (P(p.parent).node < 0) P(p.parent).nodes += p.nodes;
    }
  }
  bad_node_.assign(m.nodes.size(), 0);
}

int32_t Hived::build_virtual_tree(int32_t vc, int32_t chain, int32_t level, int32_t parent,
                                  int32_t preassigned, int32_t pinned) {
  int32_t self = static_cast<int32_t>(vcells_.size());
  VCell v;
  v.vc = vc;
  v.chain = chain;
  v.level = level;
  v.parent = parent;
  v.preassigned = preassigned < 0 ? self : preassigned;
  v.pinned = pinned;
  vcells_.push_back(v);
  const auto& ch = shape_.chains[static_cast<size_t>(chain)];
  int32_t leaves = static_cast<int32_t>(ch.level_leaves[static_cast<size_t>(level)]);
  vcells_[static_cast<size_t>(self)].leaves = leaves;
  if (level > 1) {
    int32_t kids =
        static_cast<int32_t>(ch.level_leaves[static_cast<size_t>(level)] /
                             std::max<int64_t>(ch.level_leaves[static_cast<size_t>(level - 1)], 1));
    std::vector<int32_t> ids;
    ids.reserve(static_cast<size_t>(kids));
    for (int32_t k = 0; k < kids; ++k)
      ids.push_back(build_virtual_tree(vc, chain, level - 1, self,
                                       vcells_[static_cast<size_t>(self)].preassigned, pinned));
    VCell& me = vcells_[static_cast<size_t>(self)];
    me.child_begin = static_cast<int32_t>(vchild_.size());
    me.child_count = kids;
    for (int32_t id : ids) vchild_.push_back(id);
  }
  return self;
}

void Hived::init_counters() {
  free_.assign(ncl_, {});
  flist_.assign(ncl_, {});
  for (size_t k = 0; k < ncl_; ++k) {
    // Keys: positions in HiveD's list (at most the level's cells) or cell ids.
    int32_t max_opp = 0;
    for (int32_t c : level_cells_[k]) max_opp = std::max(max_opp, P(c).leaves);
    free_[k].init(hived_order_ ? static_cast<int32_t>(level_cells_[k].size())
                               : static_cast<int32_t>(pcells_.size()),
                  max_opp);
  }
  total_left_.assign(ncl_, 0);
  all_vc_free_.assign(ncl_, 0);
  all_vc_doomed_.assign(ncl_, 0);
  bad_free_.assign(ncl_, {});
  for (int32_t c = 0; c < nchain_; ++c) {
    int32_t top = chain_top_[static_cast<size_t>(c)];
    for (int32_t l = 1; l <= top; ++l)
      total_left_[cl(c, l)] = static_cast<int32_t>(level_cells_[cl(c, l)].size());
    for (int32_t cell : level_cells_[cl(c, top)])
      if (P(cell).parent < 0) free_insert(cell);
  }
  for (int32_t vc = 0; vc < nvc_; ++vc)
    for (size_t i = 0; i < ncl_; ++i)
      all_vc_free_[i] += vc_free_[static_cast<size_t>(vc) * ncl_ + i];
}

void Hived::free_insert(int32_t c) {
  PCell& p = P(c);
  const size_t k = cl(p.chain, p.level);
  if (hived_order_) {
    p.free_key = static_cast<int32_t>(flist_[k].size());
    flist_[k].push_back(c);
  } else {
    p.free_key = c;
  }
  free_[k].insert(p.used_opp, p.free_key);
  p.in_free = true;
}

// CellList.remove: the last cell of the list takes the hole.
void Hived::free_erase(int32_t c) {
  PCell& p = P(c);
  const size_t k = cl(p.chain, p.level);
  free_[k].erase(p.used_opp, p.free_key);
  if (hived_order_) {
    int32_t last = flist_[k].back();
    if (last != c) {
      PCell& q = P(last);
      free_[k].erase(q.used_opp, q.free_key);
      q.free_key = p.free_key;
      flist_[k][static_cast<size_t>(q.free_key)] = last;
      free_[k].insert(q.used_opp, q.free_key);
    }
    flist_[k].pop_back();
  }
  p.free_key = -1;
  p.in_free = false;
}

void Hived::touch_opp_view(int32_t c) {
  const PCell& p = P(c);
  if (p.view_pos < 0) return;
  View& view = views_[static_cast<size_t>(chain_opp_view_[static_cast<size_t>(p.chain)])];
  int32_t cls = view.node_class[static_cast<size_t>(p.view_pos)];
  view.index.set(p.view_pos, bucket_opportunistic(view.layout, cls, p.used_opp, p.used_guar),
                 p.healthy);
}

void Hived::touch_vc_view(int32_t v) {
  const VCell& vc = V(v);
  if (vc.view < 0) return;
  View& view = views_[static_cast<size_t>(vc.view)];
  bool healthy = vc.pcell < 0 || P(vc.pcell).healthy;
  view.index.set(
      vc.view_pos,
      bucket_used(view.layout, view.node_class[static_cast<size_t>(vc.view_pos)], vc.used),
      healthy);
}

void Hived::add_physical_usage(int32_t leaf, int32_t priority, int32_t delta) {
  if (priority == kFreePriority) return;
  if (delta != 0 && (batching_ == delta || (batching_releases_ && delta == -1 && priority >= 0))) {
    // Only counted here, up the tree; the cells are changed once each later.
    if (batch_pdelta_.size() < pcells_.size()) batch_pdelta_.resize(pcells_.size());
    const bool opp = priority < 0;
    for (int32_t c = leaf; c >= 0; c = P(c).parent) {
      PhysicalDelta& d = batch_pdelta_[static_cast<size_t>(c)];
      if (d.opp == 0 && d.guar == 0) batch_pcells_.push_back(c);
      (opp ? d.opp : d.guar) += delta;
    }
    return;
  }
  for (int32_t c = leaf; c >= 0; c = P(c).parent) {
    PCell& p = P(c);
    if (priority < 0) {
      if (p.in_free) {
        free_[cl(p.chain, p.level)].move(p.used_opp, p.used_opp + delta, p.free_key);
        p.used_opp += delta;
      } else {
        p.used_opp += delta;
      }
    } else {
      p.used_guar += delta;
    }
    if (p.is_node) touch_opp_view(c);
  }
}

void Hived::add_virtual_usage(int32_t leaf, int32_t priority, int32_t delta) {
  if (priority == kFreePriority) return;
  if (batching_ == 1 && delta == 1) {
    // One priority and one VC per batch: a leaf of another (not expected
    // within a group) applies what was noted first.
    if (!batch_vcells_.empty() &&
        (priority != batch_priority_ || V(leaf).vc != V(batch_vcells_.front()).vc)) {
      apply_usage_batch();
      batching_ = 1;
    }
    if (batch_used_.size() < vcells_.size()) batch_used_.resize(vcells_.size());
    batch_priority_ = priority;
    ++batch_leaves_;
    for (int32_t c = leaf; c >= 0; c = V(c).parent)
      if (batch_used_[static_cast<size_t>(c)]++ == 0) batch_vcells_.push_back(c);
    return;
  }
  if (batching_releases_ && delta == -1) {
    // A release: the used leaves change at once (a release reads them: is the
    // preassigned cell unused now?); the per-priority counts and the views,
    // which only scheduling reads, once per cell at the end.
    if (!batch_vcells_.empty() &&
        (priority != batch_priority_ || V(leaf).vc != V(batch_vcells_.front()).vc))
      apply_virtual_batch();
    if (batch_used_.size() < vcells_.size()) batch_used_.resize(vcells_.size());
    batch_priority_ = priority;
    batch_used_done_ = true;
    --batch_leaves_;
    for (int32_t c = leaf; c >= 0; c = V(c).parent) {
      --V(c).used;
      if (batch_used_[static_cast<size_t>(c)]-- == 0) batch_vcells_.push_back(c);
    }
    return;
  }
  add_vc_priority_use(V(leaf).vc, priority, delta);
  for (int32_t c = leaf; c >= 0; c = V(c).parent) add_cell_priority_use(c, priority, delta);
}

// The VC's used leaves at a priority, kept sorted by priority; a count that
// reaches zero is dropped.
void Hived::add_vc_priority_use(int32_t vc, int32_t priority, int32_t delta) {
  auto& used = vc_prio_used_[static_cast<size_t>(vc)];
  auto at = std::lower_bound(used.begin(), used.end(), priority,
                             [](const auto& e, int32_t p) { return e.first < p; });
  if (at == used.end() || at->first != priority) at = used.insert(at, {priority, 0});
  if ((at->second += delta) == 0) used.erase(at);
}

// A virtual cell's used leaves, and in its view its count at a priority (a
// count that reaches zero is dropped).
void Hived::add_cell_priority_use(int32_t c, int32_t priority, int32_t delta, bool used_done) {
  VCell& v = V(c);
  if (!used_done) v.used += delta;
  if (v.view < 0) return;
  auto& counts = views_[static_cast<size_t>(v.view)].prio_counts[static_cast<size_t>(v.view_pos)];
  auto it = std::find_if(counts.begin(), counts.end(),
                         [&](const auto& e) { return e.first == priority; });
  if (it == counts.end()) {
    counts.push_back({priority, delta});
  } else if ((it->second += delta) == 0) {
    counts.erase(it);
  }
  touch_vc_view(c);
}

void Hived::apply_usage_batch() {
  batching_ = 0;
  batching_releases_ = false;
  // Every cell noted (the leaves and their ancestors) with its whole delta:
  // the same changes as add_physical_usage and add_virtual_usage make, once
  // per cell instead of once per leaf below it.
  auto& pl = batch_pcells_;
  for (int32_t c : pl) {
    PCell& p = P(c);
    const size_t i = static_cast<size_t>(c);
    PhysicalDelta& delta = batch_pdelta_[i];
    if (int32_t d = delta.opp; d != 0) {
      if (p.in_free) free_[cl(p.chain, p.level)].move(p.used_opp, p.used_opp + d, p.free_key);
      p.used_opp += d;
    }
    p.used_guar += delta.guar;
    delta = {};
    if (p.is_node) touch_opp_view(c);
  }
  pl.clear();
  apply_virtual_batch();
}

void Hived::apply_virtual_batch() {
  auto& vl = batch_vcells_;
  const bool used_done = batch_used_done_;
  batch_used_done_ = false;
  if (vl.empty()) return;
  const int32_t priority = batch_priority_;
  const int32_t leaves = batch_leaves_;
  batch_leaves_ = 0;
  add_vc_priority_use(V(vl.front()).vc, priority, leaves);
  for (int32_t c : vl) {
    const int32_t d = batch_used_[static_cast<size_t>(c)];
    batch_used_[static_cast<size_t>(c)] = 0;
    add_cell_priority_use(c, priority, d, used_done);
  }
  vl.clear();
}

void Hived::bind_pair(int32_t p, int32_t v) {
  P(p).vcell = v;
  V(v).pcell = p;
  if (V(v).pre_pos >= 0) vc_pre_unbound_[vcl(V(v).vc, V(v).chain, V(v).level)].erase(V(v).pre_pos);
  if (V(v).view >= 0) touch_vc_view(v);
}

void Hived::unbind_pair(int32_t p, int32_t v) {
  P(p).vcell = -1;
  V(v).pcell = -1;
  if (V(v).pre_pos >= 0) vc_pre_unbound_[vcl(V(v).vc, V(v).chain, V(v).level)].insert(V(v).pre_pos);
  if (V(v).view >= 0) touch_vc_view(v);
}

// bindCell: binds a virtual leaf to a physical leaf and their ancestors, up to
// the first virtual cell that is already bound.
void Hived::bind_cell(int32_t p, int32_t v) {
  while (V(v).pcell < 0) {
    bind_pair(p, v);
    if (V(v).parent < 0) break;
    v = V(v).parent;
    p = P(p).parent;
  }
}

// unbindCell: unbinds a leaf and its ancestors while no sibling is bound; pinned cells stay bound.
void Hived::unbind_cell(int32_t p) {
  int32_t bv = P(p).vcell;
  while (bv >= 0 && V(bv).pcell >= 0 && !P(V(bv).pcell).pinned) {
    unbind_pair(V(bv).pcell, bv);
    int32_t parent = V(bv).parent;
    if (parent < 0) return;
    for (int32_t ch : vchildren(parent))
      if (V(ch).pcell >= 0) return;
    bv = parent;
  }
}

bool Hived::in_free_cell_list(int32_t c) const {
  for (;;) {
    const PCell& p = P(c);
    if (p.vcell >= 0 || p.split) return false;
    if (p.parent < 0 || P(p.parent).split) return true;
    c = p.parent;
  }
}

}  // namespace pai::scheduler::hived_detail
