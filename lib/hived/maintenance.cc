#include "hived/maintenance.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <deque>
#include <memory>
#include <numeric>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "config/hived_model.h"
#include "hived/fit.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"
#include "util/time.h"

namespace pai::hived {

namespace {

// One running group, as the planner judges it.
struct MaintenanceGroupInfo {
  const AffinityGroup* group = nullptr;
  std::vector<std::string> nodes;  // its nodes, in name order (the placement's map order)
  int64_t leaves = 0;
  std::optional<double> end;
  bool touched = false;  // on a node to maintain
  GroupAction action = GroupAction::WaitedFor;
  double until = 0;
  std::string reason;
  bool released = false;
};

std::string maintenance_when(double t) {
  return "~" + util::format_utc(static_cast<std::time_t>(t), "%Y-%m-%d %H:%M UTC");
}

// "45s", "20m", "3h 5m", "2d 4h".
std::string maintenance_span(double s) {
  auto v = static_cast<int64_t>(std::llround(std::max(0.0, s)));
  if (v < 60) return std::to_string(v) + "s";
  if (v < 3600) return std::to_string(v / 60) + "m";
  if (v < 86400) {
    std::string out = std::to_string(v / 3600) + "h";
    if (v % 3600 >= 60) out += " " + std::to_string((v % 3600) / 60) + "m";
    return out;
  }
  std::string out = std::to_string(v / 86400) + "d";
  if (v % 86400 >= 3600) out += " " + std::to_string((v % 86400) / 3600) + "h";
  return out;
}

std::optional<double> maintenance_end_of(const std::map<std::string, double>& ends,
                                         const std::string& group) {
  if (auto it = ends.find(group); it != ends.end()) return it->second;
  if (auto slash = group.find('/'); slash != std::string::npos)
    if (auto it = ends.find(group.substr(0, slash)); it != ends.end()) return it->second;
  return std::nullopt;
}

std::string maintenance_list(const std::vector<std::string>& names, size_t most = 3) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < most; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > most) out += " and " + std::to_string(names.size() - most) + " more";
  return out;
}

int64_t maintenance_nodes_per_batch(const MaxUnavailable& m, int64_t cluster_nodes) {
  if (m.kind == MaxUnavailable::Kind::Nodes) return std::max<int64_t>(1, m.value);
  return std::max<int64_t>(1, cluster_nodes * m.value / 100);
}

util::Result<void> maintenance_check(const MaintenanceRequest& r) {
  if (r.nodes.empty())
    return util::Error{"no node to maintain", "name the nodes to take out of service"};
  const auto& m = r.max_unavailable;
  if (m.kind == MaxUnavailable::Kind::Nodes && m.value < 1)
    return util::Error{"max unavailable must be at least one node", "e.g. 1, 3 or 10%"};
  if (m.kind == MaxUnavailable::Kind::Percent && (m.value < 1 || m.value > 100))
    return util::Error{"max unavailable must be between 1% and 100%", "e.g. 1, 3 or 10%"};
  if (r.wait_for_groups_s < 0)
    return util::Error{"the wait for running groups cannot be negative", ""};
  return {};
}

// The nodes given, duplicates dropped (with a warning).
std::vector<std::string> maintenance_nodes(const MaintenanceRequest& r,
                                           std::vector<std::string>& warnings) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const auto& n : r.nodes) {
    if (seen.insert(n).second)
      out.push_back(n);
    else
      warnings.push_back("node " + n + " is named more than once; it is maintained once");
  }
  return out;
}

MaintenancePlan maintenance_plain_plan(const MaintenanceRequest& r, std::vector<std::string> nodes,
                                       std::string_view fallback_reason,
                                       std::vector<std::string> warnings) {
  MaintenancePlan p;
  p.hived = false;
  p.fallback_reason = fallback_reason.empty()
                          ? "no HiveD is known: the running groups and the virtual clusters' "
                            "guarantees are not looked at"
                          : std::string(fallback_reason);
  p.max_unavailable = r.max_unavailable;
  p.wait_for_groups_s = r.wait_for_groups_s;
  p.evict = r.evict;
  p.now_s = r.now_s;
  p.warnings = std::move(warnings);
  p.cluster_nodes = static_cast<int64_t>(nodes.size());
  p.nodes_per_batch = maintenance_nodes_per_batch(r.max_unavailable, p.cluster_nodes);
  double start = r.now_s;
  for (size_t i = 0; i < nodes.size(); i += static_cast<size_t>(p.nodes_per_batch)) {
    MaintenanceBatch b;
    b.index = static_cast<int32_t>(p.batches.size()) + 1;
    const size_t end = std::min(nodes.size(), i + static_cast<size_t>(p.nodes_per_batch));
    b.nodes.assign(nodes.begin() + static_cast<std::ptrdiff_t>(i),
                   nodes.begin() + static_cast<std::ptrdiff_t>(end));
    b.start_s = start;
    b.reason = "in the order given (no HiveD: " + p.fallback_reason + ")";
    start += r.batch_s;
    p.batches.push_back(std::move(b));
  }
  p.end_s = p.batches.empty() ? r.now_s : p.batches.back().start_s;
  return p;
}

// Union-find over the nodes to maintain.
struct MaintenanceUnion {
  std::vector<size_t> parent;
  explicit MaintenanceUnion(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  size_t find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(size_t a, size_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

// A set of nodes that goes out together: one node, or a gang's nodes.
struct MaintenanceUnit {
  std::vector<size_t> nodes;       // indices into the nodes given, ascending
  int category = 0;                // 0 idle, 1 groups waited for, 2 a group evicted
  double ready = 0;                // when its waited groups have ended
  std::vector<std::string> gangs;  // waited groups that keep its nodes together
};

// Doomed cells per (vc, chain, level), read from a policy.
using MaintenanceDoomedKey = std::tuple<int32_t, int32_t, int32_t>;
using MaintenanceDoomed =
    std::map<MaintenanceDoomedKey, std::pair<int64_t, int64_t>>;  // -> cells, leaves

MaintenanceDoomed maintenance_doomed(const scheduler::Policy& p) {
  MaintenanceDoomed out;
  for (const auto& d : scheduler::doomed_cells(p))
    out[{d.vc, d.chain, d.level}] = {d.cells, d.leaf_cells};
  return out;
}

// A batch being made.
struct MaintenanceDraft {
  std::vector<size_t> nodes;
  std::vector<size_t> groups;  // released in it (waited for or evicted)
  MaintenanceDoomed doomed;
  std::vector<std::string> notes;
};

}  // namespace

std::string_view to_string(GroupAction a) {
  switch (a) {
    case GroupAction::WaitedFor:
      return "waitedFor";
    case GroupAction::Evicted:
      return "evicted";
    case GroupAction::LazilyPreempted:
      return "lazilyPreempted";
    case GroupAction::Blocks:
      return "blocks";
  }
  return "waitedFor";
}

util::Result<MaxUnavailable> parse_max_unavailable(std::string_view text) {
  const std::string hint = "give a number of nodes (1, 3) or a percentage (10%)";
  MaxUnavailable m;
  std::string_view digits = text;
  if (!digits.empty() && digits.back() == '%') {
    m.kind = MaxUnavailable::Kind::Percent;
    digits.remove_suffix(1);
  }
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size())
    return util::Error{"max unavailable: expected N or P%, got \"" + std::string(text) + "\"",
                       hint};
  if (v < 1)
    return util::Error{"max unavailable must be at least 1, got " + std::string(text), hint};
  if (m.kind == MaxUnavailable::Kind::Percent && v > 100)
    return util::Error{"max unavailable cannot be more than 100%, got " + std::string(text), hint};
  m.value = v;
  return m;
}

std::string to_string(const MaxUnavailable& m) {
  return std::to_string(m.value) + (m.kind == MaxUnavailable::Kind::Percent ? "%" : "");
}

util::Result<MaintenancePlan> plan_maintenance(const MaintenanceRequest& request,
                                               const LiveState* live,
                                               std::string_view fallback_reason) {
  if (auto ok = maintenance_check(request); !ok) return std::move(ok).error();
  std::vector<std::string> warnings;
  std::vector<std::string> nodes = maintenance_nodes(request, warnings);
  if (!live)
    return maintenance_plain_plan(request, std::move(nodes), fallback_reason, std::move(warnings));

  auto built = model_of(live->status);
  if (!built) return util::Error{"the maintenance plan: " + built.error().message, ""};
  const config::HivedModel& model = *built.value();
  auto made = scheduler::make_hived_policy(model);
  if (!made.ok()) return util::Error{"the maintenance plan: " + made.error().message, ""};
  std::unique_ptr<scheduler::Policy> fresh = std::move(*made);
  const scheduler::ClusterShape& shape = fresh->cluster();

  const double now = request.now_s;
  MaintenancePlan plan;
  plan.hived = true;
  plan.max_unavailable = request.max_unavailable;
  plan.wait_for_groups_s = request.wait_for_groups_s;
  plan.evict = request.evict;
  plan.now_s = now;
  plan.warnings = std::move(warnings);
  plan.warnings.insert(plan.warnings.end(), live->warnings.begin(), live->warnings.end());
  plan.cluster_nodes = static_cast<int64_t>(live->nodes.size());
  plan.nodes_per_batch = maintenance_nodes_per_batch(request.max_unavailable, plan.cluster_nodes);
  const bool percent = request.max_unavailable.kind == MaxUnavailable::Kind::Percent;

  // The running groups and the nodes they run on.
  std::vector<MaintenanceGroupInfo> groups(live->groups.size());
  std::unordered_map<std::string, std::vector<size_t>> on_node;
  std::unordered_map<std::string, size_t> group_index;
  for (size_t i = 0; i < live->groups.size(); ++i) {
    const AffinityGroup& g = live->groups[i];
    auto& info = groups[i];
    info.group = &g;
    info.end = maintenance_end_of(request.expected_ends, g.name);
    group_index.emplace(g.name, i);
    // A preempting group has no pods on its reserved cells yet.
    if (g.state == "Preempting") continue;
    for (const auto& [node, leaves] : g.physical_placement) {
      info.nodes.push_back(node);
      info.leaves += static_cast<int64_t>(leaves.size());
      on_node[node].push_back(i);
    }
  }
  std::unordered_set<std::string> known;
  for (const auto& n : live->nodes) known.insert(n.name);

  // Each group on a node to maintain: waited for, evicted, or it blocks.
  const double wait_until = now + request.wait_for_groups_s;
  for (const auto& n : nodes) {
    if (!known.count(n)) plan.unknown_nodes.push_back(n);
    auto it = on_node.find(n);
    if (it == on_node.end()) continue;
    for (size_t gi : it->second) {
      auto& info = groups[gi];
      if (info.touched) continue;
      info.touched = true;
      if (info.end && *info.end <= wait_until) {
        info.action = GroupAction::WaitedFor;
        info.until = std::max(now, *info.end);
        info.reason = *info.end <= now
                          ? "past its expected end (" + maintenance_when(*info.end) +
                                "): waited for until it ends"
                          : "expected to end " + maintenance_when(*info.end) + ", within the " +
                                maintenance_span(request.wait_for_groups_s) + " wait";
        continue;
      }
      std::string why = info.end
                            ? "expected to end " + maintenance_when(*info.end) + ", after the " +
                                  maintenance_span(request.wait_for_groups_s) + " wait"
                            : "no expected end is known";
      if (request.evict) {
        info.action = GroupAction::Evicted;
        info.reason = why + ": evicted (evict)";
      } else {
        info.action = GroupAction::Blocks;
        info.reason = why + ": its nodes wait (evict would evict it)";
      }
    }
  }

  // Blocked nodes are in no batch.
  std::vector<size_t> open;  // indices into `nodes` that can be batched
  for (size_t i = 0; i < nodes.size(); ++i) {
    BlockedNode b;
    b.node = nodes[i];
    if (auto it = on_node.find(nodes[i]); it != on_node.end())
      for (size_t gi : it->second)
        if (groups[gi].action == GroupAction::Blocks) b.groups.push_back(live->groups[gi].name);
    if (b.groups.empty()) {
      open.push_back(i);
      continue;
    }
    std::sort(b.groups.begin(), b.groups.end());
    b.reason = "runs " + maintenance_list(b.groups) + ", which cannot be waited for";
    plan.blocked.push_back(std::move(b));
  }
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    if (!groups[gi].touched || groups[gi].action != GroupAction::Blocks) continue;
    PlannedGroup pg;
    pg.name = live->groups[gi].name;
    pg.vc = live->groups[gi].vc;
    pg.priority = live->groups[gi].priority;
    pg.action = GroupAction::Blocks;
    pg.end_s = groups[gi].end;
    pg.nodes = groups[gi].nodes;
    pg.leaves = groups[gi].leaves;
    pg.reason = groups[gi].reason;
    plan.blocking.push_back(std::move(pg));
  }
  std::sort(plan.blocking.begin(), plan.blocking.end(),
            [](const PlannedGroup& a, const PlannedGroup& b) { return a.name < b.name; });

  // Units: a waited-for gang's nodes go together.
  std::unordered_map<std::string, size_t> position;  // node -> index into `nodes`
  for (size_t i : open) position.emplace(nodes[i], i);
  MaintenanceUnion uf(nodes.size());
  std::vector<std::vector<std::string>> gangs_at(nodes.size());
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& info = groups[gi];
    if (!info.touched || info.action != GroupAction::WaitedFor) continue;
    std::vector<size_t> at;
    for (const auto& n : info.nodes)
      if (auto it = position.find(n); it != position.end()) at.push_back(it->second);
    if (at.size() < 2) continue;
    for (size_t k = 1; k < at.size(); ++k) uf.join(at[0], at[k]);
    gangs_at[at[0]].push_back(live->groups[gi].name);
  }
  std::map<size_t, MaintenanceUnit> by_root;
  for (size_t i : open) {
    auto& u = by_root[uf.find(i)];
    u.nodes.push_back(i);
    u.ready = std::max(u.ready, now);
    for (auto& g : gangs_at[i]) u.gangs.push_back(g);
    if (auto it = on_node.find(nodes[i]); it != on_node.end())
      for (size_t gi : it->second) {
        const auto& info = groups[gi];
        if (info.action == GroupAction::WaitedFor) {
          u.category = std::max(u.category, 1);
          u.ready = std::max(u.ready, info.until);
        } else if (info.action == GroupAction::Evicted) {
          u.category = 2;
        }
      }
  }
  std::vector<MaintenanceUnit> units;
  units.reserve(by_root.size());
  for (auto& [root, u] : by_root) units.push_back(std::move(u));
  std::stable_sort(units.begin(), units.end(), [](const auto& a, const auto& b) {
    if (a.category != b.category) return a.category < b.category;
    if (a.ready != b.ready) return a.ready < b.ready;
    return a.nodes.front() < b.nodes.front();
  });

  // HiveD as it is now, then as batches take their nodes out: one policy whose
  // groups are released as the batches wait for them or evict them.
  std::vector<std::string> live_bad = bad_nodes(*live);
  std::vector<scheduler::LiveGroup> binds = live_groups(*live, &model);
  auto now_policy = scheduler::copy_hived_policy(*fresh);
  for (const auto& n : live_bad)
    if (int32_t i = now_policy->cluster().find_node(n); i >= 0)
      now_policy->set_node_health(i, false);
  scheduler::restore_hived_groups(*now_policy, binds);
  const MaintenanceDoomed doomed_now = maintenance_doomed(*now_policy);
  std::unordered_set<std::string> bad_now(live_bad.begin(), live_bad.end());

  // The VCs' guaranteed leaf cells and what P% allows of them.
  std::vector<int64_t> guaranteed(shape.vcs.size(), 0), allowed(shape.vcs.size(), -1);
  for (size_t v = 0; v < shape.vcs.size(); ++v) {
    for (int64_t x : shape.vcs[v].guaranteed) guaranteed[v] += x;
    for (int64_t x : shape.vcs[v].pinned) guaranteed[v] += x;
    if (percent) allowed[v] = guaranteed[v] * request.max_unavailable.value / 100;
  }
  auto added_per_vc = [&](const MaintenanceDoomed& d) {
    std::vector<int64_t> out(shape.vcs.size(), 0);
    for (const auto& [k, v] : d) {
      int64_t before = 0;
      if (auto it = doomed_now.find(k); it != doomed_now.end()) before = it->second.second;
      out[static_cast<size_t>(std::get<0>(k))] += std::max<int64_t>(0, v.second - before);
    }
    return out;
  };
  // The first VC whose added doomed leaves go beyond P%, or -1.
  auto over_bound = [&](const MaintenanceDoomed& d) -> int32_t {
    if (!percent) return -1;
    auto added = added_per_vc(d);
    for (size_t v = 0; v < added.size(); ++v)
      if (added[v] > allowed[v]) return static_cast<int32_t>(v);
    return -1;
  };
  auto set_health = [&](const std::vector<size_t>& at, bool healthy) {
    for (size_t i : at) {
      if (bad_now.count(nodes[i])) continue;  // already bad: stays so
      if (int32_t n = now_policy->cluster().find_node(nodes[i]); n >= 0)
        now_policy->set_node_health(n, healthy);
    }
  };

  std::vector<MaintenanceDraft> drafts;
  MaintenanceDraft cur;
  auto close = [&] {
    if (cur.nodes.empty()) return;
    set_health(cur.nodes, true);
    drafts.push_back(std::move(cur));
    cur = MaintenanceDraft{};
  };
  // Takes the nodes out in the current batch: their groups end, the nodes go bad.
  auto take = [&](const std::vector<size_t>& at) {
    std::vector<size_t> released;
    for (size_t i : at)
      if (auto it = on_node.find(nodes[i]); it != on_node.end())
        for (size_t gi : it->second) {
          auto& info = groups[gi];
          if (info.released || info.action == GroupAction::Blocks) continue;
          info.released = true;
          released.push_back(gi);
          now_policy->release(live->groups[gi].name);
        }
    set_health(at, false);
    return released;
  };
  auto vc_words = [&](int32_t v, const MaintenanceDoomed& d) {
    return "it would doom " + std::to_string(added_per_vc(d)[static_cast<size_t>(v)]) +
           " more of VC " + shape.vcs[static_cast<size_t>(v)].name + "'s " +
           std::to_string(guaranteed[static_cast<size_t>(v)]) + " guaranteed leaf cells (" +
           to_string(request.max_unavailable) + " allows " +
           std::to_string(allowed[static_cast<size_t>(v)]) + ")";
  };

  const auto bound = static_cast<size_t>(plan.nodes_per_batch);
  for (const auto& unit : units) {
    std::deque<std::vector<size_t>> pieces;
    if (unit.nodes.size() <= bound) {
      pieces.push_back(unit.nodes);
    } else {
      for (size_t k = 0; k < unit.nodes.size(); k += bound)
        pieces.emplace_back(unit.nodes.begin() + static_cast<std::ptrdiff_t>(k),
                            unit.nodes.begin() + static_cast<std::ptrdiff_t>(
                                                     std::min(unit.nodes.size(), k + bound)));
      close();
      cur.notes.push_back("gang " + maintenance_list(unit.gangs) + " spans " +
                          std::to_string(unit.nodes.size()) + " nodes, more than a batch takes (" +
                          std::to_string(bound) +
                          "): its nodes fill consecutive batches, the first waits for it");
    }
    // Groups released for nodes that then waited for the next batch: listed
    // with the batch that takes the nodes.
    std::vector<size_t> carry;
    while (!pieces.empty()) {
      std::vector<size_t> piece = std::move(pieces.front());
      pieces.pop_front();
      if (!cur.nodes.empty() && cur.nodes.size() + piece.size() > bound) close();
      const bool fresh_batch = cur.nodes.empty();
      std::vector<size_t> released = take(piece);
      carry.insert(carry.end(), released.begin(), released.end());
      MaintenanceDoomed d = maintenance_doomed(*now_policy);
      if (int32_t v = over_bound(d); v >= 0) {
        if (!fresh_batch) {
          // The batch ends before these nodes; they start the next one.
          set_health(piece, true);
          cur.notes.push_back("ends before " + nodes[piece.front()] + ": " + vc_words(v, d));
          close();
          pieces.push_front(std::move(piece));
          continue;
        }
        if (piece.size() > 1) {
          // Alone they go beyond: one by one, the first waits for the gang.
          set_health(piece, true);
          for (auto it = piece.rbegin(); it != piece.rend(); ++it) pieces.push_front({*it});
          cur.notes.push_back("gang " + maintenance_list(unit.gangs) +
                              "'s nodes together would go beyond: " + vc_words(v, d) +
                              "; its nodes go one by one, the first waits for it");
          continue;
        }
        cur.notes.push_back("goes beyond " + to_string(request.max_unavailable) +
                            " with its one node: " + vc_words(v, d));
      }
      cur.nodes.insert(cur.nodes.end(), piece.begin(), piece.end());
      cur.groups.insert(cur.groups.end(), carry.begin(), carry.end());
      carry.clear();
      cur.doomed = std::move(d);
      if (!unit.gangs.empty() && unit.nodes.size() <= bound && piece.size() > 1)
        cur.notes.push_back("gang " + maintenance_list(unit.gangs) + " keeps its " +
                            std::to_string(piece.size()) + " nodes together");
    }
  }
  close();

  // A HiveD that rebuilds its state with each batch's nodes bad (a restart
  // while the batch is out), against one that rebuilds it now.
  auto restart = [&](const std::unordered_set<std::string>& bad,
                     const std::vector<scheduler::LiveGroup>& running) {
    auto p = scheduler::copy_hived_policy(*fresh);
    for (const auto& n : bad)
      if (int32_t i = p->cluster().find_node(n); i >= 0) p->set_node_health(i, false);
    return *scheduler::restore_hived_groups(*p, running);
  };
  // The shortcut: a restart's decisions depend on the bad nodes only through
  // the doomed cells HiveD binds while it restores the groups, and it binds
  // none while no VC's free guarantee exceeds the healthy free cells. Along a
  // restore the free cells left minus a VC's free guarantee only shrink (each
  // group takes cells), so the restored state's headroom (the same restore
  // without bad nodes, its groups released as the batches go) bounds it all
  // along: a batch whose bad cells fit in it changes no group. When a group is
  // lazily preempted on the healthy restore (cells handed back midway), or a
  // caller asks, every batch is replayed.
  auto clean = scheduler::copy_hived_policy(*fresh);
  bool shortcut = !request.replay_every_batch;
  const auto healthy_restore = scheduler::restore_hived_groups(*clean, binds);
  for (const auto& r : *healthy_restore)
    if (r.outcome == scheduler::RestoreOutcome::LazyPreempted) shortcut = false;
  // The cells of a node and their ancestors, per chain and level.
  auto bad_cells = [&](const std::unordered_set<std::string>& bad) {
    std::vector<std::vector<int64_t>> count(model.chains.size());
    for (size_t c = 0; c < model.chains.size(); ++c)
      count[c].assign(static_cast<size_t>(model.chains[c].top_level + 1), 0);
    std::unordered_set<int32_t> seen;
    for (const auto& n : bad) {
      int32_t node = shape.find_node(n);
      if (node < 0) continue;
      for (int32_t leaf : shape.nodes[static_cast<size_t>(node)].leaf_cells)
        for (int32_t c = leaf; c >= 0 && seen.insert(c).second;
             c = model.cells[static_cast<size_t>(c)].parent) {
          const auto& cell = model.cells[static_cast<size_t>(c)];
          ++count[static_cast<size_t>(cell.chain)][static_cast<size_t>(cell.level)];
        }
    }
    return count;
  };
  auto changes_nothing = [&](const std::unordered_set<std::string>& bad) {
    if (!shortcut) return false;
    auto room = scheduler::doomed_headroom(*clean);
    auto count = bad_cells(bad);
    for (size_t c = 0; c < count.size() && c < room.size(); ++c)
      for (size_t l = 1; l < count[c].size() && l < room[c].size(); ++l)
        if (count[c][l] > room[c][l]) return false;
    return true;
  };

  double start = now;
  // The groups still running, as bind info: the groups of each batch leave it
  // as the batches go (moved out, never copied per batch).
  std::vector<scheduler::LiveGroup> running = std::move(binds);
  // A restart with today's bad nodes, made again only when groups have left.
  std::vector<scheduler::RestoredGroup> was;
  bool was_fresh = false;
  auto drop = [&](const std::unordered_set<std::string>& names) {
    if (names.empty()) return;
    const size_t before = running.size();
    running.erase(std::remove_if(running.begin(), running.end(),
                                 [&](const auto& g) { return names.count(g.name) > 0; }),
                  running.end());
    if (running.size() != before) was_fresh = false;
  };
  for (size_t k = 0; k < drafts.size(); ++k) {
    const auto& dr = drafts[k];
    MaintenanceBatch b;
    b.index = static_cast<int32_t>(k) + 1;
    for (size_t i : dr.nodes) b.nodes.push_back(nodes[i]);
    double ready = k == 0 ? now : start + request.batch_s;
    std::vector<PlannedGroup> own;
    std::vector<std::string> waited, evicted;
    for (size_t gi : dr.groups) {
      const auto& info = groups[gi];
      const auto& g = live->groups[gi];
      PlannedGroup pg;
      pg.name = g.name;
      pg.vc = g.vc;
      pg.priority = g.priority;
      pg.action = info.action;
      pg.end_s = info.end;
      pg.nodes = info.nodes;
      pg.leaves = info.leaves;
      pg.reason = info.reason;
      if (info.action == GroupAction::WaitedFor) {
        pg.until_s = info.until;
        ready = std::max(ready, info.until);
        waited.push_back(g.name);
      } else {
        evicted.push_back(g.name);
        plan.evicted.push_back(g.name);
      }
      own.push_back(std::move(pg));
    }
    std::sort(own.begin(), own.end(), [](const auto& a, const auto& c) { return a.name < c.name; });
    b.start_s = ready;
    start = ready;

    // Lazily preempted on a restart while the batch is out: its waited groups
    // still run, its evicted ones do not.
    std::unordered_set<std::string> bad = bad_now;
    for (const auto& n : b.nodes) bad.insert(n);
    drop(std::unordered_set<std::string>(evicted.begin(), evicted.end()));
    for (const auto& name : evicted) clean->release(name);
    std::unordered_map<std::string, size_t> own_index;
    for (size_t i = 0; i < own.size(); ++i) own_index.emplace(own[i].name, i);
    std::vector<PlannedGroup> lazy;
    std::vector<scheduler::RestoredGroup> will;
    if (!changes_nothing(bad)) {
      ++plan.replayed_batches;
      if (!was_fresh) {
        was = restart(bad_now, running);
        was_fresh = true;
      }
      will = restart(bad, running);
    }
    for (size_t i = 0; i < will.size(); ++i) {
      const auto& r = will[i];
      if (r.outcome != scheduler::RestoreOutcome::LazyPreempted ||
          was[i].outcome != scheduler::RestoreOutcome::Kept)
        continue;
      if (auto mine = own_index.find(r.name); mine != own_index.end()) {
        own[mine->second].lazily_preempted = true;
        own[mine->second].lazy_reason =
            "a HiveD restarted while the batch waits for it runs it opportunistically: " + r.reason;
        continue;
      }
      auto it = group_index.find(r.name);
      if (it == group_index.end()) continue;
      const auto& info = groups[it->second];
      const auto& g = live->groups[it->second];
      PlannedGroup pg;
      pg.name = g.name;
      pg.vc = g.vc;
      pg.priority = g.priority;
      pg.action = GroupAction::LazilyPreempted;
      pg.end_s = info.end;
      pg.nodes = info.nodes;
      pg.leaves = info.leaves;
      pg.reason = "a HiveD restarted while the batch is out runs it opportunistically: " + r.reason;
      lazy.push_back(std::move(pg));
    }
    std::sort(lazy.begin(), lazy.end(),
              [](const auto& a, const auto& c) { return a.name < c.name; });
    // The groups waited for in this batch have ended for the next ones.
    drop(std::unordered_set<std::string>(waited.begin(), waited.end()));
    for (const auto& name : waited) clean->release(name);
    b.groups = std::move(own);
    for (auto& g : lazy) b.groups.push_back(std::move(g));

    // Doomed cells.
    for (const auto& [key, v] : dr.doomed) {
      const auto [vc, chain, level] = key;
      VcDoomed d;
      d.vc = shape.vcs[static_cast<size_t>(vc)].name;
      d.chain = shape.chains[static_cast<size_t>(chain)].name;
      d.cell_type = shape.chains[static_cast<size_t>(chain)].level_type[static_cast<size_t>(level)];
      d.cells = v.first;
      d.leaves = v.second;
      int64_t before = 0;
      if (auto it = doomed_now.find(key); it != doomed_now.end()) before = it->second.second;
      d.added_leaves = std::max<int64_t>(0, v.second - before);
      d.guaranteed_leaves = guaranteed[static_cast<size_t>(vc)];
      d.allowed_leaves = allowed[static_cast<size_t>(vc)];
      b.doomed.push_back(std::move(d));
    }
    std::stable_sort(b.doomed.begin(), b.doomed.end(),
                     [](const auto& a, const auto& c) { return a.vc < c.vc; });

    // Why these nodes now.
    std::string why;
    if (waited.empty() && evicted.empty()) {
      why = "no running group on its nodes";
    } else {
      if (!waited.empty())
        why = "its nodes are free when " + maintenance_list(waited) + " end" +
              (waited.size() == 1 ? "s" : "") + " (" + maintenance_when(ready) + ")";
      if (!evicted.empty())
        why += (why.empty() ? "" : "; ") + std::string("evicts ") + maintenance_list(evicted) +
               ", which cannot be waited for";
    }
    for (const auto& n : b.nodes)
      if (std::find(plan.unknown_nodes.begin(), plan.unknown_nodes.end(), n) !=
          plan.unknown_nodes.end()) {
        why += "; " + n + " is not in HiveD's cells";
        break;
      }
    for (const auto& note : dr.notes) why += "; " + note;
    b.reason = std::move(why);
    plan.batches.push_back(std::move(b));
  }
  plan.end_s = plan.batches.empty() ? now : plan.batches.back().start_s;
  return plan;
}

}  // namespace pai::hived
