#include "scheduler/baselines.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "config/hived_model.h"
#include "scheduler/node_index.h"

namespace pai::scheduler {

namespace {

constexpr int32_t kFreePriority = -2;

// A place pods go to: a node-level cell, or (private) a partition cell below node level.
struct Slot {
  int32_t cell = -1;
  int32_t node = -1;
  int32_t view = -1;
  int32_t pos = -1;
  int32_t level = 0;
  std::vector<int32_t> leaves;  // DFS order
  int32_t used = 0;
  std::vector<std::pair<int32_t, int32_t>> prio_counts;
};

struct FlatView {
  int32_t chain = -1;
  int32_t vc = -1;      // private: the owner
  int32_t pinned = -1;  // private: pinned cell index
  std::vector<int32_t> slots;
  std::vector<int32_t> slot_class;
  BucketLayout layout;
  BucketedNodes index;
};

struct FlatGroup {
  bool alive = false;
  std::string name;
  uint64_t tag = 0;
  int32_t vc = -1;
  int32_t priority = 0;
  int32_t leaf_type = -1;
  int32_t chain = -1;
  std::vector<int32_t> pod_leaves;  // per pod
  std::vector<int32_t> pod_offset;
  std::vector<int32_t> leaves;
  std::vector<uint8_t> pod_handed;
};

struct PinnedCell {
  std::string id;
  int32_t vc = -1;
  int32_t cell = -1;
};

class Flat final : public Policy {
 public:
  Flat(Baseline kind, const config::HivedModel& m, std::string& error);

  std::string_view name() const override {
    switch (kind_) {
      case Baseline::Quota:
        return "quota";
      case Baseline::K8sDefault:
        return "k8s-default";
      case Baseline::Private:
        return "private";
    }
    return "baseline";
  }
  const ClusterShape& cluster() const override { return shape_; }
  ScheduleResult schedule(const GroupRequest& r, bool allow_preemption) override;
  ScheduleResult schedule_pod(std::string_view group, int32_t leaf_cell_number) override;
  bool release(std::string_view group) override;
  void set_node_health(int32_t node, bool healthy) override;
  uint64_t release_epoch() const override { return epoch_; }
  UsageSummary usage() const override;
  bool has_group(std::string_view group) const override {
    return index_.count(std::string(group)) > 0;
  }
  std::string check_invariants() const override;

 private:
  bool build_partitions(const config::HivedModel& m, std::string& error);
  int32_t add_view(int32_t chain, int32_t vc, int32_t pinned, std::vector<int32_t> slot_cells);
  void touch(int32_t slot);
  void use_leaf(int32_t leaf, int32_t group, int32_t priority);
  void free_leaf(int32_t leaf);
  // One attempt in one view; fills leaves (per pod, in pod order) and victims.
  bool place(int32_t view, const std::vector<int32_t>& pods, int32_t priority, bool preempt,
             std::vector<int32_t>& leaves, std::vector<int32_t>& victims);
  bool place_spread(FlatView& v, const std::vector<int32_t>& pods, std::vector<int32_t>& leaves);
  bool place_pack(FlatView& v, const std::vector<int32_t>& pods, std::vector<int32_t>& leaves);
  bool place_preempting(FlatView& v, const std::vector<int32_t>& pods, int32_t priority,
                        std::vector<int32_t>& leaves, std::vector<int32_t>& victims);
  void ranks_for(const Slot& s, int32_t priority, bool preempt, std::vector<int32_t>& rank) const;
  ScheduleResult result_of(int32_t g, Outcome o) const;
  // Kubernetes' filter phase: the slots on nodes outside the request's
  // suggested set leave their views' iteration until end_suggested(). Returns
  // whether any node was left out.
  bool begin_suggested(const GroupRequest& r);
  void end_suggested();
  ScheduleResult rejected(std::string reason) const {
    ScheduleResult r;
    r.outcome = Outcome::Rejected;
    r.reason = std::move(reason);
    return r;
  }

  Baseline kind_;
  ClusterShape shape_;
  std::vector<int32_t> parent_, level_, leaf_index_, cell_node_, cell_chain_;
  std::vector<std::vector<int32_t>> children_;
  std::vector<int32_t> node_level_of_chain_;
  std::vector<int32_t> owner_, prio_, leaf_slot_;
  std::vector<uint8_t> taken_;
  std::vector<Slot> slots_;
  std::vector<FlatView> views_;
  std::vector<int32_t> chain_view_;             // quota, k8s-default
  std::vector<std::vector<int32_t>> vc_views_;  // private: per VC, per chain (-1)
  std::vector<PinnedCell> pinned_;
  std::vector<int32_t> pinned_view_;
  std::vector<std::vector<int64_t>> quota_, quota_used_;  // [vc][leaf type]
  std::vector<uint8_t> bad_node_;
  std::vector<std::vector<int32_t>> node_slots_;
  std::vector<FlatGroup> groups_;
  std::vector<int32_t> free_slots_;
  std::unordered_map<std::string, int32_t> index_;
  std::vector<uint8_t> node_suggested_;  // begin_suggested()'s scratch
  std::vector<int32_t> unsuggested_;     // slots taken out by begin_suggested()
  uint64_t epoch_ = 1;
};

Flat::Flat(Baseline kind, const config::HivedModel& m, std::string& error) : kind_(kind) {
  shape_ = describe_cluster(m);
  const size_t n = m.cells.size();
  parent_.resize(n);
  level_.resize(n);
  leaf_index_.resize(n);
  cell_node_.resize(n);
  cell_chain_.resize(n);
  children_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    parent_[i] = m.cells[i].parent;
    level_[i] = m.cells[i].level;
    leaf_index_[i] = m.cells[i].leaf_index;
    cell_node_[i] = m.cells[i].node;
    cell_chain_[i] = m.cells[i].chain;
    children_[i] = m.cells[i].children;
  }
  node_level_of_chain_.resize(shape_.chains.size());
  for (size_t c = 0; c < shape_.chains.size(); ++c)
    node_level_of_chain_[c] = shape_.chains[c].node_level;
  owner_.assign(n, -1);
  prio_.assign(n, kFreePriority);
  leaf_slot_.assign(n, -1);
  taken_.assign(n, 0);
  bad_node_.assign(shape_.nodes.size(), 0);
  node_slots_.assign(shape_.nodes.size(), {});
  const size_t nt = shape_.leaf_types.size();
  quota_.assign(shape_.vcs.size(), std::vector<int64_t>(nt, 0));
  quota_used_.assign(shape_.vcs.size(), std::vector<int64_t>(nt, 0));
  for (size_t v = 0; v < shape_.vcs.size(); ++v)
    for (size_t t = 0; t < nt; ++t)
      quota_[v][t] = shape_.vcs[v].guaranteed[t] + shape_.vcs[v].pinned[t];
  for (size_t v = 0; v < m.vcs.size(); ++v)
    for (const auto& p : m.vcs[v].pinned)
      pinned_.push_back({p.id, static_cast<int32_t>(v), p.cell});

  if (kind_ == Baseline::Private) {
    if (!build_partitions(m, error)) return;
  } else {
    chain_view_.assign(shape_.chains.size(), -1);
    for (size_t c = 0; c < shape_.chains.size(); ++c) {
      std::vector<int32_t> cells;
      for (size_t i = 0; i < n; ++i)
        if (m.cells[i].chain == static_cast<int32_t>(c) && m.cells[i].is_node)
          cells.push_back(static_cast<int32_t>(i));
      chain_view_[c] = add_view(static_cast<int32_t>(c), -1, -1, std::move(cells));
    }
  }
}

// Static partitions: buddy allocation of every VC's cells, in configuration order.
bool Flat::build_partitions(const config::HivedModel& m, std::string& error) {
  const size_t nc = shape_.chains.size();
  std::vector<std::vector<std::set<int32_t>>> free(nc);
  for (size_t c = 0; c < nc; ++c)
    free[c].assign(static_cast<size_t>(shape_.chains[c].top_level + 2), {});
  for (size_t c = 0; c < nc; ++c)
    for (int32_t top : m.chains[c].top_cells)
      free[c][static_cast<size_t>(level_[static_cast<size_t>(top)])].insert(top);
  // Takes `cell` out of the free lists, splitting its ancestors.
  auto take = [&](int32_t cell) -> bool {
    std::vector<int32_t> path;
    int32_t a = cell;
    const int32_t chain = cell_chain_[static_cast<size_t>(cell)];
    while (a >= 0 &&
           !free[static_cast<size_t>(chain)][static_cast<size_t>(level_[static_cast<size_t>(a)])]
                .count(a)) {
      path.push_back(a);
      a = parent_[static_cast<size_t>(a)];
    }
    if (a < 0) return false;  // not obtainable
    free[static_cast<size_t>(chain)][static_cast<size_t>(level_[static_cast<size_t>(a)])].erase(a);
    // Split from a down to cell.
    for (size_t i = path.size(); i-- > 0;) {
      int32_t parent = parent_[static_cast<size_t>(path[i])];
      for (int32_t ch : children_[static_cast<size_t>(parent)])
        if (ch != path[i])
          free[static_cast<size_t>(chain)][static_cast<size_t>(level_[static_cast<size_t>(ch)])]
              .insert(ch);
    }
    return true;
  };
  std::vector<std::vector<int32_t>> owned(shape_.vcs.size() * nc);
  for (const auto& p : pinned_)
    if (!take(p.cell)) {
      error = "pinned cell " + p.id + " overlaps another cell";
      return false;
    }
  for (size_t v = 0; v < m.vcs.size(); ++v)
    for (const auto& vc : m.vcs[v].cells) {
      if (vc.chain < 0) continue;
      auto& fl = free[static_cast<size_t>(vc.chain)];
      for (int64_t k = 0; k < vc.count; ++k) {
        int32_t found = -1;
        for (int32_t l = vc.level; l < static_cast<int32_t>(fl.size()) && found < 0; ++l)
          if (!fl[static_cast<size_t>(l)].empty()) found = *fl[static_cast<size_t>(l)].begin();
        if (found < 0) {
          error = "the cells of virtual cluster " + m.vcs[v].name + " do not fit in chain " +
                  shape_.chains[static_cast<size_t>(vc.chain)].name;
          return false;
        }
        int32_t cell = found;
        while (level_[static_cast<size_t>(cell)] > vc.level)
          cell = children_[static_cast<size_t>(cell)].front();
        take(cell);
        owned[v * nc + static_cast<size_t>(vc.chain)].push_back(cell);
      }
    }
  // Slots: node-level cells inside each owned cell, or the cell itself when below node level.
  auto slots_of = [&](int32_t cell, std::vector<int32_t>& out) {
    const int32_t node_level =
        node_level_of_chain_[static_cast<size_t>(cell_chain_[static_cast<size_t>(cell)])];
    std::vector<int32_t> stack{cell};
    while (!stack.empty()) {
      int32_t c = stack.back();
      stack.pop_back();
      if (level_[static_cast<size_t>(c)] <= node_level) {
        out.push_back(c);
        continue;
      }
      for (size_t k = children_[static_cast<size_t>(c)].size(); k-- > 0;)
        stack.push_back(children_[static_cast<size_t>(c)][k]);
    }
  };
  vc_views_.assign(shape_.vcs.size(), std::vector<int32_t>(nc, -1));
  for (size_t v = 0; v < shape_.vcs.size(); ++v)
    for (size_t c = 0; c < nc; ++c) {
      auto& cells = owned[v * nc + c];
      if (cells.empty()) continue;
      std::vector<int32_t> slot_cells;
      for (int32_t cell : cells) slots_of(cell, slot_cells);
      vc_views_[v][c] =
          add_view(static_cast<int32_t>(c), static_cast<int32_t>(v), -1, std::move(slot_cells));
    }
  pinned_view_.assign(pinned_.size(), -1);
  for (size_t i = 0; i < pinned_.size(); ++i) {
    std::vector<int32_t> slot_cells;
    slots_of(pinned_[i].cell, slot_cells);
    pinned_view_[i] = add_view(cell_chain_[static_cast<size_t>(pinned_[i].cell)], pinned_[i].vc,
                               static_cast<int32_t>(i), std::move(slot_cells));
  }
  return true;
}

int32_t Flat::add_view(int32_t chain, int32_t vc, int32_t pinned, std::vector<int32_t> slot_cells) {
  FlatView view;
  view.chain = chain;
  view.vc = vc;
  view.pinned = pinned;
  const int32_t id = static_cast<int32_t>(views_.size());
  std::vector<int32_t> totals;
  for (int32_t cell : slot_cells) {
    Slot s;
    s.cell = cell;
    s.node = cell_node_[static_cast<size_t>(cell)];
    s.level = level_[static_cast<size_t>(cell)];
    s.view = id;
    s.pos = static_cast<int32_t>(view.slots.size());
    std::vector<int32_t> stack{cell};
    while (!stack.empty()) {
      int32_t c = stack.back();
      stack.pop_back();
      if (level_[static_cast<size_t>(c)] == 1) {
        s.leaves.push_back(c);
        continue;
      }
      for (size_t k = children_[static_cast<size_t>(c)].size(); k-- > 0;)
        stack.push_back(children_[static_cast<size_t>(c)][k]);
    }
    int32_t total = static_cast<int32_t>(s.leaves.size());
    if (std::find(totals.begin(), totals.end(), total) == totals.end()) totals.push_back(total);
    int32_t sid = static_cast<int32_t>(slots_.size());
    for (int32_t leaf : s.leaves) leaf_slot_[static_cast<size_t>(leaf)] = sid;
    if (s.node >= 0) node_slots_[static_cast<size_t>(s.node)].push_back(sid);
    slots_.push_back(std::move(s));
    view.slots.push_back(sid);
  }
  std::sort(totals.begin(), totals.end());
  view.layout =
      kind_ == Baseline::Private ? layout_most_used_first(totals) : layout_least_allocated(totals);
  for (int32_t sid : view.slots)
    view.slot_class.push_back(
        view.layout.class_of(static_cast<int32_t>(slots_[static_cast<size_t>(sid)].leaves.size())));
  view.index.init(static_cast<int32_t>(view.slots.size()), view.layout.bucket_free,
                  view.layout.groups);
  views_.push_back(std::move(view));
  for (int32_t sid : views_.back().slots) touch(sid);
  return id;
}

void Flat::touch(int32_t sid) {
  const Slot& s = slots_[static_cast<size_t>(sid)];
  FlatView& v = views_[static_cast<size_t>(s.view)];
  bool healthy = s.node < 0 || !bad_node_[static_cast<size_t>(s.node)];
  v.index.set(s.pos, healthy
                         ? bucket_used(v.layout, v.slot_class[static_cast<size_t>(s.pos)], s.used)
                         : -1);
}

void Flat::use_leaf(int32_t leaf, int32_t group, int32_t priority) {
  owner_[static_cast<size_t>(leaf)] = group;
  prio_[static_cast<size_t>(leaf)] = priority;
  int32_t sid = leaf_slot_[static_cast<size_t>(leaf)];
  if (sid < 0) return;
  Slot& s = slots_[static_cast<size_t>(sid)];
  s.used++;
  auto it = std::find_if(s.prio_counts.begin(), s.prio_counts.end(),
                         [&](const auto& e) { return e.first == priority; });
  if (it == s.prio_counts.end())
    s.prio_counts.push_back({priority, 1});
  else
    it->second++;
  touch(sid);
}

void Flat::free_leaf(int32_t leaf) {
  int32_t priority = prio_[static_cast<size_t>(leaf)];
  owner_[static_cast<size_t>(leaf)] = -1;
  prio_[static_cast<size_t>(leaf)] = kFreePriority;
  int32_t sid = leaf_slot_[static_cast<size_t>(leaf)];
  if (sid < 0) return;
  Slot& s = slots_[static_cast<size_t>(sid)];
  s.used--;
  auto it = std::find_if(s.prio_counts.begin(), s.prio_counts.end(),
                         [&](const auto& e) { return e.first == priority; });
  if (it != s.prio_counts.end() && --it->second == 0) s.prio_counts.erase(it);
  touch(sid);
}

// Free leaves first, then (when preempting) leaves of lower priority. Within a
// tier: device index order for the topology-unaware policies, tree order for private.
void Flat::ranks_for(const Slot& s, int32_t priority, bool preempt,
                     std::vector<int32_t>& rank) const {
  rank.assign(s.leaves.size(), -1);
  std::vector<std::pair<int32_t, size_t>> order;  // (tier, position)
  for (size_t i = 0; i < s.leaves.size(); ++i) {
    int32_t leaf = s.leaves[i];
    if (taken_[static_cast<size_t>(leaf)]) continue;
    int32_t p = prio_[static_cast<size_t>(leaf)];
    if (p == kFreePriority)
      order.push_back({0, i});
    else if (preempt && p < priority)
      order.push_back({1, i});
  }
  const bool by_index = kind_ != Baseline::Private;
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    if (by_index)
      return leaf_index_[static_cast<size_t>(s.leaves[a.second])] <
             leaf_index_[static_cast<size_t>(s.leaves[b.second])];
    return false;
  });
  int32_t next = 0;
  for (const auto& e : order) rank[e.second] = next++;
}

// Topology-unaware: the best-ranked leaves (lowest device indices).
static void take_best(const std::vector<int32_t>& leaves, const std::vector<int32_t>& rank,
                      int32_t k, std::vector<int32_t>& out) {
  std::vector<std::pair<int32_t, int32_t>> avail;
  for (size_t i = 0; i < leaves.size(); ++i)
    if (rank[i] >= 0) avail.push_back({rank[i], leaves[i]});
  std::sort(avail.begin(), avail.end());
  for (int32_t i = 0; i < k && static_cast<size_t>(i) < avail.size(); ++i)
    out.push_back(avail[static_cast<size_t>(i)].second);
}

bool Flat::place_spread(FlatView& v, const std::vector<int32_t>& pods,
                        std::vector<int32_t>& leaves) {
  // One pod at a time, each to the least allocated node given the pods placed before it.
  std::vector<int32_t> placed, node, rank;
  bool ok = true;
  for (int32_t k : pods) {
    const int32_t one[1] = {k};
    if (!v.index.first_fit(one, node)) {
      ok = false;
      break;
    }
    const Slot& s = slots_[static_cast<size_t>(v.slots[static_cast<size_t>(node[0])])];
    ranks_for(s, 0, false, rank);
    size_t before = leaves.size();
    take_best(s.leaves, rank, k, leaves);
    for (size_t j = before; j < leaves.size(); ++j) {
      placed.push_back(leaves[j]);
      use_leaf(leaves[j], -2, 0);  // tentatively, so that the next pod sees it
    }
  }
  for (int32_t leaf : placed) free_leaf(leaf);
  return ok;
}

bool Flat::place_pack(FlatView& v, const std::vector<int32_t>& pods, std::vector<int32_t>& leaves) {
  std::vector<int32_t> nodes, rank, marked;
  if (!v.index.first_fit(pods, nodes)) return false;
  bool ok = true;
  for (size_t i = 0; i < pods.size() && ok; ++i) {
    const Slot& s = slots_[static_cast<size_t>(v.slots[static_cast<size_t>(nodes[i])])];
    ranks_for(s, 0, false, rank);
    size_t before = leaves.size();
    ok = pick_lowest_ancestor(
        s.leaves, rank, pods[i], s.level,
        [&](int32_t c) { return parent_[static_cast<size_t>(c)]; }, leaves);
    for (size_t j = before; j < leaves.size(); ++j) {
      taken_[static_cast<size_t>(leaves[j])] = 1;
      marked.push_back(leaves[j]);
    }
  }
  for (int32_t leaf : marked) taken_[static_cast<size_t>(leaf)] = 0;
  return ok;
}

bool Flat::place_preempting(FlatView& v, const std::vector<int32_t>& pods, int32_t priority,
                            std::vector<int32_t>& leaves, std::vector<int32_t>& victims) {
  std::vector<int32_t> marked, rank, nodes;
  auto avail = [&](int32_t pos) {
    const Slot& s = slots_[static_cast<size_t>(v.slots[static_cast<size_t>(pos)])];
    int32_t n = 0;
    for (int32_t leaf : s.leaves) {
      int32_t p = prio_[static_cast<size_t>(leaf)];
      if (!taken_[static_cast<size_t>(leaf)] && (p == kFreePriority || p < priority)) ++n;
    }
    return n;
  };
  bool ok = true;
  if (kind_ == Baseline::Private) {
    ok = v.index.first_fit_with(pods, avail, nodes);
  } else {
    nodes.clear();
    for (int32_t k : pods) {
      std::vector<int32_t> one_node;
      const int32_t one[1] = {k};
      if (!v.index.first_fit_with(std::span<const int32_t>(one, 1), avail, one_node)) {
        ok = false;
        break;
      }
      nodes.push_back(one_node[0]);
      // Mark now so that the next pod's count sees these leaves as taken.
      const Slot& s = slots_[static_cast<size_t>(v.slots[static_cast<size_t>(one_node[0])])];
      ranks_for(s, priority, true, rank);
      size_t before = leaves.size();
      take_best(s.leaves, rank, k, leaves);
      for (size_t j = before; j < leaves.size(); ++j) {
        taken_[static_cast<size_t>(leaves[j])] = 1;
        marked.push_back(leaves[j]);
      }
    }
  }
  if (ok && kind_ == Baseline::Private) {
    for (size_t i = 0; i < pods.size() && ok; ++i) {
      const Slot& s = slots_[static_cast<size_t>(v.slots[static_cast<size_t>(nodes[i])])];
      ranks_for(s, priority, true, rank);
      size_t before = leaves.size();
      ok = pick_lowest_ancestor(
          s.leaves, rank, pods[i], s.level,
          [&](int32_t c) { return parent_[static_cast<size_t>(c)]; }, leaves);
      for (size_t j = before; j < leaves.size(); ++j) {
        taken_[static_cast<size_t>(leaves[j])] = 1;
        marked.push_back(leaves[j]);
      }
    }
  }
  for (int32_t leaf : marked) taken_[static_cast<size_t>(leaf)] = 0;
  if (!ok) return false;
  for (int32_t leaf : leaves) {
    int32_t g = owner_[static_cast<size_t>(leaf)];
    if (g >= 0 && std::find(victims.begin(), victims.end(), g) == victims.end())
      victims.push_back(g);
  }
  return true;
}

bool Flat::place(int32_t view, const std::vector<int32_t>& pods, int32_t priority, bool preempt,
                 std::vector<int32_t>& leaves, std::vector<int32_t>& victims) {
  leaves.clear();
  victims.clear();
  FlatView& v = views_[static_cast<size_t>(view)];
  if (preempt) return place_preempting(v, pods, priority, leaves, victims);
  return kind_ == Baseline::Private ? place_pack(v, pods, leaves) : place_spread(v, pods, leaves);
}

bool Flat::begin_suggested(const GroupRequest& r) {
  if (!r.suggested_nodes) return false;
  node_suggested_.assign(shape_.nodes.size(), 0);
  for (int32_t n : *r.suggested_nodes)
    if (n >= 0 && static_cast<size_t>(n) < node_suggested_.size())
      node_suggested_[static_cast<size_t>(n)] = 1;
  for (size_t n = 0; n < node_suggested_.size(); ++n) {
    if (node_suggested_[n]) continue;
    for (int32_t sid : node_slots_[n]) {
      const Slot& s = slots_[static_cast<size_t>(sid)];
      views_[static_cast<size_t>(s.view)].index.set_suggested(s.pos, false);
      unsuggested_.push_back(sid);
    }
  }
  return !unsuggested_.empty();
}

void Flat::end_suggested() {
  for (int32_t sid : unsuggested_) {
    const Slot& s = slots_[static_cast<size_t>(sid)];
    views_[static_cast<size_t>(s.view)].index.set_suggested(s.pos, true);
  }
  unsuggested_.clear();
}

ScheduleResult Flat::schedule(const GroupRequest& r, bool allow_preemption) {
  if (std::string err = validate_request(r); !err.empty()) return rejected(err);
  // An allocated group keeps its placement, suggested or not.
  if (auto it = index_.find(r.affinity_group); it != index_.end())
    return result_of(it->second, Outcome::Bound);
  const int32_t vc = shape_.find_vc(r.virtual_cluster, r.vc_index);
  if (vc < 0) return rejected("VC " + r.virtual_cluster + " does not exists!");
  int32_t pinned = -1;
  if (!r.pinned_cell_id.empty()) {
    for (size_t i = 0; i < pinned_.size(); ++i)
      if (pinned_[i].vc == vc && pinned_[i].id == r.pinned_cell_id)
        pinned = static_cast<int32_t>(i);
    if (pinned < 0)
      return rejected("VC " + r.virtual_cluster + " does not have pinned cell " + r.pinned_cell_id);
    if (r.priority == kOpportunisticPriority)
      return rejected("opportunistic pod not supported to use pinned cell " + r.pinned_cell_id);
  }
  int32_t lt = -1;
  if (!r.leaf_cell_type.empty()) {
    lt = shape_.find_leaf_type(r.leaf_cell_type);
    if (lt < 0)
      return rejected("affinity group " + r.affinity_group + " requests leaf cell type " +
                      r.leaf_cell_type + ", which the whole cluster does not have");
  }
  std::vector<int32_t> pods;
  int64_t total = 0;
  for (const auto& m : r.members)
    for (int32_t k = 0; k < m.pod_number; ++k) {
      pods.push_back(m.leaf_cell_number);
      total += m.leaf_cell_number;
    }
  std::sort(pods.begin(), pods.end());
  const bool guaranteed = r.priority >= kMinGuaranteedPriority;

  // Candidate views, in chain order.
  std::vector<int32_t> views;
  std::string reason;
  auto chains_of = [&]() {
    std::vector<int32_t> out;
    for (size_t t = 0; t < shape_.leaf_types.size(); ++t)
      if (lt < 0 || static_cast<int32_t>(t) == lt)
        for (int32_t c : shape_.leaf_types[t].chains) out.push_back(c);
    return out;
  };
  if (kind_ == Baseline::Private) {
    if (pinned >= 0 && kind_ == Baseline::Private) {
      views.push_back(pinned_view_[static_cast<size_t>(pinned)]);
    } else {
      for (int32_t c : chains_of())
        if (vc_views_[static_cast<size_t>(vc)][static_cast<size_t>(c)] >= 0)
          views.push_back(vc_views_[static_cast<size_t>(vc)][static_cast<size_t>(c)]);
      if (views.empty())
        return rejected(lt >= 0 ? "affinity group " + r.affinity_group +
                                      " requests leaf cell type " + r.leaf_cell_type +
                                      ", which VC " + r.virtual_cluster + " does not have"
                                : "VC " + r.virtual_cluster + " has no cells");
    }
  } else {
    if (kind_ == Baseline::Quota && guaranteed && lt >= 0 &&
        quota_[static_cast<size_t>(vc)][static_cast<size_t>(lt)] == 0)
      return rejected("affinity group " + r.affinity_group + " requests leaf cell type " +
                      r.leaf_cell_type + ", which VC " + r.virtual_cluster + " does not have");
    for (int32_t c : chains_of()) {
      const int32_t type = shape_.chains[static_cast<size_t>(c)].leaf_type;
      if (kind_ == Baseline::Quota && guaranteed) {
        const int64_t quota = quota_[static_cast<size_t>(vc)][static_cast<size_t>(type)];
        const int64_t used = quota_used_[static_cast<size_t>(vc)][static_cast<size_t>(type)];
        if (used + total > quota) {
          if (quota > 0 && reason.empty())
            reason = "VC " + r.virtual_cluster + " would exceed its quota of " +
                     std::to_string(quota) + " " +
                     shape_.leaf_types[static_cast<size_t>(type)].name + " (" +
                     std::to_string(used) + " in use)";
          continue;
        }
      }
      views.push_back(chain_view_[static_cast<size_t>(c)]);
    }
  }
  // Every placement below, with or without victims, is on suggested nodes only.
  const bool filtered = begin_suggested(r);
  struct EndSuggested {
    Flat* f;
    ~EndSuggested() { f->end_suggested(); }
  } end_suggested_guard{this};
  std::vector<int32_t> leaves, victims;
  for (int32_t v : views)
    if (place(v, pods, r.priority, false, leaves, victims)) {
      int32_t g;
      if (!free_slots_.empty()) {
        g = free_slots_.back();
        free_slots_.pop_back();
      } else {
        g = static_cast<int32_t>(groups_.size());
        groups_.emplace_back();
      }
      FlatGroup& grp = groups_[static_cast<size_t>(g)];
      grp = FlatGroup();
      grp.alive = true;
      grp.name = r.affinity_group;
      grp.tag = r.tag;
      grp.vc = vc;
      grp.priority = r.priority;
      grp.chain = views_[static_cast<size_t>(v)].chain;
      grp.leaf_type = shape_.chains[static_cast<size_t>(grp.chain)].leaf_type;
      grp.pod_leaves = pods;
      grp.pod_offset.push_back(0);
      for (int32_t k : pods) grp.pod_offset.push_back(grp.pod_offset.back() + k);
      grp.leaves = leaves;
      grp.pod_handed.assign(pods.size(), 0);
      for (int32_t leaf : leaves) use_leaf(leaf, g, r.priority);
      if (guaranteed)
        quota_used_[static_cast<size_t>(vc)][static_cast<size_t>(grp.leaf_type)] += total;
      index_[grp.name] = g;
      return result_of(g, Outcome::Bound);
    }
  if (reason.empty())
    reason = filtered ? "insufficient capacity on the suggested nodes" : "insufficient capacity";
  if (allow_preemption && r.priority > kOpportunisticPriority) {
    for (int32_t v : views)
      if (place(v, pods, r.priority, true, leaves, victims) && !victims.empty()) {
        ScheduleResult out;
        out.outcome = Outcome::Preempting;
        out.cell_chain =
            shape_.chains[static_cast<size_t>(views_[static_cast<size_t>(v)].chain)].name;
        size_t k = 0;
        for (int32_t n : pods) {
          PodPlacement pod;
          pod.leaf_cell_number = n;
          for (int32_t i = 0; i < n; ++i, ++k) {
            int32_t leaf = leaves[k];
            if (pod.node < 0) pod.node = cell_node_[static_cast<size_t>(leaf)];
            pod.physical_leaf_cell_indices.push_back(leaf_index_[static_cast<size_t>(leaf)]);
            pod.preassigned_cell_types.emplace_back();
          }
          out.pods.push_back(std::move(pod));
        }
        for (int32_t g : victims)
          out.victims.push_back(
              {groups_[static_cast<size_t>(g)].name, groups_[static_cast<size_t>(g)].tag});
        return out;
      }
  }
  ScheduleResult out;
  out.outcome = Outcome::Waiting;
  out.reason = reason;
  return out;
}

ScheduleResult Flat::result_of(int32_t g, Outcome o) const {
  const FlatGroup& grp = groups_[static_cast<size_t>(g)];
  ScheduleResult r;
  r.outcome = o;
  r.cell_chain = shape_.chains[static_cast<size_t>(grp.chain)].name;
  for (size_t i = 0; i < grp.pod_leaves.size(); ++i) {
    PodPlacement pod;
    pod.leaf_cell_number = grp.pod_leaves[i];
    for (int32_t k = grp.pod_offset[i]; k < grp.pod_offset[i + 1]; ++k) {
      int32_t leaf = grp.leaves[static_cast<size_t>(k)];
      if (pod.node < 0) pod.node = cell_node_[static_cast<size_t>(leaf)];
      pod.physical_leaf_cell_indices.push_back(leaf_index_[static_cast<size_t>(leaf)]);
      pod.preassigned_cell_types.emplace_back();
    }
    r.pods.push_back(std::move(pod));
  }
  return r;
}

ScheduleResult Flat::schedule_pod(std::string_view group, int32_t leaf_cell_number) {
  auto it = index_.find(std::string(group));
  if (it == index_.end())
    return rejected("affinity group " + std::string(group) + " is not allocated");
  FlatGroup& grp = groups_[static_cast<size_t>(it->second)];
  int32_t declared = 0;
  for (size_t i = 0; i < grp.pod_leaves.size(); ++i) {
    if (grp.pod_leaves[i] != leaf_cell_number) continue;
    ++declared;
    if (grp.pod_handed[i]) continue;
    grp.pod_handed[i] = 1;
    ScheduleResult all = result_of(it->second, Outcome::Bound);
    ScheduleResult r;
    r.outcome = Outcome::Bound;
    r.cell_chain = all.cell_chain;
    r.pods.push_back(all.pods[i]);
    return r;
  }
  return rejected("Requesting more pods than the configured number for " +
                  std::to_string(leaf_cell_number) + " leaf cells (" + std::to_string(declared) +
                  " pods) in affinity group " + grp.name);
}

bool Flat::release(std::string_view group) {
  auto it = index_.find(std::string(group));
  if (it == index_.end()) return false;
  int32_t g = it->second;
  FlatGroup& grp = groups_[static_cast<size_t>(g)];
  for (int32_t leaf : grp.leaves) free_leaf(leaf);
  if (grp.priority >= kMinGuaranteedPriority)
    quota_used_[static_cast<size_t>(grp.vc)][static_cast<size_t>(grp.leaf_type)] -=
        static_cast<int64_t>(grp.leaves.size());
  index_.erase(it);
  grp = FlatGroup();
  free_slots_.push_back(g);
  ++epoch_;
  return true;
}

void Flat::set_node_health(int32_t node, bool healthy) {
  if (node < 0 || static_cast<size_t>(node) >= bad_node_.size()) return;
  if (healthy == !bad_node_[static_cast<size_t>(node)]) return;
  bad_node_[static_cast<size_t>(node)] = healthy ? 0 : 1;
  for (int32_t sid : node_slots_[static_cast<size_t>(node)]) touch(sid);
  ++epoch_;
}

UsageSummary Flat::usage() const {
  UsageSummary u;
  for (size_t i = 0; i < prio_.size(); ++i) {
    if (level_[i] != 1) continue;
    if (prio_[i] != kFreePriority) ++u.used_leaf_cells;
    if (prio_[i] == kOpportunisticPriority) ++u.opportunistic_leaf_cells;
    if (cell_node_[i] >= 0 && bad_node_[static_cast<size_t>(cell_node_[i])]) ++u.bad_leaf_cells;
  }
  return u;
}

std::string Flat::check_invariants() const {
  std::vector<int32_t> seen(owner_.size(), -1);
  std::vector<std::vector<int64_t>> used(shape_.vcs.size(),
                                         std::vector<int64_t>(shape_.leaf_types.size(), 0));
  for (size_t g = 0; g < groups_.size(); ++g) {
    const FlatGroup& grp = groups_[g];
    if (!grp.alive) continue;
    for (int32_t leaf : grp.leaves) {
      if (seen[static_cast<size_t>(leaf)] >= 0)
        return "leaf " + std::to_string(leaf) + " is given twice";
      seen[static_cast<size_t>(leaf)] = static_cast<int32_t>(g);
      if (owner_[static_cast<size_t>(leaf)] != static_cast<int32_t>(g))
        return "leaf owner is stale";
      if (prio_[static_cast<size_t>(leaf)] != grp.priority) return "leaf priority is stale";
    }
    if (grp.priority >= kMinGuaranteedPriority)
      used[static_cast<size_t>(grp.vc)][static_cast<size_t>(grp.leaf_type)] +=
          static_cast<int64_t>(grp.leaves.size());
    if (kind_ == Baseline::Private && grp.leaves.size() > 0) {
      const FlatView& v = views_[static_cast<size_t>(
          slots_[static_cast<size_t>(leaf_slot_[static_cast<size_t>(grp.leaves[0])])].view)];
      for (int32_t leaf : grp.leaves)
        if (views_[static_cast<size_t>(
                       slots_[static_cast<size_t>(leaf_slot_[static_cast<size_t>(leaf)])].view)]
                    .vc != v.vc ||
            v.vc != grp.vc)
          return "group " + grp.name + " left its private cells";
    }
  }
  for (size_t i = 0; i < owner_.size(); ++i)
    if (owner_[i] >= 0 && seen[i] != owner_[i])
      return "leaf " + std::to_string(i) + " is owned by a group that does not list it";
  if (used != quota_used_) return "quota usage counters are off";
  if (kind_ == Baseline::Quota)
    for (size_t v = 0; v < used.size(); ++v)
      for (size_t t = 0; t < used[v].size(); ++t)
        if (used[v][t] > quota_[v][t]) return "VC " + shape_.vcs[v].name + " is over its quota";
  for (size_t sid = 0; sid < slots_.size(); ++sid) {
    const Slot& s = slots_[sid];
    int32_t n = 0;
    for (int32_t leaf : s.leaves) n += prio_[static_cast<size_t>(leaf)] != kFreePriority;
    if (n != s.used) return "slot usage is off";
    const FlatView& v = views_[static_cast<size_t>(s.view)];
    bool healthy = s.node < 0 || !bad_node_[static_cast<size_t>(s.node)];
    int32_t expect =
        healthy ? bucket_used(v.layout, v.slot_class[static_cast<size_t>(s.pos)], s.used) : -1;
    if (v.index.bucket_of(s.pos) != expect) return "slot index is stale";
  }
  return {};
}

}  // namespace

util::Result<std::unique_ptr<Policy>> make_baseline_policy(Baseline kind,
                                                           const config::HivedModel& model) {
  std::string error;
  auto p = std::make_unique<Flat>(kind, model, error);
  if (!error.empty()) return util::Error{error, {}};
  return std::unique_ptr<Policy>(std::move(p));
}

}  // namespace pai::scheduler
