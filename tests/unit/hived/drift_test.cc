// The shape of a HiveD config (lib/hived/drift.h): a config's and the answer
// HiveD gives when it runs it are the same; another config's is not, and the
// text names both.

#include "hived/drift.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "config/cluster_files.h"
#include "hived/live.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"

namespace pai::hived {
namespace {

const char* kDriftTwoNodes =
    "physicalCluster:\n"
    "  cellTypes:\n"
    "    G-NODE: {childCellType: G, childCellNumber: 4, isNodeLevel: true}\n"
    "    G-POOL: {childCellType: G-NODE, childCellNumber: 2}\n"
    "  physicalCells:\n"
    "  - cellType: G-POOL\n"
    "    cellChildren:\n"
    "    - cellAddress: w1\n"
    "    - cellAddress: w2\n"
    "virtualClusters:\n"
    "  a:\n"
    "    virtualCells:\n"
    "    - {cellType: G-POOL.G-NODE, cellNumber: 1}\n"
    "  b:\n"
    "    virtualCells:\n"
    "    - {cellType: G-POOL.G-NODE, cellNumber: 1}\n";

const char* kDriftOneNode =
    "physicalCluster:\n"
    "  cellTypes:\n"
    "    G-NODE: {childCellType: G, childCellNumber: 4, isNodeLevel: true}\n"
    "  physicalCells:\n"
    "  - {cellType: G-NODE, cellAddress: w1}\n"
    "virtualClusters:\n"
    "  a:\n"
    "    virtualCells:\n"
    "    - {cellType: G-NODE, cellNumber: 1}\n";

std::shared_ptr<config::HivedModel> drift_model(const std::string& yaml) {
  auto loaded = config::check_sources({{"hivedscheduler.yaml", yaml}});
  EXPECT_FALSE(loaded.clusters.empty());
  return loaded.clusters.empty() ? nullptr : loaded.clusters[0].model;
}

// What HiveD answers while it runs `model`, every cell free.
ClusterStatus drift_answer(const config::HivedModel& model) {
  auto policy = scheduler::make_hived_policy(model);
  EXPECT_TRUE(policy.ok());
  auto snap = scheduler::snapshot_hived(**policy);
  return cluster_status_of(model, *snap);
}

TEST(ConfigShape, HivedRunningAConfigAnswersWithItsShape) {
  auto two = drift_model(kDriftTwoNodes);
  ASSERT_TRUE(two && two->complete);
  ConfigShape s = config_shape(*two);
  EXPECT_EQ(s.top_cells, 1u);
  EXPECT_EQ(s.nodes, (std::set<std::string>{"w1", "w2"}));
  EXPECT_EQ(s.vcs, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(config_shape(drift_answer(*two)), s);
  EXPECT_EQ(config_shape_text(s), "1 top cell, nodes w1, w2, VCs a, b");
}

TEST(ConfigShape, AnotherConfigHasAnotherShape) {
  auto two = drift_model(kDriftTwoNodes);
  auto one = drift_model(kDriftOneNode);
  ASSERT_TRUE(two && one);
  ConfigShape live = config_shape(drift_answer(*one));
  EXPECT_NE(live, config_shape(*two));
  EXPECT_EQ(config_shape_text(live), "1 top cell, nodes w1, VCs a");
  EXPECT_EQ(config_shape_text(ConfigShape{}), "0 top cells, nodes none, VCs none");
}

}  // namespace
}  // namespace pai::hived
