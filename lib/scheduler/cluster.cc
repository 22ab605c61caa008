#include "scheduler/cluster.h"

#include "config/hived_model.h"

namespace pai::scheduler {

int32_t ClusterShape::find_vc(std::string_view name) const {
  for (size_t i = 0; i < vcs.size(); ++i)
    if (vcs[i].name == name) return static_cast<int32_t>(i);
  return -1;
}

int32_t ClusterShape::find_leaf_type(std::string_view name) const {
  for (size_t i = 0; i < leaf_types.size(); ++i)
    if (leaf_types[i].name == name) return static_cast<int32_t>(i);
  return -1;
}

int32_t ClusterShape::find_node(std::string_view name) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return static_cast<int32_t>(i);
  return -1;
}

int32_t ClusterShape::find_chain(std::string_view name) const {
  for (size_t i = 0; i < chains.size(); ++i)
    if (chains[i].name == name) return static_cast<int32_t>(i);
  return -1;
}

ClusterShape describe_cluster(const config::HivedModel& m) {
  ClusterShape s;
  std::vector<int32_t> type_to_leaf(m.types.size(), -1);
  for (size_t ci = 0; ci < m.chains.size(); ++ci) {
    const config::ChainInfo& ch = m.chains[ci];
    ClusterShape::Chain c;
    c.name = ch.name;
    c.top_level = ch.top_level;
    c.level_type.assign(static_cast<size_t>(ch.top_level + 1), "");
    c.level_leaves.assign(static_cast<size_t>(ch.top_level + 1), 0);
    for (int32_t l = 1; l <= ch.top_level; ++l) {
      int32_t t = ch.level_type[static_cast<size_t>(l)];
      if (t < 0) continue;
      c.level_type[static_cast<size_t>(l)] = m.types[static_cast<size_t>(t)].name;
      c.level_leaves[static_cast<size_t>(l)] = m.types[static_cast<size_t>(t)].leaf_cell_number;
      if (m.types[static_cast<size_t>(t)].has_node &&
          !m.types[static_cast<size_t>(t)].is_multi_nodes)
        c.node_level = l;
    }
    int32_t& lt = type_to_leaf[static_cast<size_t>(ch.leaf_type)];
    if (lt < 0) {
      lt = static_cast<int32_t>(s.leaf_types.size());
      s.leaf_types.push_back({m.types[static_cast<size_t>(ch.leaf_type)].name, {}, 0});
    }
    c.leaf_type = lt;
    s.leaf_types[static_cast<size_t>(lt)].chains.push_back(static_cast<int32_t>(ci));
    s.chains.push_back(std::move(c));
  }
  s.nodes.resize(m.nodes.size());
  for (size_t n = 0; n < m.nodes.size(); ++n) s.nodes[n].name = m.nodes[n].name;
  for (size_t i = 0; i < m.cells.size(); ++i) {
    const config::PhysicalCellInfo& c = m.cells[i];
    if (c.level != 1 || c.chain < 0) continue;
    auto& chain = s.chains[static_cast<size_t>(c.chain)];
    chain.leaf_cells++;
    s.leaf_types[static_cast<size_t>(chain.leaf_type)].leaf_cells++;
    s.leaf_cells++;
    if (c.node >= 0) {
      s.nodes[static_cast<size_t>(c.node)].leaf_cells.push_back(static_cast<int32_t>(i));
      s.nodes[static_cast<size_t>(c.node)].leaves++;
    }
  }
  // Leaves under a cell, counted on the real tree (a cell may list fewer children than its type
  // says).
  std::vector<int64_t> leaves(m.cells.size(), 0);
  for (size_t i = m.cells.size(); i-- > 0;) {
    const config::PhysicalCellInfo& c = m.cells[i];
    if (c.level == 1) leaves[i] = 1;
    if (c.parent >= 0) leaves[static_cast<size_t>(c.parent)] += leaves[i];
  }
  for (const auto& vc : m.vcs) {
    ClusterShape::VirtualCluster v;
    v.name = vc.name;
    v.guaranteed.assign(s.leaf_types.size(), 0);
    v.pinned.assign(s.leaf_types.size(), 0);
    for (const auto& cell : vc.cells) {
      if (cell.chain < 0) continue;
      const auto& chain = s.chains[static_cast<size_t>(cell.chain)];
      v.guaranteed[static_cast<size_t>(chain.leaf_type)] +=
          cell.count * chain.level_leaves[static_cast<size_t>(cell.level)];
    }
    for (const auto& p : vc.pinned) {
      if (p.cell < 0) continue;
      const config::PhysicalCellInfo& c = m.cells[static_cast<size_t>(p.cell)];
      ClusterShape::PinnedCell pc{p.id, p.cell, c.chain, leaves[static_cast<size_t>(p.cell)]};
      v.pinned[static_cast<size_t>(s.chains[static_cast<size_t>(c.chain)].leaf_type)] +=
          pc.leaf_cells;
      v.pinned_cells.push_back(std::move(pc));
    }
    s.vcs.push_back(std::move(v));
  }
  return s;
}

}  // namespace pai::scheduler
