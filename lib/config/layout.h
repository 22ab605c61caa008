#pragma once
// OpenPAI layout.yaml (v1.5+ schema; the 0.x schema is recognised as legacy).

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/context.h"
#include "config/node_settings.h"

namespace pai::config {

struct ComputingDevice {
  std::string type;   // device-plugin resource, e.g. nvidia.com/gpu
  std::string model;  // e.g. V100
  int64_t count = 0;
  Mark mark;
};

struct MachineSku {
  std::string name;
  Mark mark;
  double mem_bytes = 0;  // 0 when missing or invalid
  int64_t vcore = 0;
  std::optional<ComputingDevice> device;
  // The operator's node labels and taints for machines of this SKU (a machine's own override).
  std::map<std::string, std::string> labels;
  std::vector<NodeTaint> taints;
  std::vector<Mark> taint_marks;  // where each taint is written
};

struct Machine {
  std::string hostname;
  std::string hostip;
  std::string machine_type;
  bool master = false;
  bool worker = false;
  bool storage = false;
  std::string azure_pool;  // a VM paictl wrote for an Azure pool ("# azure pool NAME"), else ""
  Mark mark;               // the list item
  Mark hostname_mark, hostip_mark, type_mark;
  // The operator's labels and taints written on the machine itself.
  std::map<std::string, std::string> labels;
  std::vector<NodeTaint> taints;
  std::vector<Mark> taint_marks;
};

struct Layout {
  std::string file;
  bool legacy = false;
  bool machines_complete = true;  // false when machine-list could not be read whole
  std::vector<MachineSku> skus;
  std::vector<Machine> machines;
  std::unordered_map<std::string, size_t> machine_index;  // hostname -> first machine with it
  // Set when no machine has pai-master: "true": where machine-list is. L006 is
  // reported by check_master_present, once the cluster's config is known (a
  // master on Azure is written into the layout only by install).
  std::optional<Mark> no_master_at;

  const MachineSku* find_sku(std::string_view name) const;
  const Machine* find_machine(std::string_view hostname) const;
  // Leaf cells a node of this SKU provides to HiveD: its device count, or its
  // vcores for a CPU-only SKU (OpenPAI's generator makes one cell per vcore).
  static int64_t leaf_capacity(const MachineSku& sku);
};

// The operator's labels of a machine: its SKU's, then its own (a machine's value
// wins). `sku` may be null.
std::map<std::string, std::string> node_labels(const Machine& m, const MachineSku* sku);
// Its taints: its SKU's, then its own; a machine's taint replaces the SKU's of
// the same key and effect.
std::vector<NodeTaint> node_taints(const Machine& m, const MachineSku* sku);

// Reads and validates layout.yaml from an already-parsed document. Every
// check but L006 runs here.
Layout load_layout(const Node* root, Context& ctx);

// L006 when the layout has no master and none is to come from elsewhere
// (master_elsewhere: an Azure pool with role: master).
void check_master_present(const Layout& layout, bool master_elsewhere, Context& ctx);

}  // namespace pai::config
