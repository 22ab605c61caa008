// A cluster directory prepared for the engine: the hosts of a limit and the
// master, the settings from the files, and the refusals (a name that is not a
// host, the front end's hosts not read, an offline bundle that is not a
// directory).

#include "deploy/prepare.h"

#include <sys/stat.h>

#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include "usecase_fixture.h"

namespace pai::deploy {
namespace {

using namespace usecase_test;

TEST(PrepareCluster, ALimitSelectsItsHostsAndTheMasterIsReachedToo) {
  TempCluster c;
  PrepareRequest r;
  r.cluster_dir = c.dir() + "//";
  r.limit = {"10.0.0.2"};  // pai-worker1's address
  r.ignore_checks = {"CPU"};
  r.wait_s = 42;
  r.templates_dir = "/t";
  auto p = prepare_cluster(r, loader_of(c.dir()));
  ASSERT_TRUE(p.ok()) << p.error().error.message;
  EXPECT_EQ(p->cluster_dir, c.dir());
  EXPECT_TRUE(p->limited);
  ASSERT_EQ(p->specs.size(), 2u);
  EXPECT_EQ(p->specs[0].name, "pai-master");
  EXPECT_TRUE(p->specs[0].master);
  EXPECT_FALSE(p->specs[0].selected);
  EXPECT_EQ(p->specs[1].name, "pai-worker1");
  EXPECT_TRUE(p->specs[1].selected);
  EXPECT_EQ(p->specs[1].gpus, 4);
  ASSERT_NE(p->master(), nullptr);
  EXPECT_EQ(p->master()->address, "10.0.0.1");
  EXPECT_EQ(p->settings.cluster_name, "pai");
  EXPECT_EQ(p->settings.wait_s, 42);
  EXPECT_EQ(p->settings.templates_dir, "/t");
  EXPECT_EQ(p->settings.ignore_checks, std::vector<std::string>{"CPU"});
  EXPECT_TRUE(p->settings.openpai.enabled);
  EXPECT_EQ(p->settings.openpai.admin_user, "admin");
  EXPECT_FALSE(p->settings.cluster_files.empty());
  EXPECT_FALSE(p->settings.hybrid) << "no azure: section";
}

TEST(PrepareCluster, ANameThatIsNotAHostIsNamed) {
  TempCluster c;
  PrepareRequest r;
  r.cluster_dir = c.dir();
  r.limit = {"pai-worker9"};
  auto p = prepare_cluster(r, loader_of(c.dir()));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().about, UseCaseError::About::UnknownHost);
  EXPECT_EQ(p.error().error.kind, util::Error::Kind::Input);
  EXPECT_EQ(p.error().error.message, "pai-worker9 is not a host of " + c.dir() + "/layout.yaml");
}

TEST(PrepareCluster, TheFrontEndsHostsFailureIsItsOwn) {
  TempCluster c;
  PrepareRequest r;
  r.cluster_dir = c.dir();
  HostsLoader failing = []() -> util::Result<ClusterHosts> {
    return util::Error{"no", {}, util::Error::Kind::Input};
  };
  auto p = prepare_cluster(r, failing);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().about, UseCaseError::About::HostsNotLoaded);
}

TEST(PrepareCluster, AnOfflineBundleMustBeADirectory) {
  TempCluster c;
  c.append("config.yaml", "kube_offline_bundle: debs\n");
  PrepareRequest r;
  r.cluster_dir = c.dir();
  auto p = prepare_cluster(r, loader_of(c.dir()));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().error.message,
            "kube_offline_bundle: " + c.dir() + "/debs is not a directory");
  fs::create_directory(c.path("debs"));
  auto q = prepare_cluster(r, loader_of(c.dir()));
  ASSERT_TRUE(q.ok()) << q.error().error.message;
  EXPECT_EQ(q->settings.offline_bundle, c.dir() + "/debs");
}

TEST(PrepareCluster, ConfigYamlsIgnoreCheckErrorsUnlessTheRequestNamesSome) {
  TempCluster c;
  c.append("config.yaml", "ignore_check_errors: [CPU, DNS]\n");
  PrepareRequest r;
  r.cluster_dir = c.dir();
  auto p = prepare_cluster(r, loader_of(c.dir()));
  ASSERT_TRUE(p.ok()) << p.error().error.message;
  EXPECT_EQ(p->settings.ignore_checks, (std::vector<std::string>{"CPU", "DNS"}));
  r.ignore_checks = {"Swap"};  // the flag overrides the file
  auto q = prepare_cluster(r, loader_of(c.dir()));
  ASSERT_TRUE(q.ok()) << q.error().error.message;
  EXPECT_EQ(q->settings.ignore_checks, std::vector<std::string>{"Swap"});
}

TEST(PrepareCluster, WhatTheDirectoryLacksIsNamed) {
  TempCluster c;
  fs::remove(c.path("config.yaml"));
  PrepareRequest r;
  r.cluster_dir = c.dir();
  auto p = prepare_cluster(r, loader_of(c.dir()));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().error.kind, util::Error::Kind::Input);
  EXPECT_EQ(p.error().error.message, c.dir() + " has no config.yaml");
  EXPECT_NE(p.error().error.hint.find("docker_image_tag"), std::string::npos);
  EXPECT_NE(p.error().error.hint.find("paictl init"), std::string::npos);
  fs::remove(c.path("layout.yaml"));
  // (The front end's inventory stops at a missing layout.yaml first; the use case
  // names both files when it is given hosts anyway.)
  auto q = prepare_cluster(r, ClusterHosts{});
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().error.message, c.dir() + " has no layout.yaml or config.yaml");
}

// services-configuration.yaml absent means "no OpenPAI"; anything else in its
// place (a directory, a FIFO, a broken symbolic link, a loop) stops the plan with
// a message that names it, never a plan that silently drops the OpenPAI and
// HiveD phases (and never a wait on the FIFO or an abort on the directory).

// layout.yaml with `n` masters (pai-master, pai-master2, ...) before its workers.
void prepare_with_masters(const TempCluster& c, int n) {
  std::string layout = c.read("layout.yaml");
  std::string extra;
  for (int i = 2; i <= n; ++i)
    extra += "  - hostname: pai-master" + std::to_string(i) + "\n    hostip: 10.0.0." +
             std::to_string(10 + i) +
             "\n    machine-type: master-machine\n    pai-master: \"true\"\n";
  size_t at = layout.find("  - hostname: pai-worker1");
  c.write("layout.yaml", layout.substr(0, at) + extra + layout.substr(at));
}

TEST(PrepareCluster, ThreeMastersWithAnEndpointAreOneFirstMasterAndTwoThatJoin) {
  TempCluster c;
  prepare_with_masters(c, 3);
  c.append("config.yaml", "kube_control_plane_endpoint: \"10.0.0.250:6443\"\n");
  PrepareRequest r;
  r.cluster_dir = c.dir();
  auto p = prepare_cluster(r, loader_of(c.dir()));
  ASSERT_TRUE(p.ok()) << p.error().error.message;
  ASSERT_NE(p->master(), nullptr);
  EXPECT_EQ(p->master()->name, "pai-master");
  std::vector<std::string> joining;
  for (const auto& h : p->specs)
    if (h.other_master) joining.push_back(h.name);
  EXPECT_EQ(joining, (std::vector<std::string>{"pai-master2", "pai-master3"}));
  EXPECT_TRUE(p->settings.highly_available());
  EXPECT_EQ(p->settings.control_plane_endpoint, "10.0.0.250:6443");
  EXPECT_EQ(p->settings.state_dir, c.dir() + "/.paictl");
  // kube_vip alone: its address:6443 is the endpoint.
  TempCluster v;
  prepare_with_masters(v, 3);
  v.append("config.yaml", "kube_vip: {address: 10.0.0.250, interface: eth0}\n");
  r.cluster_dir = v.dir();
  p = prepare_cluster(r, loader_of(v.dir()));
  ASSERT_TRUE(p.ok()) << p.error().error.message;
  EXPECT_EQ(p->settings.control_plane_endpoint, "10.0.0.250:6443");
  EXPECT_EQ(p->settings.kube_vip_interface, "eth0");
}

TEST(PrepareCluster, AnEvenMasterCountOrNoEndpointIsRefusedBeforeAnyHost) {
  // The front end's inventory refuses such files too (with check config's
  // findings); prepare refuses them itself, whatever hosts it is given.
  TempCluster good;
  prepare_with_masters(good, 3);
  good.append("config.yaml", "kube_control_plane_endpoint: \"10.0.0.250:6443\"\n");
  TempCluster even;
  prepare_with_masters(even, 2);
  even.append("config.yaml", "kube_control_plane_endpoint: \"10.0.0.250:6443\"\n");
  PrepareRequest r;
  r.cluster_dir = even.dir();
  auto p = prepare_cluster(r, loader_of(good.dir()));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().error.message.find("layout.yaml:"), std::string::npos);
  EXPECT_NE(p.error().error.message.find("[L007]"), std::string::npos) << p.error().error.message;
  EXPECT_FALSE(p.error().error.hint.empty());
  TempCluster none;
  prepare_with_masters(none, 3);
  r.cluster_dir = none.dir();
  p = prepare_cluster(r, loader_of(good.dir()));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().error.message.find("[L060]"), std::string::npos) << p.error().error.message;
  EXPECT_NE(p.error().error.hint.find("kube_control_plane_endpoint"), std::string::npos);
}

}  // namespace
}  // namespace pai::deploy
