#include "hived/fit.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <memory>
#include <unordered_map>

#include "config/hived_model.h"
#include "diag/diagnostic.h"
#include "hived/why.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"
#include "util/time.h"

namespace pai::hived {

namespace {

config::PhysicalCellSpec spec_of(const PhysicalCellStatus& c,
                                 std::map<std::string, config::CellTypeSpec>& types,
                                 std::vector<std::string>& type_order) {
  config::PhysicalCellSpec s;
  s.cell_type = c.cell_type;
  s.cell_address = last_segment(c.cell_address);
  if (!c.children.empty()) {
    auto [it, fresh] = types.try_emplace(c.cell_type);
    if (fresh) {
      it->second.name = c.cell_type;
      it->second.child_cell_type = c.children.front().cell_type;
      it->second.child_cell_number = static_cast<int64_t>(c.children.size());
      it->second.is_node_level = c.is_node_level;
      type_order.push_back(c.cell_type);
    }
    s.has_children = true;
    s.children.reserve(c.children.size());
    for (const auto& k : c.children) s.children.push_back(spec_of(k, types, type_order));
  }
  return s;
}

// Every type of a chain is on its first branch.
void chain_types(const PhysicalCellStatus& top,
                 std::unordered_map<std::string, std::string>& chain_of) {
  for (const PhysicalCellStatus* c = &top; c;
       c = c->children.empty() ? nullptr : &c->children.front())
    chain_of.emplace(c->cell_type, top.cell_type);
}

// The specs of `top`'s cells by their full address in HiveD's answer.
void index_specs(const PhysicalCellStatus& c, config::PhysicalCellSpec& s,
                 std::unordered_map<std::string, config::PhysicalCellSpec*>& by_address) {
  by_address.emplace(c.cell_address, &s);
  for (size_t i = 0; i < c.children.size() && i < s.children.size(); ++i)
    index_specs(c.children[i], s.children[i], by_address);
}

// A VC's virtual root that HiveD shows bound to a healthy physical cell while
// nothing uses it is a pinned cell: HiveD binds a pinned cell when it starts
// and keeps it bound, while it binds any other preassigned cell only while a
// group uses it (or, doomed, to a bad cell). A pinned cell in use looks like
// any used cell and is not recognised.
bool idle_pinned(const VirtualCellStatus& c) {
  return c.physical_cell && c.cell_state == "Free" && c.cell_priority == -2 &&
         c.physical_cell->cell_healthiness == "Healthy";
}

}  // namespace

std::string_view to_string(FitVerdict::Kind k) {
  switch (k) {
    case FitVerdict::Kind::Fits:
      return "fits";
    case FitVerdict::Kind::Preempts:
      return "preempts";
    case FitVerdict::Kind::Waits:
      return "waits";
    case FitVerdict::Kind::Rejected:
      return "rejected";
  }
  return "waits";
}

config::HivedConfig config_of(const ClusterStatus& status) {
  config::HivedConfig cfg;
  cfg.file = "(the live HiveD)";
  cfg.has_virtual_clusters = true;
  std::map<std::string, config::CellTypeSpec> types;
  std::vector<std::string> type_order;
  std::unordered_map<std::string, std::string> chain_of;  // cell type -> top type of its chain
  for (const auto& top : status.physical_cluster) {
    cfg.physical_cells.push_back(spec_of(top, types, type_order));
    chain_types(top, chain_of);
  }
  for (const auto& t : type_order) cfg.cell_types.push_back(types[t]);
  // The specs by address, made only when a VC shows an idle pinned cell: most
  // clusters have none, and it holds every physical cell.
  std::unordered_map<std::string, config::PhysicalCellSpec*> spec_at;
  bool indexed = false;
  auto spec_at_address = [&](const std::string& address) -> config::PhysicalCellSpec* {
    if (!indexed) {
      for (size_t i = 0; i < status.physical_cluster.size(); ++i)
        index_specs(status.physical_cluster[i], cfg.physical_cells[i], spec_at);
      indexed = true;
    }
    auto at = spec_at.find(address);
    return at == spec_at.end() ? nullptr : at->second;
  };
  for (const auto& [vc, cells] : status.virtual_clusters) {
    config::VirtualClusterSpec v;
    v.name = vc;
    std::vector<std::pair<std::string, int64_t>> counts;  // in order of appearance
    for (const auto& c : cells) {
      if (is_opportunistic_entry(c)) continue;
      if (idle_pinned(c)) {
        config::PhysicalCellSpec* at = spec_at_address(c.physical_cell->cell_address);
        if (at && at->pinned_cell_id.empty()) {
          // HiveD does not say the id: one of paictl's own, for this VC's root.
          at->pinned_cell_id = "pinned:" + c.cell_address;
          config::PinnedCellRef ref;
          ref.pinned_cell_id = at->pinned_cell_id;
          v.pinned_cells.push_back(ref);
          continue;
        }
      }
      auto ch = chain_of.find(c.cell_type);
      std::string type = ch == chain_of.end() || ch->second == c.cell_type
                             ? c.cell_type
                             : ch->second + "." + c.cell_type;
      auto it = std::find_if(counts.begin(), counts.end(),
                             [&](const auto& p) { return p.first == type; });
      if (it == counts.end())
        counts.push_back({type, 1});
      else
        ++it->second;
    }
    for (const auto& [type, n] : counts) {
      config::VirtualCellSpec s;
      s.cell_type = type;
      s.cell_number = n;
      v.virtual_cells.push_back(s);
    }
    cfg.virtual_clusters.push_back(std::move(v));
  }
  return cfg;
}

util::Result<std::shared_ptr<config::HivedModel>> model_of(const ClusterStatus& status) {
  config::HivedConfig cfg = config_of(status);
  diag::List diags;
  config::Context ctx(cfg.file, diags);
  auto model = std::make_shared<config::HivedModel>(config::build_hived_model(cfg, ctx));
  if (diags.has_errors() || !model->complete) {
    std::string error = "the live cluster status does not make a HiveD config";
    for (const auto& d : diags.items())
      if (d.severity == diag::Severity::Error) {
        error += ": " + d.message;
        break;
      }
    return util::Error{error, ""};
  }
  return model;
}

util::Result<FitVerdict> fit(const LiveState& live, const scheduler::GroupRequest& request,
                             const std::map<std::string, double>& expected_end, double now_s) {
  auto built = model_of(live.status);
  if (!built) return std::move(built).error();
  const auto& model = built.value();
  auto made = policy_now(live, *model);
  if (!made.ok()) return std::move(made).error();
  auto policy = std::move(*made);

  FitVerdict v;
  auto where = [&](const scheduler::ScheduleResult& r) {
    std::map<std::string, int64_t> per_node;
    for (const auto& p : r.pods)
      per_node[policy->cluster().nodes[static_cast<size_t>(p.node)].name] +=
          static_cast<int64_t>(p.physical_leaf_cell_indices.size());
    std::string s;
    for (const auto& [n, k] : per_node)
      s += (s.empty() ? "" : " ") + n + "[" + std::to_string(k) + "]";
    return s;
  };
  auto before = scheduler::snapshot_hived(*policy);
  auto res = policy->schedule(request, false);
  std::vector<std::string> victims;
  if (res.outcome == scheduler::Outcome::Waiting &&
      res.reason == "the placement needs preemption") {
    auto pre = policy->schedule(request, true);
    if (pre.outcome == scheduler::Outcome::Preempting) {
      res = pre;
      for (const auto& x : res.victims) victims.push_back(x.group);
    }
  }
  WaitClassification why;
  if (before && res.outcome != scheduler::Outcome::Bound)
    why = classify_wait(*model, *before, policy->cluster(), request, res, victims);
  switch (res.outcome) {
    case scheduler::Outcome::Bound:
      v.kind = FitVerdict::Kind::Fits;
      v.reason = "fits now as cells (chain " + res.cell_chain + ": " + where(res) + ")";
      v.start_s = now_s;
      v.estimate = "now";
      v.would_fit.kind = WouldFit::Kind::Now;
      v.would_fit.at_s = now_s;
      v.would_fit.text = "now";
      return v;
    case scheduler::Outcome::Preempting: {
      v.kind = FitVerdict::Kind::Preempts;
      for (const auto& x : res.victims) v.victims.push_back(x.group);
      std::string list;
      for (const auto& x : v.victims) list += (list.empty() ? "" : ", ") + x;
      v.reason = "fits now by preempting lower-priority groups: " + list;
      v.start_s = now_s;
      v.estimate = "now, once the preempted groups are deleted";
      v.reasons = why.reasons;
      v.would_fit.kind = WouldFit::Kind::Now;
      v.would_fit.at_s = now_s;
      v.would_fit.event = "its victims are deleted";
      v.would_fit.text = "now, once its victims are deleted";
      return v;
    }
    case scheduler::Outcome::Rejected:
      v.kind = FitVerdict::Kind::Rejected;
      v.reason = res.reason;
      v.estimate = "never: HiveD rejects the request";
      v.reasons = why.reasons;
      v.would_fit.kind = WouldFit::Kind::Never;
      v.would_fit.change = why.change;
      v.would_fit.text =
          "never under this config" + (why.change.empty() ? std::string() : ": " + why.change);
      return v;
    case scheduler::Outcome::Waiting:
      break;
  }
  v.kind = FitVerdict::Kind::Waits;
  v.reason = res.reason;
  v.reasons = why.reasons;

  // The start: release the running groups in the order of their expected ends.
  ExpectedEnds e{expected_end, now_s};
  std::vector<std::string> order;
  order.reserve(live.groups.size());
  for (const auto& g : live.groups) order.push_back(g.name);
  v.would_fit = would_fit(*policy, request, why, e, order);
  const WouldFit& w = v.would_fit;
  v.released = static_cast<int32_t>(w.after_groups.size());
  if (w.kind == WouldFit::Kind::At) {
    v.start_s = w.at_s;
    v.after_group = w.after_groups.back();
    const double end = expected_end.at(v.after_group);
    v.estimate =
        "about " + util::format_utc(static_cast<std::time_t>(*v.start_s), "%Y-%m-%d %H:%M UTC") +
        ", when " + v.after_group + (end <= now_s ? " (past its expected end)" : "") + " ends" +
        (v.released > 1 ? " (the " + std::to_string(v.released) +
                              " running groups expected to end first released)"
                        : "");
    return v;
  }
  size_t known = 0;
  for (const auto& g : live.groups) known += expected_end.count(g.name);
  const size_t unknown = live.groups.size() - known;
  if (known == 0)
    v.estimate = "unknown: no running group has an expected end";
  else if (unknown > 0)
    v.estimate = "unknown: it does not fit when the " + std::to_string(known) +
                 " group(s) with an expected end have ended; " + std::to_string(unknown) +
                 " running group(s) have none";
  else
    v.estimate = "unknown: it does not fit even when every running group has ended";
  return v;
}

}  // namespace pai::hived
