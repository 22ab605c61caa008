// paictl upgrade's version rules (deploy/upgrade_version.h) and the pieces of
// the use case that need no host: one minor at a time, each minor's latest
// patch unless one is named, no downgrade, a version the repository lacks, the
// kubelet's skew, a cut-short run's lagging nodes; the repository of a minor,
// apt-cache madison's lines, config.yaml's kube_version with its comments kept.

#include <gtest/gtest.h>

#include "deploy/upgrade.h"
#include "deploy/upgrade_version.h"

namespace pai::deploy {
namespace {

KubeVersion upgrade_test_v(const std::string& s) {
  auto v = parse_kube_version(s);
  EXPECT_TRUE(v.ok()) << s;
  return v.ok() ? *v : KubeVersion{};
}

const RepoPatches kUpgradeRepo = {
    {30, {0, 1, 10}}, {31, {0, 1, 2, 3, 4, 5, 6}}, {32, {0, 1, 2, 3}}};

TEST(UpgradeVersion, ParsesTheForms) {
  EXPECT_EQ(upgrade_test_v("1.31").str(), "1.31");
  EXPECT_FALSE(upgrade_test_v("1.31").has_patch());
  EXPECT_EQ(upgrade_test_v("1.31.6").str(), "1.31.6");
  EXPECT_EQ(upgrade_test_v("v1.31.6").str(), "1.31.6");
  EXPECT_EQ(upgrade_test_v("1.31.6-1.1").str(), "1.31.6");
  for (const char* bad : {"", "x.y", "1", "1.", "1.31.", "1.31.6.1", "1.31x", "2.0", "1.-1", "v",
                          "1.31-1.1", "1.1234567"}) {
    auto v = parse_kube_version(bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_EQ(v.error().kind, util::Error::Kind::Input) << bad;
    EXPECT_NE(v.error().hint.find("1.Y"), std::string::npos) << bad;
  }
}

TEST(UpgradeVersion, OneMinorAtATimeEachAtItsLatestPatch) {
  auto steps =
      plan_version_steps(upgrade_test_v("1.30.10"), upgrade_test_v("1.32"), kUpgradeRepo, {});
  ASSERT_TRUE(steps.ok()) << steps.error().message;
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[0].to.str(), "1.31.6");
  EXPECT_TRUE((*steps)[0].latest);
  EXPECT_EQ((*steps)[1].to.str(), "1.32.3");
  // A named patch is the last step's.
  steps = plan_version_steps(upgrade_test_v("1.30.10"), upgrade_test_v("1.32.1"), kUpgradeRepo, {});
  ASSERT_TRUE(steps.ok());
  EXPECT_EQ((*steps)[1].to.str(), "1.32.1");
  EXPECT_FALSE((*steps)[1].latest);
  // A newer patch of the running minor.
  steps = plan_version_steps(upgrade_test_v("1.31.2"), upgrade_test_v("1.31.6"), kUpgradeRepo, {});
  ASSERT_TRUE(steps.ok());
  ASSERT_EQ(steps->size(), 1u);
  EXPECT_EQ((*steps)[0].to.str(), "1.31.6");
}

TEST(UpgradeVersion, NothingToDoAtTheTarget) {
  auto steps = plan_version_steps(upgrade_test_v("1.31.6"), upgrade_test_v("1.31"), kUpgradeRepo,
                                  {{"w1", upgrade_test_v("1.31.6")}});
  ASSERT_TRUE(steps.ok());
  EXPECT_TRUE(steps->empty());
}

TEST(UpgradeVersion, RefusesDowngradesAndWhatTheRepositoryLacks) {
  auto down =
      plan_version_steps(upgrade_test_v("1.30.10"), upgrade_test_v("1.29"), kUpgradeRepo, {});
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.error().kind, util::Error::Kind::Input);
  EXPECT_NE(down.error().message.find("downgrade"), std::string::npos);
  auto patch_down =
      plan_version_steps(upgrade_test_v("1.31.6"), upgrade_test_v("1.31.2"), kUpgradeRepo, {});
  ASSERT_FALSE(patch_down.ok());
  auto missing =
      plan_version_steps(upgrade_test_v("1.30.10"), upgrade_test_v("1.99"), kUpgradeRepo, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no Kubernetes 1.33"), std::string::npos)
      << missing.error().message;
  auto no_patch =
      plan_version_steps(upgrade_test_v("1.30.10"), upgrade_test_v("1.31.9"), kUpgradeRepo, {});
  ASSERT_FALSE(no_patch.ok());
  EXPECT_NE(no_patch.error().message.find("1.31.9"), std::string::npos);
}

TEST(UpgradeVersion, TheKubeletSkew) {
  auto old = plan_version_steps(upgrade_test_v("1.32.3"), upgrade_test_v("1.32"), kUpgradeRepo,
                                {{"w1", upgrade_test_v("1.28.15")}});
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().message.find("w1"), std::string::npos);
  auto newer = plan_version_steps(upgrade_test_v("1.30.10"), upgrade_test_v("1.31"), kUpgradeRepo,
                                  {{"w2", upgrade_test_v("1.31.0")}});
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.error().message.find("newer"), std::string::npos);
}

TEST(UpgradeVersion, LaggingNodesFinishTheControlPlanesVersionFirst) {
  // A run cut short: the control plane at 1.31.6, a worker still at 1.30.10.
  auto steps =
      plan_version_steps(upgrade_test_v("1.31.6"), upgrade_test_v("1.32"), kUpgradeRepo,
                         {{"w1", upgrade_test_v("1.30.10")}, {"w2", upgrade_test_v("1.31.6")}});
  ASSERT_TRUE(steps.ok()) << steps.error().message;
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[0].to.str(), "1.31.6");
  EXPECT_EQ((*steps)[1].to.str(), "1.32.3");
}

TEST(UpgradePieces, RepositoryMadisonAndConfig) {
  EXPECT_EQ(kube_repo_for("", 31), "https://pkgs.k8s.io/core:/stable:/v1.31/deb/");
  EXPECT_EQ(kube_repo_for("https://mirror.example/k8s/v1.30/deb/", 32),
            "https://mirror.example/k8s/v1.32/deb/");
  std::string madison =
      "   kubeadm | 1.31.6-1.1 | testbed\n   kubeadm | 1.31.10-1.1 | testbed\n"
      "   kubeadm | 1.31.0-1.1 | testbed\n   kubelet | 1.31.7-1.1 | testbed\n"
      "   kubeadm | 1.30.2-1.1 | testbed\ngarbage\n";
  EXPECT_EQ(parse_madison(madison, 31), (std::vector<int>{0, 6, 10}));
  EXPECT_TRUE(parse_madison("", 31).empty());
  std::string cfg =
      "# the cluster\nssh_user: root\nkube_version: 1.30.10  # pinned\nhived_url: x\n";
  EXPECT_EQ(with_kube_version(cfg, "1.31.6"),
            "# the cluster\nssh_user: root\nkube_version: \"1.31.6\"  # pinned\nhived_url: x\n");
  EXPECT_EQ(with_kube_version("ssh_user: root\n", "1.31.6"),
            "ssh_user: root\nkube_version: \"1.31.6\"\n");
}

}  // namespace
}  // namespace pai::deploy
