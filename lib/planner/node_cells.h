#pragma once
// A node's cells in the HiveD config, for `paictl node add|remove`: the text of
// services-configuration.yaml (hivedscheduler.config) with the cells of new
// nodes added, or of removed nodes taken out, by the planner's rules for a
// chain that exists already:
//
//  * A new node of a machine-type that has node cells in the config gets a
//    node cell of the same type, next to the last one: a physicalCells entry
//    of its own when the node cells are top-level (one per host, as `paictl
//    plan` writes hosts without a rack), or one more child of the pool that
//    holds them (its childCellNumber grows by one) when there is one such pool.
//    A machine-type without cells gets a chain of its own when `profiles` has
//    a planner profile for it (an Azure pool's VM size, layouts/): the
//    profile's skuType and cell types, as `paictl plan --profile` makes them,
//    and one top-level node cell per new node. A skuType whose name the config
//    uses already is prefixed with the profile's SKU (NC24S-V3-V100). Without
//    a profile the node is reported (it joins without HiveD cells; `paictl
//    plan` makes a chain for it).
//  * The added capacity goes to no VC (jobs use it opportunistically), unless
//    `vc` names one: that VC's virtualCells entry of the node cell type grows
//    by the nodes added (or is written).
//  * A removed node's cell goes (a pool's childCellNumber shrinks). When the
//    VCs' cells of that type no longer fit, the VC named by `vc`, else the only
//    VC with cells of that type, gives up the difference. A node holding a
//    pinned cell is refused.
// The result is checked as `paictl check config` checks it (with the cluster's
// layout.yaml and config.yaml); a config with errors is refused.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config/cluster_files.h"
#include "planner/profiles.h"

namespace pai::planner {

struct NodeCellsEdit {
  std::string text;                   // services-configuration.yaml afterwards
  std::vector<std::string> changes;   // one line each: what changes in the HiveD config
  std::vector<std::string> warnings;  // nodes left without cells, and why
  std::string error, hint;            // set: the change cannot be made
  bool ok() const { return error.empty(); }
};

// `cluster`: the cluster as config::check_paths read it (its services
// configuration holds the marks into `text`); `layout_text`: its layout.yaml
// as it will be (with the new hosts, without the removed ones), for the check.
// `hosts`: (hostname, machine-type) of the new nodes. `check` false skips the
// check (a dry run's placeholder names for VMs not created yet). `profiles`:
// machine-type -> the profile of its machines, for machine-types without cells.
using ChainProfiles = std::map<std::string, Profile>;
NodeCellsEdit add_node_cells(const std::string& text, const std::string& layout_text,
                             const config::Cluster& cluster,
                             const std::vector<std::pair<std::string, std::string>>& hosts,
                             const std::string& vc, bool check = true,
                             const ChainProfiles& profiles = {});

NodeCellsEdit remove_node_cells(const std::string& text, const std::string& layout_text,
                                const config::Cluster& cluster,
                                const std::vector<std::string>& hosts, const std::string& vc);

// layout.yaml's text without the machine-list entries of `hosts`.
std::string remove_layout_machines(const std::string& text, const config::Layout& layout,
                                   const std::vector<std::string>& hosts);

}  // namespace pai::planner
