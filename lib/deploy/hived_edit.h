#pragma once
// The cluster files' change when nodes join or leave (node add|remove, and the
// Azure VMs an install creates): the nodes' cells in the HiveD config
// (planner/node_cells.h) and, for a removal, their layout.yaml entries. Planned
// from the files as they are, written as the use case's last step before the
// push.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "deploy/host_plan.h"
#include "deploy/usecase.h"
#include "planner/node_cells.h"

namespace pai::deploy {

struct HivedEdit {
  std::string services_file, layout_file;
  std::string services_before, services_after;
  std::string layout_before, layout_after;
  planner::NodeCellsEdit edit;
  std::string master;  // the master's hostname, where the push goes
  bool services_changed() const { return services_after != services_before; }
  bool layout_changed() const { return layout_after != layout_before; }
  // services-configuration.yaml's change as a unified diff ("" when none).
  std::string diff() const;
};

// A new node: (hostname, machine-type); an empty machine-type is layout.yaml's.
using NewNode = std::pair<std::string, std::string>;

struct HivedAddRequest {
  std::string cluster_dir;
  std::vector<NewNode> nodes;
  std::string vc;  // the VC that gets the new cells; "" none
  // false: the result is not checked (placeholder names of VMs Azure has not
  // created yet).
  bool check = true;
  // Nodes that have cells already are left out quietly (the VMs of an install).
  bool only_new = false;
  // The machine profiles (layouts/), for the chains of Azure pools' VM sizes.
  std::string layouts_dir;
};
// The new nodes' cells. Nodes not in layout.yaml are left out (the join refuses
// them). A cluster without services-configuration.yaml changes nothing.
UseCaseResult<HivedEdit> plan_hived_add(const HivedAddRequest& request);

// The nodes' cells, and (`from_layout`) their layout.yaml entries; `vc` gives
// up the cells that no longer fit.
UseCaseResult<HivedEdit> plan_hived_remove(const std::string& cluster_dir,
                                           const std::vector<std::string>& nodes,
                                           const std::string& vc, bool from_layout);

// Writes what changed: layout.yaml, then services-configuration.yaml (0600).
UseCaseResult<void> write_hived_edit(const HivedEdit& edit);

struct PushRequest {
  std::string cluster_dir;
  int wait_s = 300;
  size_t parallel = 64;
  std::string templates_dir;
  bool accept_master_count = false;  // PrepareRequest's: node remove of a master
};

// The last step of node add|remove: the changed files written, then the hived
// and config phases run on the master.
struct PushOutcome {
  bool ran = false;  // something changed: the files were written and pushed
  // The files could not be written (nothing was pushed), or the push could not
  // be planned (the files are written).
  std::optional<UseCaseError> error;
  bool written = false;
  HostStage stage;  // the push's run, when it was planned
};
PushOutcome push_hived_edit(const HivedEdit& edit, const PushRequest& request,
                            const InstallDeps& deps, const Callbacks& callbacks);

}  // namespace pai::deploy
