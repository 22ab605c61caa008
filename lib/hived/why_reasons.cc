// The reason codes of a waiting group (reasons.h), from the state paictl's
// HiveD algorithm judged it on.

#include <algorithm>
#include <ctime>
#include <set>

#include "hived/why.h"
#include "util/time.h"

namespace pai::hived {

namespace {

using scheduler::HivedState;
using scheduler::VirtualCellState;

std::string why_reasons_list(const std::vector<std::string>& v, size_t max = 6) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (s.empty() ? "" : ", ") + v[i];
  if (v.size() > max) s += " and " + std::to_string(v.size() - max) + " more";
  return s;
}

// A cell of the VC that is partly used, at the level a pod needs or above.
struct WhyPartCell {
  std::string vaddress, where;
  int64_t leaves = 0, used = 0;
  std::set<int32_t> groups;  // HivedState::groups
};

// The VC's preassigned (non-pinned) cells of one chain, leaf by leaf.
struct WhyChainCells {
  int32_t chain = -1;
  int64_t total = 0, used = 0, free = 0, doomed = 0;
  int64_t free_small = 0;              // free leaves in cells below the needed level
  int64_t free_cells = 0;              // wholly free healthy cells of the needed level
  int64_t largest_free = 0;            // leaves of the largest wholly free healthy cell
  std::vector<std::string> doomed_at;  // "research/0 on v7"
  std::vector<std::string> doomed_nodes;
  std::vector<WhyPartCell> parts;
  std::map<std::string, int32_t> held_by;  // group -> priority
};

std::string why_reasons_where(const config::HivedModel& model, int32_t pcell) {
  if (pcell < 0) return "unbound";
  const auto& c = model.cells[static_cast<size_t>(pcell)];
  if (c.node >= 0) {
    const std::string& node = model.nodes[static_cast<size_t>(c.node)].name;
    return c.is_node || c.leaf_index < 0 ? node : node + "[" + std::to_string(c.leaf_index) + "]";
  }
  return c.address;
}

// The node names under a physical cell.
void why_reasons_nodes(const config::HivedModel& model, int32_t pcell, std::set<std::string>& out) {
  if (pcell < 0) return;
  const auto& c = model.cells[static_cast<size_t>(pcell)];
  if (c.node >= 0) {
    out.insert(model.nodes[static_cast<size_t>(c.node)].name);
    return;
  }
  for (int32_t k : c.children) why_reasons_nodes(model, k, out);
}

// The groups on the leaves under virtual cell `v`.
void why_reasons_groups(const HivedState& s, int32_t v, std::set<int32_t>& out) {
  const VirtualCellState& vc = s.vcells[static_cast<size_t>(v)];
  if (vc.used_leaves == 0) return;
  if (vc.children.empty()) {
    if (vc.pcell >= 0)
      if (int32_t g = s.cells[static_cast<size_t>(vc.pcell)].group; g >= 0) out.insert(g);
    return;
  }
  for (int32_t k : vc.children) why_reasons_groups(s, k, out);
}

struct WhyWalk {
  const config::HivedModel& model;
  const scheduler::ClusterShape::Chain& chain;
  const HivedState& s;
  int32_t need_level;
  WhyChainCells& out;

  int64_t leaves(int32_t level) const { return chain.level_leaves[static_cast<size_t>(level)]; }

  int32_t root_level = 0;  // the level of the VC's cell being walked

  void walk(int32_t v, bool bad_above) {
    const VirtualCellState& vc = s.vcells[static_cast<size_t>(v)];
    bool bad = bad_above || (vc.pcell >= 0 && !s.cells[static_cast<size_t>(vc.pcell)].healthy);
    const int64_t n = leaves(vc.level);
    if (vc.used_leaves == 0) {
      if (bad) {
        out.doomed += n;
        if (!bad_above) {
          out.doomed_at.push_back(vc.address + " on " + why_reasons_where(model, vc.pcell));
          std::set<std::string> nodes;
          why_reasons_nodes(model, vc.pcell, nodes);
          out.doomed_nodes.insert(out.doomed_nodes.end(), nodes.begin(), nodes.end());
        }
        return;
      }
      out.free += n;
      if (root_level < need_level) out.free_small += n;
      if (vc.level >= need_level) out.free_cells += n / std::max<int64_t>(1, leaves(need_level));
      out.largest_free = std::max(out.largest_free, n);
      return;
    }
    if (vc.level >= need_level && vc.used_leaves < n) {
      WhyPartCell p;
      p.vaddress = vc.address;
      p.where = why_reasons_where(model, vc.pcell);
      p.leaves = n;
      p.used = vc.used_leaves;
      why_reasons_groups(s, v, p.groups);
      out.parts.push_back(std::move(p));
    }
    if (vc.children.empty()) {
      out.used += 1;  // a used leaf
      if (vc.pcell >= 0)
        if (int32_t g = s.cells[static_cast<size_t>(vc.pcell)].group; g >= 0)
          out.held_by[s.groups[static_cast<size_t>(g)].name] =
              s.groups[static_cast<size_t>(g)].priority;
      return;
    }
    for (int32_t k : vc.children) walk(k, bad);
  }
};

// The level of the smallest cell of `ch` that holds `gpus` leaves (at most a
// node's); 0 when a pod is larger than a node.
int32_t why_reasons_level(const scheduler::ClusterShape::Chain& ch, int64_t gpus) {
  for (int32_t l = 1; l <= std::min(ch.node_level, ch.top_level); ++l)
    if (ch.level_leaves[static_cast<size_t>(l)] >= gpus) return l;
  return 0;
}

Reason why_reason(ReasonCode code, std::string detail,
                  const std::map<std::string, std::string>& vars) {
  Reason r;
  r.code = code;
  r.detail = std::move(detail);
  r.hint = fill_hint(reason_info(code).hint, vars);
  return r;
}

}  // namespace

WaitClassification classify_wait(const config::HivedModel& model, const scheduler::HivedState& s,
                                 const scheduler::ClusterShape& shape,
                                 const scheduler::GroupRequest& req,
                                 const scheduler::ScheduleResult& res,
                                 const std::vector<std::string>& victims) {
  WaitClassification out;
  auto& reasons = out.reasons;
  const std::string& vcname = req.virtual_cluster;
  if (res.outcome == scheduler::Outcome::Bound) return out;
  if (res.outcome == scheduler::Outcome::Preempting || !victims.empty()) {
    reasons.push_back(
        why_reason(ReasonCode::WaitingForPreemption,
                   "placed by preempting lower-priority groups: " + why_reasons_list(victims),
                   {{"victims", why_reasons_list(victims)}}));
    return out;
  }
  const std::string& why = res.reason;
  std::string types;
  for (const auto& lt : shape.leaf_types) types += (types.empty() ? "" : ", ") + lt.name;
  if (why.find("which the whole cluster does not have") != std::string::npos) {
    reasons.push_back(why_reason(
        ReasonCode::NoSuchLeafType,
        "leaf cell type " + req.leaf_cell_type + " is not in the cluster (it has " + types + ")",
        {{"types", types}, {"type", req.leaf_cell_type}}));
    out.change =
        "ask for one of " + types + ", or add " + req.leaf_cell_type + " nodes to HiveD's config";
    return out;
  }
  const int32_t vc = shape.find_vc(vcname);
  auto no_chain = [&](std::string detail, std::string what) {
    reasons.push_back(
        why_reason(ReasonCode::NoChainForVC, std::move(detail), {{"what", what}, {"vc", vcname}}));
    out.change = "submit to a VC that has " + what + ", or give VC " + vcname +
                 " such cells in HiveD's config";
  };
  if (vc < 0) {
    no_chain("VC " + vcname + " is not in HiveD's config", "cells of the request's leaf type");
    out.change = "submit to a VC HiveD has";
    return out;
  }
  if (!req.pinned_cell_id.empty() && why.find("does not have pinned cell") != std::string::npos) {
    no_chain("VC " + vcname + " has no pinned cell " + req.pinned_cell_id,
             "pinned cell " + req.pinned_cell_id);
    return out;
  }
  const std::string what = req.leaf_cell_type.empty() ? std::string("cells of any leaf type")
                                                      : req.leaf_cell_type + " cells";
  if (why.find("which VC") != std::string::npos || why.find("has no cells") != std::string::npos) {
    no_chain("VC " + vcname + " has no " + what + " (" + why + ")", what);
    return out;
  }

  // The chains the request may use.
  std::vector<int32_t> chains;
  for (const auto& lt : shape.leaf_types)
    if (req.leaf_cell_type.empty() || lt.name == req.leaf_cell_type)
      for (int32_t c : lt.chains) chains.push_back(c);
  int64_t need = 0, biggest = 0;
  for (const auto& m : req.members) {
    need += static_cast<int64_t>(m.pod_number) * m.leaf_cell_number;
    biggest = std::max<int64_t>(biggest, m.leaf_cell_number);
  }

  if (req.priority < 0) {
    // Opportunistic: the free physical leaves of the chains.
    int64_t best_free = 0, best_cell = 0;
    std::string best_chain;
    for (int32_t c : chains) {
      const auto& ch = shape.chains[static_cast<size_t>(c)];
      int32_t level = why_reasons_level(ch, biggest);
      int64_t free = 0, cells = 0;
      for (size_t i = 0; i < model.cells.size(); ++i) {
        const auto& mc = model.cells[i];
        if (mc.chain != c) continue;
        const auto& st = s.cells[i];
        if (st.state != scheduler::CellUse::Free || !st.healthy) continue;
        if (mc.level == 1) ++free;
        if (level > 0 && mc.level == level) ++cells;
      }
      if (best_chain.empty() || free > best_free) {
        best_free = free;
        best_cell = cells;
        best_chain = ch.name;
      }
    }
    reasons.push_back(why_reason(ReasonCode::OpportunisticNoCapacity,
                                 "chain " + best_chain + " has " + std::to_string(best_free) +
                                     " free healthy leaf cell(s) and " + std::to_string(best_cell) +
                                     " free cell(s) of the size a pod of " +
                                     std::to_string(biggest) + " GPUs needs; it needs " +
                                     std::to_string(need) + " leaf cells",
                                 {}));
    return out;
  }

  // Guaranteed: the VC's cells per chain; the chain HiveD named, else the one
  // with the most free leaves.
  std::string named;
  if (size_t p = why.find("(chain "); p != std::string::npos) {
    size_t e = why.find(')', p);
    named = why.substr(p + 7, e == std::string::npos ? std::string::npos : e - p - 7);
  }
  std::optional<WhyChainCells> best;
  int32_t best_level = 0, vc_chains = 0;
  int64_t best_total = 0, best_pod = 0;
  for (int32_t c : chains) {
    const auto& ch = shape.chains[static_cast<size_t>(c)];
    int32_t level = why_reasons_level(ch, biggest);
    WhyChainCells cells;
    cells.chain = c;
    WhyWalk w{model, ch, s, std::max(1, level), cells};
    int64_t top = 0;
    for (int32_t root : s.vc_roots[static_cast<size_t>(vc)]) {
      const auto& v = s.vcells[static_cast<size_t>(root)];
      if (v.chain != c || !v.pinned_id.empty()) continue;
      cells.total += ch.level_leaves[static_cast<size_t>(v.level)];
      w.root_level = v.level;
      top = std::max(top, ch.level_leaves[static_cast<size_t>(std::min(v.level, ch.node_level))]);
      w.walk(root, false);
    }
    if (cells.total == 0) continue;
    ++vc_chains;
    best_total = std::max(best_total, cells.total);
    best_pod = std::max(best_pod, top);
    // A chain it can fit in at all; of those the one with the most free
    // leaves (HiveD's named chain on a tie).
    if (need > cells.total || biggest > top || level == 0) continue;
    bool better =
        !best || cells.free > best->free || (cells.free == best->free && ch.name == named);
    if (better) {
      best = std::move(cells);
      best_level = level;
    }
  }
  if (vc_chains == 0) {
    no_chain("VC " + vcname + " has no " + what, what);
    return out;
  }
  if (!best) {
    reasons.push_back(why_reason(
        ReasonCode::RequestExceedsVC,
        "it needs " + std::to_string(need) + " leaf cells in pods of " + std::to_string(biggest) +
            "; VC " + vcname + " has " + std::to_string(best_total) +
            " in all, in pods of at most " + std::to_string(best_pod),
        {{"max", std::to_string(best_total)}, {"pod", std::to_string(best_pod)}, {"vc", vcname}}));
    out.change = "ask for at most " + std::to_string(best_total) + " GPUs in pods of at most " +
                 std::to_string(best_pod) + " in VC " + vcname + ", or grow its share";
    return out;
  }
  const auto& ch = shape.chains[static_cast<size_t>(best->chain)];
  const std::string chain = ch.name;
  const std::string need_type = ch.level_type[static_cast<size_t>(best_level)];
  const int64_t need_leaves = ch.level_leaves[static_cast<size_t>(best_level)];
  // Cells of the needed level its largest pods take: those pods packed into
  // them, largest first (pods of 4 GPUs share a cell of 8).
  std::vector<int64_t> bins;
  std::vector<int64_t> pods;
  for (const auto& m : req.members)
    if (why_reasons_level(ch, m.leaf_cell_number) == best_level)
      for (int32_t k = 0; k < m.pod_number; ++k) pods.push_back(m.leaf_cell_number);
  std::sort(pods.rbegin(), pods.rend());
  for (int64_t p : pods) {
    bool placed = false;
    for (auto& b : bins)
      if (b >= p) {
        b -= p;
        placed = true;
        break;
      }
    if (!placed) bins.push_back(need_leaves - p);
  }
  const int64_t need_cells = static_cast<int64_t>(bins.size());
  std::vector<std::string> held;
  for (const auto& [g, p] : best->held_by) held.push_back(g + " (" + std::to_string(p) + ")");
  out.held_by = best->held_by;

  if (best->doomed > 0 && (best->free < need || why.find("bad node") != std::string::npos)) {
    reasons.push_back(
        why_reason(ReasonCode::BadCellsDoomed,
                   std::to_string(best->doomed) + " of VC " + vcname + "'s " +
                       std::to_string(best->total) + " leaf cells in chain " + chain +
                       " are doomed on bad nodes: " + why_reasons_list(best->doomed_at),
                   {{"nodes", why_reasons_list(best->doomed_nodes)}, {"vc", vcname}}));
    out.doomed_nodes = best->doomed_nodes;
  }
  if (best->free < need) {
    reasons.push_back(why_reason(
        ReasonCode::VCQuotaExhausted,
        std::to_string(best->used) + " of VC " + vcname + "'s " + std::to_string(best->total) +
            " guaranteed leaf cells in chain " + chain + " are bound to running groups" +
            (held.empty() ? std::string() : ": " + why_reasons_list(held)) + "; " +
            std::to_string(best->free) + " free, it needs " + std::to_string(need),
        {{"groups", held.empty() ? std::string("running groups") : why_reasons_list(held, 3)}}));
  } else if (best->free_cells < need_cells) {
    // Enough leaves, not in whole cells of the needed level.
    // The largest pod that fits now: in a free cell, or in the free part of a
    // node (or smaller) cell.
    const int64_t node_leaves = ch.level_leaves[static_cast<size_t>(ch.node_level)];
    int64_t largest = std::min(best->largest_free, node_leaves);
    for (const auto& p : best->parts)
      if (p.leaves <= node_leaves) largest = std::max(largest, p.leaves - p.used);
    std::vector<std::string> parts, split_groups;
    std::string split_cell;
    for (const auto& p : best->parts) {
      parts.push_back(std::to_string(p.leaves - p.used) + " in " + p.vaddress + " (" + p.where +
                      ")");
      // A cell split by groups that all fit in a smaller cell, while the VC's
      // smaller cells had room for them.
      bool small = !p.groups.empty();
      for (int32_t g : p.groups)
        for (int32_t pod : s.groups[static_cast<size_t>(g)].pod_leaf_numbers)
          small &= pod < need_leaves;
      if (small && best->free_small >= p.used && split_cell.empty()) {
        split_cell = p.vaddress + " (" + p.where + ")";
        for (int32_t g : p.groups) split_groups.push_back(s.groups[static_cast<size_t>(g)].name);
      }
    }
    if (!split_cell.empty())
      reasons.push_back(why_reason(
          ReasonCode::CellSplitBySmallerGroup,
          "VC " + vcname + " has " + std::to_string(best->free) + " free leaf cells in chain " +
              chain + ", " + std::to_string(best->free_small) + " of them in cells smaller than " +
              need_type + ", but " + why_reasons_list(split_groups) + " sit(s) in " + need_type +
              " cell " + split_cell + ", so no whole " + need_type + " cell is free",
          {{"groups", why_reasons_list(split_groups)},
           {"cell", split_cell},
           {"vc", vcname},
           {"type", need_type}}));
    reasons.push_back(why_reason(
        ReasonCode::ChainFragmented,
        "VC " + vcname + " has " + std::to_string(best->free) + " free leaf cells in chain " +
            chain + " but " + std::to_string(best->free_cells) + " free " + need_type +
            " cell(s) of the " + std::to_string(need_cells) + " it needs; the free leaves are " +
            why_reasons_list(parts) +
            (best->free_small > 0
                 ? std::string(parts.empty() ? "" : ", ") + std::to_string(best->free_small) +
                       " in the VC's cells smaller than " + need_type
                 : std::string()),
        {{"type", need_type}, {"vc", vcname}, {"largest", std::to_string(largest)}}));
  }
  if (reasons.empty())
    reasons.push_back(why_reason(
        ReasonCode::VCQuotaExhausted,
        "HiveD's algorithm: " + why +
            (held.empty() ? std::string() : "; cells held by " + why_reasons_list(held)),
        {{"groups", held.empty() ? std::string("running groups") : why_reasons_list(held, 3)}}));
  // What would make it fit, in cells.
  if (need_cells > best->free_cells)
    out.needs = std::to_string(need_cells - best->free_cells) + " more " + need_type +
                " cell(s) in chain " + chain;
  else if (need > best->free)
    out.needs = std::to_string(need - best->free) + " more free leaf cell(s) in chain " + chain;
  rank_reasons(reasons);
  return out;
}

}  // namespace pai::hived

namespace pai::hived {

namespace {

std::string why_reasons_clock(double t) {
  return util::format_utc(static_cast<std::time_t>(t), "%Y-%m-%d %H:%M UTC");
}

bool why_reasons_starts(const scheduler::ScheduleResult& r) {
  return r.outcome == scheduler::Outcome::Bound ||
         (r.outcome == scheduler::Outcome::Waiting && r.reason == "the placement needs preemption");
}

}  // namespace

WouldFit would_fit(scheduler::Policy& policy, const scheduler::GroupRequest& req,
                   const WaitClassification& why, const ExpectedEnds& ends,
                   const std::vector<std::string>& group_order) {
  WouldFit w;
  w.needs = why.needs;
  const std::string needs = w.needs.empty() ? std::string() : "needs " + w.needs + "; ";
  if (!why.reasons.empty()) {
    const ReasonInfo& first = reason_info(why.reasons.front().code);
    if (first.never) {
      w.kind = WouldFit::Kind::Never;
      w.change = why.change;
      w.text = "never under this config: " + why.change;
      return w;
    }
    if (first.code == ReasonCode::WaitingForPreemption) {
      w.kind = WouldFit::Kind::Now;
      w.at_s = ends.now_s;
      w.event = "its victims are deleted";
      w.text = "now, once its victims are deleted";
      return w;
    }
  }
  std::vector<std::pair<double, std::string>> order;
  size_t unknown = 0;
  for (const auto& name : group_order) {
    auto it = ends.by_group.find(name);
    if (it == ends.by_group.end())
      ++unknown;
    else
      order.push_back({it->second, name});
  }
  std::sort(order.begin(), order.end());  // by end, then name
  for (const auto& [end, name] : order) {
    if (!policy.release(name)) continue;
    w.after_groups.push_back(name);
    if (!why_reasons_starts(policy.schedule(req, false))) continue;
    w.kind = WouldFit::Kind::At;
    w.at_s = std::max(ends.now_s, end);
    w.event = name + " ends";
    w.text = needs + "frees about " + why_reasons_clock(*w.at_s) + " when " + name +
             (end <= ends.now_s ? " (past its expected end)" : "") + " ends" +
             (w.after_groups.size() > 1 ? " (after " + std::to_string(w.after_groups.size() - 1) +
                                              " other group(s) expected to end first)"
                                        : "");
    return w;
  }
  w.kind = WouldFit::Kind::Unknown;
  // Bad nodes repaired: no time is known for that.
  if (!why.doomed_nodes.empty()) {
    for (const auto& n : why.doomed_nodes)
      if (int32_t i = policy.cluster().find_node(n); i >= 0) policy.set_node_health(i, true);
    if (why_reasons_starts(policy.schedule(req, false))) {
      std::string nodes;
      for (const auto& n : why.doomed_nodes) nodes += (nodes.empty() ? "" : ", ") + n;
      w.event = nodes + " healthy again";
      w.text = needs + "fits when " + nodes + (why.doomed_nodes.size() == 1 ? " is" : " are") +
               " healthy again" +
               (w.after_groups.empty() ? std::string()
                                       : " and the " + std::to_string(w.after_groups.size()) +
                                             " group(s) with an expected end have ended");
      return w;
    }
  }
  w.text =
      needs + (order.empty() ? "unknown: no running group has an expected end"
               : unknown > 0 ? "unknown: it does not fit when the " + std::to_string(order.size()) +
                                   " group(s) with an expected end have ended; " +
                                   std::to_string(unknown) + " running group(s) have none"
                             : "unknown: it does not fit even when every running group has ended");
  return w;
}

}  // namespace pai::hived
