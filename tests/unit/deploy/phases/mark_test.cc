// The `mark` phase over the scripted transport.

#include <gtest/gtest.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

TEST(MarkPhase, RecordsTheClusterAndTheStateBeforeInstallOnce) {
  InstallSettings s = install_settings();
  s.cluster_name = "lab";
  auto phases = install_phases(s);
  Phase& mark = named(phases, "mark");
  ScriptedHosts run;
  HostRun& h = run.add(worker_spec("w1"));
  auto o = observe(mark, h);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs, std::vector<std::string>{
                         "record the host as part of cluster lab (/etc/paictl/cluster)"});
  // The observation compares the file with the cluster's name on the host.
  EXPECT_NE(run.transport.calls().back().script.find("= lab ]"), std::string::npos);
  run.transport.on("/etc/paictl/cluster", {.out = "marked=1\n"});
  EXPECT_TRUE(observe(mark, h).needs.empty());

  ASSERT_TRUE(mark.apply(h, o.needs).ok());
  const std::string script = run.transport.calls().back().script;
  // What was there before is recorded only when not recorded yet.
  EXPECT_NE(script.find("[ -f /etc/paictl/packages.before ] || dpkg-query"), std::string::npos);
  EXPECT_NE(script.find("[ -f /etc/paictl/modules.before ] ||"), std::string::npos);
  EXPECT_NE(script.find("printf '%s' 'lab\n' > /etc/paictl/cluster.paictl-new"), std::string::npos);

  run.transport.on("mkdir -p /etc/paictl",
                   {.err = "mkdir: Read-only file system", .exit_status = 1});
  auto r = mark.apply(h, o.needs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("recording the host's state before install failed"),
            std::string::npos);
}

}  // namespace
}  // namespace pai::deploy::phase_test
