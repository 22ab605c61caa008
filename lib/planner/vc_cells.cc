#include "planner/vc_cells.h"

namespace pai::planner {

OneLevelCells one_level_cells(const std::vector<int64_t>& per_cell, int node_level,
                              int64_t leaves) {
  OneLevelCells best;
  best.cost = leaves;
  if (leaves <= 0 || per_cell.empty()) return best;
  const int n = static_cast<int>(per_cell.size());
  if (node_level < 0 || node_level >= n) node_level = n - 1;
  auto take = [&](int l) {
    OneLevelCells c;
    c.level = l;
    c.count = leaves / per_cell[static_cast<size_t>(l)];
    c.leaves = c.count * per_cell[static_cast<size_t>(l)];
    c.cost = leaves - c.leaves;
    return c;
  };
  if (leaves >= per_cell[static_cast<size_t>(node_level)]) {
    // From the top: a higher level wins only when it leaves strictly less out.
    for (int l = node_level; l >= 0; --l) {
      if (per_cell[static_cast<size_t>(l)] > leaves) continue;
      OneLevelCells c = take(l);
      if (best.level < 0 || c.cost <= best.cost) best = c;
    }
    return best;
  }
  for (int l = node_level + 1; l < n; ++l)
    if (per_cell[static_cast<size_t>(l)] <= leaves) return take(l);
  return best;
}

std::vector<int64_t> blockable_sizes(const std::vector<int64_t>& per_cell,
                                     const std::vector<int64_t>& count) {
  int lowest = -1;
  for (size_t l = 0; l < count.size(); ++l)
    if (count[l] > 0) lowest = static_cast<int>(l);
  std::vector<int64_t> out;
  for (int l = 0; l < lowest; ++l)
    if (count[static_cast<size_t>(l)] > 0 && static_cast<size_t>(l) < per_cell.size())
      out.push_back(per_cell[static_cast<size_t>(l)]);
  return out;
}

}  // namespace pai::planner
