// hived cells --diagram: the lab of tests/integration/hived/scenarios (v7 bad,
// infer-c lazily preempted by urgent, pin-1 on the pinned node v8) drawn as
// SVG: only bad nodes and leaves are outlined red, each leaf's tooltip names
// its group and priority, lazily preempted and pinned cells are marked.

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "hived/cells.h"
#include "hived/live.h"
#include "scheduler/helpers.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"

namespace pai::hived {
namespace {

using scheduler::test::req;

struct CellsLab {
  std::shared_ptr<config::HivedModel> model;
  LiveState live;
};

const CellsLab& cells_lab() {
  static const CellsLab l = [] {
    std::ifstream f(PAI_SOURCE_DIR "/tests/integration/hived/scenarios/lab-hived.yaml");
    std::stringstream s;
    s << f.rdbuf();
    CellsLab out;
    out.model = scheduler::test::model_from_yaml(s.str());
    auto made = scheduler::make_hived_policy(*out.model);
    EXPECT_TRUE(made.ok()) << made.error().message;
    auto policy = std::move(*made);
    policy->set_node_health(policy->cluster().find_node("v7"), false);
    std::map<std::string, LazyPreemptionStatus> lazy;
    for (const auto& r : {req("train-a", "prod", 300, {{2, 8}}, "V100"),
                          req("train-b", "prod", 300, {{1, 8}}, "V100"),
                          req("infer-c", "prod", 10, {{1, 4}}, "V100", "", true),
                          req("urgent", "prod", 200, {{1, 8}}, "V100"),
                          req("pin-1", "prod", 100, {{1, 2}}, "", "prod-pin")}) {
      auto res = policy->schedule(r);
      for (const auto& d : res.downgraded)
        lazy[d.group] = {r.affinity_group, "2024-05-01T12:00:00Z"};
    }
    EXPECT_EQ(lazy.count("infer-c"), 1u);
    auto state = *scheduler::snapshot_hived(*policy);
    out.live = index_live(cluster_status_of(*out.model, state),
                          affinity_groups_of(*out.model, state, lazy));
    return out;
  }();
  return l;
}

size_t cells_count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t p = text.find(part); p != std::string::npos; p = text.find(part, p + 1)) ++n;
  return n;
}

// The <rect ...> elements whose attributes hold `attr`, with their titles.
std::vector<std::string> cells_rects_with(const std::string& svg, const std::string& attr) {
  std::vector<std::string> out;
  for (size_t p = svg.find("<rect "); p != std::string::npos; p = svg.find("<rect ", p + 1)) {
    size_t end = svg.find("</rect>", p), close = svg.find("/>", p);
    size_t stop = std::min(end == std::string::npos ? svg.size() : end + 7,
                           close == std::string::npos ? svg.size() : close + 2);
    std::string e = svg.substr(p, stop - p);
    if (e.find(attr) != std::string::npos) out.push_back(e);
  }
  return out;
}

TEST(HivedCellsSvg, OnlyBadNodesAndLeavesAreOutlined) {
  std::string svg = render_cells_svg(cells_lab().live);
  auto red = cells_rects_with(svg, "stroke=\"#d62728\"");
  ASSERT_FALSE(red.empty());
  size_t nodes = 0;
  for (const auto& e : red) {
    if (e.find("<title>") == std::string::npos) continue;  // the legend's samples
    EXPECT_EQ(e.find("V100-RACK"), std::string::npos) << "a rack is outlined red: " << e;
    EXPECT_NE(e.find("v7"), std::string::npos) << e;
    if (e.find("V100-NODE") != std::string::npos) ++nodes;
  }
  EXPECT_EQ(nodes, 1u);
  // The rack that holds v7 says so in its tooltip, without the red outline.
  auto holding = cells_rects_with(svg, ", holds bad cells");
  ASSERT_EQ(holding.size(), 1u);
  EXPECT_NE(holding[0].find(" V100-RACK "), std::string::npos) << holding[0];
}

TEST(HivedCellsSvg, TooltipsNameTheGroupAndItsPriority) {
  std::string svg = render_cells_svg(cells_lab().live);
  EXPECT_EQ(cells_count(svg, ", group train-a (priority 300)"), 16u);
  EXPECT_EQ(cells_count(svg, ", group urgent (priority 200)"), 8u);
  EXPECT_EQ(cells_count(svg, ", group pin-1 (priority 100)"), 2u);
}

TEST(HivedCellsSvg, LazilyPreemptedAndPinnedCellsAreMarked) {
  const auto& lab = cells_lab();
  std::string plain = render_cells_svg(lab.live);
  auto lazy = cells_rects_with(plain, "class=\"lazy\"");
  EXPECT_EQ(lazy.size(), 4u);
  for (const auto& e : lazy) {
    EXPECT_NE(e.find("group infer-c"), std::string::npos) << e;
    EXPECT_NE(e.find("lazily preempted"), std::string::npos) << e;
    EXPECT_NE(e.find("stroke-dasharray"), std::string::npos) << e;
  }
  EXPECT_EQ(cells_rects_with(plain, "pinned\"").size(), 0u);
  EXPECT_NE(plain.find("give --config to mark them"), std::string::npos);

  auto pins = pinned_cell_addresses(*lab.model);
  ASSERT_EQ(pins.size(), 1u);
  EXPECT_EQ(pins.begin()->second, "prod-pin");
  std::string svg = render_cells_svg(lab.live, {}, pins);
  auto pinned = cells_rects_with(svg, "class=\"pinned\"");
  ASSERT_EQ(pinned.size(), 1u);
  EXPECT_NE(pinned[0].find("pinned cell prod-pin"), std::string::npos) << pinned[0];
  EXPECT_NE(svg.find("v8 (pinned prod-pin)"), std::string::npos);
}

}  // namespace
}  // namespace pai::hived
