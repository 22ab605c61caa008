// Restoring running groups from their bind info, as HiveD does when it starts
// (createAllocatedAffinityGroup, findAllocatedLeafCell, mapPhysicalCellToVirtual).
// The rules are listed in scheduler/hived_state.h.

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/hived_algorithm.h"

namespace pai::scheduler::hived_detail {

// The priority HiveD keeps on a virtual cell: the highest of its leaves.
int32_t Hived::vcell_priority(int32_t v) const {
  if (V(v).used == 0) return kFreePriority;
  if (V(v).level == 1) return V(v).priority;
  int32_t best = kFreePriority;
  for (int32_t ch : vchildren(v)) best = std::max(best, vcell_priority(ch));
  return best;
}

// getLowestPriorityVirtualCell: a free unbound cell, else the one with the
// lowest priority below `priority` (whose groups are then preempted).
int32_t Hived::lowest_priority_vcell(std::span<const int32_t> cells, int32_t priority) const {
  int32_t best = -1;
  int32_t lowest = kMaxGuaranteedPriority;
  for (int32_t c : cells) {
    int32_t p = vcell_priority(c);
    if (p == kFreePriority) {
      if (V(c).pcell < 0) return c;
      continue;  // bound only as a doomed bad cell: cannot be taken
    }
    if (p < priority && p < lowest) {
      lowest = p;
      best = c;
    }
  }
  return best;
}

util::Result<int32_t> Hived::map_physical_to_virtual(int32_t c, int32_t vc, int32_t level,
                                                     int32_t priority, int32_t pinned) const {
  if (int32_t b = P(c).vcell; b >= 0) {
    if (V(b).vc != vc)
      return util::Error{"its cell is bound to VC " + shape_.vcs[static_cast<size_t>(V(b).vc)].name,
                         {}};
    return b;
  }
  if (P(c).level == level) {
    int32_t v = -1;
    if (pinned >= 0) {
      int32_t root = pinned_[static_cast<size_t>(pinned)].vroot;
      if (V(root).level == level)
        v = lowest_priority_vcell(std::span<const int32_t>(&root, 1), priority);
    } else {
      const auto& list = vc_preassigned_[vcl(vc, P(c).chain, level)];
      v = lowest_priority_vcell(list, priority);
    }
    if (v < 0)
      return util::Error{"insufficient free cell in the VC at the preassigned level (" +
                             std::to_string(level) + ")",
                         {}};
    return v;
  }
  if (P(c).parent < 0)
    return util::Error{
        "physical and virtual cell hierarchies not match (cannot reach the preassigned level " +
            std::to_string(level) + " in physical)",
        {}};
  auto pv = map_physical_to_virtual(P(c).parent, vc, level, priority, pinned);
  if (!pv.ok()) return pv;
  int32_t v = lowest_priority_vcell(vchildren(*pv), priority);
  if (v < 0) return util::Error{"no free virtual cell left in " + std::to_string(*pv), {}};
  return v;
}

// The groups holding leaves of a virtual cell.
std::vector<int32_t> Hived::groups_in_vcell(int32_t v) const {
  std::vector<int32_t> out;
  std::vector<int32_t> stack{v};
  while (!stack.empty()) {
    int32_t c = stack.back();
    stack.pop_back();
    if (V(c).level == 1) {
      int32_t p = V(c).pcell;
      if (p >= 0 && V(c).used > 0 && P(p).using_group >= 0 &&
          std::find(out.begin(), out.end(), P(p).using_group) == out.end())
        out.push_back(P(p).using_group);
      continue;
    }
    for (int32_t ch : vchildren(c)) stack.push_back(ch);
  }
  return out;
}

RestoredGroup Hived::restore_group(const LiveGroup& in,
                                   const std::unordered_map<std::string, int32_t>& node_index,
                                   std::vector<RestoredGroup>& done,
                                   std::unordered_map<std::string, size_t>& done_index) {
  RestoredGroup res;
  res.name = in.name;
  if (find_group(in.name) >= 0) {
    res.outcome = RestoreOutcome::Ignored;
    res.reason = "a group of that name is already allocated";
    return res;
  }
  const int32_t vc = shape_.find_vc(in.vc);
  const int32_t want_chain = in.chain.empty() ? -1 : shape_.find_chain(in.chain);

  // findPhysicalLeafCell: in the group's chain first, then in any other.
  auto find_leaf = [&](const std::string& node, int32_t index, int32_t chain) -> int32_t {
    auto it = node_index.find(node);
    if (it == node_index.end()) return -1;
    int32_t other = -1;
    for (int32_t c : shape_.nodes[static_cast<size_t>(it->second)].leaf_cells) {
      if (P(c).leaf_index != index) continue;
      if (chain < 0 || P(c).chain == chain) return c;
      if (other < 0) other = c;
    }
    return other;
  };

  struct Leaf {
    int32_t cell;
    std::string type;
  };
  std::vector<std::vector<Leaf>> pods;
  int32_t chain = want_chain;
  bool types_known = true;
  for (const auto& pod : in.pods) {
    std::vector<Leaf> leaves;
    for (size_t i = 0; i < pod.leaf_indices.size(); ++i) {
      int32_t c = find_leaf(pod.node, pod.leaf_indices[i], chain);
      std::string name = pod.node + ":" + std::to_string(pod.leaf_indices[i]);
      if (c < 0) {
        res.ignored_leaves.push_back(name);
        continue;
      }
      if (P(c).using_group >= 0 || P(c).reserving_group >= 0 || P(c).state != CellState::Free) {
        // Two groups on one GPU: HiveD logs it and corrupts its state; the
        // second one is not counted here.
        res.ignored_leaves.push_back(name);
        continue;
      }
      if (chain < 0) chain = P(c).chain;
      if (i >= pod.preassigned_cell_types.size()) types_known = false;
      leaves.push_back({c, i < pod.preassigned_cell_types.size() ? pod.preassigned_cell_types[i]
                                                                 : std::string()});
    }
    if (!leaves.empty()) pods.push_back(std::move(leaves));
  }
  if (pods.empty()) {
    res.outcome = RestoreOutcome::Ignored;
    res.reason = "none of its leaf cells is in the configuration";
    return res;
  }
  std::stable_sort(pods.begin(), pods.end(),
                   [](const auto& a, const auto& b) { return a.size() < b.size(); });

  // The group, as create_group makes it.
  const int32_t g = new_group_slot();
  {
    Group& grp = G(g);
    grp.alive = true;
    grp.name = in.name;
    grp.vc = vc;
    grp.priority = in.priority;
    grp.lazy_enable = in.lazy_preemption_enable;
    grp.state = GroupState::Allocated;
    grp.chain = chain >= 0 ? chain : P(pods[0][0].cell).chain;
    grp.pod_offset.push_back(0);
    for (const auto& pod : pods) {
      grp.pod_leaves.push_back(static_cast<int32_t>(pod.size()));
      grp.pod_offset.push_back(grp.pod_offset.back() + static_cast<int32_t>(pod.size()));
    }
    grp.pod_handed.assign(pods.size(), 1);
  }
  if (index_live_) group_index_[in.name] = g;

  const bool opportunistic = in.priority < kMinGuaranteedPriority || in.lazy_preempted || vc < 0;
  bool lazy = false;
  bool virtual_placement = !opportunistic;
  std::string reason;
  if (vc < 0 && !(in.priority < kMinGuaranteedPriority || in.lazy_preempted)) {
    lazy = true;
    reason = "VC " + in.vc + " not found";
  }
  if (!opportunistic && !types_known) {
    lazy = true;
    reason = "preassigned cell not found in pod bind info";
  }
  int32_t pinned = -1;
  if (!opportunistic && !in.pinned_cell_id.empty()) {
    for (size_t i = 0; i < pinned_.size(); ++i)
      if (pinned_[i].vc == vc && pinned_[i].id == in.pinned_cell_id)
        pinned = static_cast<int32_t>(i);
    if (pinned < 0) {
      lazy = true;
      reason = "VC " + in.vc + " has no cell for " + in.pinned_cell_id;
    }
  }
  // Broken safety is expected here (a configuration that no longer fits the
  // groups); it makes the group lazily preempted, not the state inconsistent.
  const int64_t violations = safety_violations_;

  for (const auto& pod : pods) {
    for (const Leaf& leaf : pod) {
      const int32_t p = leaf.cell;
      int32_t v = -1;
      if (virtual_placement && !lazy) {
        if (leaf.type.empty()) {
          virtual_placement = false;  // an opportunistic pod: the group has no virtual placement
        } else {
          const auto& ch = shape_.chains[static_cast<size_t>(P(p).chain)];
          int32_t level = -1;
          for (size_t l = 1; l < ch.level_type.size(); ++l)
            if (ch.level_type[l] == leaf.type) level = static_cast<int32_t>(l);
          if (level < 0) {
            reason = "preassigned cell type " + leaf.type + " not found in chain " + ch.name;
          } else if (pinned < 0 &&
                     !vc_has_chain_[static_cast<size_t>(vc) * static_cast<size_t>(nchain_) +
                                    static_cast<size_t>(P(p).chain)]) {
            reason = "VC " + in.vc + " has no cell for " + ch.name;
          } else {
            auto mapped = map_physical_to_virtual(p, vc, level, in.priority, pinned);
            if (mapped.ok())
              v = *mapped;
            else
              reason = mapped.error().message;
          }
          if (v < 0) {
            lazy = true;
          } else {
            // The virtual cell is held by other groups elsewhere (the cell
            // moved, or the VC shrank): HiveD lazily preempts them.
            std::vector<int32_t> victims;
            int32_t pac = V(v).preassigned;
            if (in_free_cell_list(p) && vcell_priority(pac) > kFreePriority)
              victims = groups_in_vcell(pac);
            else if (V(v).pcell >= 0 && V(v).pcell != p)
              victims = groups_in_vcell(v);
            for (int32_t vg : victims) {
              if (vg == g || G(vg).lazy_preempted) continue;
              lazy_preempt(vg);
              res.preempted.push_back(G(vg).name);
              if (auto it = done_index.find(G(vg).name); it != done_index.end()) {
                RestoredGroup& d = done[it->second];
                d.outcome = RestoreOutcome::LazyPreempted;
                d.reason = "its virtual cell was taken by " + in.name + " (the cell moved)";
              }
            }
            if (V(v).pcell >= 0 && V(v).pcell != p) {
              // Still bound elsewhere (a doomed bad cell): hold the leaf opportunistically.
              v = -1;
              lazy = true;
              reason = "its virtual cell is bound to a bad cell";
            }
          }
        }
      }
      const bool wanted = v >= 0;
      int32_t pac = assign_leaf(p, v, v >= 0 ? in.priority : kOpportunisticPriority, true);
      if (wanted && v < 0) {
        lazy = true;
        reason = "no virtual cell lines up with its physical cell";
      }
      if (pac >= 0 && !allocate_preassigned(V(pac).pcell, vc, false)) {
        lazy = true;
        reason = "binding it would break the safety of the VCs";
      }
      Group& grp = G(g);
      grp.pleaves.push_back(p);
      grp.vleaves.push_back(v);
      P(p).using_group = g;
      P(p).state = CellState::Used;
    }
  }
  safety_violations_ = violations;
  Group& grp = G(g);
  res.kept_leaves = static_cast<int32_t>(grp.pleaves.size());
  if (opportunistic) {
    grp.vleaves.clear();
    grp.lazy_preempted = in.lazy_preempted || (vc < 0 && in.priority >= kMinGuaranteedPriority);
    res.outcome = in.priority >= kMinGuaranteedPriority && !in.lazy_preempted
                      ? RestoreOutcome::LazyPreempted
                      : RestoreOutcome::Opportunistic;
    if (res.outcome == RestoreOutcome::LazyPreempted) res.reason = reason;
  } else if (lazy) {
    lazy_preempt(g);
    res.outcome = RestoreOutcome::LazyPreempted;
    res.reason = reason;
  } else {
    if (!virtual_placement) grp.vleaves.clear();
    res.outcome = RestoreOutcome::Kept;
  }
  ++epoch_;
  return res;
}

}  // namespace pai::scheduler::hived_detail
