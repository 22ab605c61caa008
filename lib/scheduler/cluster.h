#pragma once
// What every policy and the simulator need to know about a cluster, derived
// once from the checked HiveD model: leaf cell types (SKUs), nodes and their
// leaf cells, and what each virtual cluster is guaranteed.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pai::config {
struct HivedModel;
}

namespace pai::scheduler {

struct ClusterShape {
  struct LeafType {
    std::string name;
    std::vector<int32_t> chains;  // in physicalCells order
    int64_t leaf_cells = 0;
  };
  struct Chain {
    std::string name;
    int32_t leaf_type = -1;
    int32_t node_level = 0;  // level of the node-level cells
    int32_t top_level = 0;
    int64_t leaf_cells = 0;
    std::vector<std::string> level_type;  // [level] -> cell type name (index 0 unused)
    std::vector<int64_t> level_leaves;    // [level] -> leaf cells in one cell of that level
  };
  struct Node {
    std::string name;
    std::vector<int32_t> leaf_cells;  // model cell indices, by chain then leaf order
    int64_t leaves = 0;
  };
  struct PinnedCell {
    std::string id;
    int32_t cell = -1;  // model cell index
    int32_t chain = -1;
    int64_t leaf_cells = 0;
  };
  struct VirtualCluster {
    std::string name;
    std::vector<int64_t> guaranteed;  // [leaf type] -> leaf cells in non-pinned virtual cells
    std::vector<int64_t> pinned;      // [leaf type] -> leaf cells in pinned cells
    std::vector<PinnedCell> pinned_cells;
  };

  std::vector<LeafType> leaf_types;  // in order of first appearance in physicalCells
  std::vector<Chain> chains;
  std::vector<Node> nodes;
  std::vector<VirtualCluster> vcs;
  int64_t leaf_cells = 0;

  int32_t find_vc(std::string_view name) const;
  // The same, trying `hint` (a caller's guess of the index, -1 = none) first.
  int32_t find_vc(std::string_view name, int32_t hint) const {
    if (hint >= 0 && static_cast<size_t>(hint) < vcs.size() &&
        vcs[static_cast<size_t>(hint)].name == name)
      return hint;
    return find_vc(name);
  }
  int32_t find_leaf_type(std::string_view name) const;
  int32_t find_node(std::string_view name) const;
  int32_t find_chain(std::string_view name) const;
};

ClusterShape describe_cluster(const config::HivedModel& model);

}  // namespace pai::scheduler
