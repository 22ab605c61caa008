// Intra-VC scheduling (HiveD's intra_vc_scheduler.go): which view a request is
// placed in (its VC's chain, a pinned cell, or the physical cluster when opportunistic).

#include <algorithm>
#include <string>
#include <vector>

#include "scheduler/hived_algorithm.h"

namespace pai::scheduler::hived_detail {

bool Hived::schedule_in_chain(const Request& req, int32_t chain, Placement& out,
                              std::string& reason) {
  out.clear();
  out.chain = chain;
  if (req.priority >= kMinGuaranteedPriority) return schedule_guaranteed(req, chain, out, reason);
  return schedule_opportunistic(req, chain, out, reason);
}

bool Hived::schedule_guaranteed(const Request& req, int32_t chain, Placement& out,
                                std::string& reason) {
  int32_t view = req.pinned >= 0
                     ? pinned_[static_cast<size_t>(req.pinned)].view
                     : vc_chain_view_[static_cast<size_t>(req.vc) * static_cast<size_t>(nchain_) +
                                      static_cast<size_t>(chain)];
  // Where the request was placed, for the reasons of a failure only.
  auto where = [&] {
    return req.pinned >= 0 ? "pinned cell " + pinned_[static_cast<size_t>(req.pinned)].id
                           : "chain " + shape_.chains[static_cast<size_t>(chain)].name;
  };
  if (view < 0) {
    reason = "VC " + shape_.vcs[static_cast<size_t>(req.vc)].name + " has no cells in " + where();
    return false;
  }
  if (!topology_schedule(view, req.pods, req.priority, out.vleaves, reason)) {
    reason += " when scheduling in VC " + shape_.vcs[static_cast<size_t>(req.vc)].name + " (" +
              where() + ")";
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
  reason = "mapping the virtual placement would need at least one bad node (" + where() + ")";
  return false;
}

bool Hived::schedule_opportunistic(const Request& req, int32_t chain, Placement& out,
                                   std::string& reason) {
  int32_t view = chain_opp_view_[static_cast<size_t>(chain)];
  if (!topology_schedule(view, req.pods, kOpportunisticPriority, out.pleaves, reason)) {
    reason += " when scheduling in the physical cluster (chain " +
              shape_.chains[static_cast<size_t>(chain)].name + ")";
    return false;
  }
  return true;
}

}  // namespace pai::scheduler::hived_detail
