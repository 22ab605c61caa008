// Preemption: victims, the preempting group's life cycle (HiveD's Reserving and
// Reserved cell states) and lazy preemption.

#include <algorithm>
#include <string>
#include <vector>

#include "scheduler/hived_algorithm.h"

namespace pai::scheduler::hived_detail {

std::vector<std::pair<int32_t, std::vector<int32_t>>> Hived::try_lazy_preempt(
    const std::vector<int32_t>& vleaves) {
  std::vector<std::pair<int32_t, std::vector<int32_t>>> done;
  for (int32_t v : vleaves) {
    int32_t p = V(v).pcell;
    if (p < 0 || P(p).state != CellState::Used) continue;
    int32_t g = P(p).using_group;
    if (g < 0 || !G(g).lazy_enable || G(g).lazy_preempted) continue;
    done.push_back({g, G(g).vleaves});
    lazy_preempt(g);
  }
  return done;
}

// lazyPreemptAffinityGroup: the group leaves its VC and keeps running as opportunistic.
void Hived::lazy_preempt(int32_t g) {
  Group& grp = G(g);
  for (size_t i = 0; i < grp.vleaves.size(); ++i) {
    int32_t p = grp.pleaves[i];
    if (grp.vleaves[i] < 0 || P(p).state != CellState::Used || P(p).using_group != g) continue;
    release_leaf(p, grp.vc);
    allocate_leaf(p, -1, kOpportunisticPriority);
  }
  grp.vleaves.clear();
  grp.lazy_preempted = true;
  ++epoch_;
}

void Hived::revert_lazy_preempt(int32_t g, const std::vector<int32_t>& vleaves) {
  Group& grp = G(g);
  std::vector<int32_t> pacs;
  std::vector<int32_t> bound = vleaves;
  for (size_t i = 0; i < grp.pleaves.size() && i < bound.size(); ++i) {
    int32_t p = grp.pleaves[i];
    if (P(p).state != CellState::Used || P(p).using_group != g) continue;
    release_leaf(p, grp.vc);
    pacs.push_back(assign_leaf(p, bound[i], grp.priority, true));
  }
  finish_allocation(pacs);
  grp.vleaves = std::move(bound);
  grp.lazy_preempted = false;
}

void Hived::collect_victims(const std::vector<int32_t>& pleaves, std::vector<int32_t>& victims,
                            std::vector<int32_t>& preemptors) const {
  for (int32_t p : pleaves) {
    const PCell& c = P(p);
    if ((c.state == CellState::Used || c.state == CellState::Reserving) && c.using_group >= 0 &&
        std::find(victims.begin(), victims.end(), c.using_group) == victims.end())
      victims.push_back(c.using_group);
    if ((c.state == CellState::Reserving || c.state == CellState::Reserved) &&
        c.reserving_group >= 0 &&
        std::find(preemptors.begin(), preemptors.end(), c.reserving_group) == preemptors.end())
      preemptors.push_back(c.reserving_group);
  }
}

// deletePreemptingAffinityGroup: the cells go back to the groups being preempted.
void Hived::delete_preempting(int32_t g) {
  Group& grp = G(g);
  std::vector<int32_t> pacs;
  for (int32_t p : grp.pleaves) {
    release_leaf(p, grp.vc);
    P(p).reserving_group = -1;
    if (P(p).state == CellState::Reserving) {
      P(p).state = CellState::Used;
      int32_t bg = P(p).using_group;
      int32_t no_virtual = -1;
      int32_t* bv = &no_virtual;
      if (bg >= 0 && !G(bg).vleaves.empty()) {
        const auto& pl = G(bg).pleaves;
        auto it = std::find(pl.begin(), pl.end(), p);
        if (it != pl.end()) bv = &G(bg).vleaves[static_cast<size_t>(it - pl.begin())];
      }
      if (bg >= 0) {
        const int32_t pac = assign_leaf(p, *bv, G(bg).priority, true);
        if (allocate_now()) {
          finish_allocation({pac});
        } else {
          pacs.push_back(pac);
        }
      }
    } else {
      P(p).state = CellState::Free;
    }
  }
  finish_allocation(pacs);
  free_group(g);
  ++epoch_;
}

void Hived::allocate_preempting(int32_t g) {
  for (int32_t p : G(g).pleaves) {
    P(p).reserving_group = -1;
    P(p).using_group = g;
    P(p).state = CellState::Used;
  }
  G(g).state = GroupState::Allocated;
}

}  // namespace pai::scheduler::hived_detail
