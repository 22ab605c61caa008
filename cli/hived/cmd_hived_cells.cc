// paictl hived cells: HiveD's cell trees (physical, and each VC's virtual cells
// with their bindings) as a table, as indented trees, and as an SVG picture in
// the style of plan --diagram (lib/hived/cells.h).

#include <cstdio>
#include <map>

#include "app.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "hived/cells.h"
#include "hived/cmd_hived_commands.h"
#include "hived/cmd_hived_common.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "output/output.h"
#include "output/printer.h"

namespace paictl {

namespace {

using namespace hivedcli;

struct CellsOptions {
  HivedOptions h;
  bool tree = false;
  std::string diagram;
  std::string config;  // the config HiveD runs: marks its pinned cells in --diagram
};

int run_cells(const CellsOptions& o, const Globals& g) {
  auto conn = connect_hived(o.h, g);
  if (!conn) return kExitUsage;
  int rc = kExitOk;
  auto live = read_live(*conn, rc);
  if (!live) return rc;
  if (!o.h.vc.empty() && !live->status.virtual_clusters.count(o.h.vc)) {
    print_error("HiveD has no virtual cluster " + o.h.vc);
    return kExitUsage;
  }
  if (!o.diagram.empty()) {
    std::map<std::string, std::string> pinned;
    if (!o.config.empty()) {
      auto model = load_model(o.config, g);
      if (!model) return kExitUsage;
      pinned = pai::hived::pinned_cell_addresses(*model);
    }
    auto err = write_report_file(o.diagram, pai::hived::render_cells_svg(*live, o.h.vc, pinned));
    if (!err.ok()) {
      print_error(err.error().message);
      return kExitUsage;
    }
    if (!g.quiet) std::fprintf(stderr, "wrote %s\n", o.diagram.c_str());
  }
  auto rows = pai::hived::virtual_cell_rows(*live, o.h.vc);
  if (is_structured(o.h.output)) {
    Json vcells = Json::array();
    for (const auto& r : rows)
      vcells.push_back({{"vc", r.vc},
                        {"address", r.address},
                        {"cellType", r.cell_type},
                        {"sku", r.sku},
                        {"opportunistic", r.opportunistic},
                        {"boundTo", r.bound_to.empty() ? Json(nullptr) : Json(r.bound_to)},
                        {"state", r.state},
                        {"priority", r.priority},
                        {"healthy", r.healthy},
                        {"doomed", r.doomed},
                        {"leafCells", r.leaves},
                        {"usedLeafCells", r.used_leaves}});
    Json doc = document(
        "hivedCells", {{"hived", conn->client->base()}, {"vc", o.h.vc}, {"virtualCells", vcells}});
    if (o.tree) {
      // The trees in HiveD's own shape.
      doc["physicalCluster"] = pai::hived::to_json(live->status.physical_cluster);
      Json v = Json::object();
      for (const auto& [name, cells] : live->status.virtual_clusters)
        if (o.h.vc.empty() || name == o.h.vc) {
          Json a = Json::array();
          for (const auto& c : cells) a.push_back(pai::hived::to_json(c));
          v[name] = a;
        }
      doc["virtualClusters"] = v;
    }
    print_document(doc, o.h.output);
    return kExitOk;
  }
  std::string out;
  if (o.tree) {
    out += "PHYSICAL CELLS (address, type, state, VC, -> bound virtual cell; [leaves of a node])\n";
    out += pai::hived::physical_tree_text(*live, o.h.vc);
    out += "\nVIRTUAL CELLS (address, type, state, -> bound physical cell)\n";
    out += pai::hived::virtual_tree_text(*live, o.h.vc);
  } else {
    bool wide = o.h.output == "wide";
    Table t({{"VC"},
             {"VIRTUAL CELL"},
             {"CELL TYPE"},
             {"SKU"},
             {"BOUND TO"},
             {"STATE"},
             {"PRIORITY", false, true},
             {"LEAVES USED", false, true},
             {"HEALTH"}});
    int64_t shown = 0, hidden = 0;
    for (const auto& r : rows) {
      if (r.opportunistic && !wide) {
        ++hidden;
        continue;
      }
      ++shown;
      t.add({r.vc, r.address, r.cell_type, r.sku.empty() ? "-" : r.sku,
             r.bound_to.empty() ? "-" : r.bound_to, r.state,
             r.priority == -2 ? "-" : std::to_string(r.priority),
             std::to_string(r.used_leaves) + "/" + std::to_string(r.leaves),
             r.doomed    ? "bad, doomed"
             : r.healthy ? "healthy"
                         : "bad"});
    }
    out += render_table(t, wide);
    if (hidden)
      out += "\n" + std::to_string(hidden) +
             " opportunistic leaf cells are left out (-o wide lists them; --tree shows the "
             "physical cells)\n";
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace

void build_hived_cells(Flags& cmd, Globals& g) {
  auto o = std::make_shared<CellsOptions>();
  add_hived_flags(&cmd, o->h, g);
  cmd.add_option("--vc", o->h.vc, "Only this virtual cluster's cells")->type_name("VC");
  cmd.add_flag("--tree", o->tree,
               "The physical tree and each VC's virtual trees, with their bindings");
  cmd.add_option("--diagram", o->diagram,
                 "Write an SVG of the physical cells, leaves coloured by VC, bad and doomed "
                 "marked")
      ->type_name("FILE");
  cmd.add_option("--config", o->config,
                 "The config HiveD runs (a cluster directory or a HiveD config): --diagram marks "
                 "its pinned cells")
      ->type_name("PATH");
  cmd.footer(
      "Without --tree: each VC's preassigned virtual cells, the physical cell each is bound\n"
      "to (HiveD binds a virtual cell only while it is used, or to a bad cell it dooms so\n"
      "that the VC sees the failure), its state, priority and health. --tree prints the\n"
      "physical tree down to the nodes (with the groups on each node's leaves) and the\n"
      "virtual trees; -o json|yaml with --tree adds the trees in HiveD's own shape.\n\n"
      "EXIT STATUS:\n  0 ok, 2 bad usage or an unknown VC, 3 HiveD could not be read\n");
  define_command(cmd, g, o,
                 {.validate =
                      [](const CellsOptions& o, Usage& u) {
                        validate_hived_flags(o.h, u);
                        u.error_if(!o.config.empty() && o.diagram.empty(),
                                   "--config marks pinned cells in --diagram; give --diagram FILE");
                      },
                  .run = [](const auto& o, Globals& g) { return run_cells(o, g); }});
}

}  // namespace paictl
