// HiveD's pod-scheduling-spec annotation and pod-bind-info.

#include <gtest/gtest.h>

#include "helpers.h"
#include "scheduler/spec.h"

namespace pai::scheduler::test {
namespace {

// parse_pod_scheduling_spec with the spec in `s` and HiveD's message in `err`.
bool spec_parse(std::string_view text, std::string_view pod_key, PodSchedulingSpec& s,
                std::string& err) {
  auto r = parse_pod_scheduling_spec(text, pod_key);
  if (!r.ok()) {
    err = r.error().message;
    return false;
  }
  s = *r;
  return true;
}

TEST(PodSchedulingSpec, ReadsHivedsExampleRequest) {
  // example/request/basic/request.yaml in microsoft/hivedscheduler
  PodSchedulingSpec s;
  std::string err;
  ASSERT_TRUE(
      spec_parse("virtualCluster: VC1\npriority: 1000\nleafCellType: "
                 "K80\nleafCellNumber: 1\naffinityGroup: null\n",
                 "default/pod1", s, err))
      << err;
  EXPECT_EQ(s.group.virtual_cluster, "VC1");
  EXPECT_EQ(s.group.priority, 1000);
  EXPECT_EQ(s.group.leaf_cell_type, "K80");
  EXPECT_EQ(s.leaf_cell_number, 1);
  EXPECT_EQ(s.group.affinity_group, "default/pod1");  // HiveD's default group: the pod alone
  ASSERT_EQ(s.group.members.size(), 1u);
  EXPECT_EQ(s.group.members[0].pod_number, 1);
  EXPECT_TRUE(s.ignore_k8s_suggested_nodes);
}

TEST(PodSchedulingSpec, ReadsGroupsJsonAndLegacyKeys) {
  PodSchedulingSpec s;
  std::string err;
  ASSERT_TRUE(spec_parse(
      R"({"virtualCluster": "a", "priority": -1, "gpuType": "V100", "gpuNumber": 4,
          "affinityGroup": {"name": "job1/tf", "members": [{"podNumber": 2, "leafCellNumber": 4}, {"podNumber": 1, "leafCellNumber": 1}]},
          "lazyPreemptionEnable": true, "ignoreK8sSuggestedNodes": false, "unknownField": 3})",
      "ns/p", s, err))
      << err;
  EXPECT_EQ(s.group.leaf_cell_type, "V100");
  EXPECT_EQ(s.leaf_cell_number, 4);
  EXPECT_EQ(s.group.affinity_group, "job1/tf");
  ASSERT_EQ(s.group.members.size(), 2u);
  EXPECT_EQ(s.group.members[1].leaf_cell_number, 1);
  EXPECT_TRUE(s.group.lazy_preemption_enable);
  EXPECT_FALSE(s.ignore_k8s_suggested_nodes);
}

TEST(PodSchedulingSpec, RejectsWithHivedsMessages) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "Annotation does not exist or is empty"},
      {"priority: 1\nleafCellNumber: 1\n", "VirtualCluster is empty"},
      {"virtualCluster: a\npriority: -2\nleafCellNumber: 1\n", "Priority is less than -1"},
      {"virtualCluster: a\npriority: 1001\nleafCellNumber: 1\n", "Priority is greater than 1000"},
      {"virtualCluster: a\n", "LeafCellNumber is non-positive"},
      {"virtualCluster: a\nleafCellNumber: 1\naffinityGroup: {members: [{podNumber: 1, "
       "leafCellNumber: 1}]}\n",
       "AffinityGroup.Name is empty"},
      {"virtualCluster: a\nleafCellNumber: 2\naffinityGroup: {name: g, members: [{podNumber: 1, "
       "leafCellNumber: 1}]}\n",
       "does not contains current Pod"},
      {"virtualCluster: a\nleafCellNumber: 1\naffinityGroup: {name: g, members: [{podNumber: 0, "
       "leafCellNumber: 1}]}\n",
       "non-positive PodNumber"},
      {"virtualCluster: a\nleafCellNumber: many\n", "leafCellNumber must be a 32-bit integer"},
      {"virtualCluster: [a]\nleafCellNumber: 1\n", "virtualCluster must be a string"},
      {"virtualCluster: a\n  bad: indent\n", "line 2"},
  };
  for (const auto& [text, part] : cases) {
    PodSchedulingSpec s;
    std::string err;
    EXPECT_FALSE(spec_parse(text, "ns/p", s, err)) << text;
    EXPECT_NE(err.find(part), std::string::npos) << text << " -> " << err;
    EXPECT_EQ(err.rfind("Pod annotation hivedscheduler.microsoft.com/pod-scheduling-spec: ", 0), 0u)
        << err;
  }
}

TEST(PodBindInfo, HasHivedsShape) {
  auto m = model_from_yaml(kTwoSkuConfig);
  auto h = policy("hived", *m);
  PodSchedulingSpec s;
  std::string err;
  ASSERT_TRUE(
      spec_parse("virtualCluster: b\npriority: 10\nleafCellNumber: 4\n"
                 "affinityGroup: {name: g, members: [{podNumber: 1, leafCellNumber: "
                 "4}, {podNumber: 2, leafCellNumber: 2}]}\n",
                 "ns/p", s, err))
      << err;
  ScheduleResult r = h->schedule(s.group);
  ASSERT_EQ(r.outcome, Outcome::Bound);
  nlohmann::json info = pod_bind_info(h->cluster(), r, 2);
  EXPECT_EQ(info["cellChain"], "V100-RACK");
  EXPECT_EQ(info["leafCellIsolation"].size(), 4u);
  ASSERT_EQ(info["affinityGroupBindInfo"].size(), 2u);  // members with 2 and 4 leaf cells
  EXPECT_EQ(info["affinityGroupBindInfo"][0]["podPlacements"].size(), 2u);
  const auto& p = info["affinityGroupBindInfo"][1]["podPlacements"][0];
  EXPECT_EQ(p["physicalNode"], info["node"]);
  EXPECT_EQ(p["preassignedCellTypes"][0], "V100-RACK");
  EXPECT_EQ(p["physicalLeafCellIndices"], info["leafCellIsolation"]);
}

}  // namespace
}  // namespace pai::scheduler::test
