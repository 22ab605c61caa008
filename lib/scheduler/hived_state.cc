// The HiveD policy's state as values (scheduler/hived_state.h): what HiveD's
// inspect API shows, read from the cell trees and the groups.

#include "scheduler/hived_state.h"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/hived_algorithm.h"

namespace pai::scheduler {

std::string_view to_string(CellUse s) {
  switch (s) {
    case CellUse::Free:
      return "Free";
    case CellUse::Used:
      return "Used";
    case CellUse::Reserving:
      return "Reserving";
    case CellUse::Reserved:
      return "Reserved";
  }
  return "Free";
}

std::string_view to_string(GroupPhase s) {
  switch (s) {
    case GroupPhase::Allocated:
      return "Allocated";
    case GroupPhase::Preempting:
      return "Preempting";
    case GroupPhase::BeingPreempted:
      return "BeingPreempted";
  }
  return "Allocated";
}

std::string_view to_string(RestoreOutcome o) {
  switch (o) {
    case RestoreOutcome::Kept:
      return "kept";
    case RestoreOutcome::LazyPreempted:
      return "lazily-preempted";
    case RestoreOutcome::Opportunistic:
      return "opportunistic";
    case RestoreOutcome::Ignored:
      return "ignored";
  }
  return "kept";
}

std::optional<HivedState> snapshot_hived(const Policy& policy) {
  const auto* h = dynamic_cast<const hived_detail::Hived*>(&policy);
  if (!h) return std::nullopt;
  return h->snapshot();
}

std::optional<std::vector<RestoredGroup>> restore_hived_groups(
    Policy& policy, const std::vector<LiveGroup>& groups) {
  auto* h = dynamic_cast<hived_detail::Hived*>(&policy);
  if (!h) return std::nullopt;
  std::unordered_map<std::string, int32_t> nodes;
  const ClusterShape& shape = h->cluster();
  nodes.reserve(shape.nodes.size());
  for (size_t i = 0; i < shape.nodes.size(); ++i)
    nodes.emplace(shape.nodes[i].name, static_cast<int32_t>(i));
  std::vector<RestoredGroup> out;
  out.reserve(groups.size());
  std::unordered_map<std::string, size_t> index;
  for (const LiveGroup& g : groups) {
    RestoredGroup r = h->restore_group(g, nodes, out, index);
    index[r.name] = out.size();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace pai::scheduler

namespace pai::scheduler::hived_detail {

namespace {

CellUse use_of(CellState s) {
  switch (s) {
    case CellState::Free:
      return CellUse::Free;
    case CellState::Used:
      return CellUse::Used;
    case CellState::Reserving:
      return CellUse::Reserving;
    case CellState::Reserved:
      return CellUse::Reserved;
  }
  return CellUse::Free;
}

GroupPhase phase_of(GroupState s) {
  switch (s) {
    case GroupState::Allocated:
      return GroupPhase::Allocated;
    case GroupState::Preempting:
      return GroupPhase::Preempting;
    case GroupState::BeingPreempted:
      return GroupPhase::BeingPreempted;
  }
  return GroupPhase::Allocated;
}

}  // namespace

HivedState Hived::snapshot() const {
  HivedState s;
  const size_t n = pcells_.size();
  s.cells.resize(n);
  // Group slots -> snapshot indices.
  std::vector<int32_t> gidx(groups_.size(), -1);
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (!groups_[g].alive) continue;
    gidx[g] = static_cast<int32_t>(s.groups.size());
    const Group& grp = groups_[g];
    HivedGroup gs;
    gs.name = grp.name;
    gs.vc = grp.vc;
    gs.priority = grp.priority;
    gs.phase = phase_of(grp.state);
    gs.lazy_preempted = grp.lazy_preempted;
    gs.lazy_preemption_enable = grp.lazy_enable;
    gs.chain = grp.chain;
    gs.pod_leaf_numbers = grp.pod_leaves;
    gs.leaves = grp.pleaves;
    gs.vleaves = grp.vleaves;
    s.groups.push_back(std::move(gs));
  }
  // Children come after their parents in the model, so one backward pass folds
  // leaves into their ancestors: priority is the highest below (HiveD's
  // setCellPriority), a cell is Used when a leaf below is, else it is in the
  // state all its children share (setCellState).
  std::vector<std::array<int32_t, 4>> counts(n, {0, 0, 0, 0});
  for (size_t i = n; i-- > 0;) {
    const PCell& p = pcells_[i];
    PhysicalCellState& c = s.cells[i];
    c.healthy = p.healthy;
    c.vcell = p.vcell;
    c.pinned = p.pinned;
    if (p.level == 1) {
      c.state = use_of(p.state);
      c.priority = p.priority;
      int32_t g = p.using_group >= 0 ? p.using_group : p.reserving_group;
      if (g >= 0) {
        c.group = gidx[static_cast<size_t>(g)];
        if (p.priority == kOpportunisticPriority) c.opp_vc = groups_[static_cast<size_t>(g)].vc;
      }
    } else {
      const auto& k = counts[i];
      int32_t total = k[0] + k[1] + k[2] + k[3];
      if (k[1] > 0)
        c.state = CellUse::Used;
      else if (k[2] == total && total > 0)
        c.state = CellUse::Reserving;
      else if (k[3] == total && total > 0)
        c.state = CellUse::Reserved;
      else if (k[2] > 0)
        c.state = CellUse::Reserving;
      else if (k[3] > 0)
        c.state = CellUse::Reserved;
      else
        c.state = CellUse::Free;
    }
    if (p.parent >= 0) {
      PhysicalCellState& par = s.cells[static_cast<size_t>(p.parent)];
      par.priority = std::max(par.priority, c.priority);
      counts[static_cast<size_t>(p.parent)][static_cast<size_t>(c.state)]++;
    }
  }
  // Virtual cells: children after parents too.
  s.vcells.resize(vcells_.size());
  s.vc_roots.assign(static_cast<size_t>(nvc_), {});
  for (size_t i = 0; i < vcells_.size(); ++i) {
    const VCell& v = vcells_[i];
    VirtualCellState& o = s.vcells[i];
    o.vc = v.vc;
    o.chain = v.chain;
    o.level = v.level;
    o.parent = v.parent;
    o.preassigned = v.preassigned;
    o.pcell = v.pcell;
    o.used_leaves = v.used;
    if (v.pinned >= 0) o.pinned_id = pinned_[static_cast<size_t>(v.pinned)].id;
    auto kids = vchildren(static_cast<int32_t>(i));
    o.children.assign(kids.begin(), kids.end());
    if (v.parent < 0) {
      auto& roots = s.vc_roots[static_cast<size_t>(v.vc)];
      o.address = shape_.vcs[static_cast<size_t>(v.vc)].name + "/" + std::to_string(roots.size());
      roots.push_back(static_cast<int32_t>(i));
    }
  }
  for (size_t i = 0; i < vcells_.size(); ++i) {
    const VirtualCellState& par = s.vcells[i];
    if (par.children.empty()) continue;
    // HiveD's virtual addresses: children of a root count from 0, deeper cells
    // from (their parent's last index) * children.
    int64_t offset = 0;
    if (par.parent >= 0) {
      size_t slash = par.address.rfind('/');
      offset =
          std::stoll(par.address.substr(slash + 1)) * static_cast<int64_t>(par.children.size());
    }
    for (size_t k = 0; k < par.children.size(); ++k)
      s.vcells[static_cast<size_t>(par.children[k])].address =
          par.address + "/" + std::to_string(offset + static_cast<int64_t>(k));
  }
  for (size_t i = vcells_.size(); i-- > 0;) {
    const VCell& v = vcells_[i];
    VirtualCellState& o = s.vcells[i];
    if (v.level == 1) o.priority = v.priority;
    if (v.parent >= 0) {
      VirtualCellState& par = s.vcells[static_cast<size_t>(v.parent)];
      par.priority = std::max(par.priority, o.priority);
    }
  }
  s.bad_nodes = bad_node_;
  for (const auto& set : vc_doomed_)
    for (int32_t c : set) s.doomed.push_back(c);
  std::sort(s.doomed.begin(), s.doomed.end());
  return s;
}

}  // namespace pai::scheduler::hived_detail
