// The `kernel` phase over the scripted transport.

#include <gtest/gtest.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

const char* kKernelDone =
    "mod_overlay=1\nmod_br_netfilter=1\nmodules_file=1\nsysctl_file=1\n"
    "net.ipv4.ip_forward = 1\nnet.bridge.bridge-nf-call-iptables = 1\n"
    "net.bridge.bridge-nf-call-ip6tables = 1\n";

TEST(KernelPhase, AFreshHostNeedsModulesFilesAndSysctls) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& kernel = named(phases, "kernel");
  ScriptedHosts run;
  HostRun& h = run.add(worker_spec("w1"));
  run.transport.on("/proc/modules", {.out = "mod_overlay=1\nnet.ipv4.ip_forward = 0\n"});
  auto o = observe(kernel, h);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs, (std::vector<std::string>{
                         "load kernel modules br_netfilter",
                         "write /etc/modules-load.d/paictl-kubernetes.conf",
                         "write /etc/sysctl.d/99-paictl-kubernetes.conf",
                         "set net.ipv4.ip_forward, net.bridge.bridge-nf-call-iptables, "
                         "net.bridge.bridge-nf-call-ip6tables to 1"}));
  run.transport.on("/proc/modules", {.out = kKernelDone});
  EXPECT_TRUE(observe(kernel, h).needs.empty());
}

TEST(KernelPhase, ApplyWritesTheFilesAndLoadsTheModules) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  ScriptedHosts run;
  HostRun& h = run.add(worker_spec("w1"));
  ASSERT_TRUE(named(phases, "kernel").apply(h, {"load kernel modules br_netfilter"}).ok());
  ASSERT_EQ(run.transport.calls().size(), 1u);
  const std::string script = run.transport.calls()[0].script;
  EXPECT_NE(script.find("modprobe br_netfilter"), std::string::npos);
  EXPECT_NE(script.find("/etc/modules-load.d/paictl-kubernetes.conf.paictl-new"),
            std::string::npos);
  EXPECT_NE(script.find("sysctl -p /etc/sysctl.d/99-paictl-kubernetes.conf"), std::string::npos);
  run.transport.on("modprobe",
                   {.err = "modprobe: FATAL: Module br_netfilter not found\n", .exit_status = 1});
  auto r = named(phases, "kernel").apply(h, {"load kernel modules br_netfilter"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("loading modules and setting sysctls failed (exit 1)"),
            std::string::npos);
}

}  // namespace
}  // namespace pai::deploy::phase_test
