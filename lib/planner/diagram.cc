#include "planner/diagram.h"

#include <algorithm>
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

constexpr int kLeaf = 14, kPad = 4;

// Width of one cell at `level` (index into hierarchy levels; -1 = leaf).
int cell_width(const Hierarchy& h, int level) {
  if (level < 0) return kLeaf;
  return h.levels[static_cast<size_t>(level)].children * (cell_width(h, level - 1) + kPad) + kPad;
}
int cell_height(int level) {
  return level < 0 ? kLeaf : cell_height(level - 1) + 2 * kPad;
}

void draw_cell(Svg& svg, const Plan& plan, const Sku& s, const PlannedHost& ph,
               const std::vector<int>& vcs, int level, size_t& next, int x, int y) {
  if (level < 0) {
    int vc = next < vcs.size() ? vcs[next] : -1;
    int gpu = next < ph.hierarchy.leaf_order.size() ? ph.hierarchy.leaf_order[next]
                                                    : static_cast<int>(next);
    std::string title = s.leaf_type + " " + std::to_string(gpu) +
                        (vc >= 0 ? " -> VC " + plan.vcs[static_cast<size_t>(vc)].name : "");
    svg.rect(x, y, kLeaf, kLeaf, color_of(plan, vc), "#333333", 2, title);
    if (s.has_gpu)
      svg.text(x + (gpu >= 10 ? 1 : 4), y + 11, std::to_string(gpu), 9,
               " fill=\"#ffffff\" pointer-events=\"none\"");
    ++next;
    return;
  }
  const HierarchyLevel& l = s.hierarchy.levels[static_cast<size_t>(level)];
  int w = cell_width(s.hierarchy, level), hgt = cell_height(level);
  svg.rect(x, y, w, hgt, "none", "#999999", 3,
           s.level_types[static_cast<size_t>(level)] + ": " + l.reason);
  int cx = x + kPad;
  for (int k = 0; k < l.children; ++k) {
    draw_cell(svg, plan, s, ph, vcs, level - 1, next, cx, y + kPad);
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
  svg.rect(x, y, w, h, "#f7f7f7", "#555555", 4,
           ph.facts.hostname + " (" + ph.facts.hostip + "), " + s.level_types.back());
  std::string name = ph.facts.hostname;
  if (name.size() > 18) {
    name.resize(17);
    name.push_back('~');
  }
  svg.text(x + kPad, y + 12, name, 10);
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
    svg.text(lx + 16, y + 10, label, 11);
    lx += 30 + static_cast<int>(label.size()) * 7;
  }
  y += 30;
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
        svg.text(x + 6, y + 14, cell.address, 11);
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
           10, " fill=\"#555555\"");
  return svg.document();
}

}  // namespace pai::planner
