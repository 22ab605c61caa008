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

// A machine-type without cells, with a planner profile (an Azure pool's VM
// size): its own chain from the profile, next to the on-prem pool.
TEST(NodeCells, AddANewSkuMakesItsChainFromTheProfile) {
  diag::List d;
  auto prof = load_profile(std::string(PAI_SOURCE_DIR) + "/layouts",
                           azure_profile_name("Standard_NC24s_v3"), d);
  ASSERT_TRUE(prof) << (d.items().empty() ? "" : d.items()[0].message);
  EXPECT_EQ(azure_profile_name("Standard_NC24ads_A100_v4"), "azure-nc24ads-a100-v4");
  const std::string sku =
      "  v100-azure:\n"
      "    mem: 440Gi\n"
      "    cpu:\n"
      "      vcore: 24\n"
      "    computing-device:\n"
      "      type: nvidia.com/gpu\n"
      "      model: V100\n"
      "      count: 4\n";
  auto with_sku = [&](std::string l) { return l.insert(l.find("machine-list:"), sku); };
  auto vm = [](const std::string& n, const std::string& ip) {
    return "  - hostname: " + n + "\n    hostip: " + ip +
           "\n    machine-type: v100-azure\n    pai-worker: \"true\"\n";
  };
  std::string services = pool_services(2, 2, -1);
  auto before = load(with_sku(layout_of(2)), services);
  ASSERT_EQ(before.errors(), 0u);
  // Without the profile: the node joins without cells, as before.
  std::string layout = with_sku(layout_of(2, vm("vm0", "10.224.0.4") + vm("vm1", "10.224.0.5")));
  auto plain = add_node_cells(services, layout, before.cluster(),
                              {{"vm0", "v100-azure"}, {"vm1", "v100-azure"}}, "");
  ASSERT_TRUE(plain.ok()) << plain.error;
  EXPECT_EQ(plain.text, services);
  EXPECT_EQ(plain.warnings.size(), 2u);

  ChainProfiles profiles{{"v100-azure", *prof}};
  auto e = add_node_cells(services, layout, before.cluster(),
                          {{"vm0", "v100-azure"}, {"vm1", "v100-azure"}}, "b", true, profiles);
  EXPECT_FALSE(e.ok());  // no VC b in this config
  e = add_node_cells(services, layout, before.cluster(),
                     {{"vm0", "v100-azure"}, {"vm1", "v100-azure"}}, "a", true, profiles);
  ASSERT_TRUE(e.ok()) << e.error << "\n" << e.text;
  EXPECT_TRUE(e.warnings.empty());
  auto after = load(layout, e.text);
  ASSERT_EQ(after.errors(), 0u) << e.text;
  const auto& cfg = *after.cluster().model_config();
  // The profile's skuType (the profile's leaf, V100) and its node cell type.
  const auto* leaf = cfg.find_sku_type("V100");
  ASSERT_NE(leaf, nullptr) << e.text;
  EXPECT_EQ(leaf->gpu, 1);
  EXPECT_GT(leaf->cpu, 1);
  const auto* node = cfg.find_cell_type("NC24S-V3-NODE");
  ASSERT_NE(node, nullptr) << e.text;
  EXPECT_EQ(node->child_cell_type, "V100");
  EXPECT_EQ(node->child_cell_number, 4);
  EXPECT_TRUE(node->is_node_level);
  // The on-prem pool is as it was; the VMs are top-level cells of the new chain.
  EXPECT_EQ(cfg.find_cell_type("gpu-machine-NODE-POOL")->child_cell_number, 2);
  ASSERT_EQ(cfg.physical_cells.size(), 3u);
  EXPECT_EQ(cfg.physical_cells[1].cell_type, "NC24S-V3-NODE");
  EXPECT_EQ(cfg.physical_cells[1].cell_address, "vm0");
  EXPECT_EQ(cfg.physical_cells[2].cell_address, "vm1");
  const auto& m = *after.cluster().model;
  EXPECT_TRUE(m.node_index.count("vm0") && m.node_index.count("vm1"));
  EXPECT_EQ(vc_cells(after.cluster(), "a", "NC24S-V3-NODE"), 2);
  EXPECT_EQ(vc_cells(after.cluster(), "a", kPoolType), 2);

  // The next VM of that machine-type joins the chain made above (a peer now).
  std::string layout3 = with_sku(
      layout_of(2, vm("vm0", "10.224.0.4") + vm("vm1", "10.224.0.5") + vm("vm2", "10.224.0.6")));
  auto grown =
      add_node_cells(e.text, layout3, after.cluster(), {{"vm2", "v100-azure"}}, "", true, profiles);
  ASSERT_TRUE(grown.ok()) << grown.error;
  auto last = load(layout3, grown.text);
  ASSERT_EQ(last.errors(), 0u) << grown.text;
  const auto& cfg3 = *last.cluster().model_config();
  EXPECT_EQ(cfg3.sku_types.size(), 2u);
  ASSERT_EQ(cfg3.physical_cells.size(), 4u);
  EXPECT_EQ(cfg3.physical_cells[3].cell_address, "vm2");
  EXPECT_EQ(cfg3.physical_cells[3].cell_type, "NC24S-V3-NODE");

  // A leaf name the config has already is prefixed with the profile's SKU.
  std::string v100 = services;
  v100.replace(v100.find("        gpu-machine:\n"), 21, "        V100:\n");
  v100.replace(v100.find("childCellType: gpu-machine\n"), 27, "childCellType: V100\n");
  auto b2 = load(with_sku(layout_of(2)), v100);
  ASSERT_EQ(b2.errors(), 0u) << v100;
  auto renamed =
      add_node_cells(v100, layout, b2.cluster(), {{"vm0", "v100-azure"}}, "", true, profiles);
  ASSERT_TRUE(renamed.ok()) << renamed.error;
  auto a2 = load(layout, renamed.text);
  ASSERT_EQ(a2.errors(), 0u) << renamed.text;
  ASSERT_NE(a2.cluster().model_config()->find_sku_type("NC24S-V3-V100"), nullptr) << renamed.text;
  EXPECT_EQ(a2.cluster().model_config()->find_cell_type("NC24S-V3-NODE")->child_cell_type,
            "NC24S-V3-V100");
}

// Every Azure profile in layouts/ gives a chain that loads without errors,
// whatever its depth (ND96asr_v4 has levels below the node).
TEST(NodeCells, EveryAzureProfileMakesAChainThatChecks) {
  for (const auto& [size, gpus] : std::vector<std::pair<std::string, int>>{
           {"Standard_ND96asr_v4", 8}, {"Standard_NC24ads_A100_v4", 1}, {"Standard_NC24s_v3", 4}}) {
    SCOPED_TRACE(size);
    diag::List d;
    auto prof = load_profile(std::string(PAI_SOURCE_DIR) + "/layouts", azure_profile_name(size), d);
    ASSERT_TRUE(prof);
    std::string sku =
        "  vm-type:\n    mem: 2000Gi\n    cpu:\n      vcore: 128\n"
        "    computing-device:\n      type: nvidia.com/gpu\n      model: A100\n"
        "      count: " +
        std::to_string(gpus) + "\n";
    auto with_sku = [&](std::string l) { return l.insert(l.find("machine-list:"), sku); };
    std::string services = pool_services(2, 2, -1);
    auto before = load(with_sku(layout_of(2)), services);
    ASSERT_EQ(before.errors(), 0u);
    std::string layout = with_sku(
        layout_of(2,
                  "  - hostname: vm0\n    hostip: 10.224.0.4\n    machine-type: vm-type\n    "
                  "pai-worker: \"true\"\n"));
    auto e = add_node_cells(services, layout, before.cluster(), {{"vm0", "vm-type"}}, "", true,
                            {{"vm-type", *prof}});
    ASSERT_TRUE(e.ok()) << e.error << "\n" << e.text;
    auto after = load(layout, e.text);
    ASSERT_EQ(after.errors(), 0u) << e.text;
    ASSERT_TRUE(after.cluster().model->node_index.count("vm0")) << e.text;
    int32_t t = after.cluster().model->find_type(
        after.cluster().model_config()->physical_cells[1].cell_type);
    ASSERT_GE(t, 0);
    EXPECT_EQ(after.cluster().model->types[static_cast<size_t>(t)].leaf_cell_number, gpus)
        << e.text;
  }
}
