// paictl hived status | groups: a running HiveD scheduler seen through its
// inspect API (lib/hived): its cells per level, VC and node, and its affinity groups.

#include <algorithm>
#include <cstdio>
#include <future>

#include "app.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "hived/cmd_hived_common.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/printable.h"

namespace paictl {

namespace {

using namespace hivedcli;
using pai::hived::gpus_of;
using pai::hived::leaves_text;
using pai::hived::placement_text;

// --- status ---------------------------------------------------------------------------

int run_status(const HivedOptions& o, const Globals& g) {
  auto h = connect_hived(o, g);
  if (!h) return kExitUsage;
  int rc = kExitOk;
  auto live = read_live(*h, rc);
  if (!live) return rc;
  if (!o.vc.empty() && !live->status.virtual_clusters.count(o.vc)) {
    print_error("HiveD at " + h->where + " has no VC " + o.vc);
    return kExitUsage;
  }
  pai::hived::Summary s = pai::hived::summarize(*live);
  if (is_structured(o.output)) {
    Json levels = Json::array();
    for (const auto& l : s.levels)
      levels.push_back({{"chain", l.chain},
                        {"level", l.level},
                        {"cellType", l.cell_type},
                        {"total", l.total},
                        {"used", l.used},
                        {"free", l.free},
                        {"reserved", l.reserved},
                        {"bad", l.bad},
                        {"doomed", l.doomed}});
    Json vcs = Json::array();
    for (const auto& v : s.vcs)
      if (o.vc.empty() || v.vc == o.vc)
        vcs.push_back({{"vc", v.vc},
                       {"sku", v.sku},
                       {"guaranteed", v.guaranteed},
                       {"used", v.used},
                       {"bad", v.bad},
                       {"opportunistic", v.opportunistic}});
    Json nodes = Json::array();
    for (const auto& n : s.nodes) {
      Json uses = Json::array();
      for (const auto& u : n.uses)
        uses.push_back(
            {{"group", u.group}, {"vc", u.vc}, {"priority", u.priority}, {"leafCells", u.indices}});
      Json reserved = Json::array();
      for (const auto& r : n.reserved)
        reserved.push_back(
            {{"group", r.group}, {"priority", r.priority}, {"leafCells", r.indices}});
      nodes.push_back({{"name", n.name},
                       {"healthy", n.healthy},
                       {"sku", n.leaf_type},
                       {"leafCells", n.leaves},
                       {"used", n.used},
                       {"opportunistic", n.opportunistic},
                       {"bad", n.bad},
                       {"groups", n.groups},
                       {"usedBy", std::move(uses)},
                       {"reservedBy", std::move(reserved)}});
    }
    print_document(document("hivedStatus", {{"hived", h->client->base()},
                                            {"groups", s.groups},
                                            {"preempting", s.preempting},
                                            {"lazilyPreempted", s.lazily_preempted},
                                            {"cells", levels},
                                            {"virtualClusters", vcs},
                                            {"nodes", nodes}}),
                   o.output);
    return kExitOk;
  }
  bool wide = o.output == "wide";
  Table cells({{"CHAIN"},
               {"LEVEL", false, true},
               {"CELL TYPE"},
               {"TOTAL", false, true},
               {"USED", false, true},
               {"FREE", false, true},
               {"RESERVED", false, true},
               {"BAD", false, true},
               {"DOOMED", false, true}});
  for (const auto& l : s.levels)
    cells.add({l.chain, std::to_string(l.level), l.cell_type, std::to_string(l.total),
               std::to_string(l.used), std::to_string(l.free), std::to_string(l.reserved),
               std::to_string(l.bad), std::to_string(l.doomed)});
  Table vcs({{"VC"},
             {"SKU"},
             {"GUARANTEED", false, true},
             {"USED", false, true},
             {"FREE", false, true},
             {"BAD", false, true},
             {"OPPORTUNISTIC", false, true}});
  for (const auto& v : s.vcs)
    if (o.vc.empty() || v.vc == o.vc)
      vcs.add({v.vc, v.sku.empty() ? "-" : v.sku, std::to_string(v.guaranteed),
               std::to_string(v.used),
               std::to_string(std::max<int64_t>(0, v.guaranteed - v.used - v.bad)),
               std::to_string(v.bad), std::to_string(v.opportunistic)});
  Table nodes({{"NODE"},
               {"SKU"},
               {"HEALTH"},
               {"GPUS", false, true},
               {"USED", false, true},
               {"OPP", false, true},
               {"USED BY (LEAF CELLS)"}});
  int64_t bad_nodes = 0;
  for (const auto& n : s.nodes) {
    if (!n.healthy) ++bad_nodes;
    // Without -o wide only the nodes worth a look: bad ones and those in use.
    if (!wide && n.healthy && n.used == 0) continue;
    std::string used_by;
    for (const auto& u : n.uses)
      used_by += (used_by.empty() ? "" : " ") + u.group + "[" + leaves_text(u.indices) + "]";
    // A preemption in progress: who has reserved which of the leaves still in use.
    for (const auto& r : n.reserved)
      used_by += (used_by.empty() ? "" : " ") + std::string("(") + r.group + " reserves " +
                 leaves_text(r.indices) + ")";
    nodes.add({n.name, n.leaf_type, n.healthy ? "Healthy" : "Bad", std::to_string(n.leaves),
               std::to_string(n.used), std::to_string(n.opportunistic),
               used_by.empty() ? "-" : used_by});
  }
  std::string out =
      render_table(cells, wide) + "\n" + render_table(vcs, wide) + "\n" + render_table(nodes, wide);
  out += "\n" + std::to_string(s.nodes.size()) + " nodes (" + std::to_string(bad_nodes) +
         " bad), " + std::to_string(s.groups) + " affinity groups (" +
         std::to_string(s.preempting) + " preempting, " + std::to_string(s.lazily_preempted) +
         " lazily preempted)" + (wide ? "" : "; idle healthy nodes are listed with -o wide") + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

// --- groups ---------------------------------------------------------------------------

// HiveD's answer for one VC: "VC x not found" (400) is bad usage, with HiveD's words.
bool known_vc(const HivedConnection& h, const std::string& vc,
              const pai::hived::Result<pai::hived::VirtualClusterStatus>& r, int& rc) {
  if (r.ok()) return true;
  const auto& e = r.error();
  if (e.kind == pai::hived::Error::Kind::Http && e.status == 400) {
    print_error("HiveD at " + h.where + " has no VC " + vc + ": " + e.summary());
    rc = kExitUsage;
  } else {
    rc = report(h, "reading VC " + vc, e);
  }
  return false;
}

int run_groups(const HivedOptions& o, const Globals& g) {
  auto h = connect_hived(o, g);
  if (!h) return kExitUsage;
  // With --vc, the VC is looked up at the same time (GET .../virtualclusters/VC).
  std::future<pai::hived::Result<pai::hived::VirtualClusterStatus>> vc;
  if (!o.vc.empty())
    vc = std::async(std::launch::async, [&] { return h->client->virtual_cluster(o.vc); });
  auto r = h->client->affinity_groups();
  if (vc.valid()) {
    int rc = kExitOk;
    if (!known_vc(*h, o.vc, vc.get(), rc)) return rc;
  }
  if (!r.ok()) return report(*h, "reading the affinity groups", r.error());
  std::vector<pai::hived::AffinityGroup> groups;
  for (const auto& gr : *r)
    if (o.vc.empty() || gr.vc == o.vc) groups.push_back(gr);
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    return a.vc != b.vc               ? a.vc < b.vc
           : a.priority != b.priority ? a.priority > b.priority
                                      : a.name < b.name;
  });
  if (o.output == "name") {
    for (const auto& gr : groups) std::printf("%s\n", pai::util::printable(gr.name).c_str());
    return kExitOk;
  }
  if (is_structured(o.output)) {
    Json items = Json::array();
    for (const auto& gr : groups) items.push_back(pai::hived::group_summary_json(gr));
    print_document(list_document("hivedGroup", items), o.output);
    return kExitOk;
  }
  Table t({{"GROUP"},
           {"VC"},
           {"PRIORITY", false, true},
           {"STATE"},
           {"GPUS", false, true},
           {"NODES"},
           {"LAZY PREEMPTED BY", true}});
  for (const auto& gr : groups) {
    std::string state = gr.state;
    if (gr.lazy_preemption_status) state += " (lazily preempted)";
    t.add({gr.name, gr.vc, std::to_string(gr.priority), state, std::to_string(gpus_of(gr)),
           placement_text(gr),
           gr.lazy_preemption_status ? gr.lazy_preemption_status->preemptor : "-"});
  }
  if (groups.empty()) {
    if (!g.quiet)
      std::fprintf(stderr, "no affinity group is allocated or preempting%s\n",
                   o.vc.empty() ? "" : (" in VC " + o.vc).c_str());
    return kExitOk;
  }
  print_table(t, o.output == "wide");
  return kExitOk;
}

}  // namespace

void build_hived_status(Flags& cmd, Globals& g) {
  auto o = std::make_shared<HivedOptions>();
  add_hived_flags(&cmd, *o, g);
  cmd.add_option("--vc", o->vc, "Only this virtual cluster in the VC table")->type_name("VC");
  cmd.footer(
      "Cells per chain and level (doomed: bad cells bound to a VC so that it sees the failure),\n"
      "each VC's guaranteed leaf cells per SKU and how many are used or bad, and its\n"
      "opportunistic use; the nodes in use or bad, each with who uses which of its leaf\n"
      "cells (-o wide: every node).\n\n"
      "EXIT STATUS:\n  0 ok, 2 bad usage, 3 HiveD could not be read\n");
  define_command(cmd, g, o,
                 {.validate = validate_hived_flags, .run = [](const HivedOptions& o, Globals& g) {
                    int rc = run_status(o, g);
                    print_timing(g);
                    return rc;
                  }});
}

void build_hived_groups(Flags& cmd, Globals& g) {
  auto o = std::make_shared<HivedOptions>();
  add_hived_flags(&cmd, *o, g, true, "group name");
  cmd.add_option("--vc", o->vc, "Only the groups of this virtual cluster")->type_name("VC");
  cmd.footer("EXIT STATUS:\n  0 ok, 2 bad usage, 3 HiveD could not be read\n");
  define_command(cmd, g, o,
                 {.validate = validate_hived_flags,
                  .run = [](const auto& o, Globals& g) { return run_groups(o, g); }});
}

}  // namespace paictl
