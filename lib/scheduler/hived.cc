// The HiveD algorithm's driver (HiveD's hived_algorithm.go): construction, Schedule,
// the affinity groups' life cycle, pod placement and usage.

#include "scheduler/hived.h"

#include <algorithm>
#include <string>
#include <vector>

#include "config/hived_model.h"
#include "scheduler/hived_algorithm.h"

namespace pai::scheduler::hived_detail {

Hived::Hived(const config::HivedModel& m, bool hived_order) : hived_order_(hived_order) {
  shape_ = describe_cluster(m);
  nvc_ = static_cast<int32_t>(m.vcs.size());
  nchain_ = static_cast<int32_t>(m.chains.size());
  build_physical(m);
  vcells_.reserve(pcells_.size());
  vc_chain_view_.assign(static_cast<size_t>(nvc_) * static_cast<size_t>(nchain_), -1);
  vc_has_chain_.assign(static_cast<size_t>(nvc_) * static_cast<size_t>(nchain_), 0);
  vc_preassigned_.assign(static_cast<size_t>(nvc_) * ncl_, {});
  vc_free_.assign(static_cast<size_t>(nvc_) * ncl_, 0);
  vc_doomed_.assign(static_cast<size_t>(nvc_) * ncl_, {});
  vc_prio_used_.assign(static_cast<size_t>(nvc_), {});
  // Virtual clusters, in configuration order.
  for (int32_t vi = 0; vi < nvc_; ++vi) {
    const config::VirtualClusterInfo& vc = m.vcs[static_cast<size_t>(vi)];
    for (const auto& cell : vc.cells) {
      if (cell.chain < 0 || cell.level < 1) continue;
      for (int64_t k = 0; k < cell.count; ++k) {
        int32_t root = build_virtual_tree(vi, cell.chain, cell.level, -1, -1, -1);
        auto& list = vc_preassigned_[vcl(vi, cell.chain, cell.level)];
        V(root).pre_pos = static_cast<int32_t>(list.size());
        list.push_back(root);
        vc_free_[vcl(vi, cell.chain, cell.level)]++;
      }
      vc_has_chain_[static_cast<size_t>(vi) * static_cast<size_t>(nchain_) +
                    static_cast<size_t>(cell.chain)] = 1;
    }
    for (const auto& p : vc.pinned) {
      if (p.cell < 0) continue;
      Pinned pin;
      pin.id = p.id;
      pin.vc = vi;
      pin.pcell = p.cell;
      int32_t idx = static_cast<int32_t>(pinned_.size());
      pinned_.push_back(pin);
      const PCell& pc = P(p.cell);
      pinned_[static_cast<size_t>(idx)].vroot =
          build_virtual_tree(vi, pc.chain, pc.level, -1, -1, idx);
      vc_free_[vcl(vi, pc.chain, pc.level)]++;
    }
  }
  vc_pre_unbound_.assign(vc_preassigned_.size(), IndexSet());
  for (size_t k = 0; k < vc_preassigned_.size(); ++k) {
    const int32_t n = static_cast<int32_t>(vc_preassigned_[k].size());
    vc_pre_unbound_[k].reset(n);
    for (int32_t i = 0; i < n; ++i) vc_pre_unbound_[k].insert(i);
  }
  vertex_of_.assign(vcells_.size(), -1);
  vbind_.assign(vcells_.size(), -1);
  taken_v_.assign(vcells_.size(), 0);
  taken_p_.assign(pcells_.size(), 0);
  ov_removed_.assign(pcells_.size(), 0);
  build_views();
  init_counters();
  // Capacity: HiveD's initCellNums refuses a VC assignment that does not fit.
  for (int32_t c = 0; c < nchain_; ++c)
    for (int32_t l = chain_top_[static_cast<size_t>(c)]; l >= 1; --l)
      if (all_vc_free_[cl(c, l)] > total_left_[cl(c, l)]) {
        setup_error_ = "virtual clusters need " + std::to_string(all_vc_free_[cl(c, l)]) +
                       " cells at level " + std::to_string(l) + " of chain " +
                       shape_.chains[static_cast<size_t>(c)].name + " but only " +
                       std::to_string(total_left_[cl(c, l)]) + " exist";
        return;
      }
  // Pinned cells are bound statically and leave the free lists (initPinnedCells).
  for (size_t i = 0; i < pinned_.size(); ++i) {
    Pinned& pin = pinned_[i];
    allocate_preassigned(pin.pcell, pin.vc, false);
    bind_pair(pin.pcell, pin.vroot);
  }
  for (int32_t c = 0; c < nchain_; ++c)
    for (int32_t l = 1; l <= chain_top_[static_cast<size_t>(c)]; ++l)
      if (total_left_[cl(c, l)] < all_vc_free_[cl(c, l)]) {
        setup_error_ = "the pinned cells and virtual clusters do not fit in chain " +
                       shape_.chains[static_cast<size_t>(c)].name + " at level " +
                       std::to_string(l);
        return;
      }
}

ScheduleResult Hived::schedule(const GroupRequest& r, bool allow_preemption) {
  ScheduleResult res;
  schedule_into(r, allow_preemption, res);
  return res;
}

void Hived::schedule_into(const GroupRequest& r, bool allow_preemption, ScheduleResult& res) {
  res.outcome = Outcome::Waiting;
  res.cell_chain.clear();
  // The pods' buffers wait in spare_pods_ until this call places a group.
  if (!res.pods.empty()) spare_pods_.swap(res.pods);
  res.pods.clear();
  auto fill = [&](int32_t g, Outcome o) {
    if (res.pods.empty()) res.pods.swap(spare_pods_);
    result_into(g, o, res);
  };
  res.victims.clear();
  res.downgraded.clear();
  res.reason.clear();
  res.group_id = -1;
  if (std::string err = validate_request(r); !err.empty()) {
    res.outcome = Outcome::Rejected;
    res.reason = err;
    return;
  }
  begin_suggested(r);
  struct EndSuggested {
    Hived* h;
    ~EndSuggested() { h->end_suggested(); }
  } end_suggested_guard{this};
  int32_t held;
  if (r.group_id >= 0) {
    held = group_at(r.group_id, r.affinity_group);
    if (held < 0) held = find_group(r.affinity_group);
  } else if (r.group_id == kNewGroup && !index_live_) {
    held = -1;  // the caller holds no group of this name
  } else {
    held = find_group(r.affinity_group);
  }
  if (held >= 0) {
    int32_t g = held;
    // An allocated group keeps its placement even on nodes no longer suggested.
    if (G(g).state != GroupState::Preempting) return fill(g, Outcome::Bound);
    // A preempting group whose placement touches a bad node or a node outside
    // the request's suggested set is planned again (collectBadOrNonSuggestedNodes
    // with the group's ignoreK8sSuggestedNodes, which HiveD leaves false).
    bool bad = false;
    for (int32_t p : G(g).pleaves) bad |= !P(p).healthy || !node_in_suggested_set(P(p).node);
    if (allow_preemption && bad) {
      delete_preempting(g);  // schedule it again
    } else {
      std::vector<int32_t>& victims = victims_;
      std::vector<int32_t>& preemptors = preemptors_;
      victims.clear();
      preemptors.clear();
      collect_victims(G(g).pleaves, victims, preemptors);
      if (victims.empty()) {
        allocate_preempting(g);
        return fill(g, Outcome::Bound);
      }
      if (!allow_preemption) {
        // Kubernetes' filtering phase: HiveD answers the victims, which only the
        // preempting phase acts on; the pod waits and the preemption goes on.
        res.outcome = Outcome::Waiting;
        res.reason = "the group's preemption is in progress";
        return;
      }
      fill(g, Outcome::Preempting);
      for (int32_t v : victims) res.victims.push_back({G(v).name, G(v).tag, v});
      return;
    }
  }

  // The request, placement and reason reuse their buffers from one decision to
  // the next (a retry after cancelled preemptions below starts over with them).
  Request& req = req_;
  req.vc = shape_.find_vc(r.virtual_cluster, r.vc_index);
  req.pinned = -1;
  req.chain = -1;
  req.pods.clear();
  if (req.vc < 0) {
    res.outcome = Outcome::Rejected;
    res.reason = "VC " + r.virtual_cluster + " does not exists!";
    return;
  }
  req.priority = r.priority;
  req.lazy = r.lazy_preemption_enable;
  if (!r.pinned_cell_id.empty()) {
    for (size_t i = 0; i < pinned_.size(); ++i)
      if (pinned_[i].vc == req.vc && pinned_[i].id == r.pinned_cell_id)
        req.pinned = static_cast<int32_t>(i);
    if (req.pinned < 0) {
      res.outcome = Outcome::Rejected;
      res.reason = "VC " + r.virtual_cluster + " does not have pinned cell " + r.pinned_cell_id;
      return;
    }
    if (req.priority == kOpportunisticPriority) {
      res.outcome = Outcome::Rejected;
      res.reason = "opportunistic pod not supported to use pinned cell " + r.pinned_cell_id;
      return;
    }
  }
  for (const auto& m : r.members)
    for (int32_t k = 0; k < m.pod_number; ++k) req.pods.push_back(m.leaf_cell_number);
  std::sort(req.pods.begin(), req.pods.end());

  Placement& pl = pl_;
  pl.clear();
  WaitWhy& why = why_;
  why = WaitWhy{};
  bool found = false;
  if (req.pinned >= 0) {
    found =
        schedule_in_chain(req, P(pinned_[static_cast<size_t>(req.pinned)].pcell).chain, pl, why);
  } else if (!r.leaf_cell_type.empty()) {
    int32_t lt = shape_.find_leaf_type(r.leaf_cell_type);
    if (lt < 0) {
      res.outcome = Outcome::Rejected;
      res.reason = "affinity group " + r.affinity_group + " requests leaf cell type " +
                   r.leaf_cell_type + ", which the whole cluster does not have";
      return;
    }
    bool vc_has_type = false;
    for (int32_t chain : shape_.leaf_types[static_cast<size_t>(lt)].chains) {
      if (req.priority >= kMinGuaranteedPriority &&
          !vc_has_chain_[static_cast<size_t>(req.vc) * static_cast<size_t>(nchain_) +
                         static_cast<size_t>(chain)])
        continue;
      vc_has_type = true;
      if (schedule_in_chain(req, chain, pl, why)) {
        found = true;
        break;
      }
    }
    if (!found && req.priority >= kMinGuaranteedPriority && !vc_has_type) {
      res.outcome = Outcome::Rejected;
      res.reason = "affinity group " + r.affinity_group + " requests leaf cell type " +
                   r.leaf_cell_type + ", which VC " + r.virtual_cluster + " does not have";
      return;
    }
  } else {
    for (const auto& lt : shape_.leaf_types) {
      for (int32_t chain : lt.chains) {
        if (req.priority >= kMinGuaranteedPriority &&
            !vc_has_chain_[static_cast<size_t>(req.vc) * static_cast<size_t>(nchain_) +
                           static_cast<size_t>(chain)])
          continue;
        if (schedule_in_chain(req, chain, pl, why)) {
          found = true;
          break;
        }
      }
      if (found) break;
    }
    if (!found && why.kind == WaitWhy::Kind::None) why.set(WaitWhy::Kind::VcNoCells, req, -1);
  }
  for (const auto& [g, vleaves] : pl.lazy) res.downgraded.push_back({G(g).name, G(g).tag, g});
  if (!found) {
    res.outcome = Outcome::Waiting;
    if (r.want_reason) wait_reason(why, res.reason);
    return;
  }

  std::vector<int32_t>& victims = victims_;
  std::vector<int32_t>& preemptors = preemptors_;
  victims.clear();
  preemptors.clear();
  collect_victims(pl.pleaves, victims, preemptors);
  if ((!victims.empty() || !preemptors.empty()) && !allow_preemption) {
    // HiveD's filtering phase reports the victims without reserving anything.
    // (HiveD would also bind over cells another group has reserved; that waits here.)
    res.outcome = Outcome::Waiting;
    res.reason = victims.empty() ? "the placement overlaps a preemption in progress"
                                 : "the placement needs preemption";
    return;
  }
  if (allow_preemption && !preemptors.empty()) {
    // Cancel the lower-priority preemptions this placement overlaps. HiveD
    // then goes on with the plan made before cancelling; with HiveD's tie order
    // so does the port while that plan still holds. Otherwise plan again:
    // cancelling moves bindings, and the stale plan would put two groups on one
    // virtual cell.
    for (int32_t pg : preemptors) delete_preempting(pg);
    if (hived_order_ && stale_plan_holds(pl, victims)) {
      int32_t g = create_group(r, req, pl,
                               victims.empty() ? GroupState::Allocated : GroupState::Preempting);
      fill(g, victims.empty() ? Outcome::Bound : Outcome::Preempting);
      for (int32_t v : victims) res.victims.push_back({G(v).name, G(v).tag, v});
      return;
    }
    std::vector<Victim> downgraded = std::move(res.downgraded);
    schedule_into(r, allow_preemption, res);
    res.downgraded.insert(res.downgraded.begin(), downgraded.begin(), downgraded.end());
    return;
  }
  int32_t g =
      create_group(r, req, pl, victims.empty() ? GroupState::Allocated : GroupState::Preempting);
  fill(g, victims.empty() ? Outcome::Bound : Outcome::Preempting);
  for (int32_t v : victims) res.victims.push_back({G(v).name, G(v).tag, v});
}

void Hived::begin_suggested(const GroupRequest& r) {
  sugg_given_ = r.suggested_nodes.has_value();
  sugg_filter_ = sugg_given_ && !r.ignore_suggested_nodes;
  if (!sugg_given_) return;
  if (node_sugg_.empty()) {
    node_sugg_.assign(shape_.nodes.size(), 0);
    cell_sugg_.assign(pcells_.size(), 0);
  }
  if (++sugg_stamp_ == 0) {  // wrapped: no mark may look current
    std::fill(node_sugg_.begin(), node_sugg_.end(), 0);
    std::fill(cell_sugg_.begin(), cell_sugg_.end(), 0);
    sugg_stamp_ = 1;
  }
  for (int32_t n : *r.suggested_nodes) {
    if (n < 0 || static_cast<size_t>(n) >= node_sugg_.size()) continue;
    uint32_t& mark = node_sugg_[static_cast<size_t>(n)];
    if (mark == sugg_stamp_) continue;
    mark = sugg_stamp_;
    if (!sugg_filter_) continue;
    // Every cell with this node below it has a suggested node.
    for (int32_t leaf : shape_.nodes[static_cast<size_t>(n)].leaf_cells)
      for (int32_t c = leaf; c >= 0 && cell_sugg_[static_cast<size_t>(c)] != sugg_stamp_;
           c = P(c).parent)
        cell_sugg_[static_cast<size_t>(c)] = sugg_stamp_;
  }
}

// A plan made before overlapping preemptions were cancelled still holds when
// its physical cells are free or used by its victims, and each virtual leaf is
// free (or its victim's, on the same physical leaf) and maps to its physical
// leaf as planned.
bool Hived::stale_plan_holds(const Placement& pl, const std::vector<int32_t>& victims) const {
  auto victim = [&](int32_t g) {
    return g >= 0 && std::find(victims.begin(), victims.end(), g) != victims.end();
  };
  for (size_t i = 0; i < pl.pleaves.size(); ++i) {
    const int32_t p = pl.pleaves[i];
    const PCell& c = P(p);
    if (c.state == CellState::Reserving || c.state == CellState::Reserved) return false;
    if (c.state == CellState::Used && !victim(c.using_group)) return false;
    if (pl.vleaves.empty()) continue;
    const int32_t v = pl.vleaves[i];
    if (V(v).priority != kFreePriority && !(V(v).pcell == p && victim(c.using_group))) return false;
    if (resolve_virtual_leaf(p, v) != v) return false;
  }
  return true;
}

// A reset group in a free slot (a released group's, or a new one).
int32_t Hived::new_group_slot() {
  int32_t g;
  if (!free_slots_.empty()) {
    g = free_slots_.back();
    free_slots_.pop_back();
  } else {
    g = static_cast<int32_t>(groups_.size());
    groups_.emplace_back();
  }
  G(g).reset();
  return g;
}

int32_t Hived::create_group(const GroupRequest& r, const Request& req, const Placement& pl,
                            GroupState state) {
  const int32_t g = new_group_slot();
  Group& grp = G(g);
  grp.alive = true;
  grp.name = r.affinity_group;
  grp.tag = r.tag;
  grp.vc = req.vc;
  grp.priority = req.priority;
  grp.lazy_enable = req.lazy;
  grp.state = state;
  grp.chain = pl.chain;
  grp.pod_leaves = req.pods;
  grp.pod_offset.push_back(0);
  for (int32_t k : req.pods) grp.pod_offset.push_back(grp.pod_offset.back() + k);
  grp.pleaves = pl.pleaves;
  grp.vleaves = pl.vleaves;
  grp.pod_handed.assign(req.pods.size(), 0);
  if (index_live_) group_index_[grp.name] = g;
  ScratchPool::Lease pacs_lease(scratch_);
  std::vector<int32_t>& pacs = *pacs_lease;
  // Allocated without preemption, the group's usage is counted once per cell
  // and level at the end (no victim's release reads it in between).
  if (state == GroupState::Allocated) begin_usage_batch();
  for (size_t i = 0; i < grp.pleaves.size(); ++i) {
    int32_t p = grp.pleaves[i];
    int32_t no_virtual = -1;
    int32_t& v = grp.vleaves.empty() ? no_virtual : grp.vleaves[i];
    if (state == GroupState::Allocated) {
      pacs.push_back(assign_leaf(p, v, grp.priority, false, true));
      P(p).using_group = g;
      P(p).state = CellState::Used;
    } else {
      bool was_used = P(p).state == CellState::Used;
      if (was_used) {
        int32_t ug = P(p).using_group;
        release_leaf(p, G(ug).vc);
        G(ug).state = GroupState::BeingPreempted;
      }
      const int32_t pac = assign_leaf(p, v, grp.priority);
      if (allocate_now()) {
        finish_allocation({pac});
      } else {
        pacs.push_back(pac);
      }
      P(p).reserving_group = g;
      P(p).state = was_used ? CellState::Reserving : CellState::Reserved;
    }
  }
  if (state == GroupState::Allocated) apply_usage_batch();
  finish_allocation(pacs);
  if (state == GroupState::Preempting) ++epoch_;
  return g;
}

// Out of line: the header is hidden, and a caller that devirtualizes the call
// must not need find_group.
bool Hived::has_group(std::string_view group) const {
  return find_group(group) >= 0;
}

int32_t Hived::find_group(std::string_view name) const {
  if (!index_live_) {
    group_index_.clear();
    for (size_t g = 0; g < groups_.size(); ++g)
      if (groups_[g].alive) group_index_[groups_[g].name] = static_cast<int32_t>(g);
    index_live_ = true;
  }
  auto it = group_index_.find(name);
  return it == group_index_.end() ? -1 : it->second;
}

void Hived::free_group(int32_t g) {
  if (index_live_) group_index_.erase(G(g).name);
  G(g).reset();
  free_slots_.push_back(g);
}

// deleteAllocatedAffinityGroup
void Hived::delete_allocated(int32_t g) {
  Group& grp = G(g);
  // The physical usage given back is counted once per cell at the end (see
  // begin_release_batch); an opportunistic group's leaves all of it.
  bool guaranteed_leaf = false;
  for (int32_t p : grp.pleaves)
    if (P(p).state == CellState::Used && P(p).priority >= kMinGuaranteedPriority)
      guaranteed_leaf = true;
  begin_release_batch(!guaranteed_leaf);
  for (int32_t p : grp.pleaves) {
    if (P(p).using_group == g) P(p).using_group = -1;
    if (P(p).state == CellState::Used) {
      release_leaf(p, grp.vc);
      P(p).state = CellState::Free;
    } else if (P(p).state == CellState::Reserving) {
      P(p).state = CellState::Reserved;
    }
  }
  apply_usage_batch();
  free_group(g);
  ++epoch_;
}

bool Hived::release(std::string_view group) {
  return release_group(-1, group);
}

bool Hived::release_group(int32_t group_id, std::string_view group) {
  int32_t g = group_at(group_id, group);
  if (g < 0) g = find_group(group);
  if (g < 0) return false;
  if (G(g).state == GroupState::Preempting)
    delete_preempting(g);
  else
    delete_allocated(g);
  return true;
}

ScheduleResult Hived::result_of(int32_t g, Outcome o) const {
  ScheduleResult r;
  result_into(g, o, r);
  return r;
}

// Sets the outcome, the chain and the pods; reuses r's buffers.
void Hived::result_into(int32_t g, Outcome o, ScheduleResult& r) const {
  const Group& grp = G(g);
  r.outcome = o;
  r.group_id = g;
  const auto& chain = shape_.chains[static_cast<size_t>(grp.chain)];
  if (grp.chain >= 0)
    r.cell_chain = chain.name;
  else
    r.cell_chain.clear();
  r.pods.resize(grp.pod_leaves.size());
  for (size_t i = 0; i < grp.pod_leaves.size(); ++i) {
    PodPlacement& pod = r.pods[i];
    pod.node = -1;
    pod.leaf_cell_number = grp.pod_leaves[i];
    pod.physical_leaf_cell_indices.clear();
    const size_t n = static_cast<size_t>(grp.pod_offset[i + 1] - grp.pod_offset[i]);
    pod.preassigned_cell_types.resize(n);
    size_t t = 0;
    for (int32_t k = grp.pod_offset[i]; k < grp.pod_offset[i + 1]; ++k, ++t) {
      int32_t p = grp.pleaves[static_cast<size_t>(k)];
      if (pod.node < 0) pod.node = P(p).node;
      pod.physical_leaf_cell_indices.push_back(P(p).leaf_index);
      if (grp.vleaves.empty() || grp.vleaves[static_cast<size_t>(k)] < 0) {
        pod.preassigned_cell_types[t].clear();
      } else {
        int32_t pac = V(grp.vleaves[static_cast<size_t>(k)]).preassigned;
        pod.preassigned_cell_types[t] = chain.level_type[static_cast<size_t>(V(pac).level)];
      }
    }
  }
}

ScheduleResult Hived::schedule_pod(std::string_view group, int32_t leaf_cell_number) {
  ScheduleResult r;
  const int32_t g = find_group(group);
  if (g < 0) {
    r.outcome = Outcome::Rejected;
    r.reason = "affinity group " + std::string(group) + " is not allocated";
    return r;
  }
  Group& grp = G(g);
  int32_t declared = 0;
  for (size_t i = 0; i < grp.pod_leaves.size(); ++i) {
    if (grp.pod_leaves[i] != leaf_cell_number) continue;
    ++declared;
    if (grp.pod_handed[i]) continue;
    if (grp.state == GroupState::Preempting) {
      r.outcome = Outcome::Waiting;
      r.reason = "affinity group " + grp.name + " is preempting others";
      return r;
    }
    grp.pod_handed[i] = 1;
    ScheduleResult all = result_of(g, Outcome::Bound);
    r.outcome = Outcome::Bound;
    r.cell_chain = all.cell_chain;
    r.pods.push_back(all.pods[i]);
    return r;
  }
  r.outcome = Outcome::Rejected;
  r.reason = "Requesting more pods than the configured number for " +
             std::to_string(leaf_cell_number) + " leaf cells (" + std::to_string(declared) +
             " pods) in affinity group " + grp.name;
  return r;
}

UsageSummary Hived::usage() const {
  UsageSummary u;
  for (const PCell& p : pcells_) {
    if (p.level != 1) continue;
    if (p.priority != kFreePriority) ++u.used_leaf_cells;
    if (p.priority == kOpportunisticPriority) ++u.opportunistic_leaf_cells;
    if (!p.healthy) ++u.bad_leaf_cells;
  }
  return u;
}

}  // namespace pai::scheduler::hived_detail

namespace pai::scheduler {

util::Result<std::unique_ptr<Policy>> make_hived_policy(const config::HivedModel& model,
                                                        bool hived_order) {
  auto h = std::make_unique<hived_detail::Hived>(model, hived_order);
  if (!h->setup_error().empty()) return util::Error{h->setup_error(), {}};
  return std::unique_ptr<Policy>(std::move(h));
}

std::unique_ptr<Policy> copy_hived_policy(const Policy& policy) {
  const auto* h = dynamic_cast<const hived_detail::Hived*>(&policy);
  if (!h) return nullptr;
  return std::make_unique<hived_detail::Hived>(*h);
}

std::vector<DoomedCount> doomed_cells(const Policy& policy) {
  const auto* h = dynamic_cast<const hived_detail::Hived*>(&policy);
  return h ? h->doomed_counts() : std::vector<DoomedCount>{};
}

std::vector<std::vector<int64_t>> doomed_headroom(const Policy& policy) {
  const auto* h = dynamic_cast<const hived_detail::Hived*>(&policy);
  return h ? h->doomed_headroom() : std::vector<std::vector<int64_t>>{};
}

}  // namespace pai::scheduler
