// The `checks` phase over the scripted transport: the pre-install checks of
// every host at once, from the fact script's output (a captured run).

#include <gtest/gtest.h>

#include <set>

#include "check/test_support.h"
#include "check/verdict.h"
#include "facts/fact_script.h"
#include "phase_fixture.h"
#include "util/strings.h"

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

// The fact script's output of a fresh host: swap on, no NVIDIA container runtime.
std::string checks_fresh_output() {
  std::string out = check::testing::captured_output();
  auto swap = [&](const std::string& from, const std::string& to) {
    size_t at = out.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) out.replace(at, from.size(), to);
  };
  swap("/proc/meminfo:SwapTotal:             0 kB", "/proc/meminfo:SwapTotal:       1048572 kB");
  swap("Used\t\tPriority\n", "Used\t\tPriority\n/proc/swaps:/swap.img file\t1048572\t0\t-2\n");
  swap("NVIDIA Container Runtime version 1.14.3\ncommit: fake\nspec: 1.1.0-rc.2", "@@missing");
  const std::string bin = "/tmp/th1/hosts/gpu-ok/bin/nvidia-container-runtime";
  swap("nvidia-container-runtime " + bin + "\n", "nvidia-container-runtime \n");
  for (int i = 0; i < 2; ++i) swap("\n" + bin + "\n", "\n@@notfound\n");
  return out;
}

// A host an install marked, whose etcd holds its data, with swap on again.
std::string checks_installed_output() {
  std::string out = checks_fresh_output();
  size_t at = out.find("dir 0 /var/lib/etcd\n");
  EXPECT_NE(at, std::string::npos);
  out.replace(at, 20, "dir 1 /var/lib/etcd\nentry member\n");
  at = out.find("\n@@end paths 0");
  out.insert(at, "\nfile 0 /etc/paictl/cluster");
  return out;
}

// The checks that stop the install, per host, from the phase's hint.
std::set<std::string> checks_phase_errors(const ChecksRun& c) {
  std::set<std::string> out;
  for (size_t i = 0; i < c.hosts.size(); ++i) {
    if (c.status[i].ok()) continue;
    const std::string& hint = c.status[i].error().hint;
    const std::string flag = "--ignore-check-errors ";
    size_t a = hint.find(flag) + flag.size(), b = hint.find(' ', a);
    const std::string names = hint.substr(a, b - a);
    for (auto n : util::split(names, ','))
      out.insert(c.hosts[i]->spec().name + "/" + std::string(n));
  }
  return out;
}

// The checks `check hosts` fails, over the same transport, for `purpose`.
std::set<std::string> checks_check_hosts_errors(ChecksRun& c, check::Purpose purpose) {
  std::vector<inventory::HostPlan> plans;
  for (auto* h : c.hosts) plans.push_back(h->spec().plan);
  check::CollectOptions co;
  co.script = c.s.script;
  auto outcomes = check::collect(c.run.transport, plans, co);
  auto results = check::host_verdicts(outcomes, c.s.eval, {}, purpose, c.s.ignore_checks);
  std::set<std::string> out;
  for (const auto& [host, errors] : check::errors_by_host(results))
    for (const auto& r : errors) out.insert(host + "/" + r.check);
  return out;
}

TEST(ChecksPhase, GivesTheVerdictOfCheckHostsOnTheSameHosts) {
  // w1 fresh (its SKU says 8 GPUs: 4 are there), w2 installed before (4 GPUs).
  ChecksRun c(install_settings(), 8);
  c.run.add(checked(worker_spec("w2", 0, "10.0.0.3"), 4));
  c.hosts = c.run.run.hosts;
  c.status.resize(c.hosts.size());
  c.needs.resize(c.hosts.size());
  c.run.transport.fallback.out = checks_fresh_output();
  // The fact script's bootstrap command (its script comes on stdin).
  c.run.transport.on("read -r pw", testing::ScriptedAnswer{.out = checks_installed_output()}, "w2");
  c.observe_all();
  auto phase = checks_phase_errors(c);
  // What install sets up (swap, the NVIDIA runtime) stops no host; the GPUs do
  // (and what the two captures share: a host name, a machine id, a bad name).
  EXPECT_TRUE(phase.count("w1/GPUCount"));
  EXPECT_FALSE(phase.count("w2/GPUCount"));
  for (const char* c : {"Swap", "NvidiaRuntime", "DefaultRuntimeBinary", "LeftoverEtcd"}) {
    EXPECT_FALSE(phase.count(std::string("w1/") + c)) << c;
    EXPECT_FALSE(phase.count(std::string("w2/") + c)) << c;
  }
  // `check hosts --for install` on the same hosts: the same errors.
  EXPECT_EQ(checks_check_hosts_errors(c, check::Purpose::Install), phase);
  // Its default, on the fresh host: the same too.
  auto by_default = checks_check_hosts_errors(c, check::Purpose::Auto);
  EXPECT_TRUE(by_default.count("w1/GPUCount"));
  EXPECT_FALSE(by_default.count("w1/Swap"));
  for (const auto& e : phase) {
    if (e.starts_with("w1/")) {
      EXPECT_TRUE(by_default.count(e)) << e;
    }
  }
  // An installed host is judged as running by default: swap on is an error
  // there, install's own etcd is not.
  EXPECT_TRUE(by_default.count("w2/Swap"));
  EXPECT_FALSE(by_default.count("w2/LeftoverEtcd"));
  // The strict view: every host's swap and NVIDIA runtime count.
  auto running = checks_check_hosts_errors(c, check::Purpose::Running);
  EXPECT_TRUE(running.count("w1/Swap"));
  EXPECT_TRUE(running.count("w1/NvidiaRuntime"));
  EXPECT_TRUE(running.count("w1/DefaultRuntimeBinary"));
  // On the marked host its etcd's data is the install's own, in every view.
  EXPECT_FALSE(running.count("w2/LeftoverEtcd"));
}

}  // namespace
}  // namespace pai::deploy::phase_test
