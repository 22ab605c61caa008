// The `hived` phase over the scripted transport: HiveD's ConfigMap and
// StatefulSet, one kube-scheduler per VC, their rollouts.

#include <gtest/gtest.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

InstallSettings hived_settings() {
  InstallSettings s = install_settings();
  s.openpai.enabled = true;
  s.openpai.hived_config =
      "physicalCluster:\n  skuTypes:\n    CPU: {cpu: 1, memory: 1Gi}\n"
      "virtualClusters:\n  default:\n    virtualCells: []\n";
  s.openpai.vcs = {"default"};
  return s;
}

TEST(HivedPhase, NothingWithoutHivedsConfig) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& hived = named(phases, "hived");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  std::vector<ObservationRead> reads;
  dynamic_cast<ReadsAhead&>(hived).observation_reads(m, reads);
  EXPECT_TRUE(reads.empty());
  auto o = observe(hived, m);
  ASSERT_TRUE(o.status.ok());
  EXPECT_TRUE(o.needs.empty());
  EXPECT_TRUE(run.transport.calls().empty());
}

TEST(HivedPhase, AppliesHivedAndAVcSchedulerThenIsUpToDate) {
  InstallSettings s = hived_settings();
  auto phases = install_phases(s);
  Phase& hived = named(phases, "hived");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  auto o = observe(hived, m);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs, (std::vector<std::string>{
                         "apply hivedscheduler (ConfigMap, StatefulSet hivedscheduler-hs, Service)",
                         "apply the kube-scheduler of VC default (hivedscheduler-ds-default)"}));

  std::map<std::string, std::string> hashes;
  run.transport.on("get daemonsets,statefulsets,deployments", [&](const testing::ScriptedCall&) {
    return testing::ScriptedAnswer{.out = kubectl_workloads(hashes, "openpai")};
  });
  // The rollouts are read once the manifest is applied.
  run.transport.on("apply --server-side", [&](const testing::ScriptedCall& c) {
    hashes = workload_hashes(c.input);
    return testing::ScriptedAnswer{};
  });
  ASSERT_TRUE(hived.apply(m, o.needs).ok());
  std::string manifest = input_of(run.transport, "master", "apply --server-side");
  EXPECT_NE(manifest.find("kind: Namespace"), std::string::npos);
  EXPECT_NE(manifest.find("name: hivedscheduler-config"), std::string::npos);
  EXPECT_NE(manifest.find("webServerAddress: \":30096\""), std::string::npos);
  ASSERT_EQ(hashes.size(), 2u);
  EXPECT_EQ(hashes.count("statefulset/hivedscheduler-hs"), 1u);
  EXPECT_EQ(hashes.count("statefulset/hivedscheduler-ds-default"), 1u);

  run.transport.on("/api/v1/nodes", {.out = workloads_answer(hashes, "openpai")});
  EXPECT_TRUE(observe(hived, m).needs.empty());
  // Applied, not rolled out yet: waited for, not applied again.
  run.transport.on("/api/v1/nodes", {.out = workloads_answer(hashes, "openpai", false)});
  o = observe(hived, m);
  EXPECT_EQ(o.needs[0],
            "wait for hivedscheduler (ConfigMap, StatefulSet hivedscheduler-hs, Service) to roll "
            "out");
}

TEST(HivedPhase, ARolloutThatNeverEndsIsReportedWithItsPods) {
  InstallSettings s = hived_settings();
  auto phases = install_phases(s);
  Phase& hived = named(phases, "hived");
  ScriptedHosts run;
  FakeClock fc;
  run.run.clock = fc.clock();
  HostRun& m = run.add(master_spec());
  auto o = observe(hived, m);
  run.transport.on("#EVENTS#",
                   {.out = "hivedscheduler-hs-0\tPending\tw1\thivedscheduler ImagePullBackOff,\n"
                           "#EVENTS#\nhivedscheduler-hs-0\tFailed\tpull access denied\n"});
  auto r = hived.apply(m, o.needs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "hivedscheduler (ConfigMap, StatefulSet hivedscheduler-hs, Service): "
            "statefulset/hivedscheduler-hs did not roll out within 5 s (nor "
            "statefulset/hivedscheduler-ds-default); pod hivedscheduler-hs-0: Pending on w1, "
            "hivedscheduler ImagePullBackOff; event Failed on hivedscheduler-hs-0: pull access "
            "denied");
  EXPECT_GE(fc.t, 1005.0);
}

}  // namespace
}  // namespace pai::deploy::phase_test
