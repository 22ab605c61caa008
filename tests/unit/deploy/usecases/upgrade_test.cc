// The upgrade use case on the scripted transport, whose handler keeps a small
// cluster (the API server's version, each node's kubelet, cordons and the
// maintenance annotation): the plan reads the cluster and the repository and
// changes nothing; a version the repository lacks is refused before any host
// changes; the apply runs kubeadm upgrade apply once, moves every node, leaves
// none cordoned and writes config.yaml's kube_version; a re-run of a cut-short
// upgrade skips the apply and finishes the node left cordoned.

#include "deploy/upgrade.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <regex>
#include <set>

#include "deploy/journal.h"
#include "deploy/upgrade_json.h"
#include "usecase_fixture.h"

namespace pai::deploy {
namespace {

using namespace usecase_test;

struct UpgradeTestCluster {
  std::string cp = "1.30.10";
  std::map<std::string, std::string> kubelet = {
      {"pai-master", "1.30.10"}, {"pai-worker1", "1.30.10"}, {"pai-worker2", "1.30.10"}};
  std::set<std::string> cordoned;
  std::map<std::string, std::string> annotation;
  int applies = 0;
  std::map<int, std::string> patches = {{30, "10"}, {31, "6"}, {32, "3"}};

  std::string node_json(const std::string& n) const {
    nlohmann::json j = {{"metadata", {{"name", n}, {"labels", nlohmann::json::object()}}},
                        {"spec", nlohmann::json::object()},
                        {"status",
                         {{"nodeInfo", {{"kubeletVersion", "v" + kubelet.at(n)}}},
                          {"conditions", {{{"type", "Ready"}, {"status", "True"}}}},
                          {"allocatable", {{"nvidia.com/gpu", n == "pai-master" ? "0" : "4"}}}}}};
    if (n == "pai-master") j["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] = "";
    if (cordoned.count(n)) j["spec"]["unschedulable"] = true;
    if (annotation.count(n))
      j["metadata"]["annotations"] = {{"paictl.io/maintenance", annotation.at(n)}};
    return j.dump();
  }
};

std::string upgrade_test_host(const testing::ScriptedCall& c) {
  if (c.host == "10.0.0.1" || c.host == "pai-master") return "pai-master";
  if (c.host == "10.0.0.2" || c.host == "pai-worker1") return "pai-worker1";
  if (c.host == "10.0.0.3" || c.host == "pai-worker2") return "pai-worker2";
  return c.host;
}

void upgrade_test_script(testing::ScriptedTransport& ssh, UpgradeTestCluster& k) {
  ssh.on("", [&k](const testing::ScriptedCall& c) -> testing::ScriptedAnswer {
    const std::string& s = c.script;
    std::string host = upgrade_test_host(c);
    std::smatch m;
    // The engine's host lock (the config push that ends an upgrade runs on it).
    if (s.find("echo acquired") != std::string::npos) return {"acquired\n"};
    if (s.find("get nodes -o json") != std::string::npos) {
      std::string items;
      for (const auto& [n, v] : k.kubelet) items += (items.empty() ? "" : ",") + k.node_json(n);
      std::string nodes = "{\"items\": [" + items + "]}\n";
      if (s.find("get --raw /version") == std::string::npos) return {nodes};
      return {"--- version\n{\"gitVersion\": \"v" + k.cp + "\"}\n--- nodes\n" + nodes};
    }
    if (s.find("madison kubeadm") != std::string::npos) {
      std::string out;
      std::regex re("echo '--- ([0-9]+)'");
      for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator();
           ++it) {
        int minor = std::stoi((*it)[1]);
        out += "--- " + std::to_string(minor) + "\n";
        if (k.patches.count(minor))
          out += "   kubeadm | 1." + std::to_string(minor) + "." + k.patches[minor] +
                 "-1.1 | testbed\n   kubeadm | 1." + std::to_string(minor) + ".0-1.1 | testbed\n";
        else
          break;
      }
      return {out};
    }
    if (std::regex_search(s, m, std::regex("kubeadm upgrade apply v([0-9.]+)"))) {
      if (k.cp == m[1].str()) return {"skipped\n"};
      k.cp = m[1];
      ++k.applies;
      return {"applied\n"};
    }
    if (std::regex_search(s, m, std::regex("get node ([a-z0-9-]+) -o json")))
      return {k.node_json(m[1])};
    if (std::regex_search(
            s, m, std::regex("annotate node ([a-z0-9-]+) --overwrite [^=]+='?([^'\n>]*)'?")))
      k.annotation[m[1]] = m[2];
    if (std::regex_search(s, m, std::regex("annotate node ([a-z0-9-]+) paictl.io/maintenance-")))
      k.annotation.erase(m[1]);
    if (std::regex_search(s, m, std::regex(" uncordon ([a-z0-9-]+)"))) k.cordoned.erase(m[1]);
    if (std::regex_search(s, m, std::regex(" cordon ([a-z0-9-]+)"))) k.cordoned.insert(m[1]);
    if (s.find("systemctl restart kubelet") != std::string::npos &&
        std::regex_search(s, m, std::regex("([0-9]+\\.[0-9]+\\.[0-9]+)-1\\.1")))
      k.kubelet[host] = m[1];
    return {};
  });
}

UpgradeDeps upgrade_test_deps(const TempCluster& c, testing::ScriptedTransport& ssh) {
  UpgradeDeps d;
  d.install = deps_of(c.dir(), ssh);
  // A clock that moves only when slept on: a wait that never ends runs out.
  auto t = std::make_shared<double>(0);
  d.clock.now = [t] { return *t; };
  d.clock.sleep = [t](double s) { *t += s; };
  d.wall_now = [] { return 1.8e9; };
  return d;
}

UpgradeRequest upgrade_test_request(const TempCluster& c, const std::string& to) {
  UpgradeRequest r;
  r.cluster_dir = c.dir();
  r.to = to;
  r.templates_dir = std::string(PAI_SOURCE_DIR) + "/templates";
  // The config push that ends an apply is the config phase's (its own tests);
  // here it is off but in the one test that sees it run.
  r.push_cluster_files = false;
  return r;
}

size_t upgrade_test_writes(const testing::ScriptedTransport& ssh) {
  return ssh.count("apt-get install") + ssh.count("kubeadm upgrade apply") + ssh.count(" cordon ") +
         ssh.count("restart kubelet");
}

TEST(UpgradeUseCase, ThePlanReadsTheClusterAndChangesNothing) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  UpgradeTestCluster k;
  upgrade_test_script(ssh, k);
  auto plan = plan_upgrade(upgrade_test_request(c, "1.32"), upgrade_test_deps(c, ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  EXPECT_EQ(plan->control_plane.str(), "1.30.10");
  ASSERT_EQ(plan->steps.size(), 2u);
  EXPECT_EQ(plan->steps[0].to.str(), "1.31.6");
  EXPECT_EQ(plan->steps[1].to.str(), "1.32.3");
  EXPECT_EQ(plan->steps[0].repo, "https://pkgs.k8s.io/core:/stable:/v1.31/deb/");
  EXPECT_FALSE(plan->steps[0].control_plane_done);
  EXPECT_EQ(plan->steps[0].nodes, (std::vector<std::string>{"pai-worker1", "pai-worker2"}));
  EXPECT_FALSE(plan->steps[0].batches.hived);
  EXPECT_EQ(plan->steps[0].batches.batches.size(), 2u);
  EXPECT_EQ(upgrade_test_writes(ssh), 0u);
  // The repository was asked with its own sources, not the host's.
  EXPECT_TRUE(ssh.ran("Dir::Etc::sourceparts=-"));
  auto doc = upgrade_json(*plan, nullptr);
  EXPECT_EQ(doc["apiVersion"], "paictl.upgrade/v1");
  EXPECT_EQ(doc["steps"][1]["version"], "1.32.3");
  EXPECT_EQ(doc["steps"][0]["maintenance"]["order"], "plain");
}

TEST(UpgradeUseCase, RefusalsChangeNothing) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  UpgradeTestCluster k;
  upgrade_test_script(ssh, k);
  for (const char* to : {"1.99", "1.29", "1.31.9", "x.y"}) {
    auto plan = plan_upgrade(upgrade_test_request(c, to), upgrade_test_deps(c, ssh));
    ASSERT_FALSE(plan.ok()) << to;
    EXPECT_EQ(plan.error().error.kind, util::Error::Kind::Input) << to;
  }
  EXPECT_EQ(upgrade_test_writes(ssh), 0u);
  EXPECT_EQ(k.cp, "1.30.10");
}

TEST(UpgradeUseCase, ApplyOnceAndResumeACutShortRun) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  UpgradeTestCluster k;
  upgrade_test_script(ssh, k);
  auto plan = plan_upgrade(upgrade_test_request(c, "1.31"), upgrade_test_deps(c, ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  std::vector<std::string> done;
  auto out = apply_upgrade(*plan, [&](const UpgradeEvent& e) {
    if (e.kind == UpgradeEvent::Kind::NodeDone) done.push_back(e.node);
  });
  ASSERT_TRUE(out.ok) << out.error->error.message;
  EXPECT_EQ(k.applies, 1);
  EXPECT_EQ(out.applied, std::vector<std::string>{"1.31.6"});
  for (const auto& [n, v] : k.kubelet) EXPECT_EQ(v, "1.31.6") << n;
  EXPECT_TRUE(k.cordoned.empty());
  EXPECT_TRUE(k.annotation.empty());
  EXPECT_EQ(done, (std::vector<std::string>{"pai-master", "pai-worker1", "pai-worker2"}));
  EXPECT_NE(c.read("config.yaml").find("kube_version: \"1.31.6\""), std::string::npos);
  // Nothing left to do.
  auto again = plan_upgrade(upgrade_test_request(c, "1.31"), upgrade_test_deps(c, ssh));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->up_to_date());

  // A run to 1.32 cut short: the control plane moved, pai-worker2 left cordoned.
  k.cp = "1.32.3";
  k.kubelet["pai-master"] = "1.32.3";
  k.kubelet["pai-worker1"] = "1.32.3";
  k.cordoned.insert("pai-worker2");
  k.annotation["pai-worker2"] = "upgrade 20270115T080000Z";
  auto resume = plan_upgrade(upgrade_test_request(c, "1.32"), upgrade_test_deps(c, ssh));
  ASSERT_TRUE(resume.ok()) << resume.error().error.message;
  ASSERT_EQ(resume->steps.size(), 1u);
  EXPECT_TRUE(resume->steps[0].control_plane_done);
  EXPECT_EQ(resume->steps[0].nodes, std::vector<std::string>{"pai-worker2"});
  auto out2 = apply_upgrade(*resume, {});
  ASSERT_TRUE(out2.ok) << out2.error->error.message;
  EXPECT_EQ(k.applies, 1) << "kubeadm upgrade apply ran again";
  EXPECT_TRUE(out2.applied.empty());
  EXPECT_EQ(k.kubelet["pai-worker2"], "1.32.3");
  EXPECT_TRUE(k.cordoned.empty());
  EXPECT_NE(c.read("config.yaml").find("kube_version: \"1.32.3\""), std::string::npos);
}

}  // namespace
}  // namespace pai::deploy

namespace pai::deploy {
namespace {

TEST(UpgradeUseCase, NotBesideAnotherRunOfTheCluster) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  UpgradeTestCluster k;
  upgrade_test_script(ssh, k);
  auto plan = plan_upgrade(upgrade_test_request(c, "1.31"), upgrade_test_deps(c, ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  {
    LocalLock other;  // a node maintain of the same cluster directory, say
    ASSERT_TRUE(other.acquire(c.dir() + "/.paictl/install.lock", "node maintain").ok());
    auto out = apply_upgrade(*plan, {});
    EXPECT_FALSE(out.ok);
    ASSERT_TRUE(out.error.has_value());
    EXPECT_NE(out.error->error.message.find("another paictl run on this cluster is running "
                                            "(paictl node maintain, pid "),
              std::string::npos)
        << out.error->error.message;
    EXPECT_EQ(k.applies, 0);
    EXPECT_FALSE(ssh.ran("kubeadm upgrade"));
    EXPECT_FALSE(ssh.ran("cordon"));
  }
  // Once it is gone the upgrade runs, its own config push under its lock.
  auto out = apply_upgrade(*plan, {});
  ASSERT_TRUE(out.ok) << out.error->error.message;
  EXPECT_EQ(k.applies, 1);
}

TEST(UpgradeUseCase, ANodeLeftAnnotatedAfterItsUncordonIsReleasedWhenEveryVersionIsDone) {
  // A run killed between a node's uncordon and its annotation's removal: every
  // version is the target's, and still the node is not forgotten.
  usecase_test::TempCluster c;
  testing::ScriptedTransport ssh;
  UpgradeTestCluster k;
  for (auto& [n, v] : k.kubelet) v = "1.31.6";
  k.cp = "1.31.6";
  k.annotation["pai-worker1"] = "upgrade 20261206T000000Z-1";
  upgrade_test_script(ssh, k);
  auto plan = plan_upgrade(upgrade_test_request(c, "1.31"), upgrade_test_deps(c, ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  ASSERT_FALSE(plan->up_to_date());
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_TRUE(plan->steps[0].control_plane_done);
  EXPECT_EQ(plan->steps[0].nodes, std::vector<std::string>{"pai-worker1"});
  auto out = apply_upgrade(*plan, [](const UpgradeEvent&) {});
  ASSERT_TRUE(out.ok) << out.error->error.message;
  EXPECT_EQ(k.applies, 0);
  EXPECT_TRUE(k.annotation.empty());
  EXPECT_TRUE(k.cordoned.empty());
}

TEST(UpgradeUseCase, ARunKilledBeforeKubeVersionWasWrittenWritesIt) {
  // Every node runs the target, config.yaml still says the old release: the
  // run was killed after its last node; a re-run writes kube_version.
  usecase_test::TempCluster c;
  testing::ScriptedTransport ssh;
  UpgradeTestCluster k;
  for (auto& [n, v] : k.kubelet) v = "1.31.6";
  k.cp = "1.31.6";
  upgrade_test_script(ssh, k);
  auto plan = plan_upgrade(upgrade_test_request(c, "1.31"), upgrade_test_deps(c, ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  ASSERT_NE(plan->config_version, "1.31.6");
  ASSERT_FALSE(plan->up_to_date());
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_TRUE(plan->steps[0].nodes.empty());
  auto out = apply_upgrade(*plan, [](const UpgradeEvent&) {});
  ASSERT_TRUE(out.ok) << out.error->error.message;
  EXPECT_EQ(k.applies, 0);
  EXPECT_NE(c.read("config.yaml").find("kube_version: \"1.31.6\""), std::string::npos);
  auto again = plan_upgrade(upgrade_test_request(c, "1.31"), upgrade_test_deps(c, ssh));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->up_to_date());
}

TEST(UpgradeUseCase, TheClusterFilesArePushedWhenTheUpgradeEnds) {
  usecase_test::TempCluster c;
  testing::ScriptedTransport ssh;
  UpgradeTestCluster k;
  upgrade_test_script(ssh, k);
  auto r = upgrade_test_request(c, "1.31");
  r.push_cluster_files = true;
  auto plan = plan_upgrade(r, upgrade_test_deps(c, ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  auto out = apply_upgrade(*plan, [](const UpgradeEvent&) {});
  EXPECT_EQ(k.applies, 1);
  // The push ran on the master after config.yaml changed; this scripted cluster
  // never shows the files as pushed, so the run says so and names config push.
  ASSERT_FALSE(out.ok);
  ASSERT_TRUE(out.error);
  EXPECT_NE(out.error->error.message.find("pushing the cluster files"), std::string::npos)
      << out.error->error.message;
  EXPECT_NE(out.error->error.message.find("paictl config push"), std::string::npos);
  EXPECT_EQ(out.config_version, "1.31.6");
}

}  // namespace
}  // namespace pai::deploy
