#include "hived/why.h"

#include <algorithm>
#include <set>

#include "scheduler/hived.h"
#include "scheduler/hived_state.h"

namespace pai::hived {

// --- a running group ------------------------------------------------------------------

RunningAnswer explain_running(const AffinityGroup& group, const std::vector<AffinityGroup>& all) {
  RunningAnswer a{group, {}, {}};
  const bool preempting = group.state == "Preempting";
  const bool victim = group.state == "BeingPreempted";
  if (!preempting && !victim) return a;
  for (const auto& other : all) {
    if (other.name == group.name) continue;
    // A preempting group's victims run where it reserved; a victim's
    // preemptors are the preempting groups on its leaves.
    if (preempting ? other.state == "Preempting" : other.state != "Preempting") continue;
    RunningAnswer::Other o{other.name, other.vc, other.state, other.priority, {}};
    for (const auto& [node, idxs] : other.physical_placement) {
      auto mine = group.physical_placement.find(node);
      if (mine == group.physical_placement.end()) continue;
      for (int32_t i : idxs)
        if (std::find(mine->second.begin(), mine->second.end(), i) != mine->second.end())
          o.leaves[node].push_back(i);
    }
    if (o.leaves.empty()) continue;
    (preempting ? a.waits_for : a.taken_by).push_back(std::move(o));
  }
  return a;
}

namespace {

std::string why_others_text(const std::vector<RunningAnswer::Other>& others) {
  std::string s;
  for (const auto& o : others) {
    std::string where;
    for (const auto& [node, idxs] : o.leaves)
      where += (where.empty() ? "" : " ") + node + "[" + leaves_text(idxs) + "]";
    s += (s.empty() ? "" : ", ") + o.name + " (VC " + o.vc + ", priority " +
         std::to_string(o.priority) + ", " + o.state + ") on " + where;
  }
  return s;
}

Json why_others_json(const std::vector<RunningAnswer::Other>& others) {
  Json out = Json::array();
  for (const auto& o : others) {
    Json leaves = Json::object();
    for (const auto& [node, idxs] : o.leaves) leaves[node] = idxs;
    out.push_back({{"name", o.name},
                   {"vc", o.vc},
                   {"priority", o.priority},
                   {"state", o.state},
                   {"leafCells", leaves}});
  }
  return out;
}

}  // namespace

Reason preempting_reason(const RunningAnswer& a) {
  std::vector<std::string> names;
  for (const auto& o : a.waits_for) names.push_back(o.name);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  if (list.empty()) list = "the groups on its cells";
  Reason r;
  r.code = ReasonCode::WaitingForPreemption;
  r.detail = "HiveD placed it and chose its victims: " + list;
  r.hint = fill_hint(reason_info(r.code).hint, {{"victims", list}});
  return r;
}

std::string to_text(const RunningAnswer& a, bool wide) {
  const AffinityGroup& gr = a.group;
  std::string text;
  bool lazy = gr.lazy_preemption_status.has_value();
  text += gr.name + " is " + gr.state + " in VC " + gr.vc + " at priority " +
          std::to_string(gr.priority) +
          (gr.priority < 0 ? " (opportunistic)"
           : lazy          ? ""
                           : " (guaranteed)") +
          ", on " + std::to_string(gpus_of(gr)) + " GPUs: " + placement_text(gr) + "\n";
  if (!gr.virtual_placement.empty()) {
    std::string cells;
    for (const auto& [pre, leaves] : gr.virtual_placement)
      cells +=
          (cells.empty() ? "" : ", ") + pre + " (" + std::to_string(leaves.size()) + " leaf cells)";
    text += "  its guarantee: virtual cells " + cells + "\n";
  }
  if (lazy)
    text += "  lazily preempted by " +
            (gr.lazy_preemption_status->preemptor.empty() ? std::string("?")
                                                          : gr.lazy_preemption_status->preemptor) +
            (gr.lazy_preemption_status->preemption_time.empty()
                 ? std::string()
                 : " at " + gr.lazy_preemption_status->preemption_time) +
            ": it runs on at opportunistic priority, outside " + gr.vc +
            "'s guarantee, and any guaranteed group may preempt it\n";
  if (gr.state == "Preempting")
    text += "  it waits for the groups on its cells to be deleted (preemption in progress)" +
            (a.waits_for.empty() ? std::string() : ": " + why_others_text(a.waits_for)) + "\n";
  if (gr.state == "Preempting") text += reasons_block({preempting_reason(a)}, WouldFit{}, false);
  if (gr.state == "BeingPreempted")
    text += "  a higher-priority group is taking its cells: it is about to be deleted" +
            (a.taken_by.empty() ? std::string() : " (by " + why_others_text(a.taken_by) + ")") +
            "\n";
  if (wide) {
    // The leaf cells behind each virtual cell, and the pods HiveD has bound.
    for (const auto& [pre, leaves] : gr.virtual_placement) {
      std::string list;
      for (const auto& l : leaves) list += (list.empty() ? "" : " ") + l;
      text += "  virtual cell " + pre + ": " + list + "\n";
    }
    auto pods = [&](const char* what, const std::vector<std::string>& v) {
      if (v.empty()) return;
      std::string list;
      for (const auto& p : v) list += (list.empty() ? "" : ", ") + p;
      text += std::string("  ") + what + " (" + std::to_string(v.size()) + "): " + list + "\n";
    };
    pods("allocated pods", gr.allocated_pods);
    pods("preempting pods", gr.preempting_pods);
  }
  return text;
}

Json to_json(const RunningAnswer& a) {
  Json j = group_summary_json(a.group);
  j["running"] = true;
  if (a.group.state == "Preempting") {
    j["waitsFor"] = why_others_json(a.waits_for);
    j["reason"] = to_json(preempting_reason(a));
    WouldFit w;
    w.kind = WouldFit::Kind::Now;
    w.event = "its victims are deleted";
    w.text = "now, once its victims are deleted";
    j["wouldFit"] = to_json(w);
  }
  if (a.group.state == "BeingPreempted") j["preemptedBy"] = why_others_json(a.taken_by);
  j["explanation"] = to_text(a, false);
  return j;
}

// --- a waiting group ------------------------------------------------------------------

std::string_view to_string(WaitVerdict v) {
  switch (v) {
    case WaitVerdict::Fits:
      return "fits";
    case WaitVerdict::Preempts:
      return "preempts";
    case WaitVerdict::Waits:
      return "waits";
    case WaitVerdict::Rejected:
      return "rejected";
  }
  return "waits";
}

std::string members_text(const scheduler::GroupRequest& req) {
  std::string s;
  for (size_t i = 0; i < req.members.size(); ++i)
    s += std::string(i == 0                        ? ""
                     : i + 1 == req.members.size() ? " and "
                                                   : ", ") +
         std::to_string(req.members[i].pod_number) + " pod(s) of " +
         std::to_string(req.members[i].leaf_cell_number) + " GPUs";
  return s;
}

Json request_json(const scheduler::GroupRequest& req, const std::string& source) {
  Json members = Json::array();
  for (const auto& m : req.members)
    members.push_back({{"podNumber", m.pod_number}, {"leafCellNumber", m.leaf_cell_number}});
  return {{"source", source},
          {"virtualCluster", req.virtual_cluster},
          {"priority", req.priority},
          {"leafCellType", req.leaf_cell_type.empty() ? Json(nullptr) : Json(req.leaf_cell_type)},
          {"pinnedCellId", req.pinned_cell_id.empty() ? Json(nullptr) : Json(req.pinned_cell_id)},
          {"members", members}};
}

namespace {

// "V100-NODE cells" / "cells (3 V100-NODE, 1 K80-NODE)"
std::string why_cells_text(const std::map<std::string, int64_t>& per_type) {
  if (per_type.size() == 1) return per_type.begin()->first + " cells";
  std::string s;
  for (const auto& [type, n] : per_type)
    s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + type;
  return per_type.empty() ? "cells" : "cells (" + s + ")";
}

std::string why_needs_text(const std::vector<CellNeed>& needs) {
  std::string need_text;
  for (const auto& n : needs)
    need_text += std::string(need_text.empty() ? "" : "; ") + "a pod of " + std::to_string(n.gpus) +
                 " GPUs " +
                 (n.type.empty() ? "is larger than a node of chain " + n.chain
                  : n.leaves == n.gpus
                      ? "takes a whole " + n.type + " cell of chain " + n.chain
                      : "takes " + std::to_string(n.gpus) + " of the " + std::to_string(n.leaves) +
                            " leaf cells of one " + n.type + " cell of chain " + n.chain);
  return need_text;
}

}  // namespace

util::Result<WaitingAnswer> judge_waiting(const std::string& name,
                                          const scheduler::GroupRequest& req,
                                          const std::string& source,
                                          const config::HivedModel& model, const LiveState& live,
                                          const ExpectedEnds& ends) {
  std::vector<scheduler::RestoredGroup> restored;
  auto made = policy_now(live, model, &restored);
  if (!made.ok()) return std::move(made).error();
  auto policy = std::move(*made);
  const std::vector<std::string> live_bad = bad_nodes(live);
  auto before = scheduler::snapshot_hived(*policy);
  auto res = policy->schedule(req, false);
  WaitingAnswer a;
  a.name = name;
  a.request = req;
  a.source = source;
  a.restored_groups = static_cast<int64_t>(restored.size());
  a.live_bad_nodes = static_cast<int64_t>(live_bad.size());
  // HiveD's preempting phase follows its filtering phase: a placement that
  // needs victims is reported with them.
  if (res.outcome == scheduler::Outcome::Waiting &&
      res.reason == "the placement needs preemption") {
    auto pre = policy->schedule(req, true);
    if (pre.outcome == scheduler::Outcome::Preempting) {
      for (const auto& v : pre.victims) a.victims.push_back(v.group);
      res = pre;
    }
  }
  a.reason = res.reason;

  // The cells behind the answer: the VC's guaranteed cells of the chains the
  // request may use, and who holds them; bad physical cells of those chains.
  const auto& shape = policy->cluster();
  int32_t vc = shape.find_vc(req.virtual_cluster);
  a.vc_known = vc >= 0;
  std::set<int32_t> chains;
  for (size_t lt = 0; lt < shape.leaf_types.size(); ++lt)
    if (req.leaf_cell_type.empty() || shape.leaf_types[lt].name == req.leaf_cell_type)
      for (int32_t c : shape.leaf_types[lt].chains) chains.insert(c);
  std::set<int32_t> vc_chains;  // the chains of the VC's cells
  if (vc >= 0 && before) {
    for (int32_t root : before->vc_roots[static_cast<size_t>(vc)]) {
      const auto& v = before->vcells[static_cast<size_t>(root)];
      if (!chains.count(v.chain) || !v.pinned_id.empty()) continue;
      vc_chains.insert(v.chain);
      ++a.vc_cells;
      ++a.vc_cells_per_type[shape.chains[static_cast<size_t>(v.chain)]
                                .level_type[static_cast<size_t>(v.level)]];
      if (v.used_leaves > 0) ++a.vc_bound;
      std::vector<int32_t> stack{root};
      while (!stack.empty()) {
        int32_t c = stack.back();
        stack.pop_back();
        const auto& vv = before->vcells[static_cast<size_t>(c)];
        if (vv.children.empty()) {
          if (vv.pcell >= 0 && vv.used_leaves > 0) {
            int32_t grp = before->cells[static_cast<size_t>(vv.pcell)].group;
            if (grp >= 0) {
              const auto& gs = before->groups[static_cast<size_t>(grp)];
              a.held_by[gs.name] = gs.priority;
            }
          }
          continue;
        }
        for (int32_t k : vv.children) stack.push_back(k);
      }
    }
  }
  for (const auto& n : live_bad) {
    int32_t i = shape.find_node(n);
    if (i < 0) continue;
    bool in_chain = false;
    for (int32_t c : model.nodes[static_cast<size_t>(i)].chains) in_chain |= chains.count(c) > 0;
    if (in_chain) a.bad_nodes.push_back(n);
  }
  for (const auto& m : req.members)
    for (int32_t c : vc_chains.empty() ? chains : vc_chains) {
      const auto& ch = shape.chains[static_cast<size_t>(c)];
      CellNeed n{m.leaf_cell_number, ch.name, "", 0};
      for (int32_t l = 1; l <= std::min(ch.node_level, ch.top_level); ++l)
        if (ch.level_leaves[static_cast<size_t>(l)] >= m.leaf_cell_number) {
          n.type = ch.level_type[static_cast<size_t>(l)];
          n.leaves = ch.level_leaves[static_cast<size_t>(l)];
          break;
        }
      a.needs.push_back(n);
    }

  switch (res.outcome) {
    case scheduler::Outcome::Bound:
      a.verdict = WaitVerdict::Fits;
      for (const auto& p : res.pods)
        a.placement.push_back(
            {shape.nodes[static_cast<size_t>(p.node)].name, p.physical_leaf_cell_indices});
      break;
    case scheduler::Outcome::Preempting:
      a.verdict = WaitVerdict::Preempts;
      break;
    case scheduler::Outcome::Rejected:
      a.verdict = WaitVerdict::Rejected;
      break;
    default:
      a.verdict = WaitVerdict::Waits;
      break;
  }
  // The codes and when it would run.
  if (a.verdict == WaitVerdict::Fits) {
    a.would_fit.kind = WouldFit::Kind::Now;
    a.would_fit.at_s = ends.now_s;
    a.would_fit.event = "now";
    a.would_fit.text = "now";
    return a;
  }
  if (!before) return a;
  auto why = classify_wait(model, *before, shape, req, res, a.victims);
  a.reasons = why.reasons;
  std::vector<std::string> order;
  order.reserve(live.groups.size());
  for (const auto& g : live.groups) order.push_back(g.name);
  a.would_fit = would_fit(*policy, req, why, ends, order);
  return a;
}

std::string reasons_block(const std::vector<Reason>& reasons, const WouldFit& w, bool waits) {
  std::string text;
  for (size_t i = 0; i < reasons.size(); ++i) {
    const ReasonInfo& info = reason_info(reasons[i].code);
    text += std::string(i == 0 ? "  reason: " : "  also:   ") + std::string(info.name) + " (tier " +
            std::to_string(info.tier) + ", " + std::string(info.title) + "): " + reasons[i].detail +
            "\n";
    if (!reasons[i].hint.empty()) text += "    hint: " + reasons[i].hint + "\n";
  }
  if (waits && !w.text.empty()) text += "  wouldFit: " + w.text + "\n";
  return text;
}

std::string to_text(const WaitingAnswer& a, bool wide) {
  const auto& req = a.request;
  std::string text;
  if (a.verdict == WaitVerdict::Fits) {
    text = a.name + " would be placed now (on the live state): ";
    for (const auto& p : a.placement) text += p.node + "[" + leaves_text(p.leaves) + "] ";
    text +=
        "\n  if it still waits, HiveD has not seen it yet or Kubernetes refuses the node "
        "(see the pod's events)\n";
  } else if (a.verdict == WaitVerdict::Preempts) {
    std::string list;
    for (const auto& v : a.victims) list += (list.empty() ? "" : ", ") + v;
    text = a.name + " can be placed by preempting lower-priority groups: " + list +
           "\n  HiveD does so in the scheduler's preemption phase; it waits until they are "
           "deleted\n";
  } else {
    text = a.name + " " + (a.verdict == WaitVerdict::Rejected ? "is rejected" : "waits") + ": " +
           a.reason + "\n";
    if (a.vc_known) {
      std::string held;
      for (const auto& [grp, prio] : a.held_by)
        held += (held.empty() ? "" : ", ") + grp + " (" + std::to_string(prio) + ")";
      std::string need_text = why_needs_text(a.needs);
      text += "  VC " + req.virtual_cluster + " needs " + members_text(req) + " at priority " +
              std::to_string(req.priority) +
              (need_text.empty() ? std::string() : " (" + need_text + ")") + "; of its " +
              std::to_string(a.vc_cells) + " guaranteed " + why_cells_text(a.vc_cells_per_type) +
              ", " + std::to_string(a.vc_bound) + (a.vc_bound == 1 ? " is" : " are") +
              " bound to running groups" + (held.empty() ? std::string() : ": " + held) + "\n";
    }
    if (!a.bad_nodes.empty()) {
      std::string list;
      for (const auto& n : a.bad_nodes) list += (list.empty() ? "" : ", ") + n;
      text += "  " + std::to_string(a.bad_nodes.size()) +
              " physical node(s) of those chains are bad: " + list + "\n";
    }
  }
  text += reasons_block(a.reasons, a.would_fit, a.verdict != WaitVerdict::Fits);
  if (wide) {
    // What was judged, and where it came from.
    text += "  request: " + members_text(req) + " in VC " + req.virtual_cluster + " at priority " +
            std::to_string(req.priority) +
            (req.leaf_cell_type.empty() ? std::string() : ", leaf type " + req.leaf_cell_type) +
            (req.pinned_cell_id.empty() ? std::string() : ", pinned cell " + req.pinned_cell_id) +
            ", from " + a.source + "\n";
    text += "  judged on " + std::to_string(a.restored_groups) +
            " running groups rebuilt from their placements and " +
            std::to_string(a.live_bad_nodes) + " bad node(s)\n";
  }
  return text;
}

Json to_json(const WaitingAnswer& a) {
  Json cells_per_pod = Json::array();
  for (const auto& n : a.needs)
    cells_per_pod.push_back({{"leafCellNumber", n.gpus},
                             {"chain", n.chain},
                             {"cellType", n.type},
                             {"cellLeafCells", n.leaves}});
  Json held = Json::array();
  for (const auto& [grp, prio] : a.held_by) held.push_back({{"group", grp}, {"priority", prio}});
  Json reasons = Json::array();
  for (const auto& r : a.reasons) reasons.push_back(to_json(r));
  return {{"name", a.name},
          {"running", false},
          {"verdict", std::string(to_string(a.verdict))},
          {"reason", a.reasons.empty() ? Json(nullptr) : to_json(a.reasons.front())},
          {"reasons", reasons},
          {"wouldFit", to_json(a.would_fit)},
          {"schedulerReason", a.reason},
          {"vcGuaranteedCells", a.vc_cells},
          {"vcBoundCells", a.vc_bound},
          {"cellsPerPod", cells_per_pod},
          {"heldBy", held},
          {"badNodes", a.bad_nodes},
          {"victims", a.victims},
          {"explanation", to_text(a, false)},
          {"request", request_json(a.request, a.source)}};
}

}  // namespace pai::hived
