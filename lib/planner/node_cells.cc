#include "planner/node_cells.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "planner/plan_output.h"
#include "planner/planner.h"
#include "util/strings.h"

namespace pai::planner {

namespace {

using config::Cluster;
using config::HivedConfig;
using config::PhysicalCellSpec;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      out.push_back(text.substr(start));
      break;
    }
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

std::string join_lines(const std::vector<std::string>& lines, bool trailing_newline) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out += lines[i];
    if (i + 1 < lines.size() || trailing_newline) out += '\n';
  }
  return out;
}

size_t indent_of(const std::string& l) {
  size_t i = l.find_first_not_of(' ');
  return i == std::string::npos ? l.size() : i;
}

bool blank_or_comment(const std::string& l) {
  size_t i = l.find_first_not_of(' ');
  return i == std::string::npos || l[i] == '#';
}

// The lines [first, end) of the list item whose "- " is on line `first` (0-based).
size_t item_end(const std::vector<std::string>& lines, size_t first) {
  size_t dash = indent_of(lines[first]);
  size_t end = first + 1, last = first;
  for (; end < lines.size(); ++end) {
    if (blank_or_comment(lines[end])) continue;
    if (indent_of(lines[end]) <= dash) break;
    last = end;
  }
  return last + 1;
}

// The 0-based line of an item's "- " from its mark (the mark may be on the
// dash's line or, for "-" alone on a line, below it).
size_t dash_line(const std::vector<std::string>& lines, const config::Mark& m) {
  size_t l = m.line == 0 ? 0 : m.line - 1;
  for (size_t i = l + 1; i-- > 0;) {
    if (i < lines.size() && lines[i].find_first_not_of(' ') != std::string::npos &&
        lines[i][indent_of(lines[i])] == '-')
      return i;
    if (i + 2 < l) break;  // not more than a line or two up
  }
  return l;
}

struct Found {
  const PhysicalCellSpec* spec = nullptr;
  const PhysicalCellSpec* parent = nullptr;  // nullptr: top-level
  int depth = 0;
};

bool find_address(const std::vector<PhysicalCellSpec>& cells, const std::string& address,
                  const PhysicalCellSpec* parent, int depth, Found& out) {
  for (const auto& c : cells) {
    if (c.cell_address == address) {
      out = {&c, parent, depth};
      return true;
    }
    if (find_address(c.children, address, &c, depth + 1, out)) return true;
  }
  return false;
}

bool has_pinned(const PhysicalCellSpec& c, std::string& id) {
  if (!c.pinned_cell_id.empty()) {
    id = c.pinned_cell_id;
    return true;
  }
  for (const auto& ch : c.children)
    if (has_pinned(ch, id)) return true;
  return false;
}

// The value of the integer at `m` (a mark on the line, the digits at or after it).
struct IntAt {
  size_t line = 0, begin = 0, end = 0;
  int64_t value = 0;
  bool ok = false;
};

IntAt int_at(const std::vector<std::string>& lines, const config::Mark& m) {
  IntAt r;
  if (m.line == 0 || m.line > lines.size()) return r;
  r.line = m.line - 1;
  const std::string& l = lines[r.line];
  size_t p = m.column == 0 ? 0 : m.column - 1;
  while (p < l.size() && !std::isdigit(static_cast<unsigned char>(l[p]))) ++p;
  size_t e = p;
  while (e < l.size() && std::isdigit(static_cast<unsigned char>(l[e]))) ++e;
  if (e == p) return r;
  r.begin = p;
  r.end = e;
  r.value = std::stoll(l.substr(p, e - p));
  r.ok = true;
  return r;
}

// Edits collected against the original lines, applied at once.
struct Edits {
  explicit Edits(const std::string& text)
      : lines(split_lines(text)), trailing(!text.empty() && text.back() == '\n') {}
  std::vector<std::string> lines;
  bool trailing;
  std::map<size_t, std::vector<std::string>> insert_after;  // 0-based line -> new lines
  std::set<std::pair<size_t, size_t>> erase;                // [first, end) ranges
  std::map<size_t, std::pair<IntAt, int64_t>> numbers;      // line -> (where, new value)

  std::string apply() const {
    std::vector<bool> gone(lines.size(), false);
    for (const auto& [a, b] : erase)
      for (size_t i = a; i < b && i < lines.size(); ++i) gone[i] = true;
    std::vector<std::string> out;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (!gone[i]) {
        std::string l = lines[i];
        if (auto it = numbers.find(i); it != numbers.end())
          l = l.substr(0, it->second.first.begin) + std::to_string(it->second.second) +
              l.substr(it->second.first.end);
        out.push_back(l);
      }
      if (auto it = insert_after.find(i); it != insert_after.end())
        for (const auto& n : it->second) out.push_back(n);
    }
    return join_lines(out, trailing);
  }
};

const config::VirtualClusterSpec* find_vc(const HivedConfig& cfg, const std::string& name) {
  for (const auto& v : cfg.virtual_clusters)
    if (v.name == name) return &v;
  return nullptr;
}

std::string vc_names(const HivedConfig& cfg) {
  std::vector<std::string> n;
  for (const auto& v : cfg.virtual_clusters) n.push_back(v.name);
  return util::join(n, ", ");
}

// false (and `out`'s error set) when `vc` names no VC of the config; "" is no VC.
bool known_vc(const HivedConfig& cfg, const std::string& vc, NodeCellsEdit& out) {
  if (vc.empty() || find_vc(cfg, vc)) return true;
  out.error = "--vc " + vc + ": the HiveD config has no such virtual cluster";
  out.hint = "its VCs: " + vc_names(cfg);
  return false;
}

// Where a node's cell sits, and the name VCs use for its type.
struct Place {
  Found found;
  std::string vc_type;    // "POOL.NODE" for a pool's child, "NODE" for a top-level cell
  std::string node_type;  // the node cell's type
  int64_t leaves = 0;     // leaf cells of one node cell
  std::string chain;
};

bool place_of(const Cluster& cluster, const std::string& node, Place& p, std::string& error) {
  const HivedConfig& cfg = *cluster.model_config();
  if (!find_address(cfg.physical_cells, node, nullptr, 0, p.found)) return false;
  const auto& f = p.found;
  if (f.depth > 1) {
    error = "the node cell of " + node + " is nested " + std::to_string(f.depth) +
            " levels deep (a rack in a pool); a node is added to or taken from a rack by "
            "paictl plan";
    return true;
  }
  if (f.depth == 0) {
    p.node_type = f.spec->cell_type;
    p.vc_type = p.node_type;
    p.chain = p.node_type;
  } else {
    const auto* pt = cfg.find_cell_type(f.parent->cell_type);
    p.node_type = f.spec->cell_type.empty() && pt ? pt->child_cell_type : f.spec->cell_type;
    p.vc_type = f.parent->cell_type + "." + p.node_type;
    p.chain = f.parent->cell_type;
    size_t same = 0;
    for (const auto& c : cfg.physical_cells) same += c.cell_type == f.parent->cell_type;
    if (same != 1 || !pt) {
      error = "the node cells of " + node + " are in " + std::to_string(same) + " cells of type " +
              f.parent->cell_type + "; a node is added to or taken from one of several such " +
              "cells by paictl plan";
      return true;
    }
  }
  if (cluster.model) {
    int32_t t = cluster.model->find_type(p.node_type);
    if (t >= 0) p.leaves = cluster.model->types[static_cast<size_t>(t)].leaf_cell_number;
  }
  return true;
}

// The cells of type `vc_type` the VCs hold, by VC.
std::map<std::string, const config::VirtualCellSpec*> vc_holders(const HivedConfig& cfg,
                                                                 const std::string& vc_type) {
  std::map<std::string, const config::VirtualCellSpec*> out;
  for (const auto& v : cfg.virtual_clusters)
    for (const auto& c : v.virtual_cells)
      if (c.cell_type == vc_type) out[v.name] = &c;
  return out;
}

// The new text checked with the rest of the cluster: "" or the first error.
std::string check_text(const std::string& text, const std::string& layout_text) {
  std::vector<std::pair<std::string, std::string>> files;
  if (!layout_text.empty()) files.emplace_back("layout.yaml", layout_text);
  files.emplace_back("services-configuration.yaml", text);
  auto out = config::check_sources(files);
  for (const auto& d : out.diagnostics.items())
    if (d.severity == diag::Severity::Error)
      return "line " + std::to_string(d.line) + ": " + d.code + " " + d.message;
  return "";
}

// The entries of one section of a config render_hived wrote ("  skuTypes:" ...):
// the lines after its key up to the next line as far left as the key (list
// items may be as far left: YAML's compact sequences).
std::vector<std::string> rendered_section(const std::string& rendered, const std::string& key) {
  std::vector<std::string> out;
  bool in = false;
  for (const auto& l : split_lines(rendered)) {
    if (l == key) {
      in = true;
      continue;
    }
    if (!in || blank_or_comment(l)) continue;
    size_t i = indent_of(l);
    if (i < indent_of(key) || (i == indent_of(key) && l[i] != '-')) break;
    out.push_back(l);
  }
  return out;
}

// `lines` moved right (or left) so that their first line starts at `indent`.
std::vector<std::string> reindent(const std::vector<std::string>& lines, size_t indent) {
  std::vector<std::string> out;
  if (lines.empty()) return out;
  size_t from = indent_of(lines.front());
  for (const auto& l : lines) {
    size_t i = indent_of(l);
    size_t to = i >= from ? indent + (i - from) : indent;
    out.push_back(std::string(to, ' ') + l.substr(i));
  }
  return out;
}

// The mapping keys of a section's entries (the lines as far left as the first).
std::vector<std::string> section_keys(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  if (lines.empty()) return out;
  size_t top = indent_of(lines.front());
  for (const auto& l : lines) {
    if (indent_of(l) != top || l.back() != ':') continue;
    std::string k = l.substr(top, l.size() - top - 1);
    if (k.size() >= 2 && (k.front() == '"' || k.front() == '\'')) k = k.substr(1, k.size() - 2);
    out.push_back(k);
  }
  return out;
}

// The end (one past the last line) of the block of the mapping key or list item at `mark`.
size_t block_end(const std::vector<std::string>& lines, const config::Mark& m) {
  return item_end(lines, dash_line(lines, m));
}

// A chain of its own for `hosts`, the new nodes of one machine-type without
// cells, as `paictl plan --profile` plans their machines: the profile's skuType
// and cell types after the config's last ones, a top-level node cell per host
// after the last physical cell. Their cells go to `vc` (vc_add) when one is named.
bool add_chain(const HivedConfig& cfg, const Profile& profile, const std::string& machine_type,
               const std::vector<std::string>& hosts, const std::string& vc, Edits& e,
               std::map<std::string, int64_t>& vc_add, NodeCellsEdit& out) {
  const auto& lines = e.lines;
  std::string where = "machine-type " + machine_type + " (profile " + profile.name + ")";
  if (cfg.sku_types.empty() || cfg.cell_types.empty() || cfg.physical_cells.empty()) {
    out.error = where + ": the HiveD config has no skuTypes, cellTypes or physicalCells to add " +
                "a chain next to";
    out.hint = "plan the cluster with paictl plan";
    return false;
  }
  auto planned = profile_hosts(profile, static_cast<int>(hosts.size()), 0, 250);
  for (size_t i = 0; i < hosts.size(); ++i) planned[i].hostname = hosts[i];
  Plan plan = make_plan(std::move(planned), PlanOptions{});
  if (!plan.ok() || plan.chains.size() != 1) {
    std::string why = "no chain";
    for (const auto& d : plan.diagnostics.items())
      if (d.severity == diag::Severity::Error) {
        why = d.message;
        break;
      }
    out.error = where + ": the planner makes no chain of it: " + why;
    out.hint = "plan the cluster with paictl plan";
    return false;
  }
  // A leaf type the config has already (the on-prem V100s, say) keeps its name there.
  for (auto& sku : plan.skus)
    if (!sku.master && !sku.leaf_type.empty() && cfg.find_sku_type(sku.leaf_type))
      sku.leaf_type = sku.prefix + "-" + sku.leaf_type;
  std::string rendered = render_hived(plan);
  auto sku_lines = rendered_section(rendered, "  skuTypes:");
  auto type_lines = rendered_section(rendered, "  cellTypes:");
  auto cell_lines = rendered_section(rendered, "  physicalCells:");
  for (const auto& k : section_keys(sku_lines))
    if (cfg.find_sku_type(k)) {
      out.error = where + ": its skuType " + k + " is in the HiveD config already";
      out.hint = "plan the cluster with paictl plan, or add the cells by hand";
      return false;
    }
  auto types = section_keys(type_lines);
  for (const auto& k : types)
    if (cfg.find_cell_type(k)) {
      out.error =
          where + " has no cells, but its cell type " + k + " is in the HiveD config already";
      out.hint = "give the Azure pool the machine-type of those cells, or plan with paictl plan";
      return false;
    }
  const Chain& chain = plan.chains.front();
  const Sku& sku = plan.skus[static_cast<size_t>(chain.sku)];
  size_t s_end = block_end(lines, cfg.sku_types.back().mark);
  size_t t_end = block_end(lines, cfg.cell_types.back().mark);
  size_t c_first = dash_line(lines, cfg.physical_cells.back().mark);
  size_t c_end = item_end(lines, c_first);
  auto put = [&](size_t end, size_t indent, const std::vector<std::string>& add) {
    auto& ins = e.insert_after[end - 1];
    for (auto& l : reindent(add, indent)) ins.push_back(std::move(l));
  };
  put(s_end, indent_of(lines[dash_line(lines, cfg.sku_types.back().mark)]), sku_lines);
  put(t_end, indent_of(lines[dash_line(lines, cfg.cell_types.back().mark)]), type_lines);
  put(c_end, indent_of(lines[c_first]), cell_lines);
  out.changes.push_back("skuTypes: " + util::join(section_keys(sku_lines), ", ") +
                        " (new, from profile " + profile.name + ")");
  out.changes.push_back("cellTypes: " + util::join(types, ", ") + " (new: the chain " + chain.name +
                        " of machine-type " + machine_type + ")");
  for (const auto& h : hosts)
    out.changes.push_back("physicalCells: " + h + " as a " + chain.types.front() +
                          " cell of the new chain " + chain.name + " (" +
                          std::to_string(chain.leaves_per_cell.front()) + " " + sku.leaf_type +
                          " leaf cells)" + (vc.empty() ? ", in no VC" : ", for VC " + vc));
  if (!vc.empty()) vc_add[chain.types.front()] += static_cast<int64_t>(hosts.size());
  return true;
}

}  // namespace

NodeCellsEdit add_node_cells(const std::string& text, const std::string& layout_text,
                             const Cluster& cluster,
                             const std::vector<std::pair<std::string, std::string>>& hosts,
                             const std::string& vc, bool check, const ChainProfiles& profiles) {
  NodeCellsEdit out;
  out.text = text;
  const HivedConfig* cfg = cluster.model_config();
  if (!cfg || !cluster.services || !cluster.services->has_hived) {
    if (!hosts.empty())
      out.warnings.push_back("services-configuration.yaml has no HiveD config: no cells to add");
    return out;
  }
  if (!known_vc(*cfg, vc, out)) return out;
  Edits e(text);
  const auto& lines = e.lines;
  std::map<std::string, int64_t> vc_add;       // vc_type -> nodes given to `vc`
  std::map<std::string, int64_t> pool_growth;  // pool type -> children added
  std::map<std::string, Place> place_of_type;
  std::map<std::string, std::vector<std::string>> new_chains;  // machine-type -> its new nodes
  for (const auto& [host, sku] : hosts) {
    if (cluster.model && cluster.model->node_index.count(host)) {
      out.warnings.push_back(host + " has cells in the HiveD config already");
      continue;
    }
    // A node of the same machine-type with cells: the new one gets the same.
    const config::Machine* peer = nullptr;
    if (cluster.layout && cluster.model)
      for (const auto& n : cluster.model->nodes) {
        const auto* m = cluster.layout->find_machine(n.name);
        if (m && m->machine_type == sku && n.name != host) {
          peer = m;
          break;
        }
      }
    if (!peer && profiles.count(sku)) {
      new_chains[sku].push_back(host);
      continue;
    }
    if (!peer) {
      out.warnings.push_back(host + ": machine-type " + sku +
                             " has no cells in the HiveD config; the node joins without HiveD "
                             "cells (paictl plan makes a chain for its SKU)");
      continue;
    }
    Place p;
    std::string err;
    place_of(cluster, peer->hostname, p, err);
    if (!err.empty()) {
      out.error = err;
      out.hint = "add " + host + "'s cells by hand, or plan the cluster again with paictl plan";
      return out;
    }
    const auto& f = p.found;
    if (f.depth == 0) {
      // After the last top-level cell of the same type.
      const PhysicalCellSpec* last = nullptr;
      for (const auto& c : cfg->physical_cells)
        if (c.cell_type == f.spec->cell_type) last = &c;
      size_t first = dash_line(lines, last->mark);
      size_t end = item_end(lines, first);
      std::string ind(indent_of(lines[first]), ' ');
      auto& ins = e.insert_after[end - 1];
      ins.push_back(ind + "- cellType: " + p.node_type);
      ins.push_back(ind + "  cellAddress: " + host);
    } else {
      const PhysicalCellSpec* last = &f.parent->children.back();
      size_t first = dash_line(lines, last->mark);
      size_t end = item_end(lines, first);
      std::string ind(indent_of(lines[first]), ' ');
      auto& ins = e.insert_after[end - 1];
      if (!f.spec->cell_type.empty()) {
        ins.push_back(ind + "- cellType: " + p.node_type);
        ins.push_back(ind + "  cellAddress: " + host);
      } else {
        ins.push_back(ind + "- cellAddress: " + host);
      }
      pool_growth[f.parent->cell_type]++;
    }
    out.changes.push_back("physicalCells: " + host + " as a " + p.node_type + " cell of chain " +
                          p.chain + " (" + std::to_string(p.leaves) + " leaf cells)" +
                          (vc.empty() ? ", in no VC" : ", for VC " + vc));
    if (!vc.empty()) vc_add[p.vc_type]++;
    place_of_type[p.vc_type] = p;
  }
  for (const auto& [sku, names] : new_chains)
    if (!add_chain(*cfg, profiles.at(sku), sku, names, vc, e, vc_add, out)) return out;
  for (const auto& [pool, n] : pool_growth) {
    const auto* t = cfg->find_cell_type(pool);
    IntAt at = int_at(lines, t->child_number_mark);
    if (!at.ok) {
      out.error = "cellTypes." + pool + ".childCellNumber: no number at line " +
                  std::to_string(t->child_number_mark.line);
      return out;
    }
    e.numbers[at.line] = {at, at.value + n};
    out.changes.push_back("cellTypes: " + pool + " childCellNumber " + std::to_string(at.value) +
                          " -> " + std::to_string(at.value + n));
  }
  if (!vc_add.empty()) {
    const auto* v = find_vc(*cfg, vc);
    for (const auto& [type, n] : vc_add) {
      auto holders = vc_holders(*cfg, type);
      if (auto it = holders.find(vc); it != holders.end()) {
        IntAt at = int_at(lines, it->second->number_mark);
        if (!at.ok) {
          out.error = "virtualClusters." + vc + ": no cellNumber for " + type;
          return out;
        }
        e.numbers[at.line] = {at, at.value + n};
        out.changes.push_back("virtualClusters: " + vc + " " + type + " cellNumber " +
                              std::to_string(at.value) + " -> " + std::to_string(at.value + n));
      } else {
        if (v->virtual_cells.empty()) {
          out.error = "virtualClusters." + vc + " has no virtualCells to add to";
          return out;
        }
        size_t first = dash_line(lines, v->virtual_cells.back().mark);
        size_t end = item_end(lines, first);
        std::string ind(indent_of(lines[first]), ' ');
        auto& ins = e.insert_after[end - 1];
        ins.push_back(ind + "- cellType: " + type);
        ins.push_back(ind + "  cellNumber: " + std::to_string(n));
        out.changes.push_back("virtualClusters: " + vc + " " + type + " cellNumber " +
                              std::to_string(n) + " (new)");
      }
    }
  }
  if (out.changes.empty()) return out;
  out.text = e.apply();
  if (!check) return out;
  if (std::string err = check_text(out.text, layout_text); !err.empty()) {
    out.error = "the HiveD config with the new cells does not check: " + err;
    out.hint = "paictl check config shows every finding; the cluster files were not changed";
  }
  return out;
}

NodeCellsEdit remove_node_cells(const std::string& text, const std::string& layout_text,
                                const Cluster& cluster, const std::vector<std::string>& hosts,
                                const std::string& vc) {
  NodeCellsEdit out;
  out.text = text;
  const HivedConfig* cfg = cluster.model_config();
  if (!cfg || !cluster.services || !cluster.services->has_hived) return out;
  if (!known_vc(*cfg, vc, out)) return out;
  Edits e(text);
  const auto& lines = e.lines;
  std::map<std::string, int64_t> removed;  // vc_type -> node cells removed
  std::map<std::string, Place> places;
  std::map<std::string, int64_t> pool_shrink;
  for (const auto& host : hosts) {
    Place p;
    std::string err;
    if (!place_of(cluster, host, p, err)) {
      out.warnings.push_back(host + " has no cells in the HiveD config");
      continue;
    }
    if (!err.empty()) {
      out.error = err;
      out.hint = "take " + host + "'s cells out by hand (paictl hived diff shows the effect)";
      return out;
    }
    std::string pinned;
    if (has_pinned(*p.found.spec, pinned)) {
      out.error = host + " holds the pinned cell " + pinned + " of the HiveD config";
      out.hint = "give the VC another pinned cell first (or none), then remove the node";
      return out;
    }
    size_t first = dash_line(lines, p.found.spec->mark);
    e.erase.insert({first, item_end(lines, first)});
    if (p.found.depth == 1) pool_shrink[p.found.parent->cell_type]++;
    removed[p.vc_type]++;
    places[p.vc_type] = p;
    out.changes.push_back("physicalCells: " + host + "'s " + p.node_type + " cell (" +
                          std::to_string(p.leaves) + " leaf cells) of chain " + p.chain + " goes");
  }
  for (const auto& [pool, n] : pool_shrink) {
    const auto* t = cfg->find_cell_type(pool);
    IntAt at = int_at(lines, t->child_number_mark);
    if (!at.ok || at.value - n < 1) {
      out.error = "cellTypes." + pool + ": removing " + std::to_string(n) +
                  " node(s) would leave it without children";
      out.hint = "remove the pool from the HiveD config by hand, or plan again with paictl plan";
      return out;
    }
    e.numbers[at.line] = {at, at.value - n};
    out.changes.push_back("cellTypes: " + pool + " childCellNumber " + std::to_string(at.value) +
                          " -> " + std::to_string(at.value - n));
  }
  // The VCs' cells of each type must still fit in what is left.
  for (const auto& [type, n] : removed) {
    const Place& p = places[type];
    int64_t physical = 0;
    if (p.found.depth == 0) {
      for (const auto& c : cfg->physical_cells)
        physical += c.cell_type == p.node_type && c.pinned_cell_id.empty();
    } else {
      IntAt at = int_at(lines, cfg->find_cell_type(p.found.parent->cell_type)->child_number_mark);
      physical = at.value;
    }
    auto holders = vc_holders(*cfg, type);
    int64_t assigned = 0;
    for (const auto& [name, c] : holders) assigned += c->cell_number;
    int64_t deficit = assigned - (physical - n);
    if (deficit <= 0) {
      out.changes.push_back("virtualClusters: unchanged for " + type + " (" +
                            std::to_string(physical - n - assigned) + " left in no VC)");
      continue;
    }
    std::string giver = vc;
    if (giver.empty()) {
      if (holders.size() != 1) {
        std::vector<std::string> names;
        for (const auto& [name, c] : holders) names.push_back(name);
        out.error = "the VCs " + util::join(names, ", ") + " hold " + std::to_string(assigned) +
                    " " + type + " cells; " + std::to_string(physical - n) + " are left";
        out.hint = "--vc VC names the VC that gives up " + std::to_string(deficit);
        return out;
      }
      giver = holders.begin()->first;
    }
    auto it = holders.find(giver);
    if (it == holders.end() || it->second->cell_number < deficit) {
      out.error = "VC " + giver + " holds " +
                  std::to_string(it == holders.end() ? 0 : it->second->cell_number) + " " + type +
                  " cells; " + std::to_string(deficit) + " must go";
      out.hint = "--vc VC names a VC that holds enough of them";
      return out;
    }
    IntAt at = int_at(lines, it->second->number_mark);
    e.numbers[at.line] = {at, at.value - deficit};
    out.changes.push_back("virtualClusters: " + giver + " " + type + " cellNumber " +
                          std::to_string(at.value) + " -> " + std::to_string(at.value - deficit));
  }
  if (out.changes.empty()) return out;
  out.text = e.apply();
  if (std::string err = check_text(out.text, layout_text); !err.empty()) {
    out.error = "the HiveD config without the node's cells does not check: " + err;
    out.hint = "paictl check config shows every finding; the cluster files were not changed";
  }
  return out;
}

std::string remove_layout_machines(const std::string& text, const config::Layout& layout,
                                   const std::vector<std::string>& hosts) {
  Edits e(text);
  const auto& lines = e.lines;
  for (const auto& h : hosts)
    for (const auto& m : layout.machines)
      if (m.hostname == h) {
        size_t first = dash_line(lines, m.mark);
        e.erase.insert({first, item_end(lines, first)});
      }
  return e.apply();
}

}  // namespace pai::planner
