#pragma once
// The cell hierarchy inside one machine, derived from its topology.
//
// GPUs are grouped bottom-up by how close they are (complete linkage: every
// pair inside a group is at least as close as the group's threshold), with the
// distance between two GPUs compared as
//
//   1. their link in the matrix: NV# < PIX = PSB < PXB < PHB < NODE < SYS;
//   2. their NUMA placement: same NUMA node < same socket < different sockets;
//   3. for NVLink: more bonded links is closer (NV2 < NV1);
//   4. for NVLink-connected GPUs, whose PCIe path the matrix hides: the PCIe
//      path they share to their closest common NIC.
//
// Each threshold at which groups merge is a candidate level. A level is kept
// only when all its groups have the same number of GPUs, because a HiveD cell
// type has one childCellNumber. The whole machine is the node-level cell.
// Levels are named SOCKET or NUMA when a group is exactly the GPUs of a socket
// or NUMA node, else after the link that joins them (NVLINK, SWITCH, PCIE,
// HOSTBRIDGE). The leaf order lists GPU indices as the tree visits them.

#include <string>
#include <vector>

#include "planner/hosts.h"

namespace pai::planner {

struct HierarchyLevel {
  std::string kind;    // NVLINK, SWITCH, PCIE, HOSTBRIDGE, NUMA, SOCKET (unique within a machine)
  int children = 0;    // cells of the level below in one cell of this level
  int gpus = 0;        // GPUs in one cell of this level
  std::string reason;  // why these GPUs are grouped, e.g. "joined by NV2 links"
};

struct Hierarchy {
  int gpus = 0;
  std::vector<HierarchyLevel> levels;  // bottom-up, without the leaf and the node level
  int node_children = 0;               // children of the node-level cell
  std::vector<int> leaf_order;         // GPU indices in tree order
  std::vector<std::string> notes;      // levels that were dropped and why, missing facts
  // One string that equal hierarchies share, e.g. "8:NUMA2/SOCKET2/NODE2".
  std::string signature() const;
  // Whether leaf_order is 0, 1, 2, ... (then HiveD infers the leaf addresses).
  bool identity_order() const;
};

Hierarchy derive_hierarchy(const Host& host);

}  // namespace pai::planner
