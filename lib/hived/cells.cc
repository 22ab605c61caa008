#include "hived/cells.h"

#include <algorithm>
#include <map>
#include <set>

#include "util/svg.h"

namespace pai::hived {

namespace {

void count_leaves(const VirtualCellStatus& c, int64_t& leaves, int64_t& used) {
  if (c.children.empty()) {
    ++leaves;
    if (c.cell_state == "Used") ++used;
    return;
  }
  for (const auto& k : c.children) count_leaves(k, leaves, used);
}

// Does this physical subtree hold a leaf of `vc`?
bool holds(const PhysicalCellStatus& c, const std::string& vc) {
  if (vc.empty()) return true;
  if (c.children.empty()) return c.vc == vc;
  for (const auto& k : c.children)
    if (holds(k, vc)) return true;
  return false;
}

std::string flags(const CellStatus& c, bool bound) {
  std::string f;
  if (c.cell_healthiness == "Bad") f += bound ? " BAD DOOMED" : " BAD";
  return f;
}

std::string prio_text(int32_t p) {
  return p == -2 ? std::string() : p == -1 ? " opportunistic" : " priority " + std::to_string(p);
}

// The groups on a node's leaves: "0-3 train-a, 4-7 free".
std::string node_leaves(const LiveState& live, const std::string& node) {
  std::map<std::string, std::vector<int32_t>> by;
  for (size_t i = 0; i < live.nodes.size(); ++i) {
    if (live.nodes[i].name != node) continue;
    for (size_t l : live.nodes[i].leaves) {
      const LiveLeaf& leaf = live.leaves[l];
      // A free leaf bound to a virtual cell is a doomed bad cell's.
      std::string who = !leaf.group.empty()      ? leaf.group
                        : leaf.state != "Free"   ? leaf.state
                        : !leaf.vaddress.empty() ? (leaf.healthy ? "bound" : "doomed")
                                                 : "free";
      by[who].push_back(leaf.index);
    }
  }
  std::string out;
  for (auto& [who, idx] : by) {
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    std::string r;
    for (size_t i = 0; i < idx.size();) {
      size_t j = i;
      while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
      r += (r.empty() ? "" : ",") + std::to_string(idx[i]) +
           (j > i ? "-" + std::to_string(idx[j]) : std::string());
      i = j + 1;
    }
    out += (out.empty() ? "" : "; ") + r + " " + who;
  }
  return out;
}

void physical_text(const LiveState& live, const PhysicalCellStatus& c, const std::string& vc,
                   int depth, std::string& out) {
  if (!holds(c, vc)) return;
  std::string line(static_cast<size_t>(depth) * 2, ' ');
  line += c.cell_address + "  " + c.cell_type + "  " + c.cell_state + prio_text(c.cell_priority);
  if (!c.vc.empty()) line += "  vc " + c.vc;
  if (c.virtual_cell) line += "  -> " + c.virtual_cell->cell_address;
  line += flags(c, c.virtual_cell != nullptr);
  if (c.is_node_level) {
    std::string node = last_segment(c.cell_address);
    line += "  [" + node_leaves(live, node) + "]";
    out += line + "\n";
    return;  // leaves are summarized on the node's line
  }
  out += line + "\n";
  for (const auto& k : c.children) physical_text(live, k, vc, depth + 1, out);
}

void virtual_text(const VirtualCellStatus& c, int depth, std::string& out) {
  std::string line(static_cast<size_t>(depth) * 2, ' ');
  line += c.cell_address + "  " + c.cell_type + "  " + c.cell_state + prio_text(c.cell_priority);
  if (c.physical_cell) line += "  -> " + c.physical_cell->cell_address;
  if (c.physical_cell && c.physical_cell->cell_healthiness == "Bad") line += " BAD DOOMED";
  out += line + "\n";
  // Below a bound node-level cell the binding follows the physical tree.
  if (c.is_node_level) return;
  for (const auto& k : c.children) virtual_text(k, depth + 1, out);
}

// --- the picture ------------------------------------------------------------------------

constexpr int kLeaf = 14, kPad = 4, kMaxRow = 1400, kNodesPerRow = 8;

struct Picture {
  util::Svg svg;
  std::map<std::string, int> vc_index;
  std::string vc_filter;
  const LiveState* live = nullptr;
  const std::map<std::string, std::string>* pinned = nullptr;  // physical address -> id
  std::string node_name;                                       // the node being drawn

  const LiveLeaf* leaf_at(int32_t index) const {
    if (!live) return nullptr;
    auto it = live->leaf_index.find(node_name + ":" + std::to_string(index));
    return it == live->leaf_index.end() ? nullptr : &live->leaves[it->second];
  }

  // Who uses a leaf, for its tooltip: the group and its priority, a
  // reservation, lazy preemption.
  static std::string holder_text(const LiveLeaf& l) {
    std::string t;
    if (!l.group.empty()) {
      t += ", group " + l.group;
      int32_t p = l.holder_priority != -2 ? l.holder_priority : l.priority;
      t += p == -1 ? " (opportunistic, priority -1)" : " (priority " + std::to_string(p) + ")";
      if (l.holder_lazy) t += ", lazily preempted: runs as opportunistic work";
    }
    if (!l.reserved_by.empty() && l.reserved_by != l.group)
      t += ", reserved by " + l.reserved_by + " (priority " + std::to_string(l.priority) + ")";
    return t;
  }

  std::string color(const std::string& vc) const {
    auto it = vc_index.find(vc);
    if (it == vc_index.end()) return "#ffffff";
    return util::kSvgPalette[static_cast<size_t>(it->second) % util::kSvgPaletteSize];
  }

  // Size of a cell's box.
  std::pair<int, int> size(const PhysicalCellStatus& c) const {
    if (c.children.empty()) return {kLeaf, kLeaf};
    bool nodes_inside = !c.is_node_level && above_node(c);
    int w = 0, h = 0;
    if (nodes_inside) {
      int cols = std::min<int>(kNodesPerRow, static_cast<int>(c.children.size()));
      int rows = (static_cast<int>(c.children.size()) + cols - 1) / cols;
      auto [cw, ch] = size(c.children[0]);
      for (const auto& k : c.children) {
        auto [kw, kh] = size(k);
        cw = std::max(cw, kw);
        ch = std::max(ch, kh);
      }
      w = cols * (cw + kPad) + kPad;
      h = rows * (ch + kPad) + kPad + 16;
    } else {
      w = kPad;
      for (const auto& k : c.children) {
        auto [kw, kh] = size(k);
        w += kw + kPad;
        h = std::max(h, kh);
      }
      h += 2 * kPad + (c.is_node_level ? 14 : 0);
    }
    return {std::max(w, c.is_node_level ? 60 : 0), h};
  }

  static bool above_node(const PhysicalCellStatus& c) {
    // A cell above node level has a node-level cell somewhere below it.
    for (const auto& k : c.children)
      if (k.is_node_level || above_node(k)) return true;
    return false;
  }

  void draw(const PhysicalCellStatus& c, int x, int y) {
    // HiveD marks every cell above a bad one bad too; only a bad node or leaf
    // is outlined, so a bad GPU does not paint its whole rack red.
    const bool node = c.is_node_level;
    const bool bad_marked = c.cell_healthiness == "Bad";
    const bool bad = bad_marked && (node || c.children.empty());
    if (node) node_name = last_segment(c.cell_address);
    const std::string* pin = nullptr;
    if (pinned)
      if (auto it = pinned->find(c.cell_address); it != pinned->end()) pin = &it->second;
    std::string title = c.cell_address + " " + c.cell_type + " " + c.cell_state +
                        (c.vc.empty() ? "" : ", vc " + c.vc) +
                        (c.virtual_cell ? " -> " + c.virtual_cell->cell_address : "") +
                        (pin ? ", pinned cell " + *pin : "") +
                        (!bad_marked      ? ""
                         : !bad           ? ", holds bad cells"
                         : c.virtual_cell ? ", bad, doomed"
                                          : ", bad");
    auto [w, h] = size(c);
    if (c.children.empty()) {
      int32_t index = -1;
      try {
        index = std::stoi(last_segment(c.cell_address));
      } catch (...) {
      }
      const LiveLeaf* leaf = leaf_at(index);
      if (leaf) title += holder_text(*leaf);
      const bool lazy = leaf && leaf->holder_lazy;
      bool dim = !vc_filter.empty() && c.vc != vc_filter;
      std::string fill = dim ? "#eeeeee" : color(c.vc);
      std::string extra = c.cell_priority == -1 ? " fill-opacity=\"0.45\"" : "";
      std::string classes =
          std::string(bad ? " bad" : "") + (lazy ? " lazy" : "") + (pin ? " pinned" : "");
      if (bad) extra += " stroke-width=\"2\"";
      if (lazy && !bad) extra += " stroke-width=\"2\" stroke-dasharray=\"3,2\"";
      if (!classes.empty()) extra += " class=\"" + classes.substr(1) + "\"";
      svg.rect(x, y, kLeaf, kLeaf, fill,
               bad    ? "#d62728"
               : lazy ? "#b35900"
                      : "#333333",
               2, title, extra);
      if (bad && c.virtual_cell) {
        svg.line(x + 2, y + 2, x + kLeaf - 2, y + kLeaf - 2, "#d62728", 2);
        svg.line(x + kLeaf - 2, y + 2, x + 2, y + kLeaf - 2, "#d62728", 2);
      }
      return;
    }
    std::string extra = bad || pin ? " stroke-width=\"2\"" : "";
    if (pin) extra += " stroke-dasharray=\"6,3\"";
    if (bad || pin)
      extra += std::string(" class=\"") +
               (bad && pin ? "bad pinned"
                : bad      ? "bad"
                           : "pinned") +
               "\"";
    svg.rect(x, y, w, h, node ? "#f7f7f7" : "#eef3f8",
             bad    ? "#d62728"
             : pin  ? "#6a3d9a"
             : node ? "#555555"
                    : "#4e79a7",
             node ? 4 : 6, title, extra);
    if (pin && !node)
      svg.text(x + w - 6, y + 12, "pinned " + *pin, 10, " text-anchor=\"end\" fill=\"#6a3d9a\"");
    if (node) {
      std::string name = last_segment(c.cell_address);
      if (name.size() > 18) {
        name.resize(17);
        name.push_back('~');
      }
      svg.text(x + kPad, y + 12, pin ? name + " (pinned " + *pin + ")" : name, 10,
               pin ? " fill=\"#6a3d9a\"" : "");
    } else if (above_node(c)) {
      svg.text(x + 6, y + 12, c.cell_type + " " + c.cell_address, 10);
    }
    bool grid = !node && above_node(c);
    if (grid) {
      int cw = 0, ch = 0;
      for (const auto& k : c.children) {
        auto [kw, kh] = size(k);
        cw = std::max(cw, kw);
        ch = std::max(ch, kh);
      }
      int cols = std::min<int>(kNodesPerRow, static_cast<int>(c.children.size()));
      for (size_t i = 0; i < c.children.size(); ++i)
        draw(c.children[i],
             x + kPad + static_cast<int>(i % static_cast<size_t>(cols)) * (cw + kPad),
             y + 16 + kPad + static_cast<int>(i / static_cast<size_t>(cols)) * (ch + kPad));
      return;
    }
    int cx = x + kPad;
    int cy = y + kPad + (node ? 14 : 0);
    for (const auto& k : c.children) {
      draw(k, cx, cy);
      cx += size(k).first + kPad;
    }
  }
};

}  // namespace

std::map<std::string, std::string> pinned_cell_addresses(const config::HivedModel& model) {
  std::map<std::string, std::string> out;
  for (const auto& [id, cell] : model.pinned_cells)
    if (cell >= 0 && static_cast<size_t>(cell) < model.cells.size())
      out[model.cells[static_cast<size_t>(cell)].address] = id;
  return out;
}

std::vector<VirtualCellRow> virtual_cell_rows(const LiveState& live, const std::string& vc) {
  std::vector<VirtualCellRow> out;
  std::map<std::string, std::string> sku_of_address;
  for (const auto& l : live.leaves) sku_of_address[l.address] = l.leaf_type;
  for (const auto& [name, cells] : live.status.virtual_clusters) {
    if (!vc.empty() && name != vc) continue;
    for (const auto& c : cells) {
      VirtualCellRow r;
      r.vc = name;
      r.address = c.cell_address;
      r.cell_type = c.cell_type;
      r.sku = c.leaf_cell_type;
      r.opportunistic = is_opportunistic_entry(c);
      if (r.opportunistic && c.physical_cell) r.sku = sku_of_address[c.physical_cell->cell_address];
      r.state = c.cell_state;
      r.priority = c.cell_priority;
      if (c.physical_cell) {
        r.bound_to = c.physical_cell->cell_address;
        r.healthy = c.physical_cell->cell_healthiness != "Bad";
        r.doomed = !r.healthy && !r.opportunistic;
      }
      count_leaves(c, r.leaves, r.used_leaves);
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::string physical_tree_text(const LiveState& live, const std::string& vc) {
  std::string out;
  for (const auto& top : live.status.physical_cluster) physical_text(live, top, vc, 0, out);
  return out;
}

std::string virtual_tree_text(const LiveState& live, const std::string& vc) {
  std::string out;
  for (const auto& [name, cells] : live.status.virtual_clusters) {
    if (!vc.empty() && name != vc) continue;
    out += name + "\n";
    for (const auto& c : cells) virtual_text(c, 1, out);
  }
  return out;
}

std::string render_cells_svg(const LiveState& live, const std::string& vc,
                             const std::map<std::string, std::string>& pinned) {
  Picture p;
  p.vc_filter = vc;
  p.live = &live;
  p.pinned = &pinned;
  int i = 0;
  for (const auto& [name, cells] : live.status.virtual_clusters) p.vc_index[name] = i++;
  auto& svg = p.svg;
  svg.text(10, 20,
           "paictl hived cells: the physical cells HiveD runs, leaves coloured by virtual cluster",
           14, " font-weight=\"bold\"");
  // Legend: VCs with their bound and opportunistic leaves, then the marks.
  std::map<std::string, std::pair<int64_t, int64_t>> use;
  for (const auto& l : live.leaves)
    if (!l.vc.empty()) (l.priority == -1 ? use[l.vc].second : use[l.vc].first)++;
  int lx = 10, y = 36;
  for (const auto& [name, idx] : p.vc_index) {
    std::string label = name + " (" + std::to_string(use[name].first) + " bound, " +
                        std::to_string(use[name].second) + " opportunistic)";
    svg.rect(lx, y, 12, 12, p.color(name), "#333333", 2);
    svg.text(lx + 16, y + 10, label, 11);
    lx += 30 + static_cast<int>(label.size()) * 7;
    if (lx > kMaxRow) {
      lx = 10;
      y += 18;
    }
  }
  y += 20;
  svg.rect(10, y, 12, 12, "#ffffff", "#d62728", 2, "", " stroke-width=\"2\"");
  svg.text(26, y + 10, "bad", 11);
  svg.rect(60, y, 12, 12, "#ffffff", "#d62728", 2, "", " stroke-width=\"2\"");
  svg.line(62, y + 2, 70, y + 10, "#d62728", 2);
  svg.line(70, y + 2, 62, y + 10, "#d62728", 2);
  svg.text(76, y + 10, "bad and doomed (bound to a VC so that it sees the failure)", 11);
  svg.rect(420, y, 12, 12, p.color(p.vc_index.empty() ? "" : p.vc_index.begin()->first), "#333333",
           2, "", " fill-opacity=\"0.45\"");
  svg.text(436, y + 10, "pale: used opportunistically", 11);
  svg.rect(620, y, 12, 12, "#ffffff", "#b35900", 2, "",
           " stroke-width=\"2\" stroke-dasharray=\"3,2\"");
  svg.text(636, y + 10, "lazily preempted (runs as opportunistic work)", 11);
  svg.rect(930, y, 12, 12, "#ffffff", "#6a3d9a", 2, "",
           " stroke-width=\"2\" stroke-dasharray=\"6,3\"");
  svg.text(946, y + 10, pinned.empty() ? "pinned cell (give --config to mark them)" : "pinned cell",
           11);
  y += 20;
  svg.text(10, y + 10, "Hover a leaf for its group and priority.", 11, " fill=\"#555555\"");
  y += 20;
  std::string chain;
  int x = 10, row_h = 0;
  for (const auto& top : live.status.physical_cluster) {
    if (!holds(top, vc)) continue;
    if (top.cell_type != chain) {
      if (row_h) y += row_h + 10;
      x = 10;
      row_h = 0;
      chain = top.cell_type;
      svg.text(
          10, y + 12,
          "chain " + chain + (top.leaf_cell_type.empty() ? "" : "  (" + top.leaf_cell_type + ")"),
          12, " font-weight=\"bold\"");
      y += 20;
    }
    auto [w, h] = p.size(top);
    if (x + w > kMaxRow && x > 10) {
      x = 10;
      y += row_h + 6;
      row_h = 0;
    }
    p.draw(top, x, y);
    x += w + 6;
    row_h = std::max(row_h, h);
  }
  y += row_h + 16;
  svg.text(10, y + 12,
           "Colours show the VC each leaf is bound to (or used by, pale); white leaves are free.",
           10, " fill=\"#555555\"");
  return svg.document();
}

}  // namespace pai::hived
