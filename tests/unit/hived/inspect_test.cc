// The inspect API readers: what lib/scheduler's state gives as HiveD's answers
// reads back to the same answers; shape and syntax errors name where.

#include "hived/inspect.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "hived/live.h"
#include "scheduler/helpers.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"

namespace pai::hived {
namespace {

std::string file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Lab {
  std::shared_ptr<config::HivedModel> model;
  std::unique_ptr<scheduler::Policy> policy;
  Lab() {
    model = scheduler::test::model_from_yaml(
        file(PAI_SOURCE_DIR "/tests/integration/hived/scenarios/lab-hived.yaml"));
    auto made = scheduler::make_hived_policy(*model);
    EXPECT_TRUE(made.ok()) << made.error().message;
    policy = std::move(*made);
    policy->set_node_health(policy->cluster().find_node("v7"), false);
    using scheduler::test::req;
    EXPECT_EQ(policy->schedule(req("train-a", "prod", 300, {{2, 8}}, "V100")).outcome,
              scheduler::Outcome::Bound);
    EXPECT_EQ(policy->schedule(req("res-1", "research", 50, {{1, 8}}, "V100")).outcome,
              scheduler::Outcome::Bound);
    EXPECT_EQ(policy->schedule(req("opp-1", "research", -1, {{1, 4}}, "V100")).outcome,
              scheduler::Outcome::Bound);
  }
  std::string status() const {
    return to_json(cluster_status_of(*model, *scheduler::snapshot_hived(*policy))).dump();
  }
  std::string groups() const {
    return to_json(affinity_groups_of(*model, *scheduler::snapshot_hived(*policy))).dump();
  }
};

TEST(Inspect, AnswersReadBackToTheSameAnswers) {
  Lab lab;
  std::string s = lab.status(), g = lab.groups();
  auto ps = parse_cluster_status(s);
  auto pg = parse_affinity_groups(g);
  ASSERT_TRUE(ps.ok()) << ps.error().message;
  ASSERT_TRUE(pg.ok()) << pg.error().message;
  EXPECT_EQ(to_json(*ps).dump(), s);
  EXPECT_EQ(to_json(*pg).dump(), g);
  ASSERT_EQ(pg->size(), 3u);
  EXPECT_EQ((*pg)[0].physical_placement.size(), 2u);  // train-a on two nodes

  // Pretty-printed, with keys HiveD may add, the same values.
  auto pretty = nlohmann::ordered_json::parse(s);
  pretty["physicalCluster"][0]["futureField"] = {{"x", {1, 2, "three"}}};
  auto again = parse_cluster_status(pretty.dump(2));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(to_json(*again).dump(), s);

  // A snapshot holds both answers.
  std::string snap = R"({"apiVersion": "paictl.hivedSnapshot/v1", "clusterStatus": )" + s +
                     R"(, "affinityGroups": )" + g + "}";
  auto sn = parse_snapshot(snap);
  ASSERT_TRUE(sn.ok()) << sn.error().message;
  EXPECT_EQ(to_json(sn->status).dump(), s);
  EXPECT_EQ(to_json(sn->groups).dump(), g);
}

TEST(Inspect, ShapeErrorsNameThePath) {
  struct Case {
    std::string text, error;
  };
  const std::string cell =
      R"("cellAddress": "0", "cellState": "Free", "cellHealthiness": "Healthy")";
  const Case cases[] = {
      {R"({"physicalCluster": [{"cellType": 1}], "virtualClusters": {}})",
       "physicalCluster[0].cellType: expected a string, got a number"},
      {R"({"physicalCluster": [{"cellType": "a", )" + cell +
           R"(, "cellPriority": 2.5}], "virtualClusters": {}})",
       "physicalCluster[0].cellPriority: expected an integer, got a number"},
      {R"({"physicalCluster": [{"cellType": "a", )" + cell +
           R"(, "cellPriority": 0, "cellChildren": [{"cellType": "b", )" + cell +
           R"(}]}], "virtualClusters": {}})",
       "physicalCluster[0].cellChildren[0]: missing \"cellPriority\""},
      {R"({"physicalCluster": [], "virtualClusters": {"vc1": [{"cellType": "a", )" + cell +
           R"(, "cellPriority": 2000}]}})",
       "virtualClusters.vc1[0].cellPriority: 2000 is not in -2..1000"},
      {R"({"virtualClusters": {}})", "(top level): missing \"physicalCluster\""},
      {"[]", "(top level): expected an object, got an array"},
  };
  for (const auto& c : cases) {
    auto p = parse_cluster_status(c.text);
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_EQ(p.error().message, c.error) << c.text;
  }
  auto g = parse_affinity_groups(
      R"({"items": [{"metadata": {"name": "x"}, "status": {"vc": "a", "priority": 1, "state": "Running"}}]})");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message,
            "items[0].status.state: \"Running\" is not Allocated, Preempting or BeingPreempted");
  g = parse_affinity_groups(
      R"({"items": [{"metadata": {"name": "x"}, "status": {"vc": "a", "priority": 1, "state": "Allocated", "physicalPlacement": {"n1": [0, "1"]}}}]})");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message,
            "items[0].status.physicalPlacement.n1[1]: expected an integer, got a string");
  // Go writes an empty list as null.
  auto none = parse_affinity_groups(R"({"items": null})");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->empty());
}

TEST(Inspect, SyntaxErrorsGiveLineAndColumn) {
  auto p = parse_cluster_status("{\"physicalCluster\": [],\n \"virtualClusters\": {\"a\": [{]}}");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message,
            "not JSON (line 2, column 29): expected a string as the object key, found ']'");
  p = parse_cluster_status(R"({"physicalCluster": [], "virtualClusters": {}} trailing)");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "not JSON (line 1, column 48): text after the JSON value");
  p = parse_cluster_status("");
  EXPECT_FALSE(p.ok());
}

}  // namespace
}  // namespace pai::hived
