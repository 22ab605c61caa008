#include "hived/diff.h"

#include <algorithm>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "scheduler/hived.h"

namespace pai::hived {

namespace {

struct VcKey {
  std::string vc, chain, cell_type;
  bool operator<(const VcKey& o) const {
    return std::tie(vc, chain, cell_type) < std::tie(o.vc, o.chain, o.cell_type);
  }
};

struct VcCount {
  std::string sku;
  int64_t cells = 0, leaves = 0;
};

std::map<VcKey, VcCount> vc_cells(const config::HivedModel& m) {
  std::map<VcKey, VcCount> out;
  for (const auto& vc : m.vcs) {
    for (const auto& c : vc.cells) {
      if (c.chain < 0 || static_cast<size_t>(c.chain) >= m.chains.size()) continue;
      const auto& ch = m.chains[static_cast<size_t>(c.chain)];
      if (c.level <= 0 || static_cast<size_t>(c.level) >= ch.level_type.size()) continue;
      int32_t t = ch.level_type[static_cast<size_t>(c.level)];
      auto& v = out[{vc.name, ch.name, m.type_name(t)}];
      v.sku = m.type_name(ch.leaf_type);
      v.cells += c.count;
      if (t >= 0) v.leaves += c.count * m.types[static_cast<size_t>(t)].leaf_cell_number;
    }
    if (vc.cells.empty() && vc.pinned.empty()) out[{vc.name, "", ""}];
  }
  return out;
}

struct Pinned {
  std::string vc, address;
};

std::map<std::string, Pinned> pinned_cells(const config::HivedModel& m) {
  std::map<std::string, Pinned> out;
  for (const auto& [id, cell] : m.pinned_cells)
    out[id].address = cell >= 0 ? m.cells[static_cast<size_t>(cell)].address : "";
  for (const auto& vc : m.vcs)
    for (const auto& p : vc.pinned) out[p.id].vc = vc.name;
  return out;
}

util::Result<std::vector<scheduler::RestoredGroup>> restart_on(
    const config::HivedModel& m, const std::vector<scheduler::LiveGroup>& groups,
    const std::vector<std::string>& bad) {
  auto made = scheduler::make_hived_policy(m);
  if (!made.ok()) return std::move(made).error();
  auto policy = std::move(*made);
  // HiveD learns the nodes before the pods.
  for (const auto& n : bad)
    if (int32_t i = policy->cluster().find_node(n); i >= 0) policy->set_node_health(i, false);
  auto restored = scheduler::restore_hived_groups(*policy, groups);
  if (!restored) return util::Error{"not HiveD's policy", ""};
  return std::move(*restored);
}

}  // namespace

std::string_view to_string(GroupEffect e) {
  switch (e) {
    case GroupEffect::Keeps:
      return "keeps";
    case GroupEffect::LazilyPreempted:
      return "lazilyPreempted";
    case GroupEffect::OnRemovedCells:
      return "onRemovedCells";
  }
  return "keeps";
}

bool ConfigDiff::changes() const {
  for (const auto& v : vcs)
    if (v.changed()) return true;
  for (const auto& p : pinned)
    if (p.change != "unchanged") return true;
  return !nodes_removed.empty() || !nodes_added.empty() || lazily_preempted > 0 ||
         on_removed_cells > 0;
}

util::Result<ConfigDiff> diff_configs(const config::HivedModel& old_model,
                                      const config::HivedModel& new_model,
                                      const std::vector<scheduler::LiveGroup>& groups,
                                      const std::vector<std::string>& bad) {
  ConfigDiff d;

  // Guaranteed cells per VC and cell type.
  auto before = vc_cells(old_model);
  auto after = vc_cells(new_model);
  std::set<VcKey> keys;
  for (const auto& [k, v] : before) keys.insert(k);
  for (const auto& [k, v] : after) keys.insert(k);
  for (const auto& k : keys) {
    VcCellsChange c;
    c.vc = k.vc;
    c.chain = k.chain;
    c.cell_type = k.cell_type;
    if (auto it = before.find(k); it != before.end()) {
      c.sku = it->second.sku;
      c.before = it->second.cells;
      c.leaves_before = it->second.leaves;
    }
    if (auto it = after.find(k); it != after.end()) {
      c.sku = it->second.sku;
      c.after = it->second.cells;
      c.leaves_after = it->second.leaves;
    }
    d.vcs.push_back(std::move(c));
  }

  // Pinned cells.
  auto pb = pinned_cells(old_model);
  auto pa = pinned_cells(new_model);
  std::set<std::string> ids;
  for (const auto& [id, p] : pb) ids.insert(id);
  for (const auto& [id, p] : pa) ids.insert(id);
  for (const auto& id : ids) {
    PinnedChange c;
    c.id = id;
    auto b = pb.find(id);
    auto a = pa.find(id);
    if (b != pb.end()) {
      c.vc_before = b->second.vc;
      c.address_before = b->second.address;
    }
    if (a != pa.end()) {
      c.vc_after = a->second.vc;
      c.address_after = a->second.address;
    }
    if (b == pb.end())
      c.change = "added";
    else if (a == pa.end())
      c.change = "removed";
    else if (c.vc_before != c.vc_after || c.address_before != c.address_after)
      c.change = "moved";
    else
      c.change = "unchanged";
    d.pinned.push_back(std::move(c));
  }

  // Nodes.
  for (const auto& n : old_model.nodes)
    if (!new_model.node_index.count(n.name)) d.nodes_removed.push_back(n.name);
  for (const auto& n : new_model.nodes)
    if (!old_model.node_index.count(n.name)) d.nodes_added.push_back(n.name);

  // The running groups, after a restart on each config. The two restarts share
  // nothing but their inputs, so they run at the same time.
  auto restarted =
      std::async(std::launch::async, [&] { return restart_on(new_model, groups, bad); });
  auto was = restart_on(old_model, groups, bad);
  auto will = restarted.get();
  if (!was) return util::Error{"the current config: " + was.error().message, ""};
  if (!will) return util::Error{"the new config: " + will.error().message, ""};
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& in = groups[i];
    const auto& b = (*was)[i];
    const auto& a = (*will)[i];
    GroupChange c;
    c.name = in.name;
    c.vc = in.vc;
    c.priority = in.priority;
    c.guaranteed = in.priority >= 0 && !in.lazy_preempted;
    c.before = b.outcome;
    c.after = a.outcome;
    for (const auto& p : in.pods) c.leaves += static_cast<int32_t>(p.leaf_indices.size());
    std::set<std::string> old_ignored(b.ignored_leaves.begin(), b.ignored_leaves.end());
    for (const auto& l : a.ignored_leaves)
      if (!old_ignored.count(l)) c.removed_leaves.push_back(l);
    using scheduler::RestoreOutcome;
    if (a.outcome == RestoreOutcome::Ignored && b.outcome != RestoreOutcome::Ignored) {
      c.effect = GroupEffect::OnRemovedCells;
      c.reason = "none of its cells is in the new config: it runs on, HiveD no longer sees it";
    } else if (a.outcome == RestoreOutcome::LazyPreempted &&
               b.outcome != RestoreOutcome::LazyPreempted) {
      c.effect = GroupEffect::LazilyPreempted;
      c.reason = a.reason;
      if (!c.removed_leaves.empty())
        c.reason += "; " + std::to_string(c.removed_leaves.size()) + " of its " +
                    std::to_string(c.leaves) + " leaf cells are no longer in the config";
    } else if (!c.removed_leaves.empty()) {
      c.effect = GroupEffect::OnRemovedCells;
      c.reason = std::to_string(c.removed_leaves.size()) + " of its " + std::to_string(c.leaves) +
                 " leaf cells are no longer in the config: HiveD ignores them";
    }
    switch (c.effect) {
      case GroupEffect::Keeps:
        ++d.keeps;
        break;
      case GroupEffect::LazilyPreempted:
        ++d.lazily_preempted;
        if (c.guaranteed) ++d.guaranteed_preempted;
        break;
      case GroupEffect::OnRemovedCells:
        ++d.on_removed_cells;
        break;
    }
    d.groups.push_back(std::move(c));
  }
  return d;
}

}  // namespace pai::hived
