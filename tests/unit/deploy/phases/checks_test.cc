// The `checks` phase over the scripted transport: the pre-install checks of
// every host at once, from the fact script's output (a captured run).

#include <gtest/gtest.h>

#include "check/test_support.h"
#include "facts/fact_script.h"
#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

HostSpec checked(HostSpec h, int gpus) {
  h.plan.name = h.name;
  h.plan.address = h.address;
  h.plan.hostip = h.address;
  h.plan.master = h.master;
  h.plan.worker = !h.master;
  h.plan.from_layout = true;
  h.plan.sku = check::testing::gpu_sku(gpus);
  h.plan.target = h.target;
  return h;
}

struct ChecksRun {
  ChecksRun(InstallSettings settings, int gpus) : s(std::move(settings)) {
    phases = install_phases(s);
    run.transport.fallback.out = check::testing::captured_output();
    run.add(checked(worker_spec("w1"), gpus));
    hosts = run.run.hosts;
    status.resize(hosts.size());
    needs.resize(hosts.size());
  }
  ClusterWidePhase& checks() { return dynamic_cast<ClusterWidePhase&>(named(phases, "checks")); }
  void observe_all() { checks().observe_all(hosts, status, needs); }
  InstallSettings s;
  PhaseList phases;
  ScriptedHosts run;
  std::vector<HostRun*> hosts;
  std::vector<util::Result<void>> status;
  std::vector<std::vector<std::string>> needs;
};

TEST(ChecksPhase, ACheckThatFailsStopsTheHostUnlessIgnored) {
  // The SKU says 8 GPUs; the captured host has fewer.
  ChecksRun c(install_settings(), 8);
  EXPECT_TRUE(c.checks().traits().cluster_wide);
  EXPECT_TRUE(c.checks().traits().read_only);
  c.observe_all();
  ASSERT_FALSE(c.status[0].ok());
  const std::string& why = c.status[0].error().message;
  EXPECT_EQ(why.rfind("pre-install checks failed: ", 0), 0u) << why;
  EXPECT_NE(c.status[0].error().hint.find("--ignore-check-errors "), std::string::npos);
  EXPECT_TRUE(c.needs[0].empty());  // checks never apply anything
  // The fact script ran once, as `check hosts` runs it.
  EXPECT_EQ(c.run.transport.calls().size(), 1u);
  EXPECT_EQ(c.run.transport.calls()[0].command, facts::bootstrap_command());

  InstallSettings all = install_settings();
  all.ignore_checks = {"all"};
  ChecksRun ignored(all, 8);
  ignored.observe_all();
  EXPECT_TRUE(ignored.status[0].ok());
}

TEST(ChecksPhase, TheFactScriptReadAheadIsServedWithoutAnotherSession) {
  InstallSettings all = install_settings();
  all.ignore_checks = {"all"};
  ChecksRun c(all, 4);
  std::vector<ObservationRead> reads;
  dynamic_cast<ReadsAhead&>(c.checks()).observation_reads(*c.hosts[0], reads);
  ASSERT_EQ(reads.size(), 1u);  // logged in as root: the fact script with its arguments
  EXPECT_EQ(reads[0].script.rfind("set -- root \"${SSH_CONNECTION:-}\"\n", 0), 0u);
  remote::ExecResult held;
  held.out = check::testing::captured_output();
  held.exit_status = 0;
  c.hosts[0]->observations().keep(reads[0].script, held);
  c.observe_all();
  EXPECT_TRUE(c.status[0].ok());
  EXPECT_TRUE(c.run.transport.calls().empty());
}

TEST(ChecksPhase, AnUnreachableHostIsAFailureOfItsOwn) {
  InstallSettings all = install_settings();
  all.ignore_checks = {"all"};
  ChecksRun c(all, 4);
  c.run.transport.unreachable("w1");
  c.observe_all();
  ASSERT_FALSE(c.status[0].ok());
  EXPECT_EQ(c.status[0].error().message,
            "the pre-install checks did not run: connection to w1 refused");
}

}  // namespace
}  // namespace pai::deploy::phase_test
