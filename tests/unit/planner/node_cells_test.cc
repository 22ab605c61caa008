// A node's cells in the HiveD config (planner/node_cells.h): added and removed
// in both shapes (one physicalCells entry per node; a pool of node cells), the
// VCs' shares, and the refusals. Every result is read back with the config
// loader, so what is asserted is what HiveD would read.

#include "planner/node_cells.h"

#include <gtest/gtest.h>

#include "config/hived_model.h"

using namespace pai;
using namespace pai::planner;

namespace {

const char* kLayoutHead =
    "machine-sku:\n"
    "  master-machine:\n"
    "    mem: 32Gi\n"
    "    cpu:\n"
    "      vcore: 1\n"
    "  gpu-machine:\n"
    "    mem: 32Gi\n"
    "    cpu:\n"
    "      vcore: 4\n"
    "    computing-device:\n"
    "      type: nvidia.com/gpu\n"
    "      model: V100\n"
    "      count: 4\n"
    "machine-list:\n"
    "  - hostname: m\n"
    "    hostip: 10.0.0.1\n"
    "    machine-type: master-machine\n"
    "    pai-master: \"true\"\n";

std::string worker(const std::string& name, const std::string& ip) {
  return "  - hostname: " + name + "\n    hostip: " + ip +
         "\n    machine-type: gpu-machine\n    pai-worker: \"true\"\n";
}

// The testbed's shape: one pool cell holding the node cells.
std::string pool_services(int nodes, int vc_a, int vc_b) {
  std::string s =
      "cluster:\n"
      "  common:\n"
      "    cluster-id: t\n"
      "hivedscheduler:\n"
      "  config: |\n"
      "    physicalCluster:\n"
      "      skuTypes:\n"
      "        gpu-machine:\n"
      "          gpu: 1\n"
      "          cpu: 1\n"
      "          memory: 4096Mi\n"
      "      cellTypes:\n"
      "        gpu-machine-NODE:\n"
      "          childCellType: gpu-machine\n"
      "          childCellNumber: 4\n"
      "          isNodeLevel: true\n"
      "        gpu-machine-NODE-POOL:\n"
      "          childCellType: gpu-machine-NODE\n"
      "          childCellNumber: " +
      std::to_string(nodes) +
      "\n"
      "      physicalCells:\n"
      "      - cellType: gpu-machine-NODE-POOL\n"
      "        cellChildren:\n";
  for (int i = 1; i <= nodes; ++i) s += "        - cellAddress: w" + std::to_string(i) + "\n";
  s += "    virtualClusters:\n"
       "      a:\n"
       "        virtualCells:\n"
       "        - cellType: gpu-machine-NODE-POOL.gpu-machine-NODE\n"
       "          cellNumber: " +
       std::to_string(vc_a) + "\n";
  if (vc_b >= 0)
    s += "      b:\n"
         "        virtualCells:\n"
         "        - cellType: gpu-machine-NODE-POOL.gpu-machine-NODE\n"
         "          cellNumber: " +
         std::to_string(vc_b) + "\n";
  return s;
}

std::string layout_of(int nodes, const std::string& extra = "") {
  std::string l = kLayoutHead;
  for (int i = 1; i <= nodes; ++i)
    l += worker("w" + std::to_string(i), "10.0.0." + std::to_string(10 + i));
  return l + extra;
}

struct Loaded {
  config::CheckOutcome out;
  const config::Cluster& cluster() const { return out.clusters.at(0); }
  size_t errors() const {
    size_t n = 0;
    for (const auto& d : out.diagnostics.items()) n += d.severity == diag::Severity::Error;
    return n;
  }
};

Loaded load(const std::string& layout, const std::string& services) {
  return {
      config::check_sources({{"layout.yaml", layout}, {"services-configuration.yaml", services}})};
}

int64_t vc_cells(const config::Cluster& c, const std::string& vc, const std::string& type) {
  for (const auto& v : c.model_config()->virtual_clusters)
    if (v.name == vc)
      for (const auto& x : v.virtual_cells)
        if (x.cell_type == type) return x.cell_number;
  return -1;
}

const char* kPoolType = "gpu-machine-NODE-POOL.gpu-machine-NODE";

}  // namespace

TEST(NodeCells, AddToAPoolLeavesTheCapacityInNoVc) {
  auto before = load(layout_of(2), pool_services(2, 2, -1));
  ASSERT_EQ(before.errors(), 0u);
  std::string layout = layout_of(3);
  auto e = add_node_cells(pool_services(2, 2, -1), layout, before.cluster(),
                          {{"w3", "gpu-machine"}}, "");
  ASSERT_TRUE(e.ok()) << e.error;
  auto after = load(layout, e.text);
  ASSERT_EQ(after.errors(), 0u) << e.text;
  const auto& m = *after.cluster().model;
  EXPECT_TRUE(m.node_index.count("w3"));
  EXPECT_EQ(m.nodes.size(), 3u);
  EXPECT_EQ(vc_cells(after.cluster(), "a", kPoolType), 2);
  // The same text as a pool of three written by hand.
  EXPECT_EQ(e.text, pool_services(3, 2, -1));
}

TEST(NodeCells, AddWithAVcGivesItTheNewCells) {
  auto before = load(layout_of(2), pool_services(2, 1, 1));
  ASSERT_EQ(before.errors(), 0u);
  std::string layout = layout_of(4);
  auto e = add_node_cells(pool_services(2, 1, 1), layout, before.cluster(),
                          {{"w3", "gpu-machine"}, {"w4", "gpu-machine"}}, "b");
  ASSERT_TRUE(e.ok()) << e.error;
  EXPECT_EQ(e.text, pool_services(4, 1, 3));
}

TEST(NodeCells, AddRefusesAnUnknownVcAndReportsAnUnknownSku) {
  auto before = load(layout_of(2), pool_services(2, 2, -1));
  auto e = add_node_cells(pool_services(2, 2, -1), layout_of(3), before.cluster(),
                          {{"w3", "gpu-machine"}}, "nope");
  EXPECT_FALSE(e.ok());
  EXPECT_NE(e.hint.find("a"), std::string::npos);
  auto u = add_node_cells(pool_services(2, 2, -1), layout_of(2), before.cluster(),
                          {{"c1", "cpu-machine"}}, "");
  EXPECT_TRUE(u.ok());
  EXPECT_EQ(u.text, pool_services(2, 2, -1));
  ASSERT_EQ(u.warnings.size(), 1u);
  EXPECT_NE(u.warnings[0].find("cpu-machine has no cells"), std::string::npos);
}

TEST(NodeCells, RemoveFromAPoolTakesFromTheOnlyVcThatNoLongerFits) {
  auto before = load(layout_of(2), pool_services(2, 2, -1));
  auto e = remove_node_cells(pool_services(2, 2, -1), layout_of(1), before.cluster(), {"w2"}, "");
  ASSERT_TRUE(e.ok()) << e.error;
  EXPECT_EQ(e.text, pool_services(1, 1, -1));
  // With room to spare, no VC changes.
  auto spare = load(layout_of(3), pool_services(3, 1, -1));
  auto s = remove_node_cells(pool_services(3, 1, -1), layout_of(2), spare.cluster(), {"w3"}, "");
  ASSERT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(s.text, pool_services(2, 1, -1));
}

TEST(NodeCells, RemoveNeedsAVcWhenSeveralHoldTheCells) {
  auto before = load(layout_of(2), pool_services(2, 1, 1));
  auto e = remove_node_cells(pool_services(2, 1, 1), layout_of(1), before.cluster(), {"w2"}, "");
  EXPECT_FALSE(e.ok());
  EXPECT_NE(e.error.find("a, b"), std::string::npos) << e.error;
  EXPECT_NE(e.hint.find("--vc"), std::string::npos);
  auto b = remove_node_cells(pool_services(2, 1, 1), layout_of(1), before.cluster(), {"w2"}, "b");
  ASSERT_TRUE(b.ok()) << b.error;
  EXPECT_EQ(b.text, pool_services(1, 1, 0));
}

TEST(NodeCells, TopLevelNodeCellsAndPinnedCells) {
  std::string svc =
      "hivedscheduler:\n"
      "  config: |\n"
      "    physicalCluster:\n"
      "      skuTypes:\n"
      "        V100: {gpu: 1, cpu: 1, memory: 4096Mi}\n"
      "      cellTypes:\n"
      "        V100-NODE: {childCellType: V100, childCellNumber: 4, isNodeLevel: true}\n"
      "      physicalCells:\n"
      "      - cellType: V100-NODE\n"
      "        cellAddress: w1\n"
      "      - cellType: V100-NODE\n"
      "        cellAddress: w2\n"
      "        pinnedCellId: p\n"
      "    virtualClusters:\n"
      "      a:\n"
      "        virtualCells:\n"
      "        - cellType: V100-NODE\n"
      "          cellNumber: 1\n"
      "        pinnedCells:\n"
      "        - pinnedCellId: p\n";
  auto before = load(layout_of(2), svc);
  ASSERT_EQ(before.errors(), 0u);
  auto e = add_node_cells(svc, layout_of(3), before.cluster(), {{"w3", "gpu-machine"}}, "a");
  ASSERT_TRUE(e.ok()) << e.error;
  auto after = load(layout_of(3), e.text);
  ASSERT_EQ(after.errors(), 0u) << e.text;
  EXPECT_TRUE(after.cluster().model->node_index.count("w3"));
  EXPECT_EQ(vc_cells(after.cluster(), "a", "V100-NODE"), 2);
  EXPECT_NE(
      e.text.find("      - cellType: V100-NODE\n        cellAddress: w3\n    virtualClusters:"),
      std::string::npos)
      << e.text;
  auto pinned = remove_node_cells(svc, layout_of(1), before.cluster(), {"w2"}, "");
  EXPECT_FALSE(pinned.ok());
  EXPECT_NE(pinned.error.find("pinned cell p"), std::string::npos) << pinned.error;
  auto r = remove_node_cells(e.text, layout_of(2), after.cluster(), {"w3"}, "");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(load(layout_of(2), r.text).errors(), 0u) << r.text;
  EXPECT_EQ(r.text.find("w3"), std::string::npos);
}

TEST(NodeCells, RemoveLayoutMachines) {
  auto l = load(layout_of(3), pool_services(3, 1, -1));
  std::string out = remove_layout_machines(layout_of(3), *l.cluster().layout, {"w2"});
  EXPECT_EQ(out, std::string(kLayoutHead) + worker("w1", "10.0.0.11") + worker("w3", "10.0.0.13"));
}
