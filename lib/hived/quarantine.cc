#include "hived/quarantine.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "hived/fit.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"

namespace pai::hived {

namespace {

using QuarantineKey = std::tuple<int32_t, int32_t, int32_t>;  // vc, chain, level

std::map<QuarantineKey, std::pair<int64_t, int64_t>> quarantine_doomed(const scheduler::Policy& p) {
  std::map<QuarantineKey, std::pair<int64_t, int64_t>> out;
  for (const auto& d : scheduler::doomed_cells(p))
    out[{d.vc, d.chain, d.level}] = {d.cells, d.leaf_cells};
  return out;
}

}  // namespace

util::Result<QuarantineEffect> quarantine_effect(const LiveState& live,
                                                 const std::vector<std::string>& nodes, bool bad) {
  QuarantineEffect e;
  std::unordered_map<std::string, const LiveNode*> by_name;
  for (const auto& n : live.nodes) by_name.emplace(n.name, &n);
  std::set<std::string> seen;
  for (const auto& n : nodes) {
    if (!seen.insert(n).second) continue;
    auto it = by_name.find(n);
    if (it == by_name.end()) {
      e.unknown_nodes.push_back(n);
      continue;
    }
    e.nodes.push_back(n);
    e.leaves += static_cast<int64_t>(it->second->leaves.size());
    if (!it->second->healthy) e.already_bad.push_back(n);
  }
  std::set<std::string> mine(e.nodes.begin(), e.nodes.end());

  // The groups on the nodes.
  for (const auto& g : live.groups) {
    QuarantineGroup q;
    for (const auto& [node, leaves] : g.physical_placement)
      if (mine.count(node)) {
        q.nodes.push_back(node);
        q.leaves += static_cast<int64_t>(leaves.size());
      }
    if (q.nodes.empty()) continue;
    q.name = g.name;
    q.vc = g.vc;
    q.priority = g.priority;
    q.state = g.state;
    q.gpus = gpus_of(g);
    e.groups.push_back(std::move(q));
  }
  std::sort(e.groups.begin(), e.groups.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  if (e.nodes.empty()) return e;

  // The replay: HiveD now, then with the nodes bad (or healthy again).
  auto built = model_of(live.status);
  if (!built) return util::Error{"the quarantine's effect: " + built.error().message, {}};
  const config::HivedModel& model = *built.value();
  auto made = policy_now(live, model);
  if (!made.ok()) return util::Error{"the quarantine's effect: " + made.error().message, {}};
  std::unique_ptr<scheduler::Policy> policy = std::move(*made);
  const auto before = quarantine_doomed(*policy);
  for (const auto& n : e.nodes)
    if (int32_t i = policy->cluster().find_node(n); i >= 0) policy->set_node_health(i, !bad);
  const auto after = quarantine_doomed(*policy);

  const scheduler::ClusterShape& shape = policy->cluster();
  std::set<QuarantineKey> keys;
  for (const auto& [k, v] : before) keys.insert(k);
  for (const auto& [k, v] : after) keys.insert(k);
  for (const auto& k : keys) {
    auto b = before.count(k) ? before.at(k) : std::pair<int64_t, int64_t>{0, 0};
    auto a = after.count(k) ? after.at(k) : std::pair<int64_t, int64_t>{0, 0};
    if (a == b) continue;
    const auto [vc, chain, level] = k;
    QuarantineDoomed d;
    const auto& v = shape.vcs[static_cast<size_t>(vc)];
    d.vc = v.name;
    d.chain = shape.chains[static_cast<size_t>(chain)].name;
    d.cell_type = shape.chains[static_cast<size_t>(chain)].level_type[static_cast<size_t>(level)];
    d.cells_before = b.first;
    d.leaves_before = b.second;
    d.cells_after = a.first;
    d.leaves_after = a.second;
    for (int64_t x : v.guaranteed) d.guaranteed_leaves += x;
    for (int64_t x : v.pinned) d.guaranteed_leaves += x;
    e.doomed.push_back(std::move(d));
  }
  std::stable_sort(e.doomed.begin(), e.doomed.end(),
                   [](const auto& a, const auto& b) { return a.vc < b.vc; });
  return e;
}

}  // namespace pai::hived
