#include "config/cross_check.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_set>

#include "util/strings.h"

namespace pai::config {

void cross_check_hived(const Layout& layout, const HivedConfig& hived, const HivedModel& model,
                       Context& hived_ctx, Context& layout_ctx) {
  std::vector<std::string> hostnames;
  for (const auto& m : layout.machines) hostnames.push_back(m.hostname);
  struct Overflow {
    bool is_cpu = true;
    const MachineSku* sku = nullptr;
    double total = 0;
    std::vector<std::pair<const SkuTypeSpec*, int64_t>> parts;
    std::vector<const NodeInfo*> nodes;
  };
  std::vector<Overflow> overflows;
  std::map<std::string, size_t> overflow_index;

  for (const auto& node : model.nodes) {
    const Machine* machine = layout.find_machine(node.name);
    if (!machine && !layout.machines_complete) continue;  // the layout's own errors say why
    if (!machine) {
      std::string guess = util::did_you_mean(node.name, hostnames);
      hived_ctx.error(
          "X001", node.mark,
          "node-level cell address \"" + node.name + "\" is not a hostname in " + layout.file,
          guess.empty()
              ? "HiveD matches node-level addresses to Kubernetes node names; use the layout "
                "hostname of the machine"
              : "did you mean \"" + guess + "\"?");
      continue;
    }
    if (machine->master && !machine->worker)
      hived_ctx.warning("X005", node.mark,
                        "node \"" + node.name + "\" is the pai-master; OpenPAI runs no jobs there",
                        "remove it from the HiveD cells, or make it a worker");
    const MachineSku* sku = layout.find_sku(machine->machine_type);
    if (!sku) continue;
    int64_t capacity = Layout::leaf_capacity(*sku);
    if (sku->device) {
      if (capacity > 0 && node.leaves != capacity)
        hived_ctx.error("X002", node.mark,
                        "node \"" + node.name + "\" has " + std::to_string(node.leaves) +
                            " leaf cells, but its SKU \"" + sku->name + "\" has " +
                            std::to_string(capacity) + " " + sku->device->type + " devices",
                        "the leaf cells of a node must match its devices one to one; fix "
                        "childCellNumber or the SKU's "
                        "computing-device count");
    } else if (capacity > 0 && node.leaves > capacity) {
      hived_ctx.error("X002", node.mark,
                      "node \"" + node.name + "\" has " + std::to_string(node.leaves) +
                          " leaf cells, but its CPU SKU \"" + sku->name + "\" has only " +
                          std::to_string(capacity) + " vcores",
                      "a CPU-only node has at most one leaf cell per vcore");
    }
    // Per-leaf resources from skuTypes, summed over the node's chains.
    double cpu = 0, mem = 0;
    bool known = true;
    std::vector<std::pair<const SkuTypeSpec*, int64_t>> parts;  // skuType, leaves on this node
    for (size_t k = 0; k < node.chains.size(); ++k) {
      const ChainInfo& ch = model.chains[static_cast<size_t>(node.chains[k])];
      const SkuTypeSpec* st =
          hived.find_sku_type(model.types[static_cast<size_t>(ch.leaf_type)].name);
      if (!st) {
        known = false;
        break;
      }
      int64_t leaves_here = 0;
      // Leaves of this node in this chain: the node-level type's leaf count.
      for (int32_t t = ch.top_type; t >= 0; t = model.types[static_cast<size_t>(t)].child) {
        const CellTypeInfo& ti = model.types[static_cast<size_t>(t)];
        if (ti.has_node && !ti.is_multi_nodes) {
          leaves_here = ti.leaf_cell_number;
          break;
        }
      }
      cpu += st->cpu * static_cast<double>(leaves_here);
      mem += st->memory_bytes * static_cast<double>(leaves_here);
      parts.emplace_back(st, leaves_here);
    }
    if (!known || parts.empty()) continue;
    auto note_overflow = [&](bool is_cpu, double total) {
      // One root cause (a per-leaf value times the leaves of one machine SKU)
      // is one finding, at the value to edit; the nodes it affects are notes.
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", total);
      std::string key = std::string(is_cpu ? "cpu|" : "mem|") + sku->name + "|" +
                        parts[0].first->name + "|" + buf;
      auto [it, fresh] = overflow_index.emplace(key, overflows.size());
      if (fresh) {
        Overflow o;
        o.is_cpu = is_cpu;
        o.sku = sku;
        o.total = total;
        o.parts = parts;
        overflows.push_back(std::move(o));
      }
      overflows[it->second].nodes.push_back(&node);
    };
    if (sku->vcore > 0 && cpu > static_cast<double>(sku->vcore) + 1e-9) note_overflow(true, cpu);
    if (sku->mem_bytes > 0 && mem > sku->mem_bytes * (1 + 1e-9)) note_overflow(false, mem);
  }
  for (const Overflow& o : overflows) {
    const SkuTypeSpec* primary = o.parts[0].first;
    Mark at = o.is_cpu ? primary->cpu_mark : primary->memory_mark;
    if (!at.line) at = primary->mark;
    auto amount = [&](double v) {
      if (!o.is_cpu) return util::format_bytes(v);
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", v);
      return std::string(buf) + " CPUs";
    };
    std::string per_leaf;
    for (const auto& [st, leaves] : o.parts) {
      if (!per_leaf.empty()) per_leaf += " + ";
      per_leaf += amount(o.is_cpu ? st->cpu : st->memory_bytes) + " per " + st->name + " leaf x " +
                  std::to_string(leaves);
    }
    std::string limit = o.is_cpu ? std::to_string(o.sku->vcore) + " vcores"
                                 : util::format_bytes(o.sku->mem_bytes) + " of memory";
    std::string n_nodes =
        std::to_string(o.nodes.size()) + (o.nodes.size() == 1 ? " node" : " nodes");
    std::string message = "skuTypes." + primary->name + (o.is_cpu ? ".cpu" : ".memory") +
                          " gives each node of machine SKU \"" + o.sku->name + "\" " +
                          amount(o.total) + " (" + per_leaf + "), more than its " + limit + " (" +
                          n_nodes + ")";
    double leaves = 0;
    for (const auto& p : o.parts) leaves += static_cast<double>(p.second);
    leaves = std::max(leaves, 1.0);
    std::string most;
    if (o.is_cpu) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g",
                    std::floor(static_cast<double>(o.sku->vcore) / leaves * 100) / 100);
      most = buf;
    } else {
      most = util::format_bytes(o.sku->mem_bytes / leaves);
    }
    std::string hint = std::string("lower ") + (o.is_cpu ? "cpu" : "memory") +
                       " per leaf to at most " + most +
                       "; pods asking for a whole leaf's share would never fit on the node";
    diag::Diagnostic d;
    d.code = "X003";
    d.severity = diag::Severity::Error;
    d.file = hived_ctx.file();
    d.line = at.line;
    d.column = at.column;
    d.message = std::move(message);
    d.hint = std::move(hint);
    for (size_t k = 1; k < o.parts.size(); ++k) {
      const SkuTypeSpec* st = o.parts[k].first;
      Mark m = o.is_cpu ? st->cpu_mark : st->memory_mark;
      if (!m.line) m = st->mark;
      d.related.push_back(
          {hived_ctx.file(), m.line, m.column, "skuTypes." + st->name + " adds to the same nodes"});
    }
    d.related.push_back({layout.file, o.sku->mark.line, o.sku->mark.column,
                         "machine SKU \"" + o.sku->name + "\" has " + limit});
    for (const NodeInfo* n : o.nodes)
      d.related.push_back(
          {hived_ctx.file(), n->mark.line, n->mark.column, "node \"" + n->name + "\" is affected"});
    hived_ctx.out().add(std::move(d));
  }
  // Workers that no cell covers cannot run HiveD-scheduled jobs.
  if (model.complete || !model.nodes.empty()) {
    for (const auto& m : layout.machines) {
      if (!m.worker || m.hostname.empty()) continue;
      if (model.node_index.count(m.hostname)) continue;
      layout_ctx.warning(
          "X004", m.hostname_mark,
          "worker \"" + m.hostname + "\" is not in any HiveD cell, so HiveD never schedules on it",
          "add a node-level cell with cellAddress: " + m.hostname + " to the HiveD config");
    }
  }
}

void cross_check_azure(const Layout& layout, const ClusterConfig& config, Context& config_ctx) {
  if (!config.azure) return;
  std::vector<std::string> names;
  for (const auto& s : layout.skus) names.push_back(s.name);
  for (const auto& p : config.azure->pools) {
    if (p.machine_type.empty() || layout.find_sku(p.machine_type)) continue;
    std::string guess = util::did_you_mean(p.machine_type, names);
    config_ctx.error("X007", p.machine_type_mark,
                     "azure pool \"" + p.name + "\" has machine-type \"" + p.machine_type +
                         "\", which is not a machine-sku of " + layout.file,
                     guess.empty() ? "add the machine type to machine-sku (paictl plan --profile "
                                     "azure-nd96asr-v4 writes one) or fix the name"
                                   : "did you mean \"" + guess + "\"?");
  }
}

void cross_check_devices(const Layout& layout, const ClusterConfig& config, Context& config_ctx) {
  cross_check_azure(layout, config, config_ctx);
  if (config.enable_hived_scheduler) return;
  std::set<std::string> types;
  for (const auto& m : layout.machines) {
    if (!m.worker) continue;
    const MachineSku* sku = layout.find_sku(m.machine_type);
    if (!sku) continue;
    types.insert(sku->device ? sku->device->type : std::string("cpu"));
  }
  if (types.size() > 1) {
    std::vector<std::string> list(types.begin(), types.end());
    config_ctx.error(
        "X006", config.enable_hived_scheduler_mark,
        "enable_hived_scheduler is false but the workers have " + std::to_string(types.size()) +
            " device types (" + util::join(list, ", ") + ")",
        "the Kubernetes default scheduler handles only one worker device type; enable the HiveD "
        "scheduler or use one kind of worker");
  }
}

}  // namespace pai::config
