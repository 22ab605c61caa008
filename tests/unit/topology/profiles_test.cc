// Every machine profile in layouts/ yields the cell hierarchy its profile.yaml
// promises, and a plan of it passes `paictl check config` (config::check_paths).

#include <gtest/gtest.h>

#include <algorithm>

#include "topology/hierarchy.h"
#include "topology/plan_output.h"
#include "topology/plan_run.h"
#include "topology/profiles.h"

using namespace pai::topology;

namespace {

const std::string kLayouts = std::string(PAI_SOURCE_DIR) + "/layouts";

std::string dump(const pai::diag::List& l) {
  std::string s;
  for (const auto& d : l.items()) s += d.file + ":" + std::to_string(d.line) + " " + d.code + " " + d.message + "\n";
  return s;
}

Plan plan_profile(const std::string& name, int count, int racks, std::vector<std::string> vcs = {}) {
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
  for (const char* want : {"dgx1-v100", "dgx2", "dgx-a100", "hgx-h100", "azure-nd96asr-v4", "azure-nc24ads-a100-v4",
                           "azure-nc24s-v3", "t4-2socket", "k80-2board"})
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
  for (size_t l = 0; l < s.hierarchy.levels.size(); ++l) got.push_back({s.level_types[l], s.hierarchy.levels[l].children});
  got.push_back({s.level_types.back(), s.hierarchy.node_children});
  EXPECT_EQ(got, p->expect_cell_types);
  for (const auto& h : plan.hosts) {
    if (!h.facts.profile.empty()) EXPECT_EQ(h.hierarchy.leaf_order, p->expect_leaf_order);
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
