// The `swap` phase over the scripted transport.

#include <gtest/gtest.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

TEST(SwapPhase, NeedsSwapOffAndTheFstabLinesCommentedOut) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& swap = named(phases, "swap");
  ScriptedHosts run;
  HostRun& h = run.add(worker_spec("w1"));
  run.transport.on("/proc/swaps", {.out = "active=2\nfstab=1\n"});
  auto o = observe(swap, h);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs, (std::vector<std::string>{"turn swap off (2 active)",
                                               "comment out 1 swap line(s) in /etc/fstab"}));
  // Done: nothing active, no line left.
  run.transport.on("/proc/swaps", {.out = "active=0\nfstab=0\n"});
  EXPECT_TRUE(observe(swap, h).needs.empty());
}

TEST(SwapPhase, ApplyTurnsSwapOffAndMarksTheLinesForReset) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  ScriptedHosts run;
  HostRun& h = run.add(worker_spec("w1"));
  ASSERT_TRUE(named(phases, "swap").apply(h, {"turn swap off (1 active)"}).ok());
  ASSERT_EQ(run.transport.calls().size(), 1u);
  const std::string script = run.transport.calls()[0].script;
  EXPECT_EQ(script.rfind("set -e\n", 0), 0u);
  EXPECT_NE(script.find("swapoff -a"), std::string::npos);
  EXPECT_NE(script.find("# paictl: \\1"), std::string::npos);  // reset puts them back
}

TEST(SwapPhase, AFailedStepSaysWhatFailedAndWhy) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  ScriptedHosts run;
  HostRun& h = run.add(worker_spec("w1"));
  run.transport.on("swapoff",
                   {.err = "swapoff: /swap.img: Operation not permitted\n", .exit_status = 255});
  auto r = named(phases, "swap").apply(h, {"turn swap off (1 active)"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "turning swap off failed (exit 255): swapoff: /swap.img: Operation not permitted");
  EXPECT_EQ(r.error().kind, util::Error::Kind::Remote);
  // An unreachable host.
  run.transport.unreachable("w1");
  auto o = observe(named(phases, "swap"), h);
  ASSERT_FALSE(o.status.ok());
  EXPECT_NE(o.status.error().message.find("observing swap: connection to w1 refused"),
            std::string::npos);
}

}  // namespace
}  // namespace pai::deploy::phase_test
