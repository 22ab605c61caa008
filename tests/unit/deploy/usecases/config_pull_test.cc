// config pull and config diff over the scripted transport: the cluster's files
// as the master's kubectl shows them; a local file that differs is not
// replaced without force; the secret files are written at 0600; the diff names
// the files that differ; a master that cannot be read is a remote failure.

#include "deploy/config_pull.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "usecase_fixture.h"

namespace pai::deploy {
namespace {

using namespace usecase_test;

// The master's kubectl answers with these files in the ConfigMap and the Secret.
void master_holds(testing::ScriptedTransport& ssh, const ClusterFiles& files) {
  nlohmann::json list = {{"kind", "List"}, {"items", nlohmann::json::array()}};
  std::string manifest = cluster_files_manifest(files, "openpai");
  size_t pos = 0;
  while (pos < manifest.size()) {
    size_t end = manifest.find('\n', pos);
    if (end == std::string::npos) end = manifest.size();
    std::string line = manifest.substr(pos, end - pos);
    if (!line.empty() && line[0] == '{') list["items"].push_back(nlohmann::json::parse(line));
    pos = end + 1;
  }
  ssh.on("get " + cluster_files_objects(), {.out = list.dump()}, "pai-master");
}

ClusterFilesRequest files_request_for(const TempCluster& c, const char* operation) {
  ClusterFilesRequest r;
  r.cluster_dir = c.dir();
  r.operation = operation;
  return r;
}

TEST(ConfigPullUseCase, ADifferentLocalFileIsNotReplacedWithoutForce) {
  TempCluster c;
  ClusterFiles remote = read_cluster_files(c.dir()).value();
  remote["services-configuration.yaml"] += "# edited on the cluster\n";
  testing::ScriptedTransport ssh;
  master_holds(ssh, remote);
  std::string local = c.read("services-configuration.yaml");

  auto plan =
      plan_config_pull(files_request_for(c, "config pull"), "", false, deps_of(c.dir(), ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  EXPECT_EQ(plan->dir, c.dir());
  EXPECT_EQ(plan->conflict, "services-configuration.yaml");
  auto out = apply_config_pull(*plan);
  EXPECT_TRUE(out.written.empty());
  EXPECT_EQ(c.read("services-configuration.yaml"), local);

  plan = plan_config_pull(files_request_for(c, "config pull"), "", true, deps_of(c.dir(), ssh));
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->conflict.empty());
  out = apply_config_pull(*plan);
  EXPECT_FALSE(out.error);
  EXPECT_EQ(out.written.size(), remote.size());
  EXPECT_EQ(c.read("services-configuration.yaml"), remote["services-configuration.yaml"]);
  struct stat st {};
  ASSERT_EQ(::stat(c.path("services-configuration.yaml").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "it holds passwords";
  ASSERT_EQ(::stat(c.path("layout.yaml").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(ConfigPullUseCase, IntoAnotherDirectory) {
  TempCluster c;
  ClusterFiles remote = read_cluster_files(c.dir()).value();
  testing::ScriptedTransport ssh;
  master_holds(ssh, remote);
  std::string out_dir = c.path("pulled");
  auto plan =
      plan_config_pull(files_request_for(c, "config pull"), out_dir, false, deps_of(c.dir(), ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  EXPECT_TRUE(plan->conflict.empty());
  EXPECT_FALSE(fs::exists(out_dir)) << "the plan changes nothing";
  auto out = apply_config_pull(*plan);
  EXPECT_FALSE(out.error);
  EXPECT_EQ(read_cluster_files(out_dir).value(), remote);
}

TEST(ConfigDiffUseCase, NamesTheFilesThatDiffer) {
  TempCluster c;
  ClusterFiles remote = read_cluster_files(c.dir()).value();
  testing::ScriptedTransport ssh;
  master_holds(ssh, remote);
  auto same = config_diff(files_request_for(c, "config diff"), deps_of(c.dir(), ssh));
  ASSERT_TRUE(same.ok()) << same.error().error.message;
  EXPECT_TRUE(same->diffs.empty());
  c.append("layout.yaml", "# edited\n");
  auto differ = config_diff(files_request_for(c, "config diff"), deps_of(c.dir(), ssh));
  ASSERT_TRUE(differ.ok());
  ASSERT_EQ(differ->diffs.size(), 1u);
  EXPECT_EQ(differ->diffs[0].first, "layout.yaml");
  EXPECT_NE(differ->diffs[0].second.find("+# edited"), std::string::npos);
}

TEST(ConfigPullUseCase, AMasterThatCannotBeReadIsARemoteFailure) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  ssh.unreachable("pai-master");
  auto plan =
      plan_config_pull(files_request_for(c, "config pull"), "", false, deps_of(c.dir(), ssh));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().error.kind, util::Error::Kind::Remote);
  EXPECT_EQ(plan.error().error.message.rfind(
                "config pull: reading the cluster files on pai-master failed: ", 0),
            0u)
      << plan.error().error.message;
  testing::ScriptedTransport empty;
  empty.on("get " + cluster_files_objects(), {.out = "{}"}, "pai-master");
  auto none = config_diff(files_request_for(c, "config diff"), deps_of(c.dir(), empty));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().error.message,
            "config diff: the cluster of " + c.dir() +
                " holds no cluster files (paictl install or paictl config push puts them there)");
}

}  // namespace
}  // namespace pai::deploy
