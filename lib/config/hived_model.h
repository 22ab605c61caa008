#pragma once
// The checked HiveD model: cell types with their chains and levels, the
// physical cell tree with inferred addresses, nodes and leaf indices, and the
// virtual clusters resolved to (chain, level, count). It follows HiveD's
// pkg/api/config.go (address inference) and pkg/algorithm/config.go (chains,
// levels, initial VC assignment check), and reports as diagnostics what HiveD
// panics on and what it silently accepts. The scheduler builds on this model.

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/hived.h"

namespace pai::config {

struct CellTypeInfo {
  std::string name;
  int32_t level = 0;   // leaf = 1
  int32_t child = -1;  // index of the child type; -1 for a leaf
  int64_t child_number = 0;
  bool defined = false;  // under cellTypes (false for leaf types)
  bool is_node_level = false;
  bool has_node = false;         // a node or above
  bool is_multi_nodes = false;   // spans several nodes
  int32_t leaf_type = -1;        // index of this chain's leaf type
  int64_t leaf_cell_number = 1;  // leaves in one cell of this type
  bool valid = true;             // false in or above a cycle or an invalid type
  Mark mark;
};

struct PhysicalCellInfo {
  int32_t chain = -1;
  int32_t level = 0;
  int32_t type = -1;
  int32_t parent = -1;
  std::vector<int32_t> children;
  int32_t node = -1;        // index into nodes, for node-level cells and below
  int32_t leaf_index = -1;  // GPU index, for leaf cells
  bool is_node = false;     // the node-level cell of its node
  std::string address;      // full path, e.g. "0/worker-1/3"
  std::string pinned_id;
  Mark mark;
};

struct ChainInfo {
  std::string name;  // the top cell type
  int32_t top_type = -1;
  int32_t leaf_type = -1;
  int32_t top_level = 0;
  std::vector<int32_t> level_type;  // [level] -> type index (index 0 unused)
  std::vector<int64_t>
      first_cell_children;  // [level] -> children of the first cell at that level (HiveD's rule)
  std::vector<int32_t> top_cells;  // cells at the top level
  int64_t leaf_cells = 0;
  Mark mark;  // first physicalCells entry
};

struct NodeInfo {
  std::string name;
  int64_t leaves = 0;               // over all chains
  std::vector<int32_t> chains;      // chains with cells on this node
  std::vector<int32_t> leaf_types;  // leaf type per chain (same order)
  Mark mark;                        // first node-level cell
};

struct VirtualCellInfo {
  int32_t chain = -1;
  int32_t level = 0;
  int64_t count = 0;
  std::string cell_type;  // as written
  Mark mark;
};

struct PinnedCellInfo {
  std::string id;
  int32_t cell = -1;
  Mark mark;
};

struct VirtualClusterInfo {
  std::string name;
  Mark mark;
  std::vector<VirtualCellInfo> cells;
  std::vector<PinnedCellInfo> pinned;
};

struct HivedModel {
  std::vector<CellTypeInfo> types;
  std::unordered_map<std::string, int32_t> type_index;
  std::vector<ChainInfo> chains;
  std::unordered_map<std::string, int32_t> chain_index;
  std::vector<PhysicalCellInfo> cells;
  std::vector<NodeInfo> nodes;
  std::unordered_map<std::string, int32_t> node_index;
  std::map<std::string, int32_t> pinned_cells;               // id -> cell
  std::map<int32_t, std::vector<int32_t>> leaf_type_chains;  // leaf type -> chains
  std::vector<VirtualClusterInfo> vcs;
  std::vector<SkuTypeSpec> sku_types;
  bool complete = true;  // false when errors left parts of the config out of the model

  int32_t find_type(std::string_view name) const;
  // The name of type `t`; "" for an index out of range (-1: no type).
  const std::string& type_name(int32_t t) const;
  int32_t find_chain(std::string_view name) const;
  const VirtualClusterInfo* find_vc(std::string_view name) const;
};

// Checks `cfg` and builds the model; every finding goes to `ctx`. Parts with
// errors are left out (and `complete` is false), so later checks never see
// inconsistent data.
HivedModel build_hived_model(const HivedConfig& cfg, Context& ctx);

}  // namespace pai::config
