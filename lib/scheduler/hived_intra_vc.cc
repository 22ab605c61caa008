// Intra-VC scheduling (HiveD's intra_vc_scheduler.go): which view a request is
// placed in (its VC's chain, a pinned cell, or the physical cluster when opportunistic).

#include <algorithm>
#include <string>
#include <vector>

#include "scheduler/hived_algorithm.h"

namespace pai::scheduler::hived_detail {

bool Hived::schedule_in_chain(const Request& req, int32_t chain, Placement& out, WaitWhy& why) {
  out.clear();
  out.chain = chain;
  if (req.priority >= kMinGuaranteedPriority) return schedule_guaranteed(req, chain, out, why);
  return schedule_opportunistic(req, chain, out, why);
}

bool Hived::schedule_guaranteed(const Request& req, int32_t chain, Placement& out, WaitWhy& why) {
  int32_t view = req.pinned >= 0
                     ? pinned_[static_cast<size_t>(req.pinned)].view
                     : vc_chain_view_[static_cast<size_t>(req.vc) * static_cast<size_t>(nchain_) +
                                      static_cast<size_t>(chain)];
  if (view < 0) {
    why.set(WaitWhy::Kind::ViewNoCells, req, chain);
    return false;
  }
  if (!topology_schedule(view, req.pods, req.priority, out.vleaves)) {
    why.set(WaitWhy::Kind::Capacity, req, chain);
    return false;
  }
  out.lazy = try_lazy_preempt(out.vleaves);
  if (map_to_physical(chain, out.vleaves, out.pleaves)) {
    // Lazy preemption can release cells and so bind doomed bad cells to the very
    // virtual cells just picked; such a placement would run on a bad node.
    bool bad = false;
    for (int32_t p : out.pleaves) bad |= !P(p).healthy;
    if (!bad) return true;
  }
  for (const auto& [g, vleaves] : out.lazy) revert_lazy_preempt(g, vleaves);
  out.lazy.clear();
  why.set(WaitWhy::Kind::BadNode, req, chain);
  return false;
}

bool Hived::schedule_opportunistic(const Request& req, int32_t chain, Placement& out,
                                   WaitWhy& why) {
  int32_t view = chain_opp_view_[static_cast<size_t>(chain)];
  if (!topology_schedule(view, req.pods, kOpportunisticPriority, out.pleaves)) {
    why.set(WaitWhy::Kind::Capacity, req, chain, true);
    return false;
  }
  return true;
}

// The text of a wait, in HiveD's words, with where it was placed last.
void Hived::wait_reason(const WaitWhy& why, std::string& out) const {
  out.clear();
  if (why.kind == WaitWhy::Kind::None) return;
  const std::string& vc = shape_.vcs[static_cast<size_t>(why.vc)].name;
  if (why.kind == WaitWhy::Kind::VcNoCells) {
    out = "VC " + vc + " has no cells";
    return;
  }
  if (why.kind == WaitWhy::Kind::Capacity && why.physical) {
    out = "insufficient capacity when scheduling in the physical cluster (chain " +
          shape_.chains[static_cast<size_t>(why.chain)].name + ")";
    return;
  }
  const std::string where = why.pinned >= 0
                                ? "pinned cell " + pinned_[static_cast<size_t>(why.pinned)].id
                                : "chain " + shape_.chains[static_cast<size_t>(why.chain)].name;
  switch (why.kind) {
    case WaitWhy::Kind::ViewNoCells:
      out = "VC " + vc + " has no cells in " + where;
      break;
    case WaitWhy::Kind::Capacity:
      out = "insufficient capacity when scheduling in VC " + vc + " (" + where + ")";
      break;
    default:
      out = "mapping the virtual placement would need at least one bad node (" + where + ")";
      break;
  }
}

}  // namespace pai::scheduler::hived_detail
