// config_of and fit on a hand-worked case (tests/integration/hived/scenarios/
// auto-hived.yaml): prod's four V100 nodes are held by alice~prod-a (3) and
// dave~short (1); research (three V100 node cells and a K80 one) runs bob~train
// at priority 50 on one node; three V100 nodes are free.

#include "hived/fit.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "scheduler/helpers.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"

namespace pai::hived {
namespace {

// The live state HiveD would show after binding `requests` on the config of a
// scenario file (tests/integration/hived/scenarios/).
LiveState live_after(const std::string& scenario,
                     std::initializer_list<scheduler::GroupRequest> requests) {
  std::ifstream f(PAI_SOURCE_DIR "/tests/integration/hived/scenarios/" + scenario);
  std::stringstream s;
  s << f.rdbuf();
  auto model = scheduler::test::model_from_yaml(s.str());
  auto made = scheduler::make_hived_policy(*model);
  EXPECT_TRUE(made.ok()) << made.error().message;
  auto policy = std::move(*made);
  for (auto r : requests)
    EXPECT_EQ(policy->schedule(r).outcome, scheduler::Outcome::Bound) << r.affinity_group;
  auto state = *scheduler::snapshot_hived(*policy);
  return index_live(cluster_status_of(*model, state), affinity_groups_of(*model, state));
}

LiveState auto_state() {
  using scheduler::test::req;
  return live_after("auto-hived.yaml", {req("alice~prod-a", "prod", 300, {{3, 8}}, "V100"),
                                        req("dave~short", "prod", 300, {{1, 8}}, "V100"),
                                        req("bob~train", "research", 50, {{1, 8}}, "V100")});
}

TEST(Fit, TheConfigComesFromTheClusterStatus) {
  config::HivedConfig cfg = config_of(auto_state().status);
  ASSERT_EQ(cfg.cell_types.size(), 3u);
  std::map<std::string, std::tuple<std::string, int64_t, bool>> types;
  for (const auto& t : cfg.cell_types)
    types[t.name] = {t.child_cell_type, t.child_cell_number, t.is_node_level};
  EXPECT_EQ(types["V100-RACK"], std::make_tuple(std::string("V100-NODE"), int64_t{4}, false));
  EXPECT_EQ(types["V100-NODE"], std::make_tuple(std::string("V100"), int64_t{8}, true));
  EXPECT_EQ(types["K80-NODE"], std::make_tuple(std::string("K80"), int64_t{4}, true));
  ASSERT_EQ(cfg.physical_cells.size(), 4u);
  EXPECT_EQ(cfg.physical_cells[0].children[1].cell_address, "v2");
  std::map<std::string, std::vector<std::pair<std::string, int64_t>>> vcs;
  for (const auto& v : cfg.virtual_clusters)
    for (const auto& c : v.virtual_cells) vcs[v.name].push_back({c.cell_type, c.cell_number});
  EXPECT_EQ(vcs["prod"],
            (std::vector<std::pair<std::string, int64_t>>{{"V100-RACK.V100-NODE", 4}}));
  EXPECT_EQ(vcs["research"], (std::vector<std::pair<std::string, int64_t>>{
                                 {"V100-RACK.V100-NODE", 3}, {"K80-NODE", 1}}));
}

scheduler::GroupRequest job(int32_t pods, int32_t gpus, int32_t priority = 10) {
  return scheduler::test::req("alice~new", "research", priority, {{pods, gpus}});
}

TEST(Fit, AGangThatFitsNow) {
  auto v = fit(auto_state(), job(1, 8), {}, 100);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->kind, FitVerdict::Kind::Fits) << v->reason;
  EXPECT_EQ(v->start_s, 100);
}

TEST(Fit, TheStartIsTheEndAfterWhichItFits) {
  // 5 x 4 GPUs: 20 of research's GPUs, but one chain and two free node cells.
  const std::map<std::string, double> ends = {
      {"dave~short", 1000}, {"bob~train", 2000}, {"alice~prod-a", 3000}};
  auto v = fit(auto_state(), job(5, 4), ends, 100);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->kind, FitVerdict::Kind::Waits);
  ASSERT_TRUE(v->start_s);
  EXPECT_EQ(*v->start_s, 2000);  // dave~short's end frees a prod cell only
  EXPECT_EQ(v->after_group, "bob~train");
  EXPECT_EQ(v->released, 2);

  // Without bob~train's end it is unknown.
  v = fit(auto_state(), job(5, 4), {{"dave~short", 1000}}, 100);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_FALSE(v->start_s);
  EXPECT_NE(v->estimate.find("unknown"), std::string::npos) << v->estimate;
  // An end in the past: it starts now.
  v = fit(auto_state(), job(5, 4), {{"bob~train", 50}}, 100);
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_TRUE(v->start_s);
  EXPECT_EQ(*v->start_s, 100);
}

TEST(Fit, AHigherPriorityPreemptsInsideItsVc) {
  auto v = fit(auto_state(), job(3, 8, 100), {}, 100);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->kind, FitVerdict::Kind::Preempts) << v->reason;
  EXPECT_EQ(v->victims, std::vector<std::string>{"bob~train"});
}

TEST(Fit, AnUnknownVcIsRejected) {
  auto r = scheduler::test::req("x", "nope", 10, {{1, 1}});
  auto v = fit(auto_state(), r, {}, 100);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->kind, FitVerdict::Kind::Rejected);
}

// The lab (lab-hived.yaml): prod's four V100 node cells are held by train-a
// (two), train-b and urgent; its pinned cell (node v8) is idle. HiveD keeps a
// pinned cell bound while idle, which no other idle cell is: the inferred config
// pins it, so a 2-GPU prod group waits instead of fitting on v8.
LiveState lab_with_idle_pinned_cell() {
  using scheduler::test::req;
  return live_after("lab-hived.yaml", {req("train-a", "prod", 300, {{2, 8}}, "V100"),
                                       req("train-b", "prod", 300, {{1, 8}}, "V100"),
                                       req("urgent", "prod", 200, {{1, 8}}, "V100")});
}

TEST(Fit, AnIdlePinnedCellIsToldFromTheBindings) {
  LiveState live = lab_with_idle_pinned_cell();
  config::HivedConfig cfg = config_of(live.status);
  const config::VirtualClusterSpec* prod = nullptr;
  for (const auto& v : cfg.virtual_clusters)
    if (v.name == "prod") prod = &v;
  ASSERT_NE(prod, nullptr);
  ASSERT_EQ(prod->pinned_cells.size(), 1u);
  ASSERT_EQ(prod->virtual_cells.size(), 1u);
  EXPECT_EQ(prod->virtual_cells[0].cell_number, 4);  // the pinned one is not among them
  const auto& v8 = cfg.physical_cells[1].children[3];
  EXPECT_EQ(v8.cell_address, "v8");
  EXPECT_EQ(v8.pinned_cell_id, prod->pinned_cells[0].pinned_cell_id);
  for (const auto& v : cfg.virtual_clusters)
    EXPECT_TRUE(v.name == "prod" || v.pinned_cells.empty()) << v.name;

  auto verdict = fit(live, scheduler::test::req("small", "prod", 100, {{1, 2}}, "V100"), {}, 100);
  ASSERT_TRUE(verdict) << verdict.error().message;
  EXPECT_EQ(verdict->kind, FitVerdict::Kind::Waits) << verdict->reason;
}

}  // namespace
}  // namespace pai::hived
