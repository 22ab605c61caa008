// The catalogue's ByInstall column and the verdicts judge() draws from it:
// what install sets up itself is Status::Install before an install and an
// error on a running cluster; what install cannot fix is an error either way.
#include "check/verdict.h"

#include <gtest/gtest.h>

#include <set>

#include "check/report.h"
#include "test_support.h"

using namespace pai::check;
using namespace pai::check::testing;

namespace {

// A fresh host as a new operator has it: swap on, no container runtime, no
// NVIDIA container runtime, no kernel module loaded, no sysctl set.
HostOutcome verdict_fresh_host(const std::string& name = "gpu-ok",
                               const std::string& ip = "127.0.2.3") {
  HostOutcome h = good_host(name, ip);
  h.facts.swap.devices.push_back({"/swap.img", "file", 1 << 30});
  h.facts.docker = {};
  h.facts.daemon_json = {};
  h.facts.nvidia.container_runtime_present = false;
  h.facts.kernel_modules.clear();
  h.facts.ip_forward = 0;
  // Its clock is synchronised (the capture's host could not tell): no warning left.
  h.facts.clock.ntp_known = h.facts.clock.ntp_synchronized = true;
  h.facts.clock.ntp_source = "chronyc";
  return h;
}

void verdict_mark_installed(HostOutcome& h) {
  h.facts.paths.push_back({"/etc/paictl/cluster", true, false, true, 0, {}});
}

std::set<std::string> verdict_failing(const std::vector<CheckResult>& rs) {
  std::set<std::string> out;
  for (const auto& r : rs)
    if (r.status == Status::Fail) out.insert(r.host + "/" + r.check);
  return out;
}

ByInstall verdict_by_install(const char* name) {
  const CheckInfo* c = find_check(name);
  EXPECT_NE(c, nullptr) << name;
  return c ? c->install : ByInstall::Cannot;
}

}  // namespace

TEST(VerdictTable, SaysForEveryCheckWhetherInstallFixesIt) {
  for (const char* n : {"Swap", "Docker", "NvidiaRuntime", "DefaultRuntime", "KernelModules",
                        "IPForward", "BridgeNetfilter", "DefaultRuntimeBinary", "DaemonJson"})
    EXPECT_EQ(verdict_by_install(n), ByInstall::SetsUp) << n;
  for (const char* n : {"NvidiaSmi", "GPUCount", "GPUModel", "DriverVersion", "DiskFree", "CPU",
                        "Memory", "MemoryAvailable", "DNS", "ClockSkew", "NTP", "HostIP",
                        "HostnameValid", "KernelVersion", "Reachable", "UniqueMachine"})
    EXPECT_EQ(verdict_by_install(n), ByInstall::Cannot) << n;
  for (const char* n :
       {"Port-6443", "LeftoverEtcd", "LeftoverKubernetes", "LeftoverKubelet", "RunningKubernetes"})
    EXPECT_EQ(verdict_by_install(n), ByInstall::Keeps) << n;
  for (const auto& c : catalogue())
    EXPECT_EQ(c.install_does.empty(), c.install == ByInstall::Cannot) << c.name;
  EXPECT_EQ(to_string(ByInstall::SetsUp), "sets-up");
  EXPECT_EQ(to_string(Status::Install), "install");
}

TEST(VerdictTable, PurposesParse) {
  EXPECT_EQ(parse_purpose("auto"), Purpose::Auto);
  EXPECT_EQ(parse_purpose("install"), Purpose::Install);
  EXPECT_EQ(parse_purpose("running"), Purpose::Running);
  EXPECT_EQ(parse_purpose("strict"), std::nullopt);
}

TEST(Verdict, BeforeAnInstallWhatInstallSetsUpIsNoError) {
  std::vector<HostOutcome> hosts = {verdict_fresh_host()};
  auto found = evaluate(hosts, eval_options());
  // The checks themselves still find it all.
  EXPECT_EQ(status_of(found, "gpu-ok", "Swap"), Status::Fail);
  EXPECT_EQ(status_of(found, "gpu-ok", "Docker"), Status::Fail);
  EXPECT_EQ(status_of(found, "gpu-ok", "NvidiaRuntime"), Status::Fail);
  EXPECT_EQ(status_of(found, "gpu-ok", "DefaultRuntime"), Status::Fail);
  EXPECT_EQ(exit_code(summarize(found, 1), false), 1);

  for (Purpose p : {Purpose::Install, Purpose::Auto}) {
    auto rs = host_verdicts(hosts, eval_options(), {}, p, {});
    for (const char* c : {"Swap", "Docker", "NvidiaRuntime", "DefaultRuntime", "KernelModules",
                          "IPForward", "Binaries"})
      EXPECT_EQ(status_of(rs, "gpu-ok", c), Status::Install) << c;
    EXPECT_TRUE(verdict_failing(rs).empty()) << *verdict_failing(rs).begin();
    EXPECT_EQ(find(rs, "gpu-ok", "Swap")->message, find(found, "gpu-ok", "Swap")->message);
    EXPECT_NE(find(rs, "gpu-ok", "Swap")->hint.find("turns swap off"), std::string::npos);
    Summary s = summarize(rs, 1);
    EXPECT_EQ(s.fail, 0u);
    EXPECT_EQ(s.install, 7u);
    EXPECT_EQ(exit_code(s, false), 0);
    EXPECT_EQ(s.warn, 0u);
    EXPECT_EQ(exit_code(s, true), 0);  // not a warning either
    EXPECT_TRUE(errors_by_host(rs).empty());
  }
}

TEST(Verdict, WhatInstallCannotFixStaysAnError) {
  HostOutcome h = verdict_fresh_host();
  h.facts.gpus.pop_back();  // 3 GPUs where the SKU says 4
  h.facts.dns.push_back({"registry.example", false});
  auto rs = host_verdicts({h}, eval_options(), {}, Purpose::Install, {});
  EXPECT_EQ(verdict_failing(rs), (std::set<std::string>{"gpu-ok/GPUCount", "gpu-ok/DNS"}));
  EXPECT_EQ(status_of(rs, "gpu-ok", "Swap"), Status::Install);
  EXPECT_EQ(exit_code(summarize(rs, 1), false), 1);
  auto errors = errors_by_host(rs);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors["gpu-ok"].size(), 2u);
}

TEST(Verdict, OnARunningClusterTheSameChecksAreErrorsAgain) {
  std::vector<HostOutcome> hosts = {verdict_fresh_host()};
  auto rs = host_verdicts(hosts, eval_options(), {}, Purpose::Running, {});
  EXPECT_EQ(status_of(rs, "gpu-ok", "Swap"), Status::Fail);
  EXPECT_EQ(status_of(rs, "gpu-ok", "Docker"), Status::Fail);
  EXPECT_EQ(status_of(rs, "gpu-ok", "NvidiaRuntime"), Status::Fail);
  EXPECT_EQ(status_of(rs, "gpu-ok", "DefaultRuntime"), Status::Fail);
  EXPECT_EQ(status_of(rs, "gpu-ok", "KernelModules"), Status::Warn);
  EXPECT_EQ(summarize(rs, 1).install, 0u);
  // Auto: a host with an install's marker is judged as running.
  verdict_mark_installed(hosts[0]);
  EXPECT_TRUE(host_installed(hosts[0].facts));
  EXPECT_EQ(purpose_for(Purpose::Auto, hosts[0].facts), Purpose::Running);
  auto a = host_verdicts(hosts, eval_options(), {}, Purpose::Auto, {});
  EXPECT_EQ(verdict_failing(a), verdict_failing(rs));
}

TEST(Verdict, AutoJudgesEachHostByItsOwnMarker) {
  HostOutcome installed = verdict_fresh_host("old", "10.0.0.1"),
              fresh = verdict_fresh_host("new", "10.0.0.2");
  installed.facts.paths.push_back({"/etc/kubernetes/kubelet.conf", true, false, true, 0, {}});
  EXPECT_TRUE(host_installed(installed.facts));
  EXPECT_FALSE(host_installed(fresh.facts));
  auto rs = host_verdicts({installed, fresh}, eval_options(), {}, Purpose::Auto, {});
  EXPECT_EQ(status_of(rs, "old", "Swap"), Status::Fail);
  EXPECT_EQ(status_of(rs, "new", "Swap"), Status::Install);
}

TEST(Verdict, LeftoversAreInstallsOwnOnlyOnHostsItMarked) {
  HostOutcome h = good_host();
  for (auto& p : h.facts.paths)
    if (p.path == "/var/lib/etcd") p.entries = 1, p.sample = {"member"};
  h.facts.processes = {"kubelet"};
  h.facts.listening.push_back({"0.0.0.0", 10250, false});
  // Leftovers of some earlier install: install cannot fix them, whatever the purpose.
  for (Purpose p : {Purpose::Install, Purpose::Running, Purpose::Auto}) {
    auto rs = host_verdicts({h}, eval_options(), {}, p, {});
    EXPECT_EQ(verdict_failing(rs),
              (std::set<std::string>{"gpu-ok/LeftoverEtcd", "gpu-ok/RunningKubernetes",
                                     "gpu-ok/Port-10250"}));
  }
  // On a host an install marked, they are that install's own.
  verdict_mark_installed(h);
  auto before = host_verdicts({h}, eval_options(), {}, Purpose::Install, {});
  EXPECT_TRUE(verdict_failing(before).empty());
  EXPECT_EQ(status_of(before, "gpu-ok", "LeftoverEtcd"), Status::Install);
  EXPECT_EQ(status_of(before, "gpu-ok", "Port-10250"), Status::Install);
  auto running = host_verdicts({h}, eval_options(), {}, Purpose::Running, {});
  EXPECT_TRUE(verdict_failing(running).empty());
  EXPECT_EQ(status_of(running, "gpu-ok", "RunningKubernetes"), Status::Pass);
  EXPECT_NE(find(running, "gpu-ok", "RunningKubernetes")->message.find("expected"),
            std::string::npos);
}

TEST(Verdict, IgnoringAFixedCheckLeavesItToInstallAndDemotesTheRest) {
  HostOutcome h = verdict_fresh_host();
  h.facts.gpus.pop_back();
  auto rs = host_verdicts({h}, eval_options(), {}, Purpose::Install, {"Swap", "GPUCount"});
  EXPECT_EQ(status_of(rs, "gpu-ok", "Swap"), Status::Install);
  EXPECT_FALSE(find(rs, "gpu-ok", "Swap")->demoted);
  EXPECT_EQ(status_of(rs, "gpu-ok", "GPUCount"), Status::Warn);
  EXPECT_TRUE(find(rs, "gpu-ok", "GPUCount")->demoted);
  EXPECT_EQ(exit_code(summarize(rs, 1), false), 0);
}

TEST(Verdict, AnUnreachableHostIsJudgedAsBefore) {
  HostOutcome h = verdict_fresh_host();
  h.reached = false;
  h.exec.error = "connection refused";
  auto rs = host_verdicts({h}, eval_options(), {}, Purpose::Install, {});
  EXPECT_EQ(status_of(rs, "gpu-ok", "Reachable"), Status::Fail);
  EXPECT_EQ(exit_code(summarize(rs, 1), false), 3);
}

TEST(Verdict, EveryReportShowsTheInstallStatus) {
  std::vector<HostOutcome> hosts = {verdict_fresh_host()};
  auto rs = host_verdicts(hosts, eval_options(), {}, Purpose::Install, {});
  ReportContext ctx;
  ctx.hosts = &hosts;
  std::string text = write_text_report(rs, ctx, {});
  EXPECT_NE(text.find("INST  Swap"), std::string::npos) << text;
  EXPECT_NE(text.find("install will do this: turns swap off"), std::string::npos) << text;
  EXPECT_NE(text.find("HOST    PASS  WARN  FAIL  SKIP  INST  RESULT"), std::string::npos) << text;
  EXPECT_NE(text.find("7 findings on 1 host that paictl install sets right itself"),
            std::string::npos)
      << text;
  TextReportOptions quiet;
  quiet.quiet = true;
  EXPECT_EQ(write_text_report(rs, ctx, quiet).find("INST"), std::string::npos);

  auto json = write_json_report(rs, ctx);
  EXPECT_EQ(json["summary"]["install"], 7);
  EXPECT_EQ(json["summary"]["exit_code"], 0);
  bool swap = false;
  for (const auto& r : json["results"])
    if (r["check"] == "Swap") swap = r["status"] == "install";
  EXPECT_TRUE(swap);

  std::string junit = write_junit_report(rs, ctx);
  EXPECT_NE(junit.find("failures=\"0\""), std::string::npos);
  EXPECT_NE(junit.find("<system-out>install will do this: swap is on"), std::string::npos) << junit;

  auto sarif = write_sarif_report(rs, ctx, "test");
  bool note = false;
  for (const auto& r : sarif["runs"][0]["results"])
    if (r["ruleId"] == "Swap") note = r["level"] == "note";
  EXPECT_TRUE(note) << dump(sarif);
}

namespace {

// A GPU host of a cluster paictl installed: no Docker, containerd running with
// its CRI plugin and nvidia as its default runtime, as install's containerd
// phase leaves it; its fact-script section as the script prints it.
HostOutcome verdict_containerd_host(const std::string& default_runtime = "nvidia") {
  HostOutcome h = verdict_fresh_host();
  h.facts.swap.devices.clear();
  h.facts.nvidia.container_runtime_present = true;
  std::string section =
      "@@paictl-facts 1\n@@begin containerd\n"
      "containerd github.com/containerd/containerd v1.7.12 testbed\n"
      "@@active active\n"
      "@@cfg disabled_plugins = []\n" +
      (default_runtime.empty() ? std::string()
                               : "@@cfg default_runtime_name = \"" + default_runtime + "\"\n") +
      "\n@@end containerd 0\n";
  pai::facts::HostFacts parsed;
  pai::facts::parse_fact_output(section, 0, parsed);
  h.facts.containerd_present = parsed.containerd_present;
  h.facts.containerd_version = parsed.containerd_version;
  h.facts.containerd_active = parsed.containerd_active;
  h.facts.containerd_default_runtime = parsed.containerd_default_runtime;
  h.facts.containerd_cri = parsed.containerd_cri;
  verdict_mark_installed(h);
  return h;
}

}  // namespace

TEST(Verdict, ARunningContainerdClusterIsJudgedByContainerdNotDocker) {
  HostOutcome h = verdict_containerd_host();
  EXPECT_TRUE(h.facts.containerd_active);
  EXPECT_TRUE(h.facts.containerd_cri);
  EXPECT_EQ(h.facts.containerd_version, "v1.7.12");
  EXPECT_EQ(h.facts.containerd_default_runtime, "nvidia");
  auto rs = host_verdicts({h}, eval_options(), {}, Purpose::Running, {});
  EXPECT_EQ(status_of(rs, "gpu-ok", "Docker"), Status::Pass);
  EXPECT_NE(find(rs, "gpu-ok", "Docker")->message.find("containerd v1.7.12 runs with its CRI"),
            std::string::npos)
      << find(rs, "gpu-ok", "Docker")->message;
  EXPECT_EQ(status_of(rs, "gpu-ok", "DockerVersion"), Status::Skip);
  EXPECT_EQ(status_of(rs, "gpu-ok", "DefaultRuntime"), Status::Pass);
  EXPECT_EQ(find(rs, "gpu-ok", "DefaultRuntime")->message,
            "nvidia is containerd's default runtime (containerd config dump)");

  // containerd's default runtime left at runc: an error on a running cluster.
  auto runc =
      host_verdicts({verdict_containerd_host("")}, eval_options(), {}, Purpose::Running, {});
  EXPECT_EQ(status_of(runc, "gpu-ok", "DefaultRuntime"), Status::Fail);
  EXPECT_NE(find(runc, "gpu-ok", "DefaultRuntime")
                ->message.find("containerd's default runtime is \"runc\""),
            std::string::npos);

  // containerd that does not run, or runs without CRI (Docker's containerd.io):
  // judged as before, by Docker.
  HostOutcome stopped = verdict_containerd_host();
  stopped.facts.containerd_active = false;
  auto st = host_verdicts({stopped}, eval_options(), {}, Purpose::Running, {});
  EXPECT_EQ(status_of(st, "gpu-ok", "Docker"), Status::Fail);
  HostOutcome nocri = verdict_containerd_host();
  nocri.facts.containerd_cri = false;
  auto nc = host_verdicts({nocri}, eval_options(), {}, Purpose::Running, {});
  EXPECT_EQ(status_of(nc, "gpu-ok", "Docker"), Status::Fail);

  // A host with Docker keeps Docker's verdicts even when containerd runs too.
  HostOutcome docker = good_host();
  docker.facts.containerd_present = docker.facts.containerd_active = true;
  docker.facts.containerd_default_runtime = "runc";
  auto dk = host_verdicts({docker}, eval_options(), {}, Purpose::Running, {});
  EXPECT_EQ(status_of(dk, "gpu-ok", "DefaultRuntime"), Status::Pass);
  EXPECT_EQ(find(dk, "gpu-ok", "DefaultRuntime")->message,
            "nvidia is Docker's default runtime (docker info)");
  EXPECT_NE(find(dk, "gpu-ok", "Docker")->message.find("Docker 24.0.7"), std::string::npos);

  // Docker's containerd.io with CRI disabled, as `containerd config dump` prints it.
  pai::facts::HostFacts io;
  pai::facts::parse_fact_output(
      "@@paictl-facts 1\n@@begin containerd\ncontainerd containerd.io 1.6.24 61f9fd88\n@@active "
      "active\n@@cfg disabled_plugins = [\"cri\"]\n\n@@end containerd 0\n",
      0, io);
  EXPECT_FALSE(io.containerd_cri);
  EXPECT_EQ(io.containerd_version, "1.6.24");
}
