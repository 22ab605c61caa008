// The `verify` phase over the scripted transport, its wait on a fake clock.

#include <gtest/gtest.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

TEST(VerifyPhase, EveryNodeReadyAndEveryGpuAllocatable) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& verify = named(phases, "verify");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  run.add(worker_spec("w1", 4));
  run.transport.on("/api/v1/nodes",
                   {.out = api_answer("NodeList", {node("master"), node("w1", false, {}, 2)})});
  auto o = observe(verify, m);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs, (std::vector<std::string>{"wait for node w1 to be Ready",
                                               "wait for 4 allocatable GPUs on w1 (now 2)"}));
  run.transport.on("/api/v1/nodes",
                   {.out = api_answer("NodeList", {node("master"), node("w1", true, {}, 4)})});
  EXPECT_TRUE(observe(verify, m).needs.empty());
}

TEST(VerifyPhase, ApplyWaitsOnTheRunsClockUntilTheNodesAreReady) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& verify = named(phases, "verify");
  ScriptedHosts run;
  FakeClock fc;
  run.run.clock = fc.clock();
  HostRun& m = run.add(master_spec());
  run.add(worker_spec("w1"));
  // Ready at the third look.
  size_t looks = 0;
  run.transport.on("/api/v1/nodes", [&](const testing::ScriptedCall&) {
    return testing::ScriptedAnswer{
        .out = api_answer("NodeList", {node("master"), node("w1", ++looks >= 3)})};
  });
  ASSERT_TRUE(verify.apply(m, {"wait for node w1 to be Ready"}).ok());
  EXPECT_EQ(looks, 3u);
  EXPECT_EQ(fc.sleeps, (std::vector<double>{0.1, 0.2}));
  // Never Ready: the failure says what is still missing after the wait.
  run.transport.on("/api/v1/nodes",
                   {.out = api_answer("NodeList", {node("master"), node("w1", false)})});
  auto r = verify.apply(m, {"wait for node w1 to be Ready"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "after 5 s: wait for node w1 to be Ready");
  EXPECT_NE(r.error().hint.find("journalctl -u kubelet"), std::string::npos);
}

}  // namespace
}  // namespace pai::deploy::phase_test
