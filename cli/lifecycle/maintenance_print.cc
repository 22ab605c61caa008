#include "lifecycle/maintenance_print.h"

#include <ctime>

#include "hived/maintenance_json.h"
#include "util/time.h"

namespace paictl::lifecycle {

namespace {

using pai::hived::GroupAction;
using pai::hived::MaintenancePlan;

std::string maintenance_print_time(double t, double now) {
  if (t <= now) return "now";
  return "~" + pai::util::format_utc(static_cast<std::time_t>(t), "%Y-%m-%d %H:%M UTC");
}

std::string maintenance_print_count(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string maintenance_print_join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string maintenance_print_action(const pai::hived::PlannedGroup& g, double now) {
  switch (g.action) {
    case GroupAction::WaitedFor:
      return "waited for until " + maintenance_print_time(g.until_s.value_or(now), now) +
             (g.lazily_preempted ? "; lazily preempted on a HiveD restart" : "");
    case GroupAction::Evicted:
      return "evicted";
    case GroupAction::LazilyPreempted:
      return "lazily preempted";
    case GroupAction::Blocks:
      return "blocks";
  }
  return "";
}

std::string maintenance_print_wait(double s) {
  if (s <= 0) return "no wait";
  auto v = static_cast<int64_t>(s);
  if (v % 3600 == 0) return std::to_string(v / 3600) + "h";
  if (v % 60 == 0) return std::to_string(v / 60) + "m";
  return std::to_string(v) + "s";
}

}  // namespace

std::string maintenance_summary(const MaintenancePlan& plan) {
  size_t nodes = 0, waited = 0, lazy = 0;
  for (const auto& b : plan.batches) {
    nodes += b.nodes.size();
    for (const auto& g : b.groups) {
      if (g.action == GroupAction::WaitedFor) ++waited;
      if (g.action == GroupAction::LazilyPreempted || g.lazily_preempted) ++lazy;
    }
  }
  std::string s =
      maintenance_print_count(nodes, "node", "nodes") + " in " +
      maintenance_print_count(plan.batches.size(), "batch", "batches") + " (" +
      maintenance_print_count(static_cast<size_t>(plan.nodes_per_batch), "node", "nodes") +
      " a batch at most)";
  if (waited) s += ", " + maintenance_print_count(waited, "group", "groups") + " waited for";
  if (!plan.evicted.empty())
    s += ", " + maintenance_print_count(plan.evicted.size(), "group", "groups") + " evicted";
  if (lazy) s += ", " + std::to_string(lazy) + " lazily preempted on a HiveD restart";
  if (!plan.blocked.empty())
    s += ", " + maintenance_print_count(plan.blocked.size(), "node", "nodes") + " blocked";
  return s;
}

std::string maintenance_text(const MaintenancePlan& plan, bool wide) {
  const double now = plan.now_s;
  std::string out = "Maintenance plan: " + maintenance_summary(plan) + ".\n";
  if (plan.hived)
    out += "Ordered on HiveD's running groups; max unavailable " +
           pai::hived::to_string(plan.max_unavailable) +
           (plan.max_unavailable.kind == pai::hived::MaxUnavailable::Kind::Percent
                ? " (of " + std::to_string(plan.cluster_nodes) +
                      " nodes, and of each VC's guaranteed leaf cells)"
                : "") +
           "; running groups waited for up to " + maintenance_print_wait(plan.wait_for_groups_s) +
           (plan.evict ? ", then evicted" : ", never evicted") + ".\n";
  else
    out += "Plain order: " + plan.fallback_reason + ".\n";
  for (const auto& b : plan.batches) {
    out += "\nbatch " + std::to_string(b.index) + "  start " +
           maintenance_print_time(b.start_s, now) + "  " + maintenance_print_join(b.nodes) + "\n";
    out += "  " + b.reason + "\n";
    if (!b.groups.empty()) {
      std::vector<Column> cols = {
          {"GROUP"},        {"VC"},          {"PRIORITY", false, true}, {"GPUS", false, true},
          {"WHAT HAPPENS"}, {"NODES", true}, {"REASON", true}};
      Table t(cols);
      for (const auto& g : b.groups)
        t.add({g.name, g.vc, std::to_string(g.priority), std::to_string(g.leaves),
               maintenance_print_action(g, now), maintenance_print_join(g.nodes),
               g.reason + (g.lazy_reason.empty() ? "" : "; " + g.lazy_reason)});
      std::string table = render_table(t, wide);
      for (size_t pos = 0; pos < table.size();) {
        size_t nl = table.find('\n', pos);
        if (nl == std::string::npos) nl = table.size();
        out += "  " + table.substr(pos, nl - pos) + "\n";
        pos = nl + 1;
      }
    }
    for (const auto& d : b.doomed) {
      out += "  doomed: VC " + d.vc + ": " + std::to_string(d.cells) + " " + d.cell_type + " cell" +
             (d.cells == 1 ? "" : "s") + " (" + std::to_string(d.leaves) + " of its " +
             std::to_string(d.guaranteed_leaves) + " guaranteed leaf cells";
      if (d.added_leaves != d.leaves)
        out += ", " + std::to_string(d.added_leaves) + " by this batch";
      if (d.allowed_leaves >= 0)
        out += "; " + pai::hived::to_string(plan.max_unavailable) + " allows " +
               std::to_string(d.allowed_leaves);
      out += ")\n";
    }
  }
  if (!plan.blocked.empty()) {
    out += "\nNot in any batch (a running group cannot be waited for; --evict would evict it):\n";
    for (const auto& b : plan.blocked) out += "  " + b.node + ": " + b.reason + "\n";
    for (const auto& g : plan.blocking)
      out += "  " + g.name + " (" + g.vc + "): " + g.reason + "\n";
  }
  if (!plan.unknown_nodes.empty())
    out += "\nNot in HiveD's cells (maintained as idle): " +
           maintenance_print_join(plan.unknown_nodes) + "\n";
  for (const auto& w : plan.warnings) out += "warning: " + w + "\n";
  return out;
}

Json maintenance_document(const MaintenancePlan& plan) {
  return document("maintenancePlan", pai::hived::maintenance_json(plan));
}

}  // namespace paictl::lifecycle
