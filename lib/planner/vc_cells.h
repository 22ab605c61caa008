#pragma once
// How a virtual cluster's share of one chain becomes cells, and which job
// sizes its cells can block.
//
// HiveD places a small job of a VC inside any of the VC's cells that can hold
// it, a node-level (or larger) cell included, and does not move it (its
// intra-VC scheduler has a TODO for this). When a VC holds a large cell beside
// smaller ones, a small job that arrives first can land in the large cell; a
// later job the size of that cell then waits although the VC has enough free
// GPUs in its smaller cells. A VC whose cells of a chain are all of one level
// cannot be blocked this way: every cell can hold what any other can.
//
// Pure: no I/O.

#include <cstdint>
#include <string>
#include <vector>

namespace pai::planner {

// --vc-cells: node (each VC's share of a chain in whole cells of one level,
// whole nodes when it holds one) or any (the largest cells that fit, mixed).
enum class VcCells : uint8_t { Node, Any };

struct OneLevelCells {
  int level = -1;      // index into the chain's levels (top -> leaf); -1: nothing
  int64_t count = 0;   // cells of that level
  int64_t leaves = 0;  // leaf cells they hold
  int64_t cost = 0;    // leaf cells of the share left out by the rounding
};

// `leaves_per_cell`: a chain's levels top -> leaf; `node_level`: the index of
// its node-level cell type. The share `leaves` as cells of one level: at or
// above the node level when the share holds a node, the level that leaves the
// least out (the higher one on a tie); otherwise the largest level below the
// node of which it holds a cell.
OneLevelCells one_level_cells(const std::vector<int64_t>& leaves_per_cell, int node_level,
                              int64_t leaves);

// The job sizes (leaf cells) that can wait behind a smaller job although the
// VC has room: the size of each of its cells that sits beside smaller ones.
// `count`: the VC's cells per level (top -> leaf). Empty when all its cells
// are of one level.
std::vector<int64_t> blockable_sizes(const std::vector<int64_t>& leaves_per_cell,
                                     const std::vector<int64_t>& count);

}  // namespace pai::planner
