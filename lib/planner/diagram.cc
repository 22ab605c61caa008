#include "planner/diagram.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "planner/plan_output.h"
#include "util/svg.h"

namespace pai::planner {

std::vector<std::vector<int>> example_binding(const Plan& plan) {
  std::vector<std::vector<int>> out(plan.hosts.size());
  for (size_t h = 0; h < plan.hosts.size(); ++h) {
    const PlannedHost& ph = plan.hosts[h];
    if (ph.sku >= 0 && !ph.excluded && !plan.skus[static_cast<size_t>(ph.sku)].master)
      out[h].assign(static_cast<size_t>(plan.skus[static_cast<size_t>(ph.sku)].leaves), -1);
  }
  for (size_t ci = 0; ci < plan.chains.size(); ++ci) {
    const Chain& c = plan.chains[ci];
    const size_t levels = c.types.size();
    // The chain's leaves in tree order: top cells, their hosts, each host's leaves.
    std::vector<std::pair<size_t, size_t>> leaf_pos;  // (host, position in its leaf order)
    for (const auto& cell : c.cells)
      for (size_t h : cell.hosts)
        for (size_t i = 0; i < out[h].size(); ++i) leaf_pos.push_back({h, i});
    std::vector<std::set<int64_t>> free(levels);
    for (int64_t j = 0; j < static_cast<int64_t>(c.cells.size()); ++j) free[0].insert(j);
    auto take = [&](size_t level) -> int64_t {
      size_t from = level;
      while (free[from].empty()) {
        if (from == 0) return -1;
        --from;
      }
      for (size_t l = from; l < level; ++l) {
        int64_t j = *free[l].begin();
        free[l].erase(free[l].begin());
        int64_t ratio = c.leaves_per_cell[l] / c.leaves_per_cell[l + 1];
        for (int64_t k = 0; k < ratio; ++k) free[l + 1].insert(j * ratio + k);
      }
      int64_t j = *free[level].begin();
      free[level].erase(free[level].begin());
      return j;
    };
    // Level by level over all VCs, as HiveD's own accounting does.
    for (size_t l = 0; l < levels; ++l)
      for (size_t v = 0; v < plan.vcs.size(); ++v)
        for (const auto& cc : plan.vcs[v].chains) {
          if (cc.chain != static_cast<int>(ci)) continue;
          for (int64_t n = 0; n < cc.count[l]; ++n) {
            int64_t j = take(l);
            if (j < 0) break;
            int64_t size = c.leaves_per_cell[l];
            for (int64_t x = j * size;
                 x < (j + 1) * size && x < static_cast<int64_t>(leaf_pos.size()); ++x) {
              auto [h, i] = leaf_pos[static_cast<size_t>(x)];
              out[h][i] = static_cast<int>(v);
            }
          }
        }
  }
  return out;
}

namespace {

using util::Svg;

std::string color_of(const Plan& plan, int vc) {
  if (vc < 0) return "#ffffff";
  if (plan.vcs[static_cast<size_t>(vc)].is_default) return "#bab0ac";
  return util::kSvgPalette[static_cast<size_t>(vc) % util::kSvgPaletteSize];
}

constexpr int kLeaf = 14, kPad = 4, kLabel = 10;

// Text on a coloured box: black on light fills, white on dark ones (WCAG's
// relative luminance), so that a GPU's number stays readable on every VC colour
// and on a white (unbound) leaf.
std::string diagram_text_on(const std::string& fill) {
  if (fill.size() != 7 || fill[0] != '#') return "#000000";
  auto channel = [&](size_t at) {
    double c = std::stoi(fill.substr(at, 2), nullptr, 16) / 255.0;
    return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
  };
  double l = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  // The contrast against white (1.05 / (l + 0.05)) and against black ((l + 0.05) / 0.05).
  return 1.05 / (l + 0.05) >= (l + 0.05) / 0.05 ? "#ffffff" : "#000000";
}

// A machine level's label: "socket", "NUMA", "NVLink" ...
std::string diagram_level_label(const std::string& kind) {
  if (kind == "NUMA") return "NUMA";
  if (kind == "NVLINK") return "NVLink";
  if (kind == "PCIE") return "PCIe";
  if (kind == "HOSTBRIDGE") return "host bridge";
  std::string out = kind;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Width of one cell at `level` (index into hierarchy levels; -1 = leaf).
int cell_width(const Hierarchy& h, int level) {
  if (level < 0) return kLeaf;
  return h.levels[static_cast<size_t>(level)].children * (cell_width(h, level - 1) + kPad) + kPad;
}
// A level's box has a label row above its children.
int cell_height(int level) {
  return level < 0 ? kLeaf : cell_height(level - 1) + 2 * kPad + kLabel;
}

void draw_cell(Svg& svg, const Plan& plan, const Sku& s, const PlannedHost& ph,
               const std::vector<int>& vcs, int level, size_t& next, int x, int y) {
  if (level < 0) {
    int vc = next < vcs.size() ? vcs[next] : -1;
    int gpu = next < ph.hierarchy.leaf_order.size() ? ph.hierarchy.leaf_order[next]
                                                    : static_cast<int>(next);
    std::string title = s.leaf_type + " " + std::to_string(gpu) +
                        (vc >= 0 ? " -> VC " + plan.vcs[static_cast<size_t>(vc)].name : "");
    const std::string fill = color_of(plan, vc);
    svg.rect(x, y, kLeaf, kLeaf, fill, "#333333", 2, title);
    if (s.has_gpu)
      svg.text(x + (gpu >= 10 ? 1 : 4), y + 11, std::to_string(gpu), 9,
               " fill=\"" + diagram_text_on(fill) + "\" pointer-events=\"none\"");
    ++next;
    return;
  }
  const HierarchyLevel& l = s.hierarchy.levels[static_cast<size_t>(level)];
  int w = cell_width(s.hierarchy, level), hgt = cell_height(level);
  const std::string label = diagram_level_label(l.kind);
  svg.rect(x, y, w, hgt, "none", "#777777", 3,
           s.level_types[static_cast<size_t>(level)] + " (" + label + "): " + l.reason,
           " class=\"level\"");
  // The label, cut to the box (about 5 px a character at 8 px).
  std::string shown = label;
  const size_t fits = static_cast<size_t>(std::max(1, (w - 4) / 5));
  if (shown.size() > fits) shown = shown.substr(0, fits);
  svg.text(x + 2, y + 8, shown, 8, " fill=\"#333333\"");
  int cx = x + kPad;
  for (int k = 0; k < l.children; ++k) {
    draw_cell(svg, plan, s, ph, vcs, level - 1, next, cx, y + kPad + kLabel);
    cx += cell_width(s.hierarchy, level - 1) + kPad;
  }
}

// A node box: hostname on top, cells below. Returns its width and height.
std::pair<int, int> node_size(const Sku& s) {
  if (!s.has_gpu) {
    int per_row = 16;
    int rows = (s.leaves + per_row - 1) / per_row;
    return {per_row * 7 + 2 * kPad, 16 + rows * 7 + 2 * kPad};
  }
  int top = static_cast<int>(s.hierarchy.levels.size()) - 1;
  int w = s.hierarchy.node_children * (cell_width(s.hierarchy, top) + kPad) + kPad;
  int h = 16 + cell_height(top) + 2 * kPad;
  return {std::max(w, 90), h};
}

void draw_node(Svg& svg, const Plan& plan, size_t host, const std::vector<int>& vcs, int x, int y) {
  const PlannedHost& ph = plan.hosts[host];
  const Sku& s = plan.skus[static_cast<size_t>(ph.sku)];
  auto [w, h] = node_size(s);
  // An odd host (its own SKU, split from its peers): outlined orange, dashed,
  // with why in its tooltip.
  const bool odd = s.odd;
  svg.rect(
      x, y, w, h, "#f7f7f7", odd ? "#b35900" : "#555555", 4,
      ph.facts.hostname + " (" + ph.facts.hostip + "), " + s.level_types.back() +
          (odd ? "; odd host: " + ph.reason + " (SKU " + s.name + ", apart from " + s.peer + ")"
               : ""),
      odd ? " stroke-width=\"2\" stroke-dasharray=\"5,3\" class=\"odd\"" : "");
  std::string name = ph.facts.hostname;
  const size_t room = odd ? 13 : 18;
  if (name.size() > room) {
    name.resize(room - 1);
    name.push_back('~');
  }
  svg.text(x + kPad, y + 12, name, 10, " fill=\"#111111\"");
  if (odd)
    svg.text(x + w - kPad, y + 12, "odd", 10,
             " fill=\"#b35900\" font-weight=\"bold\" text-anchor=\"end\"");
  if (!s.has_gpu) {
    for (int i = 0; i < s.leaves; ++i) {
      int vc = static_cast<size_t>(i) < vcs.size() ? vcs[static_cast<size_t>(i)] : -1;
      svg.rect(x + kPad + (i % 16) * 7, y + 16 + kPad + (i / 16) * 7, 6, 6, color_of(plan, vc),
               "#777777", 1);
    }
    return;
  }
  int top = static_cast<int>(s.hierarchy.levels.size()) - 1;
  size_t next = 0;
  int cx = x + kPad;
  for (int k = 0; k < s.hierarchy.node_children; ++k) {
    draw_cell(svg, plan, s, ph, vcs, top, next, cx, y + 16 + kPad);
    cx += cell_width(s.hierarchy, top) + kPad;
  }
}

}  // namespace

std::string render_svg(const Plan& plan) {
  const auto binding = example_binding(plan);
  Svg svg;
  int y = 30;
  svg.text(10, 20, "paictl plan: chains, racks, nodes, cells and GPUs, coloured by virtual cluster",
           14, " font-weight=\"bold\"");
  // Legend.
  int lx = 10;
  y = 36;
  for (size_t v = 0; v < plan.vcs.size(); ++v) {
    // GPUs and CPU cells are counted apart: "research (27 GPUs, 36 CPUs)".
    int64_t gpus = 0, cpus = 0;
    for (const auto& c : plan.vcs[v].chains)
      (plan.skus[static_cast<size_t>(plan.chains[static_cast<size_t>(c.chain)].sku)].has_gpu
           ? gpus
           : cpus) += c.leaves;
    std::string amount;
    if (gpus) amount = std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs");
    if (cpus)
      amount +=
          (amount.empty() ? "" : ", ") + std::to_string(cpus) + (cpus == 1 ? " CPU" : " CPUs");
    std::string label = plan.vcs[v].name + " (" + (amount.empty() ? "nothing" : amount) + ")";
    svg.rect(lx, y, 12, 12, color_of(plan, static_cast<int>(v)), "#333333", 2);
    svg.text(lx + 16, y + 10, label, 11, " fill=\"#111111\"");
    lx += 30 + static_cast<int>(label.size()) * 7;
  }
  // The marks.
  y += 18;
  svg.rect(10, y, 12, 12, "#f7f7f7", "#b35900", 2, "",
           " stroke-width=\"2\" stroke-dasharray=\"5,3\"");
  svg.text(26, y + 10, "odd host (its own SKU; hover for why)", 11, " fill=\"#111111\"");
  svg.rect(290, y, 12, 12, "none", "#777777", 2);
  svg.text(306, y + 10, "machine levels inside a node (socket, NUMA, PCIe switch, NVLink)", 11,
           " fill=\"#111111\"");
  y += 24;
  // The hosts HiveD does not schedule on: the master, and hosts left out.
  {
    int x = 10;
    bool any = false;
    for (const auto& ph : plan.hosts) {
      const bool master = ph.sku >= 0 && plan.skus[static_cast<size_t>(ph.sku)].master;
      if (!master && !ph.excluded) continue;
      if (!any) {
        svg.text(10, y + 12, "not in HiveD", 12, " font-weight=\"bold\" fill=\"#111111\"");
        y += 18;
        any = true;
      }
      std::string label = (master ? "master " : "left out ") + ph.facts.hostname;
      int w = 16 + static_cast<int>(label.size()) * 6;
      svg.rect(x, y, w, 20, master ? "#fff4d6" : "#fbe3e3", master ? "#8a6d00" : "#b22222", 4,
               ph.facts.hostname + " (" + ph.facts.hostip + "): " +
                   (master ? "the master (Kubernetes control plane, OpenPAI services); no HiveD "
                             "cells"
                           : "left out of the plan: " + ph.reason),
               master ? " stroke-width=\"2\" class=\"master\""
                      : " stroke-width=\"2\" class=\"excluded\"");
      svg.text(x + 8, y + 14, label, 11, " fill=\"#111111\"");
      x += w + 8;
    }
    if (any) y += 30;
  }
  y += 6;
  const int kMaxRow = 1400;
  for (const auto& c : plan.chains) {
    const Sku& s = plan.skus[static_cast<size_t>(c.sku)];
    bool rack = c.types.front() != s.level_types.back();
    svg.text(10, y + 12,
             "chain " + c.name + "  (SKU " + s.name + ", " + std::to_string(c.leaves()) + " " +
                 s.leaf_type + ")",
             12, " font-weight=\"bold\"");
    y += 20;
    auto [nw, nh] = node_size(s);
    if (rack) {
      int x = 10;
      int row_h = 0;
      for (const auto& cell : c.cells) {
        int per_row =
            std::max(1, std::min(static_cast<int>(cell.hosts.size()), (kMaxRow - 20) / (nw + 6)));
        int rows = (static_cast<int>(cell.hosts.size()) + per_row - 1) / per_row;
        int rw = per_row * (nw + 6) + 10, rh = rows * (nh + 6) + 24;
        if (x + rw > kMaxRow && x > 10) {
          x = 10;
          y += row_h + 10;
          row_h = 0;
        }
        svg.rect(x, y, rw, rh, "#eef3f8", "#4e79a7", 6, c.types.front() + " " + cell.address);
        svg.text(x + 6, y + 14, cell.address, 11, " fill=\"#111111\"");
        for (size_t k = 0; k < cell.hosts.size(); ++k) {
          int nx = x + 6 + static_cast<int>(k % static_cast<size_t>(per_row)) * (nw + 6);
          int ny = y + 20 + static_cast<int>(k / static_cast<size_t>(per_row)) * (nh + 6);
          draw_node(svg, plan, cell.hosts[k], binding[cell.hosts[k]], nx, ny);
        }
        x += rw + 10;
        row_h = std::max(row_h, rh);
      }
      y += row_h + 16;
    } else {
      int per_row = std::max(1, (kMaxRow - 10) / (nw + 6));
      for (size_t k = 0; k < c.cells.size(); ++k) {
        int nx = 10 + static_cast<int>(k % static_cast<size_t>(per_row)) * (nw + 6);
        int ny = y + static_cast<int>(k / static_cast<size_t>(per_row)) * (nh + 6);
        draw_node(svg, plan, c.cells[k].hosts.front(), binding[c.cells[k].hosts.front()], nx, ny);
      }
      y += static_cast<int>((c.cells.size() + static_cast<size_t>(per_row) - 1) /
                            static_cast<size_t>(per_row)) *
               (nh + 6) +
           16;
    }
  }
  svg.text(10, y + 12,
           "Colours show one binding an empty cluster gets (VCs in order, largest cells first); "
           "HiveD binds virtual "
           "cells when jobs run.",
           10, " fill=\"#333333\"");
  return svg.document();
}

}  // namespace pai::planner
