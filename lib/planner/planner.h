#pragma once
// The planner: host facts -> machine SKUs, cell hierarchy, physical cells and
// virtual clusters that HiveD accepts by construction. docs/plan.md explains
// every rule with pictures.
//
//  1. SKUs. Workers are grouped by GPU model, GPU count, GPU memory, cell
//     hierarchy (hierarchy.h), logical CPUs, CPU model and memory (within 3%).
//     A small group that differs from a bigger group of the same GPU model
//     (a single host, or fewer than a tenth of the bigger group) is an odd
//     host: with --odd-hosts split it becomes its own SKU, with exclude it is
//     left out; either way it is reported with the differences.
//  2. Resources. skuTypes give each leaf cell the SKU's smallest host capacity
//     minus a reserve for system daemons, divided by its leaf cells:
//        reserve cpu    = 1 + ceil(2% of the logical CPUs)
//        reserve memory = 2 GiB + 3% of MemTotal
//     (--reserve-cpu / --reserve-memory set them). A CPU machine has one leaf
//     cell per CPU left after the reserve.
//  3. Cells. Per SKU: leaf -> machine levels -> node (isNodeLevel) -> rack
//     when hosts have racks (one rack type per rack size). Each rack, or each
//     host without a rack, is one physicalCells entry; node cells are
//     addressed by hostname, leaf cells by GPU index in topology order.
//  4. Virtual clusters. --vc name=SHARE[,SHARE...] with SHARE = [SKU:]AMOUNT
//     and AMOUNT = N% (of that SKU's leaf cells, rounded down), N (leaf cells:
//     GPUs, or CPUs of a CPU SKU) or Nnodes. Without SKU: a percentage applies
//     to every SKU; counts need a SKU when there are several. A VC's amount of
//     a chain is split greedily into the largest cells that fit; HiveD's
//     capacity check (initCellNums) then always passes, because every cell is
//     a whole multiple of the cells below it. A request goes whole into one
//     chain when one has room (best fit), since a job must fit in one chain.
//     What no VC gets goes to `default`. With --vc-cells node (the default)
//     each VC's amount of a chain is rounded down to whole cells of one level
//     (vc_cells.h), default's too; what that leaves is in no VC.

#include <map>
#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "planner/hierarchy.h"
#include "planner/hosts.h"
#include "planner/vc_cells.h"

namespace pai::planner {

inline constexpr int64_t kMiB = 1024LL * 1024;
inline constexpr int64_t kGiB = 1024LL * 1024 * 1024;

enum class OddHosts : uint8_t { Split, Exclude };

struct PlanOptions {
  OddHosts odd_hosts = OddHosts::Split;
  std::vector<std::string> vcs;  // "name=share[,share...]"
  int reserve_cpu = -1;          // per host; -1 = 1 + ceil(2% of the CPUs)
  int64_t reserve_memory = -1;   // bytes per host; -1 = 2 GiB + 3% of MemTotal
  std::string master;            // make this host the master
  // Node: each VC's share of a chain rounded down to whole cells of one level
  // (vc_cells.h says why); Any: the largest cells that fit, with a warning
  // (P115) naming the job sizes that can be blocked.
  VcCells vc_cells = VcCells::Node;
};

// Per-host outcome.
struct PlannedHost {
  Host facts;
  int sku = -1;  // index into Plan::skus; -1 when excluded
  bool excluded = false;
  std::string reason;  // why it is excluded or odd
  Hierarchy hierarchy;
};

struct Sku {
  std::string name;     // layout machine-sku name, e.g. "dgx-a100"
  std::string prefix;   // cell type prefix, e.g. "DGX-A100"
  bool master = false;  // the master's SKU (not in HiveD)
  bool has_gpu = false;
  std::string gpu_model;  // as reported, e.g. "NVIDIA A100-SXM4-40GB"
  std::string gpu_short;  // e.g. "A100"
  int64_t gpu_memory_mib = 0;
  int gpus = 0;  // GPUs per host
  std::string cpu_model;
  int vcore = 0;          // min over hosts
  int64_t mem_bytes = 0;  // min MemTotal over hosts
  int reserve_cpu = 0;
  int64_t reserve_memory = 0;
  int leaves = 0;  // leaf cells per host (GPUs, or CPUs after the reserve)
  std::string leaf_type;
  double cpu_per_leaf = 0;
  int64_t memory_per_leaf = 0;           // bytes
  Hierarchy hierarchy;                   // the machine levels (same for every host of the SKU)
  std::vector<std::string> level_types;  // bottom-up: machine levels then the node type
  std::vector<size_t> hosts;             // indices into Plan::hosts
  std::string profile;
  bool odd = false;  // split from `peer` as an odd host
  std::string peer;
};

struct Chain {
  std::string name;  // the top cell type
  int sku = -1;
  std::vector<std::string> types;        // top -> leaf
  std::vector<int64_t> leaves_per_cell;  // top -> leaf
  struct TopCell {
    std::string address;        // rack address or hostname
    std::vector<size_t> hosts;  // indices into Plan::hosts
  };
  std::vector<TopCell> cells;
  int64_t leaves() const {
    return leaves_per_cell.empty() ? 0 : leaves_per_cell[0] * static_cast<int64_t>(cells.size());
  }
};

struct VcChainCells {
  int chain = -1;
  std::vector<int64_t> count;  // per level, top -> leaf (same indexing as Chain::types)
  int64_t leaves = 0;
};

struct VirtualCluster {
  std::string name;
  std::map<int, int64_t> leaves_by_sku;
  std::vector<VcChainCells> chains;
  std::vector<std::string> explanations;  // how each share became cells
  bool is_default = false;
  int64_t rounding_cost = 0;  // leaf cells its shares lost to whole cells of one level
};

struct Plan {
  std::vector<PlannedHost> hosts;
  std::vector<Sku> skus;
  std::vector<Chain> chains;
  std::vector<VirtualCluster> vcs;
  diag::List diagnostics;
  std::vector<std::string> inputs;  // what was planned from, for the file headers
  bool ok() const { return !diagnostics.has_errors(); }
  int master_host() const;
};

Plan make_plan(std::vector<Host> hosts, const PlanOptions& options);

// "Tesla V100-SXM2-32GB" -> "V100", "NVIDIA GeForce RTX 3090" -> "RTX3090".
std::string short_gpu_model(std::string_view name);

// Default reserves (see the header comment).
int default_reserve_cpu(int logical);
int64_t default_reserve_memory(int64_t total_bytes);

}  // namespace pai::planner
