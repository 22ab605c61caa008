// The inspect API client over a fake transport: each endpoint's exact request,
// its answer read in HiveD's shape, HiveD's errors (a bare JSON string) as a
// user reads them, and the token rule (a bearer token to the registered
// cluster's host only). tests/integration/hived drives the real binary against
// the HiveD test server over real HTTP.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "hived/inspect.h"
#include "hived/live.h"
#include "scheduler/helpers.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"
#include "support/fake_client.h"

namespace pai::hived {
namespace {

using http::FakeClient;

const std::string kBase = "https://pai.test/a/pai.test:30096";

// HiveD's answers for the lab with train-a (prod) running and v7 bad, as
// lib/scheduler makes them.
struct Answers {
  std::string status, groups;
  Answers() {
    std::ifstream f(PAI_SOURCE_DIR "/tests/integration/hived/scenarios/lab-hived.yaml");
    std::stringstream ss;
    ss << f.rdbuf();
    auto model = scheduler::test::model_from_yaml(ss.str());
    auto made = scheduler::make_hived_policy(*model);
    EXPECT_TRUE(made.ok()) << made.error().message;
    auto policy = std::move(*made);
    policy->set_node_health(policy->cluster().find_node("v7"), false);
    EXPECT_EQ(
        policy->schedule(scheduler::test::req("train-a", "prod", 300, {{2, 8}}, "V100")).outcome,
        scheduler::Outcome::Bound);
    auto snap = scheduler::snapshot_hived(*policy);
    status = to_json(cluster_status_of(*model, *snap)).dump();
    groups = to_json(affinity_groups_of(*model, *snap)).dump();
  }
};

const Answers& answers() {
  static const Answers a;
  return a;
}

struct HivedClient : ::testing::Test {
  FakeClient http;
  void SetUp() override {
    auto s = nlohmann::ordered_json::parse(answers().status);
    auto g = nlohmann::ordered_json::parse(answers().groups);
    const std::string p = "/a/pai.test:30096/v1/inspect/";
    http.add("GET", p + "clusterstatus", 200, s.dump());
    http.add("GET", p + "clusterstatus/physicalcluster", 200, s["physicalCluster"].dump());
    http.add("GET", p + "clusterstatus/virtualclusters/", 200, s["virtualClusters"].dump());
    http.add("GET", p + "clusterstatus/virtualclusters/prod", 200,
             s["virtualClusters"]["prod"].dump());
    http.add("GET", p + "clusterstatus/virtualclusters/nope", 400, R"("VC nope not found")");
    http.add("GET", p + "affinitygroups/", 200, g.dump());
    http.add("GET", p + "affinitygroups/train-a", 200, g["items"][0].dump());
    http.add(
        "GET", p + "affinitygroups/alice~job/default", 400,
        R"("Affinity group alice~job/default does not exist since it is not allocated or preempting")");
  }
  void TearDown() override {
    for (const auto& r : http.unmatched()) ADD_FAILURE() << "unexpected request " << r.url;
  }
};

TEST_F(HivedClient, EveryEndpointIsOneGetOfItsPathReadInHivedsShape) {
  Client c(http, kBase + "/");  // a trailing slash is dropped
  auto st = c.cluster_status();
  ASSERT_TRUE(st.ok()) << st.error().summary();
  EXPECT_EQ(to_json(*st).dump(), answers().status);
  EXPECT_EQ(st->virtual_clusters.size(), 2u);

  auto pc = c.physical_cluster();
  ASSERT_TRUE(pc.ok()) << pc.error().summary();
  ASSERT_EQ(pc->size(), 4u);  // two racks, two K80 nodes
  EXPECT_EQ((*pc)[0].cell_type, "V100-RACK");
  EXPECT_EQ((*pc)[0].leaf_cell_type, "V100");
  EXPECT_EQ((*pc)[1].cell_healthiness, "Bad");  // the rack of v7

  auto vcs = c.virtual_clusters();
  ASSERT_TRUE(vcs.ok()) << vcs.error().summary();
  EXPECT_EQ(vcs->count("prod"), 1u);
  EXPECT_EQ(vcs->count("research"), 1u);

  auto prod = c.virtual_cluster("prod");
  ASSERT_TRUE(prod.ok()) << prod.error().summary();
  ASSERT_EQ(prod->size(), 5u);  // four node cells and the pinned one
  EXPECT_EQ((*prod)[0].cell_address, "prod/0");
  ASSERT_NE((*prod)[0].physical_cell, nullptr);  // train-a is bound to it

  auto gs = c.affinity_groups();
  ASSERT_TRUE(gs.ok()) << gs.error().summary();
  ASSERT_EQ(gs->size(), 1u);
  auto one = c.affinity_group("train-a");
  ASSERT_TRUE(one.ok()) << one.error().summary();
  EXPECT_EQ(one->vc, "prod");
  EXPECT_EQ(one->priority, 300);
  EXPECT_EQ(one->physical_placement.size(), 2u);

  std::vector<std::string> paths;
  for (const auto& r : http.requests()) {
    EXPECT_EQ(r.method, "GET");
    EXPECT_EQ(r.host, "pai.test");
    EXPECT_EQ(r.header("accept"), "application/json");
    paths.push_back(r.path);
  }
  const std::string p = "/a/pai.test:30096/v1/inspect/";
  EXPECT_EQ(paths,
            (std::vector<std::string>{p + "clusterstatus", p + "clusterstatus/physicalcluster",
                                      p + "clusterstatus/virtualclusters/",
                                      p + "clusterstatus/virtualclusters/prod",
                                      p + "affinitygroups/", p + "affinitygroups/train-a"}));
}

TEST_F(HivedClient, HivedsErrorsAreItsBareStrings) {
  Client c(http, kBase);
  auto vc = c.virtual_cluster("nope");
  ASSERT_FALSE(vc.ok());
  EXPECT_EQ(vc.error().kind, Error::Kind::Http);
  EXPECT_EQ(vc.error().status, 400);
  EXPECT_EQ(vc.error().message, "VC nope not found");
  EXPECT_EQ(vc.error().summary(), "400 Bad Request: VC nope not found");

  // A job's group name has a '/': it is one path segment, encoded.
  auto g = c.affinity_group("alice~job/default");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message,
            "Affinity group alice~job/default does not exist since it is not allocated or "
            "preempting");
  EXPECT_NE(http.requests().back().url.find("affinitygroups/alice~job%2Fdefault"),
            std::string::npos);

  // A proxy's HTML page in front of HiveD: its text.
  FakeClient proxy;
  proxy.add("GET", "/v1/inspect/clusterstatus", 502,
            "<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html");
  Client behind(proxy, "http://10.0.0.1:30096");
  auto st = behind.cluster_status();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().summary(), "502 Bad Gateway: 502 Bad Gateway");

  // An answer that is not HiveD's shape names where.
  FakeClient odd;
  odd.add("GET", "/v1/inspect/clusterstatus/physicalcluster", 200, R"([{"cellType": 3}])");
  Client c2(odd, "http://10.0.0.1:30096");
  auto pc = c2.physical_cluster();
  ASSERT_FALSE(pc.ok());
  EXPECT_EQ(pc.error().kind, Error::Kind::Decode);
  EXPECT_EQ(pc.error().summary(),
            "unexpected answer: [0].cellType: expected a string, got a number");
}

TEST_F(HivedClient, TheTokenGoesToTheRegisteredClustersHostOnly) {
  // Behind the cluster's pylon: the cluster's host, so the token is sent.
  Client pylon(http, kBase, "tok-1", "pai.test");
  ASSERT_TRUE(pylon.affinity_groups().ok());
  EXPECT_EQ(http.requests().back().header("authorization"), "Bearer tok-1");

  // HiveD's own address (--hived) on another host: no token.
  FakeClient direct;
  direct.add("GET", "/v1/inspect/affinitygroups/", 200, R"({"items": null})");
  Client other(direct, "http://10.0.0.1:30096", "tok-1", "pai.test");
  auto none = other.affinity_groups();
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(direct.requests().back().has_header("authorization"));

  // The same host on another port is another server: no token either.
  FakeClient port;
  port.add("GET", "/v1/inspect/affinitygroups/", 200, R"({"items": []})");
  Client p2(port, "https://pai.test:30096", "tok-1", "pai.test");
  ASSERT_TRUE(p2.affinity_groups().ok());
  EXPECT_FALSE(port.requests().back().has_header("authorization"));

  // No token at all.
  Client anon(http, kBase);
  ASSERT_TRUE(anon.affinity_groups().ok());
  EXPECT_FALSE(http.requests().back().has_header("authorization"));
}

TEST(HivedAddress, BehindThePylonOfARegisteredCluster) {
  EXPECT_EQ(base_behind_pylon("https://pai.example.com"),
            "https://pai.example.com/a/pai.example.com:30096");
  EXPECT_EQ(base_behind_pylon("https://pai.example.com:8443/"),
            "https://pai.example.com:8443/a/pai.example.com:30096");
  EXPECT_EQ(base_behind_pylon("http://alice:pw@10.1.2.3/rest-server", 9096),
            "http://10.1.2.3/a/10.1.2.3:9096");
  EXPECT_EQ(base_behind_pylon("https://[fd00::1]:443"), "https://[fd00::1]:443/a/[fd00::1]:30096");
}

}  // namespace
}  // namespace pai::hived
