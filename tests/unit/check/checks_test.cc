#include <gtest/gtest.h>

#include "check/catalogue.h"
#include "check/runner.h"
#include "test_support.h"

using namespace pai::check;
using namespace pai::check::testing;

namespace {
std::vector<CheckResult> eval(std::vector<HostOutcome> hosts) {
  return evaluate(hosts, eval_options());
}
std::vector<CheckResult> eval1(const HostOutcome& h) {
  return eval({h});
}
}  // namespace

TEST(Catalogue, NamesAreUniqueAndFindable) {
  std::set<std::string> names;
  for (const auto& c : catalogue()) {
    EXPECT_TRUE(names.insert(std::string(c.name)).second) << c.name;
    EXPECT_FALSE(c.summary.empty());
    EXPECT_TRUE(c.scope == "host" || c.scope == "cluster");
  }
  EXPECT_NE(find_check("gpucount"), nullptr);
  EXPECT_EQ(find_check("Port-6443"), find_check("Port-<N>"));
  EXPECT_EQ(find_check("NoSuchCheck"), nullptr);
  EXPECT_EQ(master_ports().size(), 9u);
  EXPECT_EQ(worker_ports(), std::vector<int>{10250});
}

TEST(Checks, TheCapturedCleanHostHasNoFailure) {
  auto rs = eval1(good_host());
  for (const auto& r : rs) EXPECT_NE(r.status, Status::Fail) << r.check << ": " << r.message;
  EXPECT_EQ(status_of(rs, "gpu-ok", "Reachable"), Status::Pass);
  EXPECT_EQ(status_of(rs, "gpu-ok", "GPUCount"), Status::Pass);
  EXPECT_EQ(status_of(rs, "gpu-ok", "DefaultRuntime"), Status::Pass);
  EXPECT_EQ(status_of(rs, "gpu-ok", "Port-10250"), Status::Pass);
  EXPECT_EQ(status_of(rs, "gpu-ok", "HostIP"), Status::Pass);  // 127.0.2.3 in lo's 127.0.0.1/8
  // Every host check reports, once.
  std::set<std::string> seen;
  for (const auto& r : rs) EXPECT_TRUE(seen.insert(r.check).second) << r.check;
  // The cross-site checks come from their own probes (check/cross_site.h), as
  // do the masters' (check/masters.h), and SiteOverlap from its own command
  // (check/site_overlap.h), not evaluate().
  for (const auto& c : catalogue()) {
    // OfflineBundle reports only where kube_offline_bundle is a bundle.
    if (c.name != "Port-<N>" && !c.name.starts_with("CrossSite") && c.name != "SiteOverlap" &&
        c.name != "ControlPlaneEndpoint" && c.name != "MasterPort" && c.name != "OfflineBundle") {
      EXPECT_TRUE(seen.count(std::string(c.name))) << c.name;
    }
  }
}

TEST(Checks, GpuCountAndModel) {
  HostOutcome h = good_host();
  h.facts.gpus.pop_back();
  h.plan.sku->device->model = "A100";
  auto rs = eval1(h);
  EXPECT_EQ(status_of(rs, "gpu-ok", "GPUCount"), Status::Fail);
  EXPECT_NE(find(rs, "gpu-ok", "GPUCount")->message.find("lists 3 GPUs"), std::string::npos);
  EXPECT_EQ(status_of(rs, "gpu-ok", "GPUModel"), Status::Warn);
}

TEST(Checks, NvidiaSmiFailureSkipsTheCountInsteadOfGuessing) {
  HostOutcome h = good_host();
  h.facts.nvidia.smi_exit = 9;
  h.facts.nvidia.smi_error = "NVIDIA-SMI has failed";
  h.facts.nvidia.pci_gpus = 4;
  h.facts.gpus.clear();
  auto rs = eval1(h);
  EXPECT_EQ(status_of(rs, "gpu-ok", "NvidiaSmi"), Status::Fail);
  EXPECT_NE(find(rs, "gpu-ok", "NvidiaSmi")->message.find("4 NVIDIA GPUs on the PCI bus"),
            std::string::npos);
  EXPECT_EQ(status_of(rs, "gpu-ok", "GPUCount"), Status::Skip);
}

TEST(Checks, DefaultRuntimeRegisteredButNotDefault) {
  HostOutcome h = good_host();
  h.facts.docker.default_runtime = "runc";
  h.facts.daemon_json.default_runtime = "";
  auto rs = eval1(h);
  EXPECT_EQ(status_of(rs, "gpu-ok", "DefaultRuntime"), Status::Fail);
  EXPECT_NE(find(rs, "gpu-ok", "DefaultRuntime")->message.find("registered"), std::string::npos);
}

TEST(Checks, DefaultRuntimeBinaryMissingEvenOnACpuHost) {
  HostOutcome h = good_host("cpu-1");
  h.plan.sku->device.reset();
  for (auto& r : h.facts.runtime_binaries)
    if (r.runtime == "nvidia") r.resolved.clear();
  auto rs = eval1(h);
  EXPECT_EQ(status_of(rs, "cpu-1", "DefaultRuntimeBinary"), Status::Fail);
  EXPECT_EQ(status_of(rs, "cpu-1", "NvidiaSmi"), Status::Skip);  // not a GPU SKU
  EXPECT_NE(find(rs, "cpu-1", "DefaultRuntimeBinary")->hint.find("remove"), std::string::npos);
}

TEST(Checks, ResourcesAgainstTheSku) {
  HostOutcome h = good_host();
  h.plan.sku->mem_bytes = 128.0 * (1ull << 30);
  h.plan.sku->vcore = 16;
  h.facts.memory.available_bytes = int64_t{8} << 30;
  auto rs = eval1(h);
  EXPECT_EQ(status_of(rs, "gpu-ok", "Memory"), Status::Fail);
  EXPECT_EQ(status_of(rs, "gpu-ok", "CPU"), Status::Fail);
  EXPECT_EQ(status_of(rs, "gpu-ok", "MemoryAvailable"), Status::Fail);  // < 16000 MiB on a worker
}

TEST(Checks, MasterNeedsTwoCpusAndItsPortsFree) {
  HostOutcome h = good_host("master");
  h.plan.master = true;
  h.plan.worker = false;
  h.plan.sku->device.reset();
  h.facts.cpu.logical = 1;
  h.facts.listening.push_back({"0.0.0.0", 6443, false});
  h.facts.listening.push_back({"::", 80, true});
  h.facts.listening.push_back({"10.9.9.9", 2379, false});  // another host's address: not ours
  h.facts.memory.available_bytes = int64_t{64} << 30;
  auto rs = eval1(h);
  EXPECT_EQ(status_of(rs, "master", "CPU"), Status::Fail);
  EXPECT_EQ(status_of(rs, "master", "Port-6443"), Status::Fail);
  EXPECT_EQ(status_of(rs, "master", "Port-80"), Status::Fail);
  EXPECT_EQ(status_of(rs, "master", "Port-2379"), Status::Pass);
  EXPECT_EQ(status_of(rs, "master", "Port-10259"), Status::Pass);
  EXPECT_EQ(status_of(rs, "master", "NTP"),
            Status::Warn);  // unknown is a warning even on the master
}

TEST(Checks, NtpUnsynchronisedIsAnErrorOnlyOnTheMaster) {
  HostOutcome w = good_host("w");
  w.facts.clock.ntp_known = true;
  w.facts.clock.ntp_synchronized = false;
  w.facts.clock.ntp_source = "timedatectl";
  HostOutcome m = w;
  m.plan.name = "m";
  m.plan.master = true;
  m.facts.machine_id = "other";
  m.facts.hostname = "m";
  auto rs = eval({w, m});
  EXPECT_EQ(status_of(rs, "w", "NTP"), Status::Warn);
  EXPECT_EQ(status_of(rs, "m", "NTP"), Status::Fail);
}

TEST(Checks, LeftoversAndRunningThings) {
  HostOutcome h = good_host();
  for (auto& p : h.facts.paths) {
    if (p.path == "/var/lib/etcd") p.entries = 1, p.sample = {"member"};
    if (p.path == "/etc/kubernetes")
      p.exists = p.directory = true, p.entries = 2, p.sample = {"admin.conf", "manifests"};
    if (p.path == "/etc/cni/net.d")
      p.exists = p.directory = true, p.entries = 1, p.sample = {"10-calico.conflist"};
  }
  h.facts.processes = {"kubelet"};
  h.facts.docker.containers_running = 3;
  auto rs = eval1(h);
  EXPECT_EQ(status_of(rs, "gpu-ok", "LeftoverEtcd"), Status::Fail);
  EXPECT_NE(find(rs, "gpu-ok", "LeftoverEtcd")->message.find("member"), std::string::npos);
  EXPECT_EQ(status_of(rs, "gpu-ok", "LeftoverKubernetes"), Status::Fail);
  EXPECT_EQ(status_of(rs, "gpu-ok", "LeftoverCNI"), Status::Warn);
  EXPECT_EQ(status_of(rs, "gpu-ok", "RunningKubernetes"), Status::Fail);
  EXPECT_EQ(status_of(rs, "gpu-ok", "RunningContainers"), Status::Warn);
}

TEST(Checks, UnreadableEtcdWithoutRootIsAWarning) {
  HostOutcome h = good_host();
  for (auto& p : h.facts.paths)
    if (p.path == "/var/lib/etcd") p.readable = false;
  EXPECT_EQ(status_of(eval1(h), "gpu-ok", "LeftoverEtcd"), Status::Warn);
}

TEST(Checks, SwapDockerVersionsAndDaemonJson) {
  HostOutcome h = good_host();
  h.facts.swap.devices.push_back({"/swap.img", "file", 1 << 30});
  h.facts.docker.server_version = "18.09.7";
  h.facts.daemon_json.valid = false;
  h.facts.daemon_json.error = "/etc/docker/daemon.json is not a JSON object";
  auto rs = eval1(h);
  EXPECT_EQ(status_of(rs, "gpu-ok", "Swap"), Status::Fail);
  EXPECT_EQ(status_of(rs, "gpu-ok", "DockerVersion"), Status::Warn);
  EXPECT_EQ(status_of(rs, "gpu-ok", "DaemonJson"), Status::Fail);
  h.facts.docker.server_version = "1.13.1";
  EXPECT_EQ(status_of(eval1(h), "gpu-ok", "DockerVersion"), Status::Fail);
  h.facts.docker.server_version = "20.10.21";
  EXPECT_EQ(status_of(eval1(h), "gpu-ok", "DockerVersion"), Status::Pass);
}

TEST(Checks, HostnameAndHostIp) {
  HostOutcome h = good_host();
  h.facts.hostname = "GPU_OK";
  h.plan.hostip = "10.1.1.1";
  auto rs = eval1(h);
  EXPECT_EQ(status_of(rs, "gpu-ok", "HostnameValid"), Status::Fail);
  EXPECT_EQ(status_of(rs, "gpu-ok", "HostnameMatches"), Status::Warn);
  EXPECT_EQ(status_of(rs, "gpu-ok", "HostIP"), Status::Fail);
  EXPECT_NE(find(rs, "gpu-ok", "HostIP")->message.find("192.0.2.2"),
            std::string::npos);  // the host's real address
}

TEST(Checks, CgroupV2AndMissingControllers) {
  HostOutcome h = good_host();
  h.facts.cgroup_version = 2;
  h.facts.cgroup_controllers = {"cpuset", "cpu", "io", "memory", "pids"};
  EXPECT_EQ(status_of(eval1(h), "gpu-ok", "Cgroups"), Status::Warn);
  h.facts.cgroup_controllers = {"cpu", "io"};
  auto rs = eval1(h);
  EXPECT_EQ(status_of(rs, "gpu-ok", "Cgroups"), Status::Fail);
  EXPECT_NE(find(rs, "gpu-ok", "Cgroups")->message.find("cpuset, memory, pids"), std::string::npos);
}

TEST(Checks, UnreachableHostSkipsEverythingElse) {
  HostOutcome h = good_host("down");
  h.reached = false;
  h.exec.failure = pai::remote::Failure::ConnectTimeout;
  h.exec.error = "no SSH answer from 10.0.0.9:22 within 10 s";
  auto rs = eval1(h);
  EXPECT_EQ(status_of(rs, "down", "Reachable"), Status::Fail);
  EXPECT_EQ(find(rs, "down", "Reachable")->message, h.exec.error);
  for (const auto& r : rs) {
    if (r.check != "Reachable") {
      EXPECT_EQ(r.status, Status::Skip) << r.check;
    }
  }
  Summary s = summarize(rs, 1);
  EXPECT_EQ(s.unreachable, 1u);
  EXPECT_EQ(exit_code(s, false), 3);
}

TEST(Checks, TimedOutHostUsesItsPartialFacts) {
  HostOutcome h = good_host("slow");
  std::string out = captured_output();
  h.facts = pai::facts::HostFacts{};
  pai::facts::parse_fact_output(out.substr(0, out.find("@@begin docker")) + "@@begin docker\n", 0,
                                h.facts);
  h.exec.failure = pai::remote::Failure::CommandTimeout;
  h.exec.error = "the command did not finish within 4 s";
  auto rs = eval1(h);
  EXPECT_EQ(status_of(rs, "slow", "Reachable"), Status::Fail);
  EXPECT_NE(find(rs, "slow", "Reachable")
                ->message.find(
                    "the fact script did not finish within 4 s; it was still running docker info"),
            std::string::npos)
      << find(rs, "slow", "Reachable")->message;
  EXPECT_EQ(status_of(rs, "slow", "Swap"), Status::Pass);       // read before the cut
  EXPECT_EQ(status_of(rs, "slow", "Docker"), Status::Skip);     // the step that hung
  EXPECT_EQ(status_of(rs, "slow", "NvidiaSmi"), Status::Skip);  // after it
}

TEST(Checks, CrossHost) {
  HostOutcome a = good_host("a", "10.0.0.1"), b = good_host("b", "10.0.0.2"),
              c = good_host("c", "10.0.0.3");
  a.plan.hostip = b.plan.hostip = c.plan.hostip = "";  // no HostIP check here
  b.facts.hostname = "a";                              // two hosts call themselves a
  c.facts.machine_id = a.facts.machine_id;             // c and a are one machine
  c.facts.nvidia.driver_version = "470.82.01";         // the odd driver
  c.facts.os.id = "centos";
  a.facts.clock = {1000.0, 0.1, false, false, ""};
  b.facts.clock = {1000.0, 0.2, false, false, ""};
  c.facts.clock = {1000.0, 3.5, false, false, ""};
  auto rs = eval({a, b, c});
  EXPECT_EQ(status_of(rs, "a", "UniqueHostname"), Status::Fail);
  EXPECT_EQ(status_of(rs, "b", "UniqueHostname"), Status::Fail);
  EXPECT_EQ(status_of(rs, "c", "UniqueHostname"), Status::Pass);
  EXPECT_EQ(status_of(rs, "a", "UniqueMachine"), Status::Fail);
  EXPECT_EQ(status_of(rs, "b", "UniqueMachine"), Status::Pass);
  EXPECT_EQ(status_of(rs, "c", "ClockSkew"), Status::Fail);
  EXPECT_EQ(status_of(rs, "a", "ClockSkew"), Status::Pass);
  EXPECT_EQ(status_of(rs, "c", "DriverVersion"), Status::Fail);
  EXPECT_NE(find(rs, "c", "DriverVersion")->message.find("535.104.05"), std::string::npos);
  EXPECT_EQ(status_of(rs, "a", "DriverVersion"), Status::Pass);
  EXPECT_EQ(status_of(rs, "c", "OSFamily"), Status::Warn);
  // Results come per host, in host order.
  EXPECT_EQ(rs.front().host, "a");
  EXPECT_EQ(rs.back().host, "c");
}

TEST(Checks, DemoteAndExitCodes) {
  HostOutcome h = good_host();
  h.facts.swap.devices.push_back({"/swap.img", "file", 1 << 30});
  h.facts.docker.server_version = "18.09.7";
  auto rs = eval1(h);
  EXPECT_EQ(exit_code(summarize(rs, 1), false), 1);
  auto demoted = rs;
  demote(demoted, {"SWAP"});
  EXPECT_EQ(status_of(demoted, "gpu-ok", "Swap"), Status::Warn);
  EXPECT_TRUE(find(demoted, "gpu-ok", "Swap")->demoted);
  EXPECT_EQ(exit_code(summarize(demoted, 1), false), 0);
  EXPECT_EQ(exit_code(summarize(demoted, 1), true), 1);  // --fail-on-warn
  auto all = rs;
  demote(all, {"all"});
  EXPECT_EQ(summarize(all, 1).fail, 0u);
  EXPECT_EQ(unknown_check_names({"all", "swap", "Port-6443", "port-<n>", "Bogus", "Port-99999"}),
            (std::vector<std::string>{"Bogus", "Port-99999"}));
  h.facts.listening.push_back({"0.0.0.0", 10250, false});
  auto ports = eval1(h);
  demote(ports, {"Port-<N>", "Swap"});
  EXPECT_EQ(status_of(ports, "gpu-ok", "Port-10250"), Status::Warn);
}

TEST(Checks, UniqueIpFindsAHostipConfiguredOnAnotherMachine) {
  HostOutcome a = good_host("a", "10.0.0.1"), b = good_host("b", "10.0.0.2"),
              same = good_host("a-again", "10.0.0.9");
  b.facts.interfaces.push_back({"eth1", "10.0.0.1", 24, false});  // b also claims a's address
  same.facts.machine_id = a.facts.machine_id;                     // another entry for machine a
  same.facts.interfaces.push_back({"eth0", "10.0.0.1", 24, false});
  same.facts.hostname = "a-again";
  auto rs = eval({a, b, same});
  EXPECT_EQ(status_of(rs, "a", "UniqueIP"), Status::Fail);
  EXPECT_NE(find(rs, "a", "UniqueIP")->message.find("also configured on b"), std::string::npos);
  EXPECT_EQ(find(rs, "a", "UniqueIP")->message.find("a-again"),
            std::string::npos);  // same machine: not a conflict
  EXPECT_EQ(status_of(rs, "b", "UniqueIP"), Status::Pass);
}

TEST(Checks, OfflineBundleOnlyWithABundleItsPlatformAndDriver) {
  HostOutcome h = good_host();
  h.facts.os.id = "ubuntu";
  h.facts.os.version_id = "22.04";
  h.facts.cpu.architecture = "x86_64";
  h.facts.nvidia.driver_version = "535.104.05";
  // Without a bundle the check does not report.
  EXPECT_EQ(find(eval1(h), "gpu-ok", "OfflineBundle"), nullptr);
  EvalOptions o = eval_options();
  o.bundle_platforms = {"ubuntu-22.04-amd64"};
  o.bundle_driver = "535";
  auto rs = evaluate({h}, o);
  EXPECT_EQ(status_of(rs, "gpu-ok", "OfflineBundle"), Status::Pass);
  // Another OS (N001), another driver branch on a GPU host (N002).
  o.bundle_platforms = {"ubuntu-20.04-amd64", "debian-12-amd64"};
  rs = evaluate({h}, o);
  ASSERT_EQ(status_of(rs, "gpu-ok", "OfflineBundle"), Status::Fail);
  EXPECT_EQ(find(rs, "gpu-ok", "OfflineBundle")->message,
            "[N001] the offline bundle carries ubuntu-20.04-amd64, debian-12-amd64, not this "
            "host's ubuntu-22.04-amd64");
  o.bundle_platforms = {"ubuntu-22.04-amd64"};
  o.bundle_driver = "550";
  rs = evaluate({h}, o);
  ASSERT_EQ(status_of(rs, "gpu-ok", "OfflineBundle"), Status::Fail);
  EXPECT_EQ(find(rs, "gpu-ok", "OfflineBundle")->message,
            "[N002] the host runs NVIDIA driver 535.104.05, the offline bundle was built for "
            "branch 550");
}
