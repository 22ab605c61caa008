#include "config/cross_check.h"

#include <cmath>
#include <set>
#include <unordered_set>

#include "util/strings.h"

namespace pai::config {

void cross_check_hived(const Layout& layout, const HivedConfig& hived, const HivedModel& model,
                       Context& hived_ctx, Context& layout_ctx) {
  std::vector<std::string> hostnames;
  for (const auto& m : layout.machines) hostnames.push_back(m.hostname);

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
    }
    if (!known) continue;
    if (sku->vcore > 0 && cpu > static_cast<double>(sku->vcore) + 1e-9) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", cpu);
      hived_ctx.error("X003", node.mark,
                      "skuTypes give node \"" + node.name + "\" " + buf +
                          " CPUs in total, more than the " + std::to_string(sku->vcore) +
                          " vcores of its SKU \"" + sku->name + "\"",
                      "lower skuTypes cpu per leaf; pods would never fit on the node");
    }
    if (sku->mem_bytes > 0 && mem > sku->mem_bytes * (1 + 1e-9)) {
      hived_ctx.error("X003", node.mark,
                      "skuTypes give node \"" + node.name + "\" " + util::format_bytes(mem) +
                          " of memory in total, more than the " +
                          util::format_bytes(sku->mem_bytes) + " of its SKU \"" + sku->name + "\"",
                      "lower skuTypes memory per leaf; pods would never fit on the node");
    }
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

void cross_check_devices(const Layout& layout, const ClusterConfig& config, Context& config_ctx) {
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
