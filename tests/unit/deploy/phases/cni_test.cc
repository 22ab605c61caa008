// The `cni` phase (flannel) over the scripted transport: a manifest applied on
// the master, recognised by its hash, its rollout waited for.

#include <gtest/gtest.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

TEST(CniPhase, AppliesFlannelWithTheSmallestMtuThenIsUpToDate) {
  InstallSettings s = install_settings();
  s.tunnel_mtu = 1400;  // a hybrid cluster's link
  auto phases = install_phases(s);
  Phase& cni = named(phases, "cni");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  HostRun& w = run.add(worker_spec("w1"));
  m.facts()["mtu"] = 1500;
  w.facts()["mtu"] = 9000;
  auto o = observe(cni, m);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs, std::vector<std::string>{"apply flannel (VXLAN)"});

  run.transport.on(
      "get daemonsets,statefulsets,deployments",
      {.out = kubectl_daemonsets({daemonset("kube-flannel", "kube-flannel-ds", "x")})});
  ASSERT_TRUE(cni.apply(m, o.needs).ok());
  auto applied = run.transport.calls_to("master");
  std::string manifest;
  for (const auto& c : applied)
    if (c.script.find("apply --server-side --field-manager=paictl") != std::string::npos)
      manifest = c.input;
  ASSERT_FALSE(manifest.empty());
  EXPECT_NE(manifest.find("\"MTU\": 1350"), std::string::npos);  // 1400 - VXLAN's 50
  EXPECT_NE(manifest.find("10.244.0.0/16"), std::string::npos);
  // Its hash on the DaemonSet: up to date.
  std::string hash = yaml_value(manifest, "paictl.io/config-hash", "name: kube-flannel-ds");
  ASSERT_EQ(hash.size(), 16u) << manifest;
  run.transport.on(
      "/api/v1/nodes",
      {.out = api_answer("DaemonSetList", {daemonset("kube-flannel", "kube-flannel-ds", hash)},
                         "apps/v1")});
  EXPECT_TRUE(observe(cni, m).needs.empty());
}

TEST(CniPhase, ARolloutThatNeverEndsFailsAfterTheWaitOnTheRunsClock) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& cni = named(phases, "cni");
  ScriptedHosts run;
  FakeClock fc;
  run.run.clock = fc.clock();
  HostRun& m = run.add(master_spec());
  run.transport.on(
      "get daemonsets,statefulsets,deployments",
      {.out = kubectl_daemonsets({daemonset("kube-flannel", "kube-flannel-ds", "x", false)})});
  auto r = cni.apply(m, {"apply flannel (VXLAN)"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "waiting for flannel (VXLAN): daemonset/kube-flannel-ds did not roll out within 5 s");
  EXPECT_GE(fc.t, 1005.0);
  // The apply itself failing.
  run.transport.on("apply --server-side",
                   {.err = "error: no objects passed to apply\n", .exit_status = 1});
  r = cni.apply(m, {"apply flannel (VXLAN)"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "applying flannel (VXLAN) failed (exit 1): error: no objects passed to apply");
}

}  // namespace
}  // namespace pai::deploy::phase_test
