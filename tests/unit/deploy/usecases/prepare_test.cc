// A cluster directory prepared for the engine: the hosts of a limit and the
// master, the settings from the files, and the refusals (a name that is not a
// host, the front end's hosts not read, an offline bundle that is not a
// directory).

#include "deploy/prepare.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>
#include <vector>

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

// services-configuration.yaml absent means "no OpenPAI"; anything else in its
// place (a directory, a FIFO, a broken symbolic link, a loop) stops the plan with
// a message that names it, never a plan that silently drops the OpenPAI and
// HiveD phases (and never a wait on the FIFO or an abort on the directory).
TEST(PrepareCluster, ServicesConfigurationThatIsNoRegularFileIsAnInputError) {
  struct Case {
    const char* what;
    std::function<void(const std::string&)> make;
  };
  std::vector<Case> cases = {
      {"is a directory", [](const std::string& p) { fs::create_directory(p); }},
      {"FIFO", [](const std::string& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0); }},
      {"broken symbolic link", [](const std::string& p) { fs::create_symlink(p + ".gone", p); }},
      {"loop of symbolic links",
       [](const std::string& p) {
         fs::create_symlink(p + ".b", p);
         fs::create_symlink(p, p + ".b");
       }},
  };
  for (const auto& k : cases) {
    TempCluster c;
    // The hosts as the front end read them before (its own reading of the
    // directory reports the same file, as an inventory error).
    auto hosts = loader_of(c.dir())();
    ASSERT_TRUE(hosts.ok());
    std::string services = c.path("services-configuration.yaml");
    fs::remove(services);
    k.make(services);
    PrepareRequest r;
    r.cluster_dir = c.dir();
    auto p = prepare_cluster(r, std::move(hosts).value());
    ASSERT_FALSE(p.ok()) << k.what;
    EXPECT_EQ(p.error().error.kind, util::Error::Kind::Input) << k.what;
    EXPECT_NE(p.error().error.message.find(k.what), std::string::npos) << p.error().error.message;
    EXPECT_NE(p.error().error.message.find(services), std::string::npos) << p.error().error.message;
  }
  // Absent: no OpenPAI, as before.
  TempCluster c;
  fs::remove(c.path("services-configuration.yaml"));
  PrepareRequest r;
  r.cluster_dir = c.dir();
  auto p = prepare_cluster(r, loader_of(c.dir()));
  ASSERT_TRUE(p.ok()) << p.error().error.message;
  EXPECT_FALSE(p->settings.openpai.enabled);
}

}  // namespace
}  // namespace pai::deploy
