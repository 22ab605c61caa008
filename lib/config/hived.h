#pragma once
// The HiveD scheduler config (physicalCluster + virtualClusters), as written.
// Field names follow HiveD's pkg/api/types.go. build_hived_model() in
// hived_model.h turns it into the checked model the scheduler uses.

#include <string>
#include <vector>

#include "config/context.h"

namespace pai::config {

struct SkuTypeSpec {
  std::string name;
  double gpu = 0;
  double cpu = 0;
  double memory_bytes = 0;
  Mark mark;
  Mark cpu_mark, memory_mark;  // the values, where an operator edits them
};

struct CellTypeSpec {
  std::string name;
  std::string child_cell_type;
  int64_t child_cell_number = 0;
  bool is_node_level = false;
  Mark mark;             // the type's key
  Mark child_type_mark;  // its childCellType value
  Mark child_number_mark;
};

struct PhysicalCellSpec {
  std::string cell_type;     // may be empty below the top (inferred from the parent)
  std::string cell_address;  // as written (relative); empty = inferred
  std::string pinned_cell_id;
  std::vector<PhysicalCellSpec> children;
  bool has_children = false;  // cellChildren was written
  Mark mark;                  // the list item
  Mark type_mark, address_mark, pinned_mark;
};

struct VirtualCellSpec {
  std::string cell_type;  // "CHAIN.TYPE..." or a chain top type
  int64_t cell_number = 0;
  Mark mark, type_mark, number_mark;
};

struct PinnedCellRef {
  std::string pinned_cell_id;
  Mark mark;
};

struct VirtualClusterSpec {
  std::string name;
  Mark mark;
  std::vector<VirtualCellSpec> virtual_cells;
  std::vector<PinnedCellRef> pinned_cells;
};

struct HivedConfig {
  std::string file;
  bool embedded = false;  // read from services-configuration.yaml hivedscheduler.config
  bool valid = true;      // false when the document could not be read at all
  bool has_sku_types = false;
  bool has_virtual_clusters = false;
  std::vector<SkuTypeSpec> sku_types;
  std::vector<CellTypeSpec> cell_types;
  std::vector<PhysicalCellSpec> physical_cells;
  std::vector<VirtualClusterSpec> virtual_clusters;
  Mark physical_cluster_mark, virtual_clusters_mark;

  const SkuTypeSpec* find_sku_type(std::string_view name) const;
  const CellTypeSpec* find_cell_type(std::string_view name) const;
};

// Reads a HiveD config document (schema checks only; see build_hived_model for the rest).
HivedConfig load_hived_config(const Node* root, Context& ctx);

}  // namespace pai::config
