#pragma once
// The cell trees of a live HiveD, for `paictl hived cells`: the physical tree
// (every cell with its state, health, VC and binding) and each VC's virtual
// cells with the physical cells they are bound to, as rows, as indented text,
// and as an SVG in the style of `plan --diagram` (leaves coloured by VC, bad
// cells outlined in red, doomed ones crossed).

#include <map>
#include <string>
#include <vector>

#include "hived/live.h"

namespace pai::hived {

// One preassigned virtual cell (a root of a VC's virtual tree).
struct VirtualCellRow {
  std::string vc;
  std::string address;  // "prod/0"
  std::string cell_type;
  std::string sku;
  std::string bound_to;  // physical address, "" when unbound
  std::string state;
  int32_t priority = -2;
  bool healthy = true;
  bool doomed = false;  // bound to a bad physical cell
  int64_t leaves = 0, used_leaves = 0;
  bool opportunistic = false;  // HiveD's "<address>-opp" entries
};

std::vector<VirtualCellRow> virtual_cell_rows(const LiveState& live, const std::string& vc = {});

// Indented text trees. `vc` keeps only the cells that VC holds.
std::string physical_tree_text(const LiveState& live, const std::string& vc = {});
std::string virtual_tree_text(const LiveState& live, const std::string& vc = {});

// The SVG picture of the physical tree: leaves coloured by VC, bad nodes and
// leaves outlined in red (not the cells above them), lazily preempted leaves
// dashed, each leaf's tooltip (<title>) naming its group and priority.
// `pinned` (physical address -> pinnedCellId, from the config HiveD runs:
// pinned_cell_addresses) marks the pinned cells; HiveD's answers do not say.
std::string render_cells_svg(const LiveState& live, const std::string& vc = {},
                             const std::map<std::string, std::string>& pinned = {});
// The physical addresses of a config's pinned cells, with their ids.
std::map<std::string, std::string> pinned_cell_addresses(const config::HivedModel& model);

}  // namespace pai::hived
