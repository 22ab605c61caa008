#include "facts/fact_script.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include "check/test_support.h"
#include "util/fs.h"

using namespace pai::facts;

TEST(Sections, SplitsAndKeepsBodiesExactly) {
  ParsedOutput p = split_sections(
      "@@paictl-facts 1\n@@begin a\nline1\nline2\n\n@@end a 0\n@@privilege root\n@@begin b\nno "
      "newline\n@@end b 3\n@@done\n");
  ASSERT_TRUE(p.header);
  ASSERT_EQ(p.sections.size(), 2u);
  EXPECT_EQ(p.sections[0].body, "line1\nline2\n");
  EXPECT_EQ(p.sections[0].status, 0);
  EXPECT_EQ(p.sections[1].body, "no newline");
  EXPECT_EQ(p.sections[1].status, 3);
  EXPECT_TRUE(p.done);
  ASSERT_EQ(p.markers.size(), 1u);
  EXPECT_EQ(p.markers[0].first, "privilege");
  EXPECT_EQ(p.markers[0].second, "root");
}

TEST(Sections, CutOffAndHostileOutput) {
  ParsedOutput p = split_sections("@@paictl-facts 1\n@@begin a\n@@end b 0\n@@begin c\npartial");
  ASSERT_EQ(p.sections.size(), 1u);  // "@@end b" inside a is content, "@@begin c" too
  EXPECT_FALSE(p.sections[0].ended);
  EXPECT_EQ(p.sections[0].body, "@@end b 0\n@@begin c\npartial");
  EXPECT_FALSE(p.done);
  // CRLF line ends (sudo with a pty) still match the markers.
  ParsedOutput q =
      split_sections("@@paictl-facts 1\r\n@@begin x\r\nv\r\n\r\n@@end x 0\r\n@@done\r\n");
  ASSERT_EQ(q.sections.size(), 1u);
  EXPECT_TRUE(q.sections[0].ended);
  EXPECT_TRUE(q.done);
  EXPECT_FALSE(split_sections("").header);
}

TEST(FactParser, ReadsARealRun) {
  HostFacts f;
  parse_fact_output(pai::check::testing::captured_output(), 1796024589.0, f);
  EXPECT_TRUE(f.complete);
  EXPECT_TRUE(f.stuck_in.empty());
  EXPECT_EQ(f.privilege, "root");
  EXPECT_EQ(f.ssh_server_address, "127.0.2.3");
  EXPECT_EQ(f.hostname, "gpu-ok");
  EXPECT_EQ(f.os.id, "ubuntu");
  EXPECT_EQ(f.os.version_id, "22.04");
  EXPECT_FALSE(f.kernel.empty());
  EXPECT_EQ(f.memory.total_bytes, 67108864LL * 1024);
  EXPECT_EQ(f.memory.available_bytes, 62914560LL * 1024);
  EXPECT_EQ(f.cpu.logical, 2);
  EXPECT_EQ(f.cgroup_version, 1);
  ASSERT_EQ(f.gpus.size(), 4u);
  EXPECT_EQ(f.gpus[2].index, 2);
  EXPECT_EQ(f.gpus[0].name, "Tesla V100-SXM2-16GB");
  EXPECT_EQ(f.gpus[0].memory_mib, 16160);
  EXPECT_EQ(f.gpus[1].bus_id, "00000000:16:00.0");
  EXPECT_EQ(f.nvidia.driver_version, "535.104.05");
  EXPECT_NE(f.nvidia.topo_matrix.find("GPU3"), std::string::npos);
  EXPECT_TRUE(f.nvidia.container_runtime_present);
  EXPECT_EQ(f.docker.server_version, "24.0.7");
  EXPECT_EQ(f.docker.default_runtime, "nvidia");
  EXPECT_TRUE(f.daemon_json.present);
  EXPECT_EQ(f.daemon_json.default_runtime, "nvidia");
  EXPECT_EQ(f.daemon_json.runtimes.at("nvidia"), "nvidia-container-runtime");
  bool have_nvidia_bin = false;
  for (const auto& r : f.runtime_binaries)
    if (r.runtime == "nvidia") have_nvidia_bin = !r.resolved.empty();
  EXPECT_TRUE(have_nvidia_bin);
  EXPECT_TRUE(f.swap.devices.empty());
  EXPECT_EQ(f.swap.total_bytes, 0);
  ASSERT_NE(f.path("/var/lib/etcd"), nullptr);
  EXPECT_TRUE(f.path("/var/lib/etcd")->exists);
  EXPECT_EQ(f.path("/var/lib/etcd")->entries, 0);
  EXPECT_FALSE(f.path("/etc/kubernetes")->exists);
  EXPECT_EQ(f.binaries.at("ip"), "/usr/sbin/ip");
  EXPECT_EQ(f.binaries.at("iptables"), "");
  EXPECT_TRUE(f.kernel_modules.at("overlay"));
  EXPECT_FALSE(f.kernel_modules.at("br_netfilter"));
  EXPECT_EQ(f.ip_forward, 0);
  // /proc/net/tcp: the fake kubelet listener of another test host, decoded.
  bool saw = false;
  for (const auto& l : f.listening) saw |= l.address == "127.0.2.9" && l.port == 10250;
  EXPECT_TRUE(saw);
  ASSERT_FALSE(f.ip_addresses.empty());
  EXPECT_EQ(f.ip_addresses[0], "127.0.2.3");  // the SSH address first
  for (const auto& a : f.ip_addresses) EXPECT_NE(a.rfind("127.0.0.", 0), 0u) << a;
  EXPECT_EQ(f.dns.size(), 2u);
  EXPECT_TRUE(f.dns[0].resolved);   // registry.paictl.test, in the host's /etc/hosts
  EXPECT_FALSE(f.dns[1].resolved);  // gone.invalid
  EXPECT_TRUE(f.hostname_resolves);
  EXPECT_NEAR(f.clock.skew_s, 0.67, 0.01);
  ASSERT_EQ(f.disks.size(), 2u);
  EXPECT_EQ(f.disks[0].path, "/");
  EXPECT_EQ(f.disks[1].path, "/var/lib/docker");
  EXPECT_GT(f.disks[1].available_bytes, 0);
  EXPECT_TRUE(f.notes.empty()) << f.notes[0];
}

TEST(FactParser, ListenersFromSs) {
  // `ss -Htn state listening` as iproute2 prints it (without the state column, or
  // with it): IPv4 with an interface, IPv6 only in brackets, dual-stack as *, an
  // IPv4-mapped address; junk and other states dropped.
  std::string out =
      "@@paictl-facts 1\n"
      "@@begin tcp\n@@ss\n"
      "0      4096   127.0.0.53%lo:53        0.0.0.0:*\n"
      "0      128          0.0.0.0:22        0.0.0.0:*\n"
      "0      128             [::]:22           [::]:*\n"
      "LISTEN 0      511                *:80              *:*\n"
      "0      4096 [::ffff:127.0.0.1]:6443         *:*\n"
      "0      4096   [fe80::1]%eth0:10250        [::]:*\n"
      "ESTAB  0      0        10.0.0.1:22    10.0.0.2:5000\n"
      "0      1     0.0.0.0:99999     0.0.0.0:*\n"
      "0      1     $(reboot):1       0.0.0.0:*\n"
      "x      1     0.0.0.0:23       0.0.0.0:*\n"
      "0      1     0.0.0.0\n"
      "\n@@end tcp 0\n@@done\n";
  HostFacts f;
  parse_fact_output(out, 0, f);
  ASSERT_EQ(f.listening.size(), 6u);
  // Sorted by port, then address.
  EXPECT_EQ(f.listening[0].address, "0.0.0.0");
  EXPECT_EQ(f.listening[0].port, 22);
  EXPECT_FALSE(f.listening[0].v6);
  EXPECT_EQ(f.listening[1].address, "::");
  EXPECT_EQ(f.listening[1].port, 22);
  EXPECT_TRUE(f.listening[1].v6);
  EXPECT_EQ(f.listening[2].address, "127.0.0.53");
  EXPECT_EQ(f.listening[2].port, 53);
  EXPECT_EQ(f.listening[3].address, "::");
  EXPECT_EQ(f.listening[3].port, 80);
  EXPECT_TRUE(f.listening[3].v6);
  EXPECT_EQ(f.listening[4].address, "::ffff:127.0.0.1");
  EXPECT_EQ(f.listening[4].port, 6443);
  EXPECT_EQ(f.listening[5].address, "fe80::1");
  EXPECT_EQ(f.listening[5].port, 10250);
}

TEST(FactParser, ListenersAreKeptOnceAndAtMostTenThousand) {
  // Each address and port once, whichever of its lines came first; a host
  // listing 12,000 distinct sockets (each twice) keeps the first 10,000.
  std::string out = "@@paictl-facts 1\n@@begin tcp\n@@ss\n";
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 12000; ++i)
      out += "0 128 10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250) + ":" +
             std::to_string(1000 + i % 7) + " 0.0.0.0:*\n";
  out += "0 128 0.0.0.0:22 0.0.0.0:*\n0 128 0.0.0.0:22 0.0.0.0:*\n";
  out += "\n@@end tcp 0\n@@done\n";
  HostFacts f;
  parse_fact_output(out, 0, f);
  ASSERT_EQ(f.listening.size(), 10000u);
  std::set<std::pair<std::string, int>> distinct;
  for (const auto& l : f.listening) distinct.emplace(l.address, l.port);
  EXPECT_EQ(distinct.size(), 10000u);
  EXPECT_EQ(distinct.count({"10.0.0.0", 1000}), 1u);
  EXPECT_EQ(distinct.count({"10.0.39.249", 1000 + 9999 % 7}), 1u);  // the 10,000th
  EXPECT_EQ(distinct.count({"10.0.40.0", 1000 + 10000 % 7}), 0u);   // past the cap
  EXPECT_EQ(distinct.count({"0.0.0.0", 22}), 0u);                   // came after the cap
  // Below the cap, a socket listed twice (ss, then again) is one listener.
  std::string twice =
      "@@paictl-facts 1\n@@begin tcp\n@@ss\n0 128 0.0.0.0:22 0.0.0.0:*\n"
      "0 128 [::]:22 [::]:*\n0 128 0.0.0.0:22 0.0.0.0:*\n\n@@end tcp 0\n@@done\n";
  HostFacts g;
  parse_fact_output(twice, 0, g);
  EXPECT_EQ(g.listening.size(), 2u);
}

TEST(FactParser, CutOffRunKeepsWhatCameAndNamesTheStep) {
  std::string out = pai::check::testing::captured_output();
  out = out.substr(0, out.find("@@begin nvidia")) + "@@begin nvidia\n";
  HostFacts f;
  parse_fact_output(out, 0, f);
  EXPECT_FALSE(f.complete);
  EXPECT_EQ(f.stuck_in, "nvidia");
  EXPECT_EQ(f.docker.server_version, "24.0.7");  // before the cut
  EXPECT_TRUE(f.gpus.empty());
  EXPECT_TRUE(f.has("docker"));
  EXPECT_FALSE(f.has("nvidia"));
  EXPECT_EQ(step_description("nvidia"), "nvidia-smi --query-gpu");
}

TEST(FactParser, FailuresAreFactsNotCrashes) {
  std::string out =
      "@@paictl-facts 1\n"
      "@@begin files\n"
      "/etc/docker/daemon.json:{ \"default-runtime\": \"nvidia\", \n"
      "/proc/swaps:Filename\tType\tSize\tUsed\tPriority\n"
      "/proc/swaps:/dev/sda2  partition\t8388604\t0\t-2\n"
      "/proc/meminfo:MemTotal: 1000 kB\n"
      "/proc/meminfo:SwapTotal: 8388604 kB\n\n@@end files 0\n"
      "@@begin tcp\n/proc/net/tcp6:   0: 00000000000000000000000000000000:2382 "
      "00000000000000000000000000000000:0000 0A x\n"
      "/proc/net/tcp6:   1: 0000000000000000FFFF00000100007F:1A0B "
      "00000000000000000000000000000000:0000 0A x\n"
      "/proc/net/tcp:   2: ZZZZZZZZ:0050 00000000:0000 0A x\n"
      "/proc/net/tcp:   3: 0100007F:0050 00000000:0000 01 x\n\n@@end tcp 0\n"
      "@@begin docker\nCannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the "
      "docker daemon running?\n\n@@end docker 1\n"
      "@@begin nvidia\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
      "driver.\n\n@@end nvidia 9\n"
      "@@begin pci\n2\n\n@@end pci 0\n"
      "@@begin ntp\n               Local time: x\nSystem clock synchronized: yes\n@@via "
      "timedatectl\n\n@@end ntp 0\n"
      "@@begin df\n@@dataroot /mnt/docker\n@@measured /mnt\nFilesystem 1024-blocks Used Available "
      "Capacity Mounted on\n"
      "/dev/vda 1000 10 990 1% /\n/dev/vdb 2000 20 1980 1% /mnt\n\n@@end df 0\n"
      "@@done\n";
  HostFacts f;
  parse_fact_output(out, 0, f);
  EXPECT_TRUE(f.daemon_json.present);
  EXPECT_FALSE(f.daemon_json.valid);
  ASSERT_EQ(f.swap.devices.size(), 1u);
  EXPECT_EQ(f.swap.devices[0].name, "/dev/sda2");
  EXPECT_EQ(f.swap.devices[0].size_bytes, 8388604LL * 1024);
  EXPECT_EQ(f.swap.total_bytes, 8388604LL * 1024);
  ASSERT_EQ(f.listening.size(),
            2u);  // the garbage address and the non-listening socket are dropped
  EXPECT_EQ(f.listening[0].port, 6667);
  EXPECT_EQ(f.listening[0].address, "::ffff:127.0.0.1");
  EXPECT_EQ(f.listening[1].port, 9090);
  EXPECT_EQ(f.listening[1].address, "::");
  EXPECT_TRUE(f.docker.client_present);
  EXPECT_FALSE(f.docker.daemon_reachable);
  EXPECT_NE(f.docker.error.find("Cannot connect"), std::string::npos);
  EXPECT_TRUE(f.nvidia.smi_present);
  EXPECT_EQ(f.nvidia.smi_exit, 9);
  EXPECT_NE(f.nvidia.smi_error.find("NVIDIA-SMI has failed"), std::string::npos);
  EXPECT_EQ(f.nvidia.pci_gpus, 2);
  EXPECT_TRUE(f.clock.ntp_known);
  EXPECT_TRUE(f.clock.ntp_synchronized);
  ASSERT_EQ(f.disks.size(), 2u);
  EXPECT_EQ(f.disks[1].path, "/mnt/docker");
  EXPECT_EQ(f.disks[1].checked, "/mnt");
  EXPECT_EQ(f.disks[1].available_bytes, 1980 * 1024);
}

TEST(FactParser, NtpVariants) {
  auto ntp = [](const std::string& body) {
    HostFacts f;
    parse_fact_output("@@paictl-facts 1\n@@begin ntp\n" + body + "\n@@end ntp 0\n@@done\n", 0, f);
    return f.clock;
  };
  EXPECT_FALSE(ntp("NTP synchronized: no\n@@via timedatectl").ntp_synchronized);
  EXPECT_TRUE(ntp("NTP synchronized: yes\n@@via timedatectl").ntp_synchronized);
  EXPECT_TRUE(ntp("Leap status     : Normal\n@@via chronyc").ntp_synchronized);
  EXPECT_FALSE(ntp("Leap status     : Not synchronised\n@@via chronyc").ntp_synchronized);
  EXPECT_TRUE(ntp("     remote  refid\n*10.0.0.1  .GPS.\n@@via ntpq").ntp_synchronized);
  EXPECT_FALSE(ntp("").ntp_known);
}

TEST(FactParser, NotTheScript) {
  HostFacts f;
  parse_fact_output("This account is currently not available.\n", 0, f);
  EXPECT_FALSE(f.complete);
  ASSERT_FALSE(f.notes.empty());
}

TEST(Script, QuotesItsParametersAndDropsUnsafeNames) {
  ScriptOptions o;
  o.docker_data_root = "/data/it's; rm -rf /";
  o.dns_names = {"registry.example.com", "evil;reboot", "$(id)", "mirror-1.example.com"};
  std::string s = fact_script(o);
  EXPECT_NE(s.find("DATA_ROOT='/data/it'\\''s; rm -rf /'"), std::string::npos);
  EXPECT_NE(s.find("DNS_NAMES='registry.example.com mirror-1.example.com'"), std::string::npos);
  EXPECT_EQ(s.find("evil"), std::string::npos);
  EXPECT_TRUE(is_safe_dns_name("a-b.c_d"));
  EXPECT_FALSE(is_safe_dns_name("-x"));
  EXPECT_FALSE(is_safe_dns_name(""));
  EXPECT_FALSE(is_safe_dns_name("a b"));
}

TEST(Script, BootstrapNeverPutsThePasswordInAnArgument) {
  std::string c = bootstrap_command();
  EXPECT_EQ(c.rfind("/bin/sh -c '", 0), 0u);
  EXPECT_EQ(c.back(), '\'');
  // Only printf (a shell built-in) sees the password, through a pipe into sudo -S.
  EXPECT_NE(c.find("printf \"%s\\n\" \"$pw\" | sudo -S"), std::string::npos);
  EXPECT_EQ(c.find("sudo -S -p \"\" -v \"$pw\""), std::string::npos);
  EXPECT_EQ(std::count(c.begin(), c.end(), '\''), 2);  // one quoted word for any login shell
}

// Runs the script here with the shells a host may have, as the bootstrap runs it.
TEST(Script, RunsUnderPosixShells) {
  ScriptOptions o;
  o.docker_data_root = "/nonexistent/docker";
  o.dns_names = {"localhost"};
  std::string dir = ::testing::TempDir();
  std::string script = dir + "/paictl-facts-test.sh";
  std::ofstream(script) << fact_script(o);
  int ran = 0;
  for (const char* sh : {"/bin/sh", "/bin/dash", "/bin/bash", "/bin/busybox"}) {
    if (!pai::util::is_regular_file(sh)) continue;
    std::string shell = std::string(sh) == "/bin/busybox" ? "/bin/busybox sh" : sh;
    std::string out_file = dir + "/paictl-facts-test.out";
    std::string cmd =
        shell + " -s user '1.2.3.4 5 6.7.8.9 22' < " + script + " > " + out_file + " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << shell;
    HostFacts f;
    parse_fact_output(pai::util::read_file(out_file).value(), 0, f);
    EXPECT_TRUE(f.complete) << shell;
    EXPECT_EQ(f.privilege, "user") << shell;
    EXPECT_EQ(f.ssh_server_address, "6.7.8.9") << shell;
    EXPECT_FALSE(f.hostname.empty()) << shell;
    EXPECT_GT(f.memory.total_bytes, 0) << shell;
    EXPECT_GT(f.clock.epoch, 1.6e9) << shell;
    ASSERT_EQ(f.disks.size(), 2u) << shell;
    EXPECT_EQ(f.disks[1].path, "/nonexistent/docker") << shell;
    EXPECT_EQ(f.disks[1].checked, "/") << shell;
    ASSERT_EQ(f.dns.size(), 1u) << shell;
    EXPECT_TRUE(f.dns[0].resolved) << shell;
    for (const char* step :
         {"clock", "files", "tcp", "paths", "bins", "lscpu", "df", "docker", "nvidia", "dns"})
      EXPECT_TRUE(f.has(step)) << shell << " " << step;
    ++ran;
  }
  EXPECT_GE(ran, 1);
}

// The files step reads with the shell's built-ins what grep -Has '' printed:
// the same lines, byte for byte, of this machine's files, under every shell.
TEST(Script, TheFilesStepPrintsWhatGrepPrints) {
  std::string dir = ::testing::TempDir();
  std::string script = dir + "/paictl-facts-files.sh";
  std::ofstream(script) << fact_script(ScriptOptions{});
  std::string want_file = dir + "/paictl-facts-files.grep";
  std::string grep =
      "grep -Has '' /etc/os-release /etc/machine-id /proc/sys/kernel/osrelease "
      "/proc/sys/kernel/hostname /proc/meminfo /proc/swaps /proc/sys/net/ipv4/ip_forward "
      "/proc/sys/net/bridge/bridge-nf-call-iptables /sys/fs/cgroup/cgroup.controllers "
      "/proc/cgroups /etc/docker/daemon.json /proc/driver/nvidia/version > " +
      want_file;
  int ran = 0;
  for (const char* sh : {"/bin/sh", "/bin/dash", "/bin/bash", "/bin/busybox"}) {
    if (!pai::util::is_regular_file(sh)) continue;
    std::string shell = std::string(sh) == "/bin/busybox" ? "/bin/busybox sh" : sh;
    std::string out_file = dir + "/paictl-facts-files.out";
    ASSERT_EQ(std::system(
                  (shell + " -s root '' < " + script + " > " + out_file + " 2>/dev/null").c_str()),
              0)
        << shell;
    ASSERT_NE(std::system(grep.c_str()), -1);
    std::string want = pai::util::read_file(want_file).value();
    std::string body;
    for (const auto& sec : split_sections(pai::util::read_file(out_file).value()).sections)
      if (sec.name == "files") body = sec.body;
    // The step's body ends with the newline e() prints before its end marker.
    ASSERT_FALSE(body.empty()) << shell;
    ASSERT_EQ(body.back(), '\n');
    body.pop_back();
    // /proc/meminfo's and /proc/cgroups' counts change from one read to the
    // next: their lines are compared up to the first blank after the name.
    auto steady = [](const std::string& t) {
      std::string out;
      size_t pos = 0;
      while (pos < t.size()) {
        size_t nl = t.find('\n', pos);
        std::string line = t.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        if (line.rfind("/proc/meminfo:", 0) == 0 || line.rfind("/proc/cgroups:", 0) == 0)
          line = line.substr(0, line.find_first_of(" \t", 14));
        out += line + "\n";
        if (nl == std::string::npos) break;
        pos = nl + 1;
      }
      return out;
    };
    EXPECT_EQ(steady(body), steady(want)) << shell;
    EXPECT_NE(want.find("/proc/meminfo:MemTotal:"), std::string::npos);
    ++ran;
  }
  EXPECT_GE(ran, 1);
}

TEST(FactParser, ClockWithoutNanoseconds) {
  HostFacts f;
  parse_fact_output("@@paictl-facts 1\n@@begin clock\n1796024589.%N\n\n@@end clock 0\n@@done\n",
                    1796024588.5, f);
  EXPECT_EQ(f.clock.epoch, 1796024589.0);
  EXPECT_NEAR(f.clock.skew_s, 0.5, 1e-9);
  EXPECT_TRUE(f.notes.empty());
}

TEST(FactParser, DoneBeforeAnOpenStepIsNotComplete) {
  HostFacts f;
  parse_fact_output("@@paictl-facts 1\n@@done\n@@begin docker\n", 0, f);
  EXPECT_FALSE(f.complete);
  EXPECT_EQ(f.stuck_in, "docker");
}

// Runs the real script under `shell` with `fakes` (a directory of fake tools)
// first on PATH and `env` (VAR=value ...) in its environment; returns the output.
namespace {

std::string fact_test_dir(const std::string& name) {
  std::string d = ::testing::TempDir() + "/paictl-facts-" + name;
  std::string cmd = "rm -rf '" + d + "' && mkdir -p '" + d + "/bin'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return d;
}

void fact_test_tool(const std::string& dir, const std::string& name, const std::string& body) {
  std::string path = dir + "/bin/" + name;
  std::ofstream(path) << "#!/bin/sh\necho \"$*\" >> '" << dir << "/" << name << ".calls'\n" << body;
  EXPECT_EQ(std::system(("chmod +x '" + path + "'").c_str()), 0);
}

std::string fact_test_run(const std::string& shell, const std::string& dir, const ScriptOptions& o,
                          const std::string& env = "") {
  std::ofstream(dir + "/script.sh") << fact_script(o);
  std::string cmd = "env " + env + " PATH='" + dir + "/bin':\"$PATH\" " + shell +
                    " -s user '1.2.3.4 5 6.7.8.9 22' < '" + dir + "/script.sh' > '" + dir +
                    "/out' 2>/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return pai::util::read_file(dir + "/out").value();
}

std::vector<std::string> fact_test_calls(const std::string& dir, const std::string& tool) {
  std::vector<std::string> out;
  std::ifstream in(dir + "/" + tool + ".calls");
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<std::string> fact_test_shells() {
  std::vector<std::string> out;
  for (const char* sh : {"/bin/sh", "/bin/dash", "/bin/bash", "/bin/busybox"})
    if (pai::util::is_regular_file(sh))
      out.push_back(std::string(sh) == "/bin/busybox" ? "/bin/busybox sh" : sh);
  return out;
}

std::string fact_test_hostname() {
  std::string h;
  std::getline(std::ifstream("/proc/sys/kernel/hostname"), h);
  while (!h.empty() && (h.back() == '\n' || h.back() == ' ')) h.pop_back();
  return h;
}

// A getent that answers from DB lines "KEY|ADDRESS|NAMES" (one line per
// address), as glibc's prints them: only the keys that resolve, in order, exit 2
// when one did not. With FAKE_RC, a lookup of several keys prints nothing and
// exits with it (a getent killed by timeout loses its buffered output).
const char* kFakeGetent =
    "shift; rc=0\n"
    "[ $# -gt 1 ] && [ -n \"${FAKE_RC:-}\" ] && exit \"$FAKE_RC\"\n"
    "for k; do\n"
    "  found=0\n"
    "  while IFS='|' read -r key addr names; do\n"
    "    [ \"$key\" = \"$k\" ] || continue\n"
    "    printf '%-15s %s\\n' \"$addr\" \"$names\"; found=1\n"
    "  done < \"$FAKE_DB\"\n"
    "  [ $found = 1 ] || rc=2\n"
    "done\n"
    "exit $rc\n";

struct DnsCase {
  const char* what;
  std::string db;  // the fake resolver's answers
  const char* rc;  // FAKE_RC, or "" for getent's own
  bool hostname_ok;
  std::vector<bool> ok;  // a.example, b.example, c.example
  size_t getent_calls;   // 1: one getent for all; 5: then one by one
};

}  // namespace

// One getent for every name where its answer maps back to the names, the names
// one by one where it does not: the same verdicts either way, under every shell.
TEST(Script, DnsStepOneLookupForAllNamesOrEachName) {
  std::string h = fact_test_hostname();
  ASSERT_FALSE(h.empty());
  ScriptOptions o;
  o.dns_names = {"a.example", "b.example", "c.example"};
  std::vector<DnsCase> cases = {
      {"all resolve",
       h + "|10.0.0.9|" + h + "\na.example|10.0.0.1|a.example\nb.example|10.0.0.2|b.example\n" +
           "c.example|10.0.0.3|c.example\n",
       "",
       true,
       {true, true, true},
       1},
      {"some resolve, several addresses, canonical names with aliases",
       h + "|10.0.0.9|" + h + ".lan " + h +
           "\na.example|10.0.0.1|a.example\na.example|10.0.0.5|a.example\n" +
           "c.example|10.0.0.3|cdn.example.net c.example\n",
       "",
       true,
       {true, false, true},
       1},
      {"none resolve", "", "", false, {false, false, false}, 1},
      {"two names with the same answer",
       h + "|10.0.0.9|" + h + "\na.example|10.0.0.1|a.example b.example\n" +
           "b.example|10.0.0.1|a.example b.example\n",
       "",
       true,
       {true, true, false},
       1},
      {"an answer that names neither the name nor its alias",
       h + "|10.0.0.9|" + h + "\nb.example|10.0.0.2|cdn.example.net\n",
       "",
       true,
       {false, true, false},
       5},
      // Timed out: the names are not asked again one by one (a dead DNS server
      // would cost the bound twice), only the host name.
      {"the lookups timed out", h + "|10.0.0.9|" + h + "\n", "124", true, {false, false, false}, 2},
      {"getent failed otherwise",
       h + "|10.0.0.9|" + h + "\nb.example|10.0.0.2|b.example\n",
       "1",
       true,
       {false, true, false},
       5},
  };
  int ran = 0;
  for (const auto& shell : fact_test_shells()) {
    for (const auto& c : cases) {
      std::string dir = fact_test_dir("dns");
      std::ofstream(dir + "/db") << c.db;
      fact_test_tool(dir, "getent", kFakeGetent);
      std::string env = "FAKE_DB='" + dir + "/db'";
      if (*c.rc) env += std::string(" FAKE_RC=") + c.rc;
      HostFacts f;
      parse_fact_output(fact_test_run(shell, dir, o, env), 0, f);
      SCOPED_TRACE(shell + ": " + c.what);
      EXPECT_TRUE(f.complete);
      EXPECT_EQ(f.hostname_resolves, c.hostname_ok);
      ASSERT_EQ(f.dns.size(), 3u);
      for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(f.dns[i].name, o.dns_names[i]);
        EXPECT_EQ(f.dns[i].resolved, c.ok[i]) << f.dns[i].name;
      }
      auto calls = fact_test_calls(dir, "getent");
      EXPECT_EQ(calls.size(), c.getent_calls);
      if (!calls.empty()) {
        EXPECT_EQ(calls[0], "hosts " + h + " a.example b.example c.example");
      }
      if (c.getent_calls == 5 && calls.size() == 5) {
        EXPECT_EQ(calls[4], "hosts c.example");
      }
      if (c.getent_calls == 2 && calls.size() == 2) {
        EXPECT_EQ(calls[1], "hosts " + h);
      }
    }
    ++ran;
  }
  EXPECT_GE(ran, 1);
}

// timedatectl only where a system bus can answer it (it fails without one); the
// next NTP client then, as when timedatectl fails.
TEST(Script, TimedatectlOnlyWithASystemBus) {
  bool bus =
      std::system("[ -S /run/dbus/system_bus_socket ] || [ -S /var/run/dbus/system_bus_socket ]") ==
      0;
  int ran = 0;
  for (const auto& shell : fact_test_shells()) {
    for (bool with_bus : {true, false}) {
      std::string dir = fact_test_dir("ntp");
      fact_test_tool(dir, "timedatectl", "echo '  NTP synchronized: yes'\n");
      fact_test_tool(dir, "chronyc", "echo 'Leap status     : Not synchronised'\n");
      HostFacts f;
      parse_fact_output(
          fact_test_run(shell, dir, ScriptOptions{},
                        with_bus ? "DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent/bus"
                                 : "-u DBUS_SYSTEM_BUS_ADDRESS"),
          0, f);
      SCOPED_TRACE(shell + (with_bus ? ": with a bus" : ": without"));
      EXPECT_TRUE(f.clock.ntp_known);
      if (with_bus || bus) {
        EXPECT_EQ(f.clock.ntp_source, "timedatectl");
        EXPECT_TRUE(f.clock.ntp_synchronized);
        EXPECT_EQ(fact_test_calls(dir, "timedatectl").size(), 1u);
        EXPECT_TRUE(fact_test_calls(dir, "chronyc").empty());
      } else {
        EXPECT_EQ(f.clock.ntp_source, "chronyc");
        EXPECT_FALSE(f.clock.ntp_synchronized);
        EXPECT_TRUE(fact_test_calls(dir, "timedatectl").empty());
        EXPECT_EQ(fact_test_calls(dir, "chronyc").size(), 1u);
      }
    }
    ++ran;
  }
  EXPECT_GE(ran, 1);
}

// The clock from bash's EPOCHREALTIME where the shell has it, else from date.
TEST(Script, ClockWithoutDateWhereTheShellHasIt) {
  int ran = 0;
  for (const auto& shell : fact_test_shells()) {
    std::string dir = fact_test_dir("clock");
    fact_test_tool(dir, "date", "exec /bin/date \"$@\"\n");
    HostFacts f;
    std::string out = fact_test_run(shell, dir, ScriptOptions{});
    parse_fact_output(out, 0, f);
    bool epoch_var =
        std::system((shell + " -c '[ -n \"${EPOCHREALTIME:-}\" ]' 2>/dev/null").c_str()) == 0;
    SCOPED_TRACE(shell);
    EXPECT_GT(f.clock.epoch, 1.6e9);
    auto calls = fact_test_calls(dir, "date");
    if (epoch_var) {
      EXPECT_TRUE(calls.empty());
    } else {
      ASSERT_FALSE(calls.empty());
      EXPECT_EQ(calls[0], "+%s.%N");
    }
    ++ran;
  }
  EXPECT_GE(ran, 1);
}

// The bootstrap tells root from other users by /proc/self/status's effective
// uid, and by id where that file cannot be read.
TEST(Script, BootstrapFindsRootWithoutIdOrWithIt) {
  std::string dir = fact_test_dir("bootstrap");
  fact_test_tool(dir, "id", "exec /usr/bin/id \"$@\"\n");
  fact_test_tool(dir, "sudo", "exit 1\n");
  std::ofstream(dir + "/input") << "\necho \"ran as $1\"\n";
  std::string cmd = bootstrap_command();
  // The login shell runs the command line: here sh -c with it.
  std::ofstream(dir + "/login.sh") << cmd << "\n";
  auto run = [&](const std::string& prefix) {
    std::remove((dir + "/id.calls").c_str());
    std::string c = prefix + " env PATH='" + dir + "/bin':/usr/bin:/bin sh '" + dir +
                    "/login.sh' < '" + dir + "/input' > '" + dir + "/out' 2>/dev/null";
    int rc = std::system(c.c_str());
    return std::make_pair(rc, pai::util::read_file(dir + "/out").value());
  };
  bool root = geteuid() == 0;
  auto [rc, out] = run("");
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(out, root ? "ran as root\n" : "ran as user\n");
  EXPECT_TRUE(fact_test_calls(dir, "id").empty());
  if (!root) GTEST_SKIP() << "not root: no mount namespace for the fallback";
  // Without /proc (a tmpfs over it in a mount namespace of its own): id.
  if (std::system("unshare -m true 2>/dev/null") != 0) GTEST_SKIP() << "no unshare -m here";
  auto [rc2, out2] = run("unshare -m sh -c 'mount -t tmpfs none /proc && exec \"$@\"' sh");
  ASSERT_EQ(rc2, 0);
  EXPECT_EQ(out2, "ran as root\n");
  EXPECT_EQ(fact_test_calls(dir, "id"), std::vector<std::string>{"-u"});
  // Another user: neither root nor a working sudo.
  if (std::system("setpriv --version >/dev/null 2>&1") == 0) {
    EXPECT_EQ(std::system(("chmod -R a+rwX '" + dir + "'").c_str()), 0);
    auto [rc3, out3] = run("setpriv --reuid=65534 --regid=65534 --clear-groups");
    ASSERT_EQ(rc3, 0);
    EXPECT_EQ(out3, "ran as user\n");
    EXPECT_TRUE(fact_test_calls(dir, "id").empty());
  }
}

// The listeners come from ss where it answers and from /proc/net/tcp where it is
// missing or fails (an old ss without -H, a kernel without socket diagnostics):
// either way a socket this test listens on is seen, under every shell.
TEST(Script, ListenersFromSsOrProcNetTcp) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  int port = ntohs(a.sin_port);
  bool have_ss = std::system("command -v ss >/dev/null 2>&1") == 0;
  for (const auto& shell : fact_test_shells()) {
    for (bool ss_fails : {false, true}) {
      if (!ss_fails && !have_ss) continue;
      SCOPED_TRACE(shell + (ss_fails ? ": ss fails" : ": ss"));
      std::string dir = fact_test_dir("listeners");
      if (ss_fails) fact_test_tool(dir, "ss", "echo \"ss: invalid option -- 'H'\" >&2; exit 255\n");
      std::string out = fact_test_run(shell, dir, ScriptOptions{});
      EXPECT_EQ(out.find("\n@@ss\n") != std::string::npos, !ss_fails);
      HostFacts f;
      parse_fact_output(out, 0, f);
      bool saw = false;
      for (const auto& l : f.listening) saw |= l.address == "127.0.0.1" && l.port == port && !l.v6;
      EXPECT_TRUE(saw) << "127.0.0.1:" << port << " not among " << f.listening.size();
    }
  }
  ::close(fd);
}

// The processes install cares about, by their /proc/PID/comm: one grep where it
// answers, the shell's loop where grep fails; a name comm cuts at 15 characters
// is known by its start.
TEST(Script, ProcessesByName) {
  std::string dir = fact_test_dir("processes");
  std::string kubelet = dir + "/kubelet", timesync = dir + "/systemd-timesyncd";
  ASSERT_EQ(
      std::system(("cp /bin/sleep '" + kubelet + "' && cp /bin/sleep '" + timesync + "'").c_str()),
      0);
  pid_t pids[2];
  const std::string* progs[2] = {&kubelet, &timesync};
  for (int i = 0; i < 2; ++i) {
    pids[i] = ::fork();
    ASSERT_GE(pids[i], 0);
    if (pids[i] == 0) {
      ::execl(progs[i]->c_str(), progs[i]->c_str(), "30", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  // Both exec'd: their comm names them (at most 5 s).
  const char* names[2] = {"kubelet", "systemd-timesyn"};
  for (int i = 0; i < 2; ++i) {
    std::string comm;
    for (int t = 0; t < 500 && comm != names[i]; ++t) {
      std::ifstream in("/proc/" + std::to_string(pids[i]) + "/comm");
      if (!std::getline(in, comm) || comm != names[i]) ::usleep(10000);
    }
    ASSERT_EQ(comm, names[i]);
  }
  for (const auto& shell : fact_test_shells()) {
    for (bool grep_fails : {false, true}) {
      SCOPED_TRACE(shell + (grep_fails ? ": grep fails" : ": grep"));
      std::string d = fact_test_dir("processes-run");
      if (grep_fails) fact_test_tool(d, "grep", "exit 2\n");
      HostFacts f;
      parse_fact_output(fact_test_run(shell, d, ScriptOptions{}), 0, f);
      auto has = [&](const char* n) {
        return std::find(f.processes.begin(), f.processes.end(), n) != f.processes.end();
      };
      EXPECT_TRUE(has("kubelet"));
      EXPECT_TRUE(has("systemd-timesyncd"));
      EXPECT_EQ(std::count(f.processes.begin(), f.processes.end(), "kubelet"), 1);
    }
  }
  for (pid_t p : pids) {
    ::kill(p, SIGKILL);
    ::waitpid(p, nullptr, 0);
  }
}
