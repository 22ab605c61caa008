// The `device-plugin` phase over the scripted transport.

#include <gtest/gtest.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

TEST(DevicePluginPhase, OnlyWhenAHostHasGpus) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& plugin = named(phases, "device-plugin");
  EXPECT_TRUE(plugin.traits().barrier);
  {
    ScriptedHosts run;
    HostRun& m = run.add(master_spec());
    run.add(worker_spec("w1"));
    auto o = observe(plugin, m);
    ASSERT_TRUE(o.status.ok());
    EXPECT_TRUE(o.needs.empty());
    EXPECT_TRUE(run.transport.calls().empty());  // not even read
  }
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  run.add(worker_spec("w1", 8));
  auto o = observe(plugin, m);
  EXPECT_EQ(o.needs, std::vector<std::string>{"apply the NVIDIA device plugin"});
  run.transport.on("get daemonsets,statefulsets,deployments",
                   {.out = kubectl_daemonsets(
                        {daemonset("kube-system", "nvidia-device-plugin-daemonset", "x")})});
  ASSERT_TRUE(plugin.apply(m, o.needs).ok());
  EXPECT_TRUE(run.transport.ran("apply --server-side", "master"));
  EXPECT_NE(input_of(run.transport, "master", "apply --server-side")
                .find("name: nvidia-device-plugin-daemonset"),
            std::string::npos);
  run.transport.on("apply --server-side",
                   {.err = "error: unable to recognize\n", .exit_status = 1});
  auto r = plugin.apply(m, o.needs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "applying the NVIDIA device plugin failed (exit 1): error: unable to recognize");
}

}  // namespace
}  // namespace pai::deploy::phase_test
