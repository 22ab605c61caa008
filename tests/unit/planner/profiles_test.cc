// Every machine profile in layouts/ yields the cell hierarchy its profile.yaml
// promises, and a plan of it passes `paictl check config` (config::check_paths).

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "planner/hierarchy.h"
#include "planner/plan_output.h"
#include "planner/plan_run.h"
#include "planner/profiles.h"
#include "planner_fixtures.h"

using namespace pai::planner;
using namespace pai::facts;

namespace {

using pai::test::kLayouts;

using pai::test::dump;

Plan plan_profile(const std::string& name, int count, int racks,
                  std::vector<std::string> vcs = {}) {
  PlanInputs in;
  in.layouts_dir = kLayouts;
  in.profiles.push_back({name, count, racks});
  in.options.vcs = std::move(vcs);
  PlanRun r = plan_from_inputs(in);
  EXPECT_TRUE(r.ok()) << dump(r.diagnostics);
  return std::move(r.plan);
}

const Sku& worker_sku(const Plan& p) {
  for (const auto& s : p.skus)
    if (!s.master) return s;
  static Sku none;
  ADD_FAILURE() << "no worker SKU";
  return none;
}

}  // namespace

TEST(Profiles, TheCatalogueHasTheRequiredMachines) {
  std::vector<std::string> names = list_profiles(kLayouts);
  for (const char* want : {"dgx1-v100", "dgx2", "dgx-a100", "hgx-h100", "azure-nd96asr-v4",
                           "azure-nc24ads-a100-v4", "azure-nc24s-v3", "t4-2socket", "k80-2board"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
}

class EveryProfile : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryProfile, YieldsItsExpectedHierarchyAndPassesCheckConfig) {
  pai::diag::List diags;
  auto p = load_profile(kLayouts, GetParam(), diags);
  ASSERT_TRUE(p) << dump(diags);
  EXPECT_TRUE(diags.empty()) << dump(diags);  // the profile's facts parse cleanly
  ASSERT_FALSE(p->expect_cell_types.empty()) << "profile.yaml must say what it yields";

  Plan plan = plan_profile(GetParam(), 3, 0, {"a=50%"});
  const Sku& s = worker_sku(plan);
  EXPECT_EQ(s.leaf_type, p->expect_leaf);
  std::vector<std::pair<std::string, int>> got;
  for (size_t l = 0; l < s.hierarchy.levels.size(); ++l)
    got.push_back({s.level_types[l], s.hierarchy.levels[l].children});
  got.push_back({s.level_types.back(), s.hierarchy.node_children});
  EXPECT_EQ(got, p->expect_cell_types);
  for (const auto& h : plan.hosts) {
    if (!h.facts.profile.empty()) {
      EXPECT_EQ(h.hierarchy.leaf_order, p->expect_leaf_order);
    }
  }
  EXPECT_EQ(s.gpus, static_cast<int>(p->expect_leaf_order.size()));

  pai::diag::List check = check_plan_files(plan);
  EXPECT_FALSE(check.has_errors()) << dump(check);
  EXPECT_EQ(check.count(pai::diag::Severity::Warning), 0u) << dump(check);
}

INSTANTIATE_TEST_SUITE_P(Layouts, EveryProfile, ::testing::ValuesIn(list_profiles(kLayouts)),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(Profiles, Dgx1HybridCubeMeshPairsGpusThatShareAPcieSwitch) {
  Plan plan = plan_profile("dgx1-v100", 1, 0);
  const Sku& s = worker_sku(plan);
  ASSERT_EQ(s.hierarchy.levels.size(), 2u);
  EXPECT_EQ(s.hierarchy.levels[0].kind, "SWITCH");
  EXPECT_EQ(s.hierarchy.levels[1].kind, "SOCKET");
  // GPU0 and GPU1 share mlx5_0's switch although GPU0-GPU3 has more NVLinks.
  EXPECT_NE(s.hierarchy.levels[0].reason.find("PCIe switch"), std::string::npos);
}

TEST(Profiles, Dgx2IsTheForgedBinaryTreeOfHivedFromRealPcieFacts) {
  Plan plan = plan_profile("dgx2", 1, 0);
  const Sku& s = worker_sku(plan);
  std::vector<int> sizes;
  for (const auto& l : s.hierarchy.levels) sizes.push_back(l.gpus);
  EXPECT_EQ(sizes, (std::vector<int>{2, 4, 8}));
  EXPECT_EQ(s.hierarchy.node_children, 2);
}

TEST(Profiles, RacksBecomeAMultiNodeLevelAndUnevenRacksTwoChains) {
  Plan even = plan_profile("dgx-a100", 16, 2);
  ASSERT_EQ(even.chains.size(), 1u);
  EXPECT_EQ(even.chains[0].name, "DGX-A100-RACK");
  EXPECT_EQ(even.chains[0].cells.size(), 2u);
  EXPECT_EQ(even.chains[0].leaves_per_cell[0], 64);
  Plan uneven = plan_profile("dgx-a100", 7, 2);  // 4 + 3
  ASSERT_EQ(uneven.chains.size(), 2u);
  EXPECT_EQ(uneven.chains[0].name, "DGX-A100-4NODE-RACK");
  EXPECT_EQ(uneven.chains[1].name, "DGX-A100-3NODE-RACK");
  EXPECT_FALSE(check_plan_files(uneven).has_errors());
}

TEST(Profiles, ProfileOnlyPlansGetAPlaceholderMasterWithAWarning) {
  PlanInputs in;
  in.layouts_dir = kLayouts;
  in.profiles.push_back({"t4-2socket", 2, 0});
  PlanRun r = plan_from_inputs(in);
  ASSERT_TRUE(r.ok());
  int m = r.plan.master_host();
  ASSERT_GE(m, 0);
  EXPECT_EQ(r.plan.hosts[static_cast<size_t>(m)].facts.hostname, "pai-master");
  bool warned = false;
  for (const auto& d : r.diagnostics.items()) warned |= d.code == "P111";
  EXPECT_TRUE(warned);
}

TEST(Profiles, UnknownProfileSuggestsTheClosestName) {
  PlanInputs in;
  in.layouts_dir = kLayouts;
  in.profiles.push_back({"dgx-a10O", 2, 0});
  PlanRun r = plan_from_inputs(in);
  EXPECT_FALSE(r.ok());
  ASSERT_FALSE(r.diagnostics.empty());
  EXPECT_EQ(r.diagnostics.items()[0].code, "P109");
  EXPECT_NE(r.diagnostics.items()[0].hint.find("dgx-a100"), std::string::npos);
}

// --- the exact hierarchy of every machine, written out here --------------------------
//
// profile.yaml says what a profile yields; this table says it again, with the
// GPUs of every cell, so that a change to a profile's facts, its profile.yaml or
// the grouping rules cannot go unnoticed. The groups are what the hardware
// warrants (see the profile's topo.txt and docs/plan.md):

namespace {

struct ExpectedLevel {
  std::string type;
  std::vector<std::vector<int>> cells;  // the GPUs of each cell, in topology order
};

struct ExpectedMachine {
  std::string profile;
  std::string leaf;
  std::vector<ExpectedLevel> levels;  // bottom-up, the node level last
};

void PrintTo(const ExpectedMachine& m, std::ostream* os) {
  *os << m.profile;
}

const std::vector<ExpectedMachine>& expected_machines() {
  static const std::vector<ExpectedMachine> k = {
      // Hybrid cube-mesh: NVLink inside each socket's quad; each GPU pair shares a PCIe
      // switch with one InfiniBand NIC (PIX); HiveD's own DGX-1 example has the same tree.
      {"dgx1-v100",
       "V100",
       {{"DGX1-V100-SWITCH", {{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
        {"DGX1-V100-SOCKET", {{0, 1, 2, 3}, {4, 5, 6, 7}}},
        {"DGX1-V100-NODE", {{0, 1, 2, 3, 4, 5, 6, 7}}}}},
      // NVSwitch: every pair NV6. PCIe: pairs on one switch (PIX to a NIC), quads under
      // one PCIe tree (PXB), one baseboard half per socket.
      {"dgx2",
       "V100",
       {{"DGX2-SWITCH", {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}},
        {"DGX2-PCIE", {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}},
        {"DGX2-SOCKET", {{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}}},
        {"DGX2-NODE", {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}}}},
      // NVSwitch; EPYC in NPS4: GPU pairs on NUMA nodes 3, 1 (socket 0) and 7, 5 (socket 1).
      {"dgx-a100",
       "A100",
       {{"DGX-A100-NUMA", {{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
        {"DGX-A100-SOCKET", {{0, 1, 2, 3}, {4, 5, 6, 7}}},
        {"DGX-A100-NODE", {{0, 1, 2, 3, 4, 5, 6, 7}}}}},
      // NVSwitch; one NIC per GPU (PIX), GPUs of a socket NODE to each other.
      {"hgx-h100",
       "H100",
       {{"HGX-H100-SOCKET", {{0, 1, 2, 3}, {4, 5, 6, 7}}},
        {"HGX-H100-NODE", {{0, 1, 2, 3, 4, 5, 6, 7}}}}},
      // NVSwitch in a VM: NUMA nodes 1, 0 (socket 0) and 3, 2 (socket 1) with two GPUs each.
      {"azure-nd96asr-v4",
       "A100",
       {{"ND96ASR-V4-NUMA", {{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
        {"ND96ASR-V4-SOCKET", {{0, 1, 2, 3}, {4, 5, 6, 7}}},
        {"ND96ASR-V4-NODE", {{0, 1, 2, 3, 4, 5, 6, 7}}}}},
      {"azure-nc24ads-a100-v4", "A100", {{"NC24ADS-A100-V4-NODE", {{0}}}}},
      // Four PCIe GPUs, all NODE on one NUMA node: nothing to group below the node.
      {"azure-nc24s-v3", "V100", {{"NC24S-V3-NODE", {{0, 1, 2, 3}}}}},
      {"t4-2socket", "T4", {{"T4-SOCKET", {{0, 1}, {2, 3}}}, {"T4-NODE", {{0, 1, 2, 3}}}}},
      // One K80 board (two GK210 on its own switch, PIX) per socket: the board is the socket.
      {"k80-2board", "K80", {{"K80-SOCKET", {{0, 1}, {2, 3}}}, {"K80-NODE", {{0, 1, 2, 3}}}}},
  };
  return k;
}

// The GPUs of each cell of a level of `gpus` GPUs: consecutive runs of the leaf order.
std::vector<std::vector<int>> cells_of(const std::vector<int>& leaf_order, int gpus) {
  std::vector<std::vector<int>> out;
  for (size_t i = 0; i < leaf_order.size(); i += static_cast<size_t>(gpus))
    out.emplace_back(leaf_order.begin() + static_cast<long>(i),
                     leaf_order.begin() + static_cast<long>(std::min(
                                              leaf_order.size(), i + static_cast<size_t>(gpus))));
  return out;
}

// The NUMA node and socket of each GPU (by index), read from the facts here and not
// through the planner: NUMA Affinity, else the first CPU of CPU Affinity in lscpu's lists.
struct Placement {
  std::map<int, int> numa, socket;
};
Placement placement_of(const Profile& p) {
  Placement out;
  const TopoMatrix& m = *p.facts.topo;
  const CpuInfo& c = *p.facts.cpu;
  for (const auto& d : m.devices) {
    if (d.kind != TopoDevice::Kind::Gpu) continue;
    int numa = d.numa_affinity;
    if (numa < 0 && !d.cpus.empty()) numa = c.numa_of_cpu(d.cpus.front());
    out.numa[d.index] = numa;
    out.socket[d.index] =
        numa < 0 || c.sockets <= 0 ? -1 : numa / std::max(1, c.numa_nodes / c.sockets);
  }
  return out;
}

const Link& gpu_link(const TopoMatrix& m, int a, int b) {
  return m.link(static_cast<size_t>(m.find("GPU" + std::to_string(a))),
                static_cast<size_t>(m.find("GPU" + std::to_string(b))));
}

// Whether GPUs a and b share one PCIe switch: PIX/PSB to each other, or both PIX/PSB to one NIC.
bool share_switch(const TopoMatrix& m, int a, int b) {
  auto one_switch = [](LinkKind k) { return k == LinkKind::PIX || k == LinkKind::PSB; };
  if (one_switch(gpu_link(m, a, b).kind)) return true;
  const size_t pa = static_cast<size_t>(m.find("GPU" + std::to_string(a)));
  const size_t pb = static_cast<size_t>(m.find("GPU" + std::to_string(b)));
  for (size_t n = 0; n < m.devices.size(); ++n)
    if (m.devices[n].kind == TopoDevice::Kind::Nic && one_switch(m.link(pa, n).kind) &&
        one_switch(m.link(pb, n).kind))
      return true;
  return false;
}

}  // namespace

TEST(Profiles, TheExpectedTableCoversEveryProfile) {
  std::vector<std::string> listed;
  for (const auto& e : expected_machines()) listed.push_back(e.profile);
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, list_profiles(kLayouts))
      << "a profile in layouts/ needs its row in expected_machines()";
}

namespace {  // the fixture, its tests and their instantiation: this file's own

class ExactHierarchy : public ::testing::TestWithParam<ExpectedMachine> {};

TEST_P(ExactHierarchy, LevelsTypesChildCountsAndTheGpusOfEveryCell) {
  const ExpectedMachine& want = GetParam();
  Plan plan = plan_profile(want.profile, 2, 0);
  const Sku& s = worker_sku(plan);
  EXPECT_EQ(s.leaf_type, want.leaf);
  ASSERT_EQ(s.level_types.size(), want.levels.size());
  ASSERT_EQ(s.hierarchy.levels.size() + 1, want.levels.size());
  for (size_t l = 0; l < want.levels.size(); ++l) {
    SCOPED_TRACE(want.levels[l].type);
    EXPECT_EQ(s.level_types[l], want.levels[l].type);
    const int gpus = l + 1 < want.levels.size() ? s.hierarchy.levels[l].gpus : s.gpus;
    const int children =
        l + 1 < want.levels.size() ? s.hierarchy.levels[l].children : s.hierarchy.node_children;
    const int child_gpus = l == 0 ? 1 : s.hierarchy.levels[l - 1].gpus;
    EXPECT_EQ(children * child_gpus, gpus);
    EXPECT_EQ(static_cast<size_t>(children),
              want.levels[l].cells[0].size() / (l == 0 ? 1 : want.levels[l - 1].cells[0].size()));
    for (const auto& h : plan.hosts) {
      if (h.facts.profile.empty()) continue;
      EXPECT_EQ(cells_of(h.hierarchy.leaf_order, gpus), want.levels[l].cells) << h.facts.hostname;
    }
  }
  // The written config agrees: the chain's cell types, top (node) to leaf, with their child counts.
  ASSERT_EQ(plan.chains.size(), 1u);
  const Chain& c = plan.chains[0];
  std::vector<std::string> types(want.levels.size());
  for (size_t l = 0; l < want.levels.size(); ++l)
    types[want.levels.size() - 1 - l] = want.levels[l].type;
  types.push_back(want.leaf);
  EXPECT_EQ(c.types, types);
  for (size_t l = 0; l < want.levels.size(); ++l)
    EXPECT_EQ(c.leaves_per_cell[want.levels.size() - 1 - l],
              static_cast<int64_t>(want.levels[l].cells[0].size()));
}

TEST_P(ExactHierarchy, EveryCellIsWhatTheHardwareWarrants) {
  // Checked against the profile's facts directly, not through the grouping code.
  const ExpectedMachine& want = GetParam();
  pai::diag::List diags;
  auto p = load_profile(kLayouts, want.profile, diags);
  ASSERT_TRUE(p && p->facts.topo && p->facts.cpu) << dump(diags);
  const TopoMatrix& m = *p->facts.topo;
  const Placement at = placement_of(*p);
  for (const auto& level : want.levels) {
    const std::string kind = level.type.substr(level.type.rfind('-') + 1);
    SCOPED_TRACE(level.type);
    std::set<int> seen;
    for (const auto& cell : level.cells) {
      for (int g : cell) EXPECT_TRUE(seen.insert(g).second) << "GPU " << g << " in two cells";
      for (int a : cell)
        for (int b : cell) {
          if (a == b) continue;
          if (kind == "SWITCH") {
            EXPECT_TRUE(share_switch(m, a, b)) << a << "-" << b;
          }
          if (kind == "PCIE") {
            LinkKind k = gpu_link(m, a, b).kind;
            bool pxb_or_closer = k == LinkKind::PIX || k == LinkKind::PSB || k == LinkKind::PXB;
            // NVLink peers hide their PCIe path: both must reach one NIC through PXB or closer.
            if (k == LinkKind::NVLink) {
              const size_t pa = static_cast<size_t>(m.find("GPU" + std::to_string(a)));
              const size_t pb = static_cast<size_t>(m.find("GPU" + std::to_string(b)));
              for (size_t n = 0; n < m.devices.size(); ++n)
                if (m.devices[n].kind == TopoDevice::Kind::Nic &&
                    link_rank(m.link(pa, n).kind) <= 3 && link_rank(m.link(pb, n).kind) <= 3)
                  pxb_or_closer = true;
            }
            EXPECT_TRUE(pxb_or_closer) << a << "-" << b;
          }
          if (kind == "NUMA") {
            EXPECT_EQ(at.numa.at(a), at.numa.at(b)) << a << "-" << b;
          }
          if (kind == "SOCKET" || kind == "NUMA" || kind == "SWITCH" || kind == "PCIE") {
            EXPECT_EQ(at.socket.at(a), at.socket.at(b)) << a << "-" << b << " cross a socket";
          }
        }
      // A SOCKET or NUMA cell holds all the GPUs of its socket or NUMA node.
      if (kind == "SOCKET" || kind == "NUMA") {
        const auto& key = kind == "SOCKET" ? at.socket : at.numa;
        size_t members = 0;
        for (const auto& [g, k] : key) members += k == key.at(cell.front());
        EXPECT_EQ(members, cell.size());
      }
    }
    EXPECT_EQ(seen.size(), m.gpu_count()) << "every GPU is in one cell of every level";
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ExactHierarchy, ::testing::ValuesIn(expected_machines()),
                         [](const auto& info) {
                           std::string n = info.param.profile;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
