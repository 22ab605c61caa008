#include "hived/drift.h"

#include <set>

namespace pai::hived {

const std::vector<std::string>& drift_kinds() {
  static const std::vector<std::string> k = {"missing",    "unexpected",  "bad",
                                             "notInHived", "gpusDropped", "gpusAdded"};
  return k;
}

std::vector<DriftFinding> physical_drift(const LiveState& live, const config::HivedModel& model,
                                         const config::Layout* layout,
                                         const std::map<std::string, facts::HostFacts>& facts,
                                         const std::string& facts_dir) {
  std::vector<DriftFinding> findings;
  std::set<std::string> live_nodes;
  for (const auto& n : live.nodes) live_nodes.insert(n.name);
  for (const auto& n : model.nodes)
    if (!live_nodes.count(n.name))
      findings.push_back({"missing", n.name, "in the HiveD config, but HiveD does not list it",
                          "HiveD runs another config: paictl hived diff shows what a restart on "
                          "this one does"});
  for (const auto& n : live.nodes) {
    if (!model.node_index.count(n.name))
      findings.push_back({"unexpected", n.name,
                          "HiveD lists it, but the HiveD config has no cell on it",
                          "HiveD runs another config, or the node left the cluster files"});
    if (!n.healthy)
      findings.push_back({"bad", n.name, "HiveD sees it bad (not Ready, or cordoned)",
                          "kubectl describe node " + n.name +
                              "; HiveD binds bad cells to VCs only when their free cells run out"});
  }
  if (layout)
    for (const auto& m : layout->machines) {
      if (m.master || !m.worker) continue;
      const auto* sku = layout->find_sku(m.machine_type);
      if (!sku || config::Layout::leaf_capacity(*sku) <= 0) continue;
      if (!model.node_index.count(m.hostname))
        findings.push_back({"notInHived", m.hostname,
                            "a worker of layout.yaml (" + m.machine_type +
                                ") that no HiveD cell covers: nothing is scheduled on it",
                            "paictl plan regenerates the cells from layout and facts"});
    }
  for (const auto& [name, f] : facts) {
    auto it = model.node_index.find(name);
    if (it == model.node_index.end()) continue;
    int64_t cells = model.nodes[static_cast<size_t>(it->second)].leaves;
    int64_t gpus = static_cast<int64_t>(f.gpus.size());
    if (!f.is_gpu_host() && gpus == 0) continue;
    if (gpus < cells)
      findings.push_back(
          {"gpusDropped", name,
           std::to_string(gpus) + " GPUs found, its cells have " + std::to_string(cells) +
               " leaf cells: jobs placed on the missing GPUs fail",
           "cordon it now (HiveD then sees it bad); paictl plan --facts " + facts_dir +
               " --odd-hosts split makes it its own SKU with " + std::to_string(gpus) +
               "-GPU cells (or --odd-hosts exclude leaves it out), then paictl hived diff and "
               "apply"});
    else if (gpus > cells)
      findings.push_back(
          {"gpusAdded", name,
           std::to_string(gpus) + " GPUs found, its cells have only " + std::to_string(cells),
           "paictl plan --facts " + facts_dir + " gives it cells for every GPU"});
  }
  return findings;
}

ConfigShape config_shape(const ClusterStatus& status) {
  ConfigShape s;
  s.top_cells = status.physical_cluster.size();
  for (const auto& n : index_live(status, {}).nodes) s.nodes.insert(n.name);
  for (const auto& [vc, cells] : status.virtual_clusters) s.vcs.insert(vc);
  return s;
}

ConfigShape config_shape(const config::HivedModel& model) {
  ConfigShape s;
  for (const auto& c : model.cells) s.top_cells += c.parent < 0;
  for (const auto& n : model.nodes) s.nodes.insert(n.name);
  for (const auto& v : model.vcs) s.vcs.insert(v.name);
  return s;
}

std::string config_shape_text(const ConfigShape& shape) {
  auto names = [](const std::set<std::string>& v) {
    std::string s;
    size_t i = 0;
    for (const auto& n : v) {
      if (i == 8) return s + ", ... (" + std::to_string(v.size()) + ")";
      s += (i++ ? ", " : "") + n;
    }
    return s.empty() ? std::string("none") : s;
  };
  return std::to_string(shape.top_cells) + (shape.top_cells == 1 ? " top cell" : " top cells") +
         ", nodes " + names(shape.nodes) + ", VCs " + names(shape.vcs);
}

}  // namespace pai::hived
