#include "config/hived_model.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <unordered_set>

#include "util/strings.h"

namespace pai::config {

int32_t HivedModel::find_type(std::string_view name) const {
  auto it = type_index.find(std::string(name));
  return it == type_index.end() ? -1 : it->second;
}

const std::string& HivedModel::type_name(int32_t t) const {
  static const std::string none;
  return t >= 0 && static_cast<size_t>(t) < types.size() ? types[static_cast<size_t>(t)].name
                                                         : none;
}

int32_t HivedModel::find_chain(std::string_view name) const {
  auto it = chain_index.find(std::string(name));
  return it == chain_index.end() ? -1 : it->second;
}

const VirtualClusterInfo* HivedModel::find_vc(std::string_view name) const {
  for (const auto& v : vcs)
    if (v.name == name) return &v;
  return nullptr;
}

namespace {

constexpr int32_t kMaxLevels = 64;
constexpr int64_t kMaxCells = 20'000'000;

std::optional<int32_t> parse_int32(std::string_view s) {
  int32_t v = 0;
  if (s.empty()) return std::nullopt;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

class Builder {
 public:
  Builder(const HivedConfig& cfg, Context& ctx, HivedModel& m) : cfg_(cfg), ctx_(ctx), m_(m) {}

  void run() {
    m_.sku_types = cfg_.sku_types;
    build_types();
    build_physical_cells();
    build_virtual_clusters();
    check_capacity();
    check_mixed_levels();
    check_unused_types();
  }

 private:
  const HivedConfig& cfg_;
  Context& ctx_;
  HivedModel& m_;
  std::unordered_map<int32_t, std::vector<uint8_t>> node_leaf_seen_;
  std::unordered_map<std::string, Mark> pinned_marks_;
  bool physical_entry_failed_ = false;  // an entry of physicalCells was left out
  std::vector<std::vector<std::vector<std::pair<const VirtualCellInfo*, std::string>>>>
      demand_;  // chain, level

  int32_t add_type(const std::string& name) {
    auto it = m_.type_index.find(name);
    if (it != m_.type_index.end()) return it->second;
    CellTypeInfo t;
    t.name = name;
    m_.types.push_back(std::move(t));
    int32_t idx = static_cast<int32_t>(m_.types.size() - 1);
    m_.type_index.emplace(name, idx);
    return idx;
  }

  std::vector<std::string> defined_names() const {
    std::vector<std::string> out;
    for (const auto& t : cfg_.cell_types) out.push_back(t.name);
    return out;
  }

  // --- cell types ------------------------------------------------------------
  void build_types() {
    std::vector<const CellTypeSpec*> spec_of;
    for (const auto& s : cfg_.cell_types) {
      int32_t i = add_type(s.name);
      m_.types[i].defined = true;
      m_.types[i].mark = s.mark;
      m_.types[i].is_node_level = s.is_node_level;
      m_.types[i].child_number = s.child_cell_number;
      if (s.child_cell_type.empty() || s.child_cell_number <= 0 || s.child_cell_number > 1'000'000)
        m_.types[i].valid = false;  // already reported by the loader
    }
    std::vector<std::string> sku_names;
    for (const auto& s : cfg_.sku_types) sku_names.push_back(s.name);
    const std::vector<std::string> defined = defined_names();
    for (const auto& s : cfg_.cell_types) {
      if (s.child_cell_type.empty()) continue;
      int32_t i = m_.type_index[s.name];
      bool child_defined = cfg_.find_cell_type(s.child_cell_type) != nullptr;
      m_.types[i].child = add_type(s.child_cell_type);
      if (!child_defined && !cfg_.find_sku_type(s.child_cell_type)) {
        std::string guess = util::did_you_mean(s.child_cell_type, defined);
        if (!guess.empty() && guess != s.name)
          // HiveD runs it as a leaf type of that name; only a typo makes it wrong.
          ctx_.warning(
              "H008", s.child_type_mark,
              "childCellType \"" + s.child_cell_type + "\" of \"" + s.name +
                  "\" is not defined, so HiveD makes it a new leaf cell type (a new SKU); its "
                  "name is close to \"" +
                  guess + "\"",
              "if you meant \"" + guess +
                  "\", fix the name; if it is a leaf type, declare it under "
                  "skuTypes to say so");
      }
    }
    // Leaf types: referenced but not defined.
    for (auto& t : m_.types) {
      if (t.defined) continue;
      t.level = 1;
      t.leaf_cell_number = 1;
    }
    // Levels, following child links iteratively; a revisit within one walk is a cycle.
    enum State : uint8_t { kNew, kOnPath, kDone };
    std::vector<uint8_t> state(m_.types.size(), kNew);
    for (size_t i = 0; i < m_.types.size(); ++i)
      if (!m_.types[i].defined) {
        state[i] = kDone;
        m_.types[i].leaf_type = static_cast<int32_t>(i);
      }
    for (const auto& s : cfg_.cell_types) {
      int32_t start = m_.type_index[s.name];
      if (state[start] == kDone) continue;
      std::vector<int32_t> path;
      int32_t cur = start;
      bool cycle = false;
      while (cur >= 0 && state[cur] != kDone) {
        if (state[cur] == kOnPath) {
          cycle = true;
          auto pos = std::find(path.begin(), path.end(), cur);
          std::string text;
          for (auto it = pos; it != path.end(); ++it) text += m_.types[*it].name + " -> ";
          text += m_.types[cur].name;
          ctx_.error("H007", m_.types[cur].mark, "cellTypes form a cycle: " + text,
                     "HiveD would recurse forever at start-up; a chain must end in a leaf type "
                     "that is not defined "
                     "under cellTypes");
          for (auto it = pos; it != path.end(); ++it) {
            m_.types[*it].valid = false;
            state[*it] = kDone;
          }
          path.erase(pos, path.end());
          break;
        }
        state[cur] = kOnPath;
        path.push_back(cur);
        if (!m_.types[cur].valid) break;
        cur = m_.types[cur].child;
      }
      (void)cycle;
      for (auto it = path.rbegin(); it != path.rend(); ++it) {
        CellTypeInfo& t = m_.types[*it];
        state[*it] = kDone;
        if (!t.valid || t.child < 0 || !m_.types[t.child].valid) {
          t.valid = false;
          continue;
        }
        const CellTypeInfo& c = m_.types[t.child];
        t.level = c.level + 1;
        t.has_node = c.has_node || t.is_node_level;
        t.is_multi_nodes = c.has_node;
        t.leaf_type = c.leaf_type;
        if (c.leaf_cell_number >
                std::numeric_limits<int64_t>::max() / std::max<int64_t>(t.child_number, 1) ||
            c.leaf_cell_number * t.child_number > kMaxCells) {
          ctx_.error("H016", t.mark,
                     "cell type \"" + t.name + "\" holds more than " + std::to_string(kMaxCells) +
                         " leaf cells",
                     "check childCellNumber along this chain");
          t.valid = false;
          continue;
        }
        t.leaf_cell_number = c.leaf_cell_number * t.child_number;
        if (t.level > kMaxLevels) {
          ctx_.error("H016", t.mark,
                     "the chain under \"" + t.name + "\" is deeper than " +
                         std::to_string(kMaxLevels) + " levels");
          t.valid = false;
        }
      }
    }
  }

  // --- physical cells -----------------------------------------------------------
  int32_t chain_for(int32_t top_type, Mark mark) {
    const std::string& name = m_.types[top_type].name;
    auto it = m_.chain_index.find(name);
    if (it != m_.chain_index.end()) return it->second;
    ChainInfo c;
    c.name = name;
    c.top_type = top_type;
    c.leaf_type = m_.types[top_type].leaf_type;
    c.top_level = m_.types[top_type].level;
    c.level_type.assign(static_cast<size_t>(c.top_level + 1), -1);
    c.first_cell_children.assign(static_cast<size_t>(c.top_level + 1), -1);
    c.mark = mark;
    int32_t lowest_node_level = -1;
    for (int32_t t = top_type; t >= 0; t = m_.types[t].child) {
      c.level_type[static_cast<size_t>(m_.types[t].level)] = t;
      if (m_.types[t].is_node_level) {
        if (lowest_node_level >= 0)
          ctx_.warning("H017", m_.types[lowest_node_level].mark,
                       "\"" + m_.types[lowest_node_level].name + "\" and \"" + m_.types[t].name +
                           "\" both have isNodeLevel: true in chain \"" + name + "\"; only \"" +
                           m_.types[t].name + "\" is one machine",
                       "set isNodeLevel: true only on the cell type that is one machine");
        lowest_node_level = t;
      }
    }
    m_.chains.push_back(std::move(c));
    int32_t idx = static_cast<int32_t>(m_.chains.size() - 1);
    m_.chain_index.emplace(name, idx);
    m_.leaf_type_chains[m_.types[top_type].leaf_type].push_back(idx);
    demand_.emplace_back(static_cast<size_t>(m_.types[top_type].level + 1));
    return idx;
  }

  int32_t node_for(const std::string& name, Mark mark) {
    auto it = m_.node_index.find(name);
    if (it != m_.node_index.end()) return it->second;
    NodeInfo n;
    n.name = name;
    n.mark = mark;
    m_.nodes.push_back(std::move(n));
    int32_t idx = static_cast<int32_t>(m_.nodes.size() - 1);
    m_.node_index.emplace(name, idx);
    return idx;
  }

  void build_physical_cells() {
    std::vector<std::string> defined = defined_names();
    int64_t budget = kMaxCells;
    std::unordered_map<std::string, Mark> top_addresses;
    int64_t total = 0;
    for (const auto& spec : cfg_.physical_cells) {
      const CellTypeSpec* ts =
          spec.cell_type.empty() ? nullptr : cfg_.find_cell_type(spec.cell_type);
      if (!ts) continue;
      int32_t top = m_.type_index[spec.cell_type];
      if (!m_.types[top].valid) continue;
      for (int32_t t = top; t >= 0; t = m_.types[t].child)
        total +=
            m_.types[top].leaf_cell_number / std::max<int64_t>(m_.types[t].leaf_cell_number, 1);
      if (total > kMaxCells) break;
    }
    m_.cells.reserve(static_cast<size_t>(std::min<int64_t>(total, kMaxCells)));
    for (size_t i = 0; i < cfg_.physical_cells.size(); ++i) {
      const PhysicalCellSpec& spec = cfg_.physical_cells[i];
      if (spec.cell_type.empty()) {
        m_.complete = false;
        continue;
      }
      const CellTypeSpec* ts = cfg_.find_cell_type(spec.cell_type);
      if (!ts) {
        std::string guess = util::did_you_mean(spec.cell_type, defined);
        ctx_.error(
            "H001", spec.type_mark.line ? spec.type_mark : spec.mark,
            "physicalCells[" + std::to_string(i) + "] has cellType \"" + spec.cell_type +
                "\", which is not defined in cellTypes",
            guess.empty()
                ? "define it under physicalCluster.cellTypes (HiveD panics at start-up otherwise)"
                : "did you mean \"" + guess + "\"?");
        m_.complete = false;
        physical_entry_failed_ = true;
        continue;
      }
      int32_t top = m_.type_index[spec.cell_type];
      if (!m_.types[top].valid) {
        m_.complete = false;
        physical_entry_failed_ = true;
        continue;
      }
      if (!m_.types[top].has_node) {
        ctx_.error("H002", spec.type_mark.line ? spec.type_mark : spec.mark,
                   "physicalCells[" + std::to_string(i) + "] is a \"" + spec.cell_type +
                       "\" cell, which is below node level; HiveD requires a top cell to be "
                       "node-level or above",
                   "set isNodeLevel: true on the cell type that is one machine, and list cells of "
                   "that type (or above)");
        m_.complete = false;
        physical_entry_failed_ = true;
        continue;
      }
      // Bound the work before inferring children.
      int64_t cells = 0;
      for (int32_t t = top; t >= 0; t = m_.types[t].child)
        cells +=
            m_.types[top].leaf_cell_number / std::max<int64_t>(m_.types[t].leaf_cell_number, 1);
      budget -= cells;
      if (budget < 0) {
        ctx_.error(
            "H016", spec.mark,
            "the physical cluster expands to more than " + std::to_string(kMaxCells) + " cells",
            "check childCellNumber values");
        m_.complete = false;
        return;
      }
      int32_t chain = chain_for(top, spec.mark);
      bool defaulted_node_reported = false;
      int32_t cell = build_cell(spec, top, static_cast<int64_t>(i), std::string(), -1, -1, chain,
                                spec.mark, defaulted_node_reported, false, &top_addresses);
      m_.chains[chain].top_cells.push_back(cell);
      m_.chains[chain].leaf_cells += m_.types[top].leaf_cell_number;
    }
  }

  int32_t build_cell(const PhysicalCellSpec& spec, int32_t type, int64_t default_address,
                     const std::string& prefix, int32_t node, int32_t parent, int32_t chain,
                     Mark inherited, bool& defaulted_node_reported, bool under_duplicate,
                     std::unordered_map<std::string, Mark>* sibling_addresses) {
    const CellTypeInfo& t =
        m_.types[static_cast<size_t>(type)];  // types do not grow while cells are built
    Mark mark = spec.mark.line ? spec.mark : inherited;
    if (parent >= 0 && !spec.cell_type.empty() && spec.cell_type != t.name)
      ctx_.warning("H018", spec.type_mark.line ? spec.type_mark : mark,
                   "this child cell says cellType \"" + spec.cell_type +
                       "\", but its parent's childCellType is \"" + t.name + "\"; HiveD uses \"" +
                       t.name + "\"",
                   "remove cellType from child cells, or fix the parent's childCellType");
    std::string own =
        spec.cell_address.empty() ? std::to_string(default_address) : spec.cell_address;
    std::string full = prefix.empty() ? own : prefix + "/" + own;
    // A cell whose address repeats another's is reported once; its subtree repeats too and stays
    // quiet. Full addresses are unique when sibling addresses are (children extend their parent's
    // address), so only siblings are compared: the caller passes `sibling_addresses`.
    bool duplicate = false;
    if (!under_duplicate && sibling_addresses) {
      auto [sit, sfresh] = sibling_addresses->emplace(own, mark);
      if (!sfresh) {
        duplicate = true;
        ctx_.error("H011", spec.address_mark.line ? spec.address_mark : mark,
                   "duplicate cell address \"" + full + "\" (also at line " +
                       std::to_string(sit->second.line) + ")",
                   "HiveD identifies cells by address; give each cell a distinct cellAddress");
        m_.complete = false;
      }
    }
    under_duplicate = under_duplicate || duplicate;

    PhysicalCellInfo c;
    c.chain = chain;
    c.level = t.level;
    c.type = type;
    c.parent = parent;
    c.mark = mark;
    c.pinned_id = spec.pinned_cell_id;
    if (t.has_node && !t.is_multi_nodes) {
      c.is_node = true;
      node = node_for(own, mark);
      NodeInfo& n = m_.nodes[node];
      if (std::find(n.chains.begin(), n.chains.end(), chain) == n.chains.end()) {
        n.chains.push_back(chain);
        n.leaf_types.push_back(t.leaf_type);
      } else if (!under_duplicate) {
        ctx_.error("H011", spec.address_mark.line ? spec.address_mark : mark,
                   "node \"" + own + "\" appears twice in chain \"" +
                       m_.chains[static_cast<size_t>(chain)].name + "\"",
                   "a machine is one node-level cell of a chain; remove the second one");
        m_.complete = false;
        under_duplicate = true;
      }
      if (!under_duplicate) n.leaves += t.leaf_cell_number;
      if (spec.cell_address.empty() && !defaulted_node_reported) {
        defaulted_node_reported = true;
        ctx_.warning("H019", mark,
                     "node-level cell \"" + t.name + "\" has no cellAddress, so HiveD takes \"" +
                         own + "\" as its Kubernetes node name",
                     "set cellAddress to the node's name (its hostname in layout.yaml)");
      }
    }
    c.node = node;
    if (t.level == 1) {
      auto idx = parse_int32(own);
      if (!idx) {
        ctx_.error(
            "H004", spec.address_mark.line ? spec.address_mark : mark,
            "leaf cell address \"" + own + "\" is not an integer; HiveD reads it as the GPU index",
            "use the device index, e.g. cellAddress: 0");
        m_.complete = false;
      } else {
        c.leaf_index = *idx;
        if (node >= 0 && *idx >= 0 && *idx < 1'000'000 && !under_duplicate) {
          auto& seen = node_leaf_seen_[node];
          if (static_cast<size_t>(*idx) >= seen.size())
            seen.resize(static_cast<size_t>(*idx) + 1, 0);
          if (seen[static_cast<size_t>(*idx)]) {
            ctx_.error(
                "H011", spec.address_mark.line ? spec.address_mark : mark,
                "leaf " + own + " of node \"" + m_.nodes[node].name +
                    "\" is listed twice, so HiveD could give it to two jobs",
                "each device index of a node may appear in one leaf cell only, across all chains");
            m_.complete = false;
          }
          seen[static_cast<size_t>(*idx)] = 1;
        }
      }
    }
    if (!c.pinned_id.empty()) {
      auto [it, fresh] = pinned_marks_.emplace(c.pinned_id, spec.pinned_mark);
      if (!fresh) {
        ctx_.error("H012", spec.pinned_mark,
                   "pinnedCellId \"" + c.pinned_id + "\" is already on another cell (line " +
                       std::to_string(it->second.line) + "); HiveD keeps only the last one",
                   "give every pinned cell its own ID");
        m_.complete = false;
      }
    }
    c.address = std::move(full);
    m_.cells.push_back(std::move(c));
    int32_t self = static_cast<int32_t>(m_.cells.size() - 1);
    if (!spec.pinned_cell_id.empty())
      m_.pinned_cells[spec.pinned_cell_id] = self;  // the last one wins, as in HiveD

    if (t.defined) {
      size_t written = spec.children.size();
      if (spec.has_children && written > static_cast<size_t>(t.child_number)) {
        ctx_.error("H009", mark,
                   "\"" + t.name + "\" cell has " + std::to_string(written) +
                       " cellChildren but childCellNumber is " + std::to_string(t.child_number),
                   "HiveD does not check this and the cell's capacity becomes wrong; fix "
                   "childCellNumber or the children");
      } else if (spec.has_children && written > 0 &&
                 written < static_cast<size_t>(t.child_number)) {
        ctx_.warning(
            "H010", mark,
            "\"" + t.name + "\" cell has " + std::to_string(written) +
                " cellChildren but childCellNumber is " + std::to_string(t.child_number),
            "if a device is missing, describe the machine with its own cell type; HiveD's capacity "
            "checks assume childCellNumber children");
      }
      int64_t count =
          (spec.has_children && written > 0) ? static_cast<int64_t>(written) : t.child_number;
      int64_t base = t.is_node_level ? 0 : default_address;
      std::vector<int32_t> kids;
      kids.reserve(static_cast<size_t>(count));
      static const PhysicalCellSpec kEmpty;
      std::string prefix_copy =
          m_.cells[static_cast<size_t>(self)].address;  // cells may reallocate during recursion
      // Default addresses of children are distinct; explicit ones must be compared.
      bool any_explicit = false;
      for (size_t k = 0; k < written; ++k) any_explicit |= !spec.children[k].cell_address.empty();
      std::unordered_map<std::string, Mark> siblings;
      for (int64_t k = 0; k < count; ++k) {
        const PhysicalCellSpec& cs =
            static_cast<size_t>(k) < written ? spec.children[static_cast<size_t>(k)] : kEmpty;
        kids.push_back(build_cell(cs, t.child, base * t.child_number + k, prefix_copy, node, self,
                                  chain, mark, defaulted_node_reported, under_duplicate,
                                  any_explicit ? &siblings : nullptr));
      }
      ChainInfo& ch = m_.chains[chain];
      if (ch.first_cell_children[static_cast<size_t>(t.level)] < 0)
        ch.first_cell_children[static_cast<size_t>(t.level)] = count;
      m_.cells[self].children = std::move(kids);
    }
    return self;
  }

  // --- virtual clusters -----------------------------------------------------------
  void build_virtual_clusters() {
    std::vector<std::string> chain_names;
    for (const auto& c : m_.chains) chain_names.push_back(c.name);
    std::vector<std::string> pinned_ids;
    for (const auto& [id, cell] : m_.pinned_cells) pinned_ids.push_back(id);
    std::unordered_map<std::string, std::string> pinned_user;  // id -> VC

    for (const auto& spec : cfg_.virtual_clusters) {
      VirtualClusterInfo vc;
      vc.name = spec.name;
      vc.mark = spec.mark;
      if (!util::is_dns1123_label(spec.name)) {
        std::string fixed = util::to_lower(spec.name);
        for (char& ch : fixed)
          if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'))) ch = '-';
        ctx_.warning("H015", spec.mark,
                     "virtual cluster name \"" + spec.name +
                         "\" is not a lower-case Kubernetes name; HiveD accepts it, but OpenPAI's "
                         "manual asks for such names",
                     "use at most 63 lower-case letters, digits and '-', starting and ending with "
                     "a letter or digit (e.g. \"" +
                         fixed + "\")");
      }
      for (const auto& vcs : spec.virtual_cells) resolve_virtual_cell(vc, vcs, chain_names);
      std::unordered_set<std::string> own;
      for (const auto& p : spec.pinned_cells) {
        auto it = m_.pinned_cells.find(p.pinned_cell_id);
        if (it == m_.pinned_cells.end()) {
          std::string guess = util::did_you_mean(p.pinned_cell_id, pinned_ids);
          ctx_.error("H003", p.mark,
                     "virtual cluster \"" + spec.name + "\" pins \"" + p.pinned_cell_id +
                         "\", but no physical cell has that pinnedCellId",
                     guess.empty()
                         ? "set pinnedCellId: " + p.pinned_cell_id + " on the physical cell to pin"
                         : "did you mean \"" + guess + "\"?");
          m_.complete = false;
          continue;
        }
        if (!own.insert(p.pinned_cell_id).second) {
          ctx_.error(
              "H013", p.mark,
              "virtual cluster \"" + spec.name + "\" pins \"" + p.pinned_cell_id + "\" twice",
              "list each pinned cell once");
          continue;
        }
        auto [uit, fresh] = pinned_user.emplace(p.pinned_cell_id, spec.name);
        if (!fresh) {
          ctx_.error(
              "H013", p.mark,
              "pinned cell \"" + p.pinned_cell_id + "\" is already pinned by virtual cluster \"" +
                  uit->second + "\"",
              "a pinned cell belongs to one VC; HiveD fails later when it removes the cell twice");
          m_.complete = false;
          continue;
        }
        PinnedCellInfo info{p.pinned_cell_id, it->second, p.mark};
        vc.pinned.push_back(info);
        const PhysicalCellInfo& cell = m_.cells[static_cast<size_t>(it->second)];
        VirtualCellInfo demand;
        demand.chain = cell.chain;
        demand.level = cell.level;
        demand.count = 1;
        demand.cell_type = "pinned " + p.pinned_cell_id;
        demand.mark = p.mark;
        pinned_demands_.push_back({demand, spec.name});
      }
      m_.vcs.push_back(std::move(vc));
    }
    // Record demand once the VC vector is stable.
    for (const auto& vc : m_.vcs)
      for (const auto& c : vc.cells)
        demand_[static_cast<size_t>(c.chain)][static_cast<size_t>(c.level)].push_back(
            {&c, vc.name});
    for (const auto& [d, name] : pinned_demands_)
      demand_[static_cast<size_t>(d.chain)][static_cast<size_t>(d.level)].push_back({&d, name});
  }
  std::vector<std::pair<VirtualCellInfo, std::string>> pinned_demands_;

  void resolve_virtual_cell(VirtualClusterInfo& vc, const VirtualCellSpec& s,
                            const std::vector<std::string>& chain_names) {
    auto segs = util::split(s.cell_type, '.');
    std::string chain_name(segs[0]);
    std::string last(segs.back());
    int32_t chain_type = m_.find_type(chain_name);
    if (chain_type < 0) {
      std::vector<std::string> names = defined_names();
      std::string guess = util::did_you_mean(chain_name, names);
      ctx_.error("H001", s.type_mark,
                 "virtual cluster \"" + vc.name + "\" uses cell type \"" + chain_name +
                     "\", which is not defined",
                 guess.empty() ? "the first part of a VC cellType is a chain: the top type of "
                                 "physicalCells entries (" +
                                     util::join(chain_names, ", ") + ")"
                               : "did you mean \"" + guess + "\"?");
      m_.complete = false;
      return;
    }
    int32_t chain = m_.find_chain(chain_name);
    if (chain < 0 && physical_entry_failed_) {
      m_.complete = false;  // the physicalCells entry meant for this chain is already reported
      return;
    }
    if (chain < 0) {
      ctx_.error("H006", s.type_mark,
                 "virtual cluster \"" + vc.name + "\" uses chain \"" + chain_name +
                     "\", but no physicalCells entry has that top cell type",
                 "HiveD refuses to start ('Chain " + chain_name +
                     " does not exists in physical cluster'); "
                     "the first part must be one of: " +
                     util::join(chain_names, ", "));
      m_.complete = false;
      return;
    }
    const ChainInfo& ch = m_.chains[static_cast<size_t>(chain)];
    int32_t prev_level = ch.top_level;
    for (size_t k = 1; k < segs.size(); ++k) {
      std::string seg(segs[k]);
      int32_t t = m_.find_type(seg);
      int32_t lvl = (t >= 0) ? m_.types[t].level : -1;
      bool in_chain =
          t >= 0 && lvl >= 1 && lvl <= ch.top_level && ch.level_type[static_cast<size_t>(lvl)] == t;
      if (!in_chain) {
        std::vector<std::string> chain_types;
        for (int32_t l = ch.top_level; l >= 1; --l)
          chain_types.push_back(m_.types[ch.level_type[static_cast<size_t>(l)]].name);
        std::string guess = util::did_you_mean(seg, chain_types);
        bool is_last = k + 1 == segs.size();
        if (t < 0 && is_last) {
          ctx_.error("H001", s.type_mark,
                     "virtual cluster \"" + vc.name + "\" uses cell type \"" + seg +
                         "\", which is not defined",
                     guess.empty() ? "the types of chain " + chain_name +
                                         " are: " + util::join(chain_types, ", ")
                                   : "did you mean \"" + guess + "\"?");
        } else {
          ctx_.error("H014", s.type_mark,
                     "\"" + seg + "\" in \"" + s.cell_type + "\" is not a cell type of chain \"" +
                         chain_name + "\"" +
                         (is_last ? "" : " (HiveD ignores middle parts, so this goes unnoticed)"),
                     guess.empty()
                         ? "the chain's types, top to leaf, are: " + util::join(chain_types, ", ")
                         : "did you mean \"" + guess + "\"?");
        }
        m_.complete = false;
        return;
      }
      if (lvl >= prev_level) {
        ctx_.error("H014", s.type_mark,
                   "\"" + seg + "\" in \"" + s.cell_type + "\" is not below \"" +
                       std::string(segs[k - 1]) + "\" in chain \"" + chain_name + "\"",
                   "write the path from the chain's top type downwards, e.g. POOL.NODE");
        m_.complete = false;
        return;
      }
      prev_level = lvl;
    }
    VirtualCellInfo info;
    info.chain = chain;
    info.level = segs.size() == 1 ? ch.top_level : prev_level;
    info.count = s.cell_number;
    info.cell_type = s.cell_type;
    info.mark = s.type_mark.line ? s.type_mark : s.mark;
    if (s.cell_number > 0) vc.cells.push_back(std::move(info));
  }

  // HiveD's initCellNums: from the top level down, each level's free cells minus
  // the VCs' cells at that level, times the child count, is what the next level has.
  void check_capacity() {
    for (size_t ci = 0; ci < m_.chains.size(); ++ci) {
      const ChainInfo& ch = m_.chains[ci];
      bool any_demand = false;
      for (const auto& lvl : demand_[ci]) any_demand |= !lvl.empty();
      int64_t available = static_cast<int64_t>(ch.top_cells.size());
      bool failed = false;
      for (int32_t l = ch.top_level; l >= 1; --l) {
        const auto& ds = demand_[ci][static_cast<size_t>(l)];
        int64_t need = 0;
        for (const auto& d : ds) need += d.first->count;
        int64_t left = available - need;
        const std::string& tname = m_.types[ch.level_type[static_cast<size_t>(l)]].name;
        if (left < 0) {
          std::string who;
          for (const auto& d : ds) {
            if (!who.empty()) who += ", ";
            who += d.second + ": " + std::to_string(d.first->count);
            if (d.first->cell_type.rfind("pinned ", 0) == 0) who += " (" + d.first->cell_type + ")";
          }
          const VirtualCellInfo* last = ds.back().first;
          ctx_.error("H005", last->mark,
                     "virtual clusters need " + std::to_string(need) + " \"" + tname +
                         "\" cells (level " + std::to_string(l) + " of chain \"" + ch.name +
                         "\") but only " + std::to_string(available) + " are left at that level (" +
                         who + ")",
                     "HiveD refuses to start ('Illegal initial VC assignment: Insufficient "
                     "physical cells'); lower "
                     "cellNumber, or add physical cells to the chain");
          failed = true;
          break;
        }
        if (l > 1) {
          int64_t kids = ch.first_cell_children[static_cast<size_t>(l)];
          available = left * std::max<int64_t>(kids, 0);
        } else {
          available = left;
        }
      }
      if (!failed && any_demand && available > 0 && !m_.vcs.empty()) {
        const std::string& leaf = m_.types[ch.leaf_type].name;
        ctx_.info(
            "H024", ch.mark,
            std::to_string(available) + " of " + std::to_string(ch.leaf_cells) + " \"" + leaf +
                "\" leaf cells in chain \"" + ch.name +
                "\" are not guaranteed to any virtual cluster",
            "they still run opportunistic (priority -1) jobs; give them to a VC to guarantee them");
      } else if (!failed && !any_demand && !m_.vcs.empty()) {
        const std::string& leaf = m_.types[ch.leaf_type].name;
        ctx_.info("H024", ch.mark,
                  "no virtual cluster has cells of chain \"" + ch.name + "\" (" +
                      std::to_string(ch.leaf_cells) + " \"" + leaf + "\" leaf cells)",
                  "only opportunistic (priority -1) jobs can use them");
      }
    }
    if (!cfg_.has_virtual_clusters && !m_.chains.empty())
      ctx_.warning(
          "H025", cfg_.physical_cluster_mark, "the config has no virtualClusters",
          "HiveD accepts it, but no job can get guaranteed resources; add virtualClusters");
  }

  // H027: a VC holding a cell beside smaller ones of the same chain. HiveD puts a
  // small job of the VC in any cell that holds it, the large one included, and
  // never moves it: a later job the size of the large cell then waits although
  // the VC has that many leaf cells free in its smaller cells.
  void check_mixed_levels() {
    for (const auto& vc : m_.vcs) {
      std::map<int32_t, std::vector<const VirtualCellInfo*>> by_chain;
      for (const auto& c : vc.cells)
        if (c.count > 0 && c.chain >= 0) by_chain[c.chain].push_back(&c);
      for (const auto& [chain, cells] : by_chain) {
        const ChainInfo& ch = m_.chains[static_cast<size_t>(chain)];
        int32_t lowest = std::numeric_limits<int32_t>::max(), highest = 0;
        const VirtualCellInfo* big = nullptr;
        for (const auto* c : cells) {
          lowest = std::min(lowest, c->level);
          if (c->level > highest) {
            highest = c->level;
            big = c;
          }
        }
        if (!big || highest == lowest) continue;
        auto leaves_at = [&](int32_t l) {
          return m_.types[ch.level_type[static_cast<size_t>(l)]].leaf_cell_number;
        };
        std::vector<std::string> sizes, smaller;
        std::set<int32_t> levels;
        for (const auto* c : cells) levels.insert(c->level);
        for (auto it = levels.rbegin(); it != levels.rend(); ++it)
          if (*it > lowest) sizes.push_back(std::to_string(leaves_at(*it)));
        int64_t all_leaves = 0;
        for (const auto* c : cells) all_leaves += c->count * leaves_at(c->level);
        for (const auto* c : cells)
          if (c->level < highest) {
            smaller.push_back(std::to_string(c->count) + " \"" +
                              m_.types[ch.level_type[static_cast<size_t>(c->level)]].name + "\"");
          }
        const std::string& leaf = m_.types[ch.leaf_type].name;
        const std::string big_type = m_.types[ch.level_type[static_cast<size_t>(highest)]].name;
        ctx_.warning("H027", big->mark,
                     "virtual cluster \"" + vc.name + "\" holds " + std::to_string(big->count) +
                         " \"" + big_type + "\" beside smaller cells (" +
                         util::join(smaller, ", ") + ") in chain \"" + ch.name + "\": a job of " +
                         util::join(sizes, " or ") + " \"" + leaf +
                         "\" can wait although the VC has them free, when a smaller job came "
                         "first and HiveD placed it in the larger cell",
                     "give the VC cells of one level in this chain (e.g. " +
                         std::to_string(all_leaves / leaves_at(lowest)) +
                         " of its smallest type, or whole \"" + big_type +
                         "\" cells); paictl plan plans VCs so by default");
      }
    }
  }

  void check_unused_types() {
    if (physical_entry_failed_) return;  // types of the failed entries would all look unused
    std::vector<uint8_t> used(m_.types.size(), 0);
    for (const auto& ch : m_.chains)
      for (int32_t t = ch.top_type; t >= 0; t = m_.types[t].child) used[static_cast<size_t>(t)] = 1;
    for (const auto& s : cfg_.cell_types) {
      int32_t t = m_.type_index[s.name];
      if (!used[static_cast<size_t>(t)] && m_.types[t].valid)
        ctx_.warning("H023", s.mark,
                     "cell type \"" + s.name + "\" is not used by any physical cell",
                     "remove it, or add physicalCells of a chain that contains it");
    }
    // Leaf types should be declared in skuTypes: OpenPAI sizes pods from them.
    std::unordered_set<int32_t> reported;
    std::vector<std::string> sku_names;
    for (const auto& s : cfg_.sku_types) sku_names.push_back(s.name);
    for (const auto& ch : m_.chains) {
      int32_t leaf = ch.leaf_type;
      if (!reported.insert(leaf).second) continue;
      const std::string& name = m_.types[leaf].name;
      if (cfg_.find_sku_type(name)) continue;
      Mark where = ch.mark;
      for (const auto& s : cfg_.cell_types)
        if (s.child_cell_type == name) {
          where = s.child_type_mark;
          break;
        }
      if (!cfg_.has_sku_types) {
        ctx_.report(
            "H021", diag::Severity::Warning, where,
            "leaf cell type \"" + name + "\" has no skuTypes entry (the config has no skuTypes)",
            "OpenPAI's rest-server sizes each pod's cpu and memory from skuTypes; add skuTypes: {" +
                name + ": {gpu: 1, cpu: N, memory: NGi}}");
      } else {
        std::string guess = util::did_you_mean(name, sku_names);
        ctx_.error("H021", where, "leaf cell type \"" + name + "\" is not declared in skuTypes",
                   guess.empty()
                       ? "add skuTypes." + name + " with gpu, cpu and memory per leaf cell"
                       : "did you mean \"" + guess +
                             "\"? (a leaf type is any childCellType not under cellTypes)");
      }
    }
  }
};

}  // namespace

HivedModel build_hived_model(const HivedConfig& cfg, Context& ctx) {
  HivedModel m;
  Builder b(cfg, ctx, m);
  b.run();
  return m;
}

}  // namespace pai::config
