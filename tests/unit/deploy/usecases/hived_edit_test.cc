// The HiveD config's edits of node add|remove as files: planned from the files
// as they are, written layout.yaml first and services-configuration.yaml at
// 0600; a push with nothing changed does nothing.

#include "deploy/hived_edit.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "deploy/install_json.h"
#include "usecase_fixture.h"

namespace pai::deploy {
namespace {

using namespace usecase_test;

TEST(HivedEdit, ARemovedNodeLeavesTheCellsAndTheLayout) {
  TempCluster c;
  auto h = plan_hived_remove(c.dir(), {"pai-worker2"}, "", true);
  ASSERT_TRUE(h.ok()) << h.error().error.message;
  EXPECT_TRUE(h->services_changed());
  EXPECT_TRUE(h->layout_changed());
  EXPECT_EQ(h->services_after.find("cellAddress: pai-worker2"), std::string::npos);
  EXPECT_EQ(h->layout_after.find("pai-worker2"), std::string::npos);
  EXPECT_NE(h->diff().find("-        - cellAddress: pai-worker2"), std::string::npos) << h->diff();
  auto doc = hived_edit_json(*h);
  EXPECT_EQ(doc["restartsHived"], true);
  EXPECT_EQ(doc["diff"], h->diff());

  ASSERT_TRUE(write_hived_edit(*h).ok());
  EXPECT_EQ(c.read("layout.yaml"), h->layout_after);
  EXPECT_EQ(c.read("services-configuration.yaml"), h->services_after);
  struct stat st {};
  ASSERT_EQ(::stat(c.path("services-configuration.yaml").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(HivedEdit, AnAzureRemovalLeavesLayoutYamlToAzure) {
  TempCluster c;
  auto h = plan_hived_remove(c.dir(), {"pai-worker2"}, "", false);
  ASSERT_TRUE(h.ok()) << h.error().error.message;
  EXPECT_TRUE(h->services_changed());
  EXPECT_FALSE(h->layout_changed());
}

TEST(HivedEdit, HostsWithCellsAlreadyAreLeftOutQuietly) {
  TempCluster c;
  HivedAddRequest r;
  r.cluster_dir = c.dir();
  r.nodes = {{"pai-worker1", ""}};
  r.only_new = true;
  auto h = plan_hived_add(r);
  ASSERT_TRUE(h.ok()) << h.error().error.message;
  EXPECT_FALSE(h->services_changed());
}

TEST(HivedEdit, APushOfNothingDoesNothing) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  HivedEdit nothing;
  Recorder rec;
  auto out =
      push_hived_edit(nothing, {c.dir(), 300, 64, ""}, deps_of(c.dir(), ssh), rec.callbacks());
  EXPECT_FALSE(out.ran);
  EXPECT_TRUE(rec.kinds.empty());
  EXPECT_TRUE(ssh.calls().empty());
}

TEST(HivedEdit, APushThatCannotBePlannedHasWrittenTheFiles) {
  TempCluster c;
  auto h = plan_hived_remove(c.dir(), {"pai-worker2"}, "", true);
  ASSERT_TRUE(h.ok());
  testing::ScriptedTransport ssh;
  InstallDeps deps = deps_of(c.dir(), ssh);
  deps.load_hosts = []() -> util::Result<ClusterHosts> {
    return util::Error{"no hosts", {}, util::Error::Kind::Input};
  };
  Recorder rec;
  auto out = push_hived_edit(*h, {c.dir(), 300, 64, ""}, deps, rec.callbacks());
  EXPECT_TRUE(out.ran);
  EXPECT_TRUE(out.written);
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.error->about, UseCaseError::About::HostsNotLoaded);
  EXPECT_TRUE(rec.saw(UseCaseEvent::Kind::HivedPush));
  EXPECT_EQ(c.read("services-configuration.yaml"), h->services_after);
}

}  // namespace
}  // namespace pai::deploy
