#include "planner/plan_output.h"

#include <algorithm>
#include <cmath>

#include "util/strings.h"
#include "util/yaml_emit.h"

namespace pai::planner {

namespace {

std::string sp(int n) {
  return std::string(static_cast<size_t>(std::max(n, 0)), ' ');
}
std::string q(std::string_view s) {
  return util::yaml_scalar(s);
}

std::string number(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9)
    return std::to_string(static_cast<long long>(std::llround(v)));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string header(const Plan& plan, const char* what) {
  std::string s = std::string("# ") + what + ", planned by paictl plan";
  if (!plan.inputs.empty()) s += " from " + util::join(plan.inputs, ", ");
  s += ".\n# Rules (SKUs, cell levels, reserves, VC rounding): docs/plan.md. Check it with: paictl "
       "check config DIR\n";
  return s;
}

// Children of a cell whose GPUs are order[begin, end), at hierarchy level `level`
// (index into Hierarchy::levels; -1 means the children are leaves).
void emit_children(std::string& out, int indent, const std::vector<int>& order, size_t begin,
                   size_t end, const Hierarchy& h, int level) {
  if (level < 0) {
    for (size_t i = begin; i < end; ++i)
      out += sp(indent) + "- cellAddress: " + std::to_string(order[i]) + "\n";
    return;
  }
  size_t size = static_cast<size_t>(h.levels[static_cast<size_t>(level)].gpus);
  for (size_t b = begin; b < end; b += size) {
    out += sp(indent) + "- cellChildren:\n";
    emit_children(out, indent + 2, order, b, std::min(end, b + size), h, level - 1);
  }
}

void emit_node(std::string& out, int indent, const Plan& plan, size_t host,
               const std::string* type) {
  const PlannedHost& ph = plan.hosts[host];
  const Sku& s = plan.skus[static_cast<size_t>(ph.sku)];
  out += sp(indent) + "- ";
  if (type) out += "cellType: " + *type + "\n" + sp(indent + 2);
  out += "cellAddress: " + q(ph.facts.hostname) + "\n";
  const std::vector<int>& order = ph.hierarchy.leaf_order;
  if (!s.has_gpu || ph.hierarchy.identity_order() || static_cast<int>(order.size()) != s.leaves)
    return;
  out += sp(indent + 2) + "cellChildren:\n";
  emit_children(out, indent + 2, order, 0, order.size(), s.hierarchy,
                static_cast<int>(s.hierarchy.levels.size()) - 1);
}

}  // namespace

std::string memory_quantity(int64_t bytes) {
  if (bytes >= kGiB && bytes % kGiB == 0) return std::to_string(bytes / kGiB) + "Gi";
  return std::to_string(bytes / kMiB) + "Mi";
}

std::string vc_cell_type(const Chain& chain, size_t level) {
  if (level == 0) return chain.types[0];
  return chain.types[0] + "." + chain.types[level];
}

std::string render_layout(const Plan& plan) {
  std::string out = header(plan, "OpenPAI layout.yaml");
  out += "machine-sku:\n";
  for (const auto& s : plan.skus) {
    bool used = false;
    for (size_t h : s.hosts) used |= !plan.hosts[h].excluded;
    if (!used) continue;
    out += "  " + q(s.name) + ":\n";
    if (s.has_gpu && !s.master) {
      out += "    computing-device:\n      type: nvidia.com/gpu\n      model: " + q(s.gpu_short) +
             "\n      count: " + std::to_string(s.gpus) + "\n";
    }
    out += "    mem: " + std::to_string(s.mem_bytes / kGiB) + "Gi\n";
    out += "    cpu:\n      vcore: " + std::to_string(s.vcore) + "\n";
  }
  out += "\nmachine-list:\n";
  auto emit = [&](const PlannedHost& h) {
    const Sku& s = plan.skus[static_cast<size_t>(h.sku)];
    out += "  - hostname: " + q(h.facts.hostname) + "\n";
    out += "    hostip: " + q(h.facts.hostip) + "\n";
    out += "    machine-type: " + q(s.name) + "\n";
    out += s.master ? "    pai-master: \"true\"\n" : "    pai-worker: \"true\"\n";
  };
  int m = plan.master_host();
  if (m >= 0) emit(plan.hosts[static_cast<size_t>(m)]);
  for (const auto& s : plan.skus) {
    if (s.master) continue;
    for (size_t h : s.hosts)
      if (!plan.hosts[h].excluded) emit(plan.hosts[h]);
  }
  return out;
}

std::string render_hived(const Plan& plan) {
  std::string out = header(plan, "HiveD scheduler config");
  out += "physicalCluster:\n  skuTypes:\n";
  std::vector<std::string> leaves_done;
  for (const auto& s : plan.skus) {
    if (s.master || s.leaf_type.empty()) continue;
    if (std::find(leaves_done.begin(), leaves_done.end(), s.leaf_type) != leaves_done.end())
      continue;
    bool used = false;
    for (const auto& c : plan.chains)
      used |= plan.skus[static_cast<size_t>(c.sku)].leaf_type == s.leaf_type;
    if (!used) continue;
    leaves_done.push_back(s.leaf_type);
    out += "    " + q(s.leaf_type) + ":\n";
    if (s.has_gpu) out += "      gpu: 1\n";
    out += "      cpu: " + number(s.cpu_per_leaf) + "\n";
    out += "      memory: " + memory_quantity(s.memory_per_leaf) + "\n";
  }
  out += "  cellTypes:\n";
  std::vector<std::string> types_done;
  auto type = [&](const std::string& name, const std::string& child, int64_t n, bool node) {
    if (std::find(types_done.begin(), types_done.end(), name) != types_done.end()) return;
    types_done.push_back(name);
    out += "    " + q(name) + ":\n      childCellType: " + q(child) +
           "\n      childCellNumber: " + std::to_string(n) + "\n";
    if (node) out += "      isNodeLevel: true\n";
  };
  for (const auto& c : plan.chains) {
    const Sku& s = plan.skus[static_cast<size_t>(c.sku)];
    // Bottom-up: machine levels, node, then the chain's rack type.
    std::string child = s.leaf_type;
    for (size_t l = 0; l < s.hierarchy.levels.size(); ++l) {
      type(s.level_types[l], child, s.hierarchy.levels[l].children, false);
      child = s.level_types[l];
    }
    const std::string& node = s.level_types.back();
    type(node, child, s.has_gpu ? s.hierarchy.node_children : s.leaves, true);
    if (c.types.front() != node)
      type(c.types.front(), node, c.leaves_per_cell[0] / c.leaves_per_cell[1], false);
  }
  out += "  physicalCells:\n";
  for (const auto& c : plan.chains) {
    const Sku& s = plan.skus[static_cast<size_t>(c.sku)];
    bool rack = c.types.front() != s.level_types.back();
    for (const auto& cell : c.cells) {
      if (!rack) {
        emit_node(out, 2, plan, cell.hosts.front(), &c.types.front());
        continue;
      }
      out += "  - cellType: " + q(c.types.front()) + "\n    cellAddress: " + q(cell.address) +
             "\n    cellChildren:\n";
      for (size_t h : cell.hosts) emit_node(out, 4, plan, h, nullptr);
    }
  }
  out += "virtualClusters:\n";
  if (plan.vcs.empty()) out.replace(out.size() - 1, 1, " {}\n");
  for (const auto& vc : plan.vcs) {
    out += "  " + q(vc.name) + ":\n    virtualCells:\n";
    for (const auto& cc : vc.chains) {
      const Chain& c = plan.chains[static_cast<size_t>(cc.chain)];
      for (size_t l = 0; l < cc.count.size(); ++l)
        if (cc.count[l] > 0)
          out += "    - cellType: " + q(vc_cell_type(c, l)) +
                 "\n      cellNumber: " + std::to_string(cc.count[l]) + "\n";
    }
  }
  return out;
}

std::string render_services(const Plan& plan, const std::string& existing) {
  std::string hived = render_hived(plan);
  std::string block;
  for (auto line : util::split(hived, '\n')) {
    if (line.empty()) {
      block += "\n";
      continue;
    }
    block += "    " + std::string(line) + "\n";
  }
  while (block.size() >= 2 && block[block.size() - 1] == '\n' && block[block.size() - 2] == '\n')
    block.pop_back();
  const std::string config = "  config: |\n" + block;
  if (existing.empty())
    return "# The hivedscheduler block of OpenPAI's services-configuration.yaml, planned by paictl "
           "plan.\n"
           "# Merge it into your services-configuration.yaml, or let paictl plan --out DIR update "
           "that file.\n"
           "hivedscheduler:\n" +
           config;

  // Replace hivedscheduler.config in the existing file and keep everything else.
  std::vector<std::string> lines;
  for (auto l : util::split(existing, '\n')) lines.emplace_back(l);
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  auto indent_of = [](const std::string& l) {
    size_t i = l.find_first_not_of(' ');
    return i == std::string::npos ? std::string::npos : i;
  };
  auto top_level_key = [&](const std::string& l) {
    return !l.empty() && l[0] != ' ' && l[0] != '#' && l[0] != '\t';
  };
  size_t start = lines.size();
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind("hivedscheduler:", 0) == 0) {
      start = i;
      break;
    }
  std::string out;
  if (start == lines.size()) {
    for (const auto& l : lines) out += l + "\n";
    if (!out.empty() && out.substr(out.size() >= 2 ? out.size() - 2 : 0) != "\n\n") out += "\n";
    return out + "hivedscheduler:\n" + config;
  }
  size_t end = start + 1;
  while (end < lines.size() && !top_level_key(lines[end])) ++end;
  // Keep comments and blank lines that precede the next key outside the block.
  size_t block_end = end;
  while (block_end > start + 1 &&
         (util::trim(lines[block_end - 1]).empty() || lines[block_end - 1][0] == '#'))
    --block_end;
  // Inside the block: find `config:` and its extent (deeper-indented or blank lines).
  std::vector<std::string> keep;
  size_t i = start + 1;
  bool replaced = false;
  while (i < block_end) {
    const std::string& l = lines[i];
    size_t ind = indent_of(l);
    std::string_view t = util::trim(l);
    if (!replaced && ind != std::string::npos && t.rfind("config:", 0) == 0) {
      size_t j = i + 1;
      while (j < block_end && (util::trim(lines[j]).empty() || indent_of(lines[j]) > ind)) ++j;
      keep.push_back("\x01");  // where the new config goes
      replaced = true;
      i = j;
      continue;
    }
    keep.push_back(l);
    ++i;
  }
  for (size_t k = 0; k < start; ++k) out += lines[k] + "\n";
  out += lines[start].substr(0, std::string("hivedscheduler:").size()) + "\n";
  if (!replaced) out += config;
  for (const auto& l : keep) out += l == "\x01" ? config : l + "\n";
  for (size_t k = block_end; k < lines.size(); ++k) out += lines[k] + "\n";
  return out;
}

nlohmann::ordered_json plan_to_json(const Plan& plan) {
  using J = nlohmann::ordered_json;
  J j;
  j["schema"] = "paictl.plan/v1";
  j["inputs"] = plan.inputs;
  J skus = J::array();
  for (const auto& s : plan.skus) {
    J o;
    o["name"] = s.name;
    o["role"] = s.master ? "master" : "worker";
    int hosts = 0;
    for (size_t h : s.hosts) hosts += !plan.hosts[h].excluded;
    o["hosts"] = hosts;
    if (s.has_gpu) {
      o["gpu_model"] = s.gpu_model;
      o["gpus_per_host"] = s.gpus;
      o["gpu_memory_mib"] = s.gpu_memory_mib;
    }
    o["cpu_model"] = s.cpu_model;
    o["vcore"] = s.vcore;
    o["memory"] = std::to_string(s.mem_bytes / kGiB) + "Gi";
    if (!s.master) {
      o["reserve"] = {{"cpu", s.reserve_cpu},
                      {"memory", memory_quantity(s.reserve_memory / kMiB * kMiB)}};
      o["leaf_type"] = s.leaf_type;
      o["leaves_per_host"] = s.leaves;
      o["per_leaf"] = {{"cpu", s.cpu_per_leaf}, {"memory", memory_quantity(s.memory_per_leaf)}};
      J levels = J::array();
      for (size_t l = 0; l < s.hierarchy.levels.size(); ++l)
        levels.push_back({{"cell_type", s.level_types[l]},
                          {"children", s.hierarchy.levels[l].children},
                          {"leaves", s.hierarchy.levels[l].gpus},
                          {"why", s.hierarchy.levels[l].reason}});
      levels.push_back({{"cell_type", s.level_types.back()},
                        {"children", s.has_gpu ? s.hierarchy.node_children : s.leaves},
                        {"leaves", s.leaves},
                        {"why", "one machine (isNodeLevel)"}});
      o["cell_levels"] = levels;
      if (!s.profile.empty()) o["profile"] = s.profile;
      if (s.odd) o["split_from"] = s.peer;
    }
    skus.push_back(o);
  }
  j["skus"] = skus;
  J hosts = J::array();
  for (const auto& h : plan.hosts) {
    J o;
    o["hostname"] = h.facts.hostname;
    o["hostip"] = h.facts.hostip;
    o["role"] = h.facts.role == HostRole::Master ? "master" : "worker";
    if (!h.facts.rack.empty()) o["rack"] = h.facts.rack;
    o["sku"] = h.sku >= 0 ? plan.skus[static_cast<size_t>(h.sku)].name : "";
    o["excluded"] = h.excluded;
    if (!h.reason.empty()) o["reason"] = h.reason;
    if (!h.hierarchy.leaf_order.empty()) o["leaf_order"] = h.hierarchy.leaf_order;
    o["origin"] = h.facts.origin;
    hosts.push_back(o);
  }
  j["hosts"] = hosts;
  J chains = J::array();
  for (const auto& c : plan.chains) {
    chains.push_back({{"name", c.name},
                      {"sku", plan.skus[static_cast<size_t>(c.sku)].name},
                      {"top_cells", c.cells.size()},
                      {"leaves", c.leaves()},
                      {"types", c.types}});
  }
  j["chains"] = chains;
  J vcs = J::array();
  for (const auto& vc : plan.vcs) {
    J o;
    o["name"] = vc.name;
    J by = J::object();
    for (const auto& [s, n] : vc.leaves_by_sku) by[plan.skus[static_cast<size_t>(s)].name] = n;
    o["leaves_by_sku"] = by;
    J cells = J::array();
    for (const auto& cc : vc.chains) {
      const Chain& c = plan.chains[static_cast<size_t>(cc.chain)];
      for (size_t l = 0; l < cc.count.size(); ++l)
        if (cc.count[l] > 0)
          cells.push_back({{"cellType", vc_cell_type(c, l)}, {"cellNumber", cc.count[l]}});
    }
    o["virtual_cells"] = cells;
    o["explanations"] = vc.explanations;
    vcs.push_back(o);
  }
  j["virtual_clusters"] = vcs;
  return j;
}

namespace {

std::string pad(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}
std::string rpad(const std::string& s, size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}

struct Table {
  std::vector<std::string> head;
  std::vector<bool> right;
  std::vector<std::vector<std::string>> rows;
  std::string render(bool color) const {
    std::vector<size_t> w(head.size());
    for (size_t c = 0; c < head.size(); ++c) {
      w[c] = head[c].size();
      for (const auto& r : rows) w[c] = std::max(w[c], r[c].size());
    }
    auto line = [&](const std::vector<std::string>& r) {
      std::string s;
      for (size_t c = 0; c < r.size(); ++c) {
        bool last = c + 1 == r.size();
        std::string cell = right[c] ? rpad(r[c], w[c]) : (last ? r[c] : pad(r[c], w[c]));
        s += (c ? "  " : "  ") + cell;
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      return s + "\n";
    };
    std::string out = color ? "\x1b[1m" + line(head) + "\x1b[0m" : line(head);
    for (const auto& r : rows) out += line(r);
    return out;
  }
};

}  // namespace

std::string render_table(const Plan& plan, const TableOptions& opt) {
  auto title = [&](const std::string& t) {
    return opt.color ? "\x1b[1m" + t + "\x1b[0m\n" : t + "\n";
  };
  std::string out;
  int workers = 0, excluded = 0, gpus = 0;
  size_t worker_skus = 0;
  for (const auto& h : plan.hosts) {
    if (h.excluded)
      ++excluded;
    else if (h.facts.role == HostRole::Worker) {
      ++workers;
      gpus += h.hierarchy.gpus;
    }
  }
  for (const auto& s : plan.skus) worker_skus += !s.master;
  out += title("PLAN: " + std::to_string(plan.hosts.size()) + " hosts, 1 master and " +
               std::to_string(workers) + " workers in " + std::to_string(worker_skus) + " SKU" +
               (worker_skus == 1 ? "" : "s") + ", " + std::to_string(gpus) + " GPUs" +
               (excluded ? ", " + std::to_string(excluded) + " excluded" : ""));
  out += "\n" + title("SKUS");
  Table skus{{"SKU", "HOSTS", "PER HOST", "LEAF", "CPU/LEAF", "MEM/LEAF",
              "CELL TYPES (bottom-up, children)"},
             {false, true, false, false, true, true, false},
             {}};
  for (const auto& s : plan.skus) {
    int hosts = 0;
    for (size_t h : s.hosts) hosts += !plan.hosts[h].excluded;
    if (hosts == 0) continue;
    std::string per = s.has_gpu ? std::to_string(s.gpus) + "x " + s.gpu_short + " " +
                                      std::to_string((s.gpu_memory_mib + 512) / 1024) + "G, "
                                : std::string();
    per += std::to_string(s.vcore) + " CPUs, " + std::to_string(s.mem_bytes / kGiB) + "Gi";
    if (s.master) {
      skus.rows.push_back(
          {s.name, std::to_string(hosts), per, "-", "-", "-", "(master: not in HiveD)"});
      continue;
    }
    std::string types;
    for (size_t l = 0; l < s.hierarchy.levels.size(); ++l)
      types += s.level_types[l] + " x" + std::to_string(s.hierarchy.levels[l].children) + " > ";
    types += s.level_types.back() + " x" +
             std::to_string(s.has_gpu ? s.hierarchy.node_children : s.leaves);
    for (const auto& c : plan.chains)
      if (c.sku >= 0 && &plan.skus[static_cast<size_t>(c.sku)] == &s &&
          c.types.front() != s.level_types.back())
        types += " > " + c.types.front() + " x" +
                 std::to_string(c.leaves_per_cell[0] / c.leaves_per_cell[1]);
    skus.rows.push_back({s.name + (s.odd ? " (odd)" : ""), std::to_string(hosts), per, s.leaf_type,
                         number(s.cpu_per_leaf), memory_quantity(s.memory_per_leaf), types});
  }
  out += skus.render(opt.color);

  out += "\n" + title("CHAINS (physicalCells)");
  Table chains{{"CHAIN", "SKU", "TOP CELLS", "LEAVES"}, {false, false, true, true}, {}};
  for (const auto& c : plan.chains)
    chains.rows.push_back({c.name, plan.skus[static_cast<size_t>(c.sku)].name,
                           std::to_string(c.cells.size()), std::to_string(c.leaves())});
  out += chains.render(opt.color);

  out += "\n" + title("VIRTUAL CLUSTERS (guaranteed)");
  Table vcs{{"VC", "GUARANTEED", "VIRTUAL CELLS"}, {false, false, false}, {}};
  for (const auto& vc : plan.vcs) {
    std::vector<std::string> g, cells;
    std::vector<std::pair<std::string, int64_t>>
        by_leaf;  // leaf types shared by several SKUs add up
    for (const auto& [s, n] : vc.leaves_by_sku) {
      if (n <= 0) continue;
      const std::string& leaf = plan.skus[static_cast<size_t>(s)].leaf_type;
      auto it = std::find_if(by_leaf.begin(), by_leaf.end(),
                             [&](const auto& p) { return p.first == leaf; });
      if (it == by_leaf.end())
        by_leaf.push_back({leaf, n});
      else
        it->second += n;
    }
    for (const auto& [leaf, n] : by_leaf) g.push_back(std::to_string(n) + " " + leaf);
    for (const auto& cc : vc.chains) {
      const Chain& c = plan.chains[static_cast<size_t>(cc.chain)];
      for (size_t l = 0; l < cc.count.size(); ++l)
        if (cc.count[l] > 0)
          cells.push_back(std::to_string(cc.count[l]) + " " + vc_cell_type(c, l));
    }
    vcs.rows.push_back({vc.name, util::join(g, ", "), util::join(cells, ", ")});
  }
  out += vcs.render(opt.color);
  bool any_expl = false;
  for (const auto& vc : plan.vcs) any_expl |= !vc.explanations.empty();
  if (any_expl) {
    out += "\n" + title("HOW SHARES BECAME CELLS");
    for (const auto& vc : plan.vcs)
      for (const auto& e : vc.explanations) out += "  " + vc.name + " " + e + "\n";
  }

  bool odd = false;
  for (const auto& h : plan.hosts) odd |= !h.reason.empty();
  if (odd) {
    out += "\n" + title("ODD HOSTS");
    for (const auto& h : plan.hosts) {
      if (h.reason.empty()) continue;
      out += "  " + h.facts.hostname + ": " + h.reason + " -> " +
             (h.excluded ? std::string("excluded")
                         : "SKU " + plan.skus[static_cast<size_t>(h.sku)].name) +
             "\n";
    }
  }
  if (opt.verbose) {
    out += "\n" + title("HOSTS");
    Table hosts{
        {"HOST", "IP", "RACK", "SKU", "LEAF ORDER"}, {false, false, false, false, false}, {}};
    for (const auto& h : plan.hosts) {
      std::string order;
      for (int i : h.hierarchy.leaf_order) order += (order.empty() ? "" : ",") + std::to_string(i);
      hosts.rows.push_back(
          {h.facts.hostname, h.facts.hostip, h.facts.rack.empty() ? "-" : h.facts.rack,
           h.excluded ? "(excluded)" : plan.skus[static_cast<size_t>(h.sku)].name, order});
    }
    out += hosts.render(opt.color);
  }
  return out;
}

}  // namespace pai::planner
