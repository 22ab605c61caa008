// When install counts a workload as rolled out: the rules of `kubectl rollout
// status` on the objects the API server returns.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "deploy/onprem.h"

namespace {

using nlohmann::json;
using pai::deploy::rolled_out;

json deployment(int replicas, int updated, int total, int available, int gen = 2, int seen = 2) {
  return {{"kind", "Deployment"},
          {"metadata", {{"name", "web"}, {"generation", gen}}},
          {"spec", {{"replicas", replicas}}},
          {"status",
           {{"observedGeneration", seen},
            {"replicas", total},
            {"updatedReplicas", updated},
            {"availableReplicas", available}}}};
}

TEST(RolledOut, DeploymentNeedsEveryReplicaUpdatedAndAvailable) {
  EXPECT_TRUE(rolled_out(deployment(2, 2, 2, 2)));
  EXPECT_FALSE(rolled_out(deployment(2, 1, 2, 2)));        // one replica still old
  EXPECT_FALSE(rolled_out(deployment(2, 2, 3, 2)));        // an old replica not gone yet
  EXPECT_FALSE(rolled_out(deployment(2, 2, 2, 1)));        // one not available
  EXPECT_FALSE(rolled_out(deployment(2, 2, 2, 2, 3, 2)));  // the controller has not seen gen 3
  json no_status = deployment(1, 1, 1, 1);
  no_status.erase("status");
  EXPECT_FALSE(rolled_out(no_status));
}

TEST(RolledOut, DeploymentReplicasDefaultToOne) {
  json d = deployment(1, 1, 1, 1);
  d["spec"].erase("replicas");
  EXPECT_TRUE(rolled_out(d));
  d["status"]["availableReplicas"] = 0;
  EXPECT_FALSE(rolled_out(d));
}

json statefulset(int ready, const std::string& current, const std::string& update) {
  return {{"kind", "StatefulSet"},
          {"metadata", {{"name", "db"}, {"generation", 1}}},
          {"spec", {{"replicas", 1}}},
          {"status",
           {{"observedGeneration", 1},
            {"readyReplicas", ready},
            {"updatedReplicas", 1},
            {"currentRevision", current},
            {"updateRevision", update}}}};
}

TEST(RolledOut, StatefulSetNeedsReadyReplicasAndOneRevision) {
  EXPECT_TRUE(rolled_out(statefulset(1, "db-1", "db-1")));
  EXPECT_FALSE(rolled_out(statefulset(0, "db-1", "db-1")));
  EXPECT_FALSE(rolled_out(statefulset(1, "db-1", "db-2")));
  json partitioned = statefulset(1, "db-1", "db-2");
  partitioned["spec"]["updateStrategy"] = {{"type", "RollingUpdate"},
                                           {"rollingUpdate", {{"partition", 0}}}};
  EXPECT_TRUE(rolled_out(partitioned));  // updatedReplicas 1 >= 1 - 0
  partitioned["status"]["updatedReplicas"] = 0;
  EXPECT_FALSE(rolled_out(partitioned));
  json on_delete = statefulset(0, "db-1", "db-2");
  on_delete["spec"]["updateStrategy"] = {{"type", "OnDelete"}};
  EXPECT_TRUE(rolled_out(on_delete));  // kubectl does not wait for these
}

TEST(RolledOut, DaemonSetNeedsEveryScheduledPodUpdatedAndAvailable) {
  json ds = {{"kind", "DaemonSet"},
             {"metadata", {{"name", "flannel"}, {"generation", 1}}},
             {"status",
              {{"observedGeneration", 1},
               {"desiredNumberScheduled", 3},
               {"updatedNumberScheduled", 3},
               {"numberAvailable", 3}}}};
  EXPECT_TRUE(rolled_out(ds));
  ds["status"]["numberAvailable"] = 2;
  EXPECT_FALSE(rolled_out(ds));
  ds["status"]["numberAvailable"] = 3;
  ds["status"]["updatedNumberScheduled"] = 1;
  EXPECT_FALSE(rolled_out(ds));
}

TEST(RolledOut, OtherObjectsAreNot) {
  EXPECT_FALSE(rolled_out(json{{"kind", "Pod"}, {"metadata", {{"name", "p"}}}}));
  EXPECT_FALSE(rolled_out(json("text")));
  EXPECT_FALSE(rolled_out(json::object()));
}

}  // namespace
