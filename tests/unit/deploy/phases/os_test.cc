// The `os` phase over the scripted transport: what it records of a host, the
// systems it refuses, a lock left by a killed run.

#include <gtest/gtest.h>
#include <unistd.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

TEST(OsPhase, RecordsTheHostAndChangesNothing) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& os = named(phases, "os");
  EXPECT_TRUE(os.traits().read_only);
  EXPECT_TRUE(os.traits().cluster_scope);
  ScriptedHosts run;
  HostRun& fresh = run.add(worker_spec("w1"));
  HostRun& done = run.add(worker_spec("w2"));
  run.transport.on(". /etc/os-release",
                   {.out = "os_id=ubuntu\nos_version=22.04\nos_name=Ubuntu 22.04\nmtu=1450\n"});
  run.transport.on(". /etc/os-release",
                   {.out = "os_id=debian\nos_version=12\nmtu=9000\nours=1\njoined=1\n"}, "w2");
  auto o = observe(os, fresh);
  ASSERT_TRUE(o.status.ok());
  EXPECT_TRUE(o.needs.empty());
  EXPECT_EQ(fresh.facts()["os_id"], "ubuntu");
  EXPECT_EQ(fresh.facts()["mtu"], 1450);
  EXPECT_EQ(fresh.facts()["ours"], false);
  o = observe(os, done);
  ASSERT_TRUE(o.status.ok());
  EXPECT_TRUE(o.needs.empty());
  EXPECT_EQ(done.facts()["ours"], true);  // this cluster's install reached it
  // Nothing to apply: it runs no command.
  size_t before = run.transport.calls().size();
  EXPECT_TRUE(os.apply(fresh, {"anything"}).ok());
  EXPECT_EQ(run.transport.calls().size(), before);
}

TEST(OsPhase, RefusesAnUnsupportedSystemBeforeAnythingChanges) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  ScriptedHosts run;
  HostRun& h = run.add(worker_spec("w1"));
  run.transport.on(". /etc/os-release", {.out = "os_id=centos\nos_version=7\n"});
  auto o = observe(named(phases, "os"), h);
  ASSERT_FALSE(o.status.ok());
  EXPECT_EQ(o.status.error().message, "centos 7 is not supported by paictl install");
  EXPECT_NE(o.status.error().hint.find("Debian 12"), std::string::npos);
  // No /etc/os-release at all.
  run.transport.on(". /etc/os-release", {.out = "os_id=\nos_version=\n"});
  o = observe(named(phases, "os"), h);
  ASSERT_FALSE(o.status.ok());
  EXPECT_NE(o.status.error().message.find("an unknown OS"), std::string::npos);
  // The script itself failing is a failed observation.
  run.transport.on(". /etc/os-release", {.err = "sh: 1: syntax error", .exit_status = 2});
  o = observe(named(phases, "os"), h);
  ASSERT_FALSE(o.status.ok());
  EXPECT_NE(o.status.error().message.find("observing the OS failed (exit 2)"), std::string::npos);
}

TEST(OsPhase, ALockOfAKilledRunOnThisMachineIsANeed) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  ScriptedHosts run;
  HostRun& h = run.add(worker_spec("w1"));
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  // A pid that cannot be running: the largest the kernel gives is far below it.
  std::string dead = std::string(host) + " 2147483000 run-1 2024";
  run.transport.on(". /etc/os-release",
                   {.out = "os_id=ubuntu\nos_version=24.04\nlock=" + dead + "\n"});
  auto o = observe(named(phases, "os"), h);
  ASSERT_TRUE(o.status.ok());
  ASSERT_EQ(o.needs.size(), 1u);
  EXPECT_NE(o.needs[0].find("remove the install lock of a run that is gone"), std::string::npos);
  // Another machine's lock is not this run's to take.
  run.transport.on(". /etc/os-release",
                   {.out = "os_id=ubuntu\nos_version=24.04\nlock=elsewhere 12 run-2 2024\n"});
  o = observe(named(phases, "os"), h);
  EXPECT_TRUE(o.needs.empty());
}

}  // namespace
}  // namespace pai::deploy::phase_test
