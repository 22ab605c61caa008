// Topology-aware placement (HiveD's topology_aware_scheduler.go): the cluster views
// and the choice of nodes and leaf cells for a group's pods.

#include <algorithm>
#include <string>
#include <vector>

#include "scheduler/hived_algorithm.h"

namespace pai::scheduler::hived_detail {

int32_t Hived::make_view(bool is_virtual, int32_t vc, std::vector<int32_t> nodes) {
  View view;
  view.is_virtual = is_virtual;
  view.vc = vc;
  view.nodes = std::move(nodes);
  std::vector<int32_t> totals;
  for (int32_t cell : view.nodes) {
    view.leaf_begin.push_back(static_cast<int32_t>(view.leaves.size()));
    // DFS for the leaves, in child order.
    std::vector<int32_t> stack{cell};
    while (!stack.empty()) {
      int32_t c = stack.back();
      stack.pop_back();
      auto kids = is_virtual ? vchildren(c) : pchildren(c);
      int32_t level = is_virtual ? V(c).level : P(c).level;
      if (level == 1) {
        view.leaves.push_back(c);
        continue;
      }
      for (size_t k = kids.size(); k-- > 0;) stack.push_back(kids[k]);
    }
    int32_t total = static_cast<int32_t>(view.leaves.size()) - view.leaf_begin.back();
    if (std::find(totals.begin(), totals.end(), total) == totals.end()) totals.push_back(total);
  }
  view.leaf_begin.push_back(static_cast<int32_t>(view.leaves.size()));
  std::sort(totals.begin(), totals.end());
  view.layout = is_virtual ? layout_most_used_first(totals) : layout_opportunistic(totals);
  for (size_t i = 0; i < view.nodes.size(); ++i)
    view.node_class.push_back(view.layout.class_of(view.leaf_begin[i + 1] - view.leaf_begin[i]));
  view.index.init(static_cast<int32_t>(view.nodes.size()), view.layout.bucket_free,
                  view.layout.groups, hived_order_);
  if (is_virtual) view.prio_counts.assign(view.nodes.size(), {});
  int32_t id = static_cast<int32_t>(views_.size());
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    if (is_virtual) {
      V(view.nodes[i]).view = id;
      V(view.nodes[i]).view_pos = static_cast<int32_t>(i);
    } else {
      P(view.nodes[i]).view_pos = static_cast<int32_t>(i);
    }
  }
  // Every node starts healthy and unused.
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    int32_t cls = view.node_class[i];
    view.index.set(static_cast<int32_t>(i), is_virtual
                                                ? bucket_used(view.layout, cls, 0)
                                                : bucket_opportunistic(view.layout, cls, 0, 0));
  }
  views_.push_back(std::move(view));
  return id;
}

void Hived::build_views() {
  chain_opp_view_.assign(static_cast<size_t>(nchain_), -1);
  for (int32_t c = 0; c < nchain_; ++c) {
    std::vector<int32_t> nodes;
    for (int32_t l = 1; l <= chain_top_[static_cast<size_t>(c)]; ++l)
      for (int32_t cell : level_cells_[cl(c, l)])
        if (P(cell).is_node) nodes.push_back(cell);
    std::sort(nodes.begin(), nodes.end());
    chain_opp_view_[static_cast<size_t>(c)] = make_view(false, -1, std::move(nodes));
  }
  // A VC's view of a chain: its node-level virtual cells, and its preassigned
  // cells that are below node level (each is a "node" of its own).
  std::vector<std::vector<int32_t>> vc_chain_nodes(static_cast<size_t>(nvc_) *
                                                   static_cast<size_t>(nchain_));
  std::vector<std::vector<int32_t>> pinned_nodes(pinned_.size());
  for (size_t i = 0; i < vcells_.size(); ++i) {
    const VCell& v = vcells_[i];
    int32_t node_level = shape_.chains[static_cast<size_t>(v.chain)].node_level;
    bool is_view_node = v.level == node_level || (v.parent < 0 && v.level < node_level);
    if (!is_view_node) continue;
    if (v.pinned >= 0)
      pinned_nodes[static_cast<size_t>(v.pinned)].push_back(static_cast<int32_t>(i));
    else
      vc_chain_nodes[static_cast<size_t>(v.vc) * static_cast<size_t>(nchain_) +
                     static_cast<size_t>(v.chain)]
          .push_back(static_cast<int32_t>(i));
  }
  // newClusterView: the node-level cells, then the top cells below node level,
  // higher levels first; within a level, as the VC's cells are listed.
  auto hived_view_order = [&](std::vector<int32_t>& nodes) {
    if (hived_order_)
      std::stable_sort(nodes.begin(), nodes.end(),
                       [&](int32_t a, int32_t b) { return V(a).level > V(b).level; });
  };
  for (auto& nodes : pinned_nodes) hived_view_order(nodes);
  for (int32_t vc = 0; vc < nvc_; ++vc)
    for (int32_t c = 0; c < nchain_; ++c) {
      auto& nodes = vc_chain_nodes[static_cast<size_t>(vc) * static_cast<size_t>(nchain_) +
                                   static_cast<size_t>(c)];
      if (nodes.empty()) continue;
      hived_view_order(nodes);
      vc_chain_view_[static_cast<size_t>(vc) * static_cast<size_t>(nchain_) +
                     static_cast<size_t>(c)] = make_view(true, vc, std::move(nodes));
    }
  for (size_t i = 0; i < pinned_.size(); ++i)
    pinned_[i].view = make_view(true, pinned_[i].vc, std::move(pinned_nodes[i]));
}

// topologyAwareScheduler.Schedule: first without preemption, then at the request's priority.
bool Hived::topology_schedule(int32_t view_id, const std::vector<int32_t>& pods, int32_t priority,
                              std::vector<int32_t>& leaves) {
  View& view = views_[static_cast<size_t>(view_id)];
  update_view_suggested(view);  // updateClusterView
  view.index.sort();            // findNodesForPods: sort.Stable of the view HiveD keeps
  ScratchPool::Lease nodes_lease(scratch_);
  std::vector<int32_t>& nodes = *nodes_lease;
  int32_t used_priority = kOpportunisticPriority;
  bool ok = view.index.first_fit(pods, nodes);
  if (!ok && priority > kOpportunisticPriority && view.is_virtual) {
    // Preemption inside the VC pays only when the VC runs something of lower priority.
    const auto& used = vc_prio_used_[static_cast<size_t>(view.vc)];
    if (!used.empty() && used.begin()->first < priority) {
      used_priority = priority;
      auto free_at = [&](int32_t pos) {
        int32_t total = view.leaf_begin[static_cast<size_t>(pos) + 1] -
                        view.leaf_begin[static_cast<size_t>(pos)];
        for (const auto& [p, n] : view.prio_counts[static_cast<size_t>(pos)])
          if (p >= priority) total -= n;
        return total;
      };
      ok = view.index.first_fit_with(pods, free_at, nodes);
    }
  }
  if (!ok) return false;  // "insufficient capacity"
  leaves.clear();
  for (size_t i = 0; i < pods.size(); ++i)
    pick_leaves(view, nodes[i], pods[i], used_priority, leaves);
  for (int32_t c : taken_list_) (view.is_virtual ? taken_v_ : taken_p_)[static_cast<size_t>(c)] = 0;
  taken_list_.clear();
  return true;
}

bool Hived::view_node_suggested(const View& view, int32_t pos) const {
  if (!sugg_filter_) return true;
  const int32_t cell = view.nodes[static_cast<size_t>(pos)];
  // A virtual node not bound to a physical one counts as suggested.
  const int32_t p = view.is_virtual ? V(cell).pcell : cell;
  if (p < 0) return true;
  return node_sugg_[static_cast<size_t>(P(p).node)] == sugg_stamp_;
}

// updateClusterView marks every node of the view suggested or not for this
// request; the marks stay until the view's next update, and the sort that
// follows moves the nodes whose mark changed (HiveD's persistent order).
void Hived::update_view_suggested(View& view) {
  if (!sugg_filter_) {
    for (int32_t pos : view.not_suggested) view.index.set_suggested(pos, true);
    view.not_suggested.clear();
    return;
  }
  view.not_suggested.clear();
  const int32_t n = static_cast<int32_t>(view.nodes.size());
  for (int32_t pos = 0; pos < n; ++pos) {
    const bool s = view_node_suggested(view, pos);
    view.index.set_suggested(pos, s);
    if (!s) view.not_suggested.push_back(pos);
  }
}

// findLeafCellsInNode (see pick_lowest_ancestor).
void Hived::pick_leaves(const View& view, int32_t pos, int32_t k, int32_t priority,
                        std::vector<int32_t>& out) {
  const bool virt = view.is_virtual;
  auto& taken = virt ? taken_v_ : taken_p_;
  const int32_t b = view.leaf_begin[static_cast<size_t>(pos)],
                e = view.leaf_begin[static_cast<size_t>(pos) + 1];
  std::span<const int32_t> leaves(view.leaves.data() + b, static_cast<size_t>(e - b));
  auto prio = [&](int32_t c) { return virt ? V(c).priority : P(c).priority; };
  if (k == 1) {
    // One leaf: the lowest ancestor is the leaf itself, and the best-ranked
    // available leaf is the first free one, else the first preemptible one.
    int32_t pick = -1;
    for (int32_t c : leaves)
      if (!taken[static_cast<size_t>(c)] && prio(c) == kFreePriority) {
        pick = c;
        break;
      }
    if (pick < 0)
      for (int32_t c : leaves) {
        const int32_t pr = prio(c);
        if (!taken[static_cast<size_t>(c)] && pr != kFreePriority && pr < priority) {
          pick = c;
          break;
        }
      }
    if (pick >= 0) {
      out.push_back(pick);
      taken[static_cast<size_t>(pick)] = 1;
      taken_list_.push_back(pick);
    }
    return;
  }
  ScratchPool::Lease rank_lease(scratch_);
  std::vector<int32_t>& rank = *rank_lease;
  rank.assign(leaves.size(), -1);
  int32_t next = 0;
  for (size_t i = 0; i < leaves.size(); ++i) {
    int32_t c = leaves[i];
    if (!taken[static_cast<size_t>(c)] && (virt ? V(c).priority : P(c).priority) == kFreePriority)
      rank[i] = next++;
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    int32_t c = leaves[i];
    int32_t pr = virt ? V(c).priority : P(c).priority;
    if (!taken[static_cast<size_t>(c)] && pr != kFreePriority && pr < priority) rank[i] = next++;
  }
  if (static_cast<size_t>(next) == leaves.size() && static_cast<size_t>(k) == leaves.size()) {
    // Every leaf of the node, all available: the node is the lowest ancestor,
    // and the leaves go in rank order (the free ones, then the preemptible ones).
    for (int32_t r = 0; r < next; ++r)
      for (size_t i = 0; i < leaves.size(); ++i)
        if (rank[i] == r) {
          out.push_back(leaves[i]);
          taken[static_cast<size_t>(leaves[i])] = 1;
          taken_list_.push_back(leaves[i]);
          break;
        }
    return;
  }
  int32_t node_cell = view.nodes[static_cast<size_t>(pos)];
  int32_t node_level = virt ? V(node_cell).level : P(node_cell).level;
  size_t before = out.size();
  auto parent_of = [&](int32_t c) { return virt ? V(c).parent : P(c).parent; };
  pick_lowest_ancestor(leaves, rank, k, node_level, parent_of, out);
  for (size_t i = before; i < out.size(); ++i) {
    taken[static_cast<size_t>(out[i])] = 1;
    taken_list_.push_back(out[i]);
  }
}

}  // namespace pai::scheduler::hived_detail
