// The `endpoints` phase: the gateway asked from this machine, its wait on the
// run's clock. (What answered what is check_endpoints', tested with a fake
// HTTP client in tests/unit/deploy/openpai_test.cc.)

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "deploy/phases/workloads.h"
#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

// A loopback port nothing listens on (one the kernel just gave and took back).
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  ::close(fd);
  return ntohs(a.sin_port);
}

TEST(EndpointsPhase, NothingToAskWithoutTheServices) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  auto o = observe(named(phases, "endpoints"), m);
  ASSERT_TRUE(o.status.ok());
  EXPECT_TRUE(o.needs.empty());
}

TEST(EndpointsPhase, AGatewayThatDoesNotAnswerIsWaitedForOnTheRunsClock) {
  InstallSettings s = install_settings();
  s.openpai.enabled = true;
  s.openpai.pylon_port = closed_port();
  auto phases = install_phases(s);
  Phase& endpoints = named(phases, "endpoints");
  ScriptedHosts run;
  FakeClock fc;
  run.run.clock = fc.clock();
  HostSpec master = master_spec();
  master.address = "127.0.0.1";
  HostRun& m = run.add(master);
  const std::string url =
      "http://127.0.0.1:" + std::to_string(s.openpai.pylon_port) + "/rest-server/api/v2/info";
  auto o = observe(endpoints, m);
  ASSERT_TRUE(o.status.ok());
  ASSERT_EQ(o.needs.size(), 1u);
  EXPECT_NE(o.needs[0].find("wait for an answer (now the gateway's " + url + " did not answer"),
            std::string::npos)
      << o.needs[0];
  auto r = endpoints.apply(m, o.needs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("after 5 s: GET " + url + " did not answer", 0), 0u)
      << r.error().message;
  // 0.1 s, 0.2 s, 0.4 s, then every 0.5 s, on the fake clock: no real sleep.
  ASSERT_GE(fc.sleeps.size(), 4u);
  EXPECT_EQ(fc.sleeps[0], 0.1);
  EXPECT_EQ(fc.sleeps[3], 0.5);
  EXPECT_GE(fc.t, 1005.0);
  EXPECT_TRUE(run.transport.calls().empty());  // asked from here, not on a host
}

// A plan on fresh hosts: the services the hived and openpai phases have still
// to install cannot answer, and that is what the apply waits for, not a
// connection failure to show.
TEST(EndpointsPhase, APlanDoesNotReportServicesNotInstalledYetAsUnanswered) {
  InstallSettings s = install_settings();
  s.openpai.enabled = true;
  s.openpai.pylon_port = closed_port();
  s.openpai.hived_config = "physicalCluster: {}\n";
  auto phases = install_phases(s);
  ScriptedHosts run;
  run.run.dry_run = true;
  HostSpec master = master_spec();
  master.address = "127.0.0.1";
  HostRun& m = run.add(master);
  const std::string gw = "http://127.0.0.1:" + std::to_string(s.openpai.pylon_port);
  // Installed services that do not answer: the problem as it is.
  auto o = observe(named(phases, "endpoints"), m);
  ASSERT_FALSE(o.needs.empty());
  EXPECT_NE(o.needs[0].find("did not answer"), std::string::npos) << o.needs[0];
  // Services the plan installs first (the workloads phase's fact): what the apply waits for.
  m.facts()[phases::kServicesPendingFact] = true;
  o = observe(named(phases, "endpoints"), m);
  ASSERT_TRUE(o.status.ok());
  ASSERT_EQ(o.needs.size(), 1u);
  EXPECT_EQ(o.needs[0], "wait for the gateway " + gw +
                            " and HiveD http://127.0.0.1:30096 to answer once the services above "
                            "are installed");
  EXPECT_EQ(o.needs[0].find("did not answer"), std::string::npos);
}

// The openpai (and hived) phase says so when its services are not installed.
TEST(EndpointsPhase, TheWorkloadsPhasesMarkTheirServicesPending) {
  InstallSettings s = install_settings();
  s.openpai.enabled = true;
  s.openpai.admin_password = remote::Secret("pw-123456");
  auto phases = install_phases(s);
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  auto o = observe(named(phases, "openpai"), m);
  ASSERT_TRUE(o.status.ok());
  ASSERT_FALSE(o.needs.empty());
  EXPECT_TRUE(m.facts().value(phases::kServicesPendingFact, false));
}

}  // namespace
}  // namespace pai::deploy::phase_test
