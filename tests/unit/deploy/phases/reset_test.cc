// The `reset` phase over the scripted transport.

#include <gtest/gtest.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

TEST(ResetPhase, NeedsToRemoveWhatInstallLeftAndNothingOnAFreshHost) {
  InstallSettings s = install_settings();
  auto phases = reset_phases(s);
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0]->name(), "os");
  Phase& reset = named(phases, "reset");
  ScriptedHosts run;
  HostRun& h = run.add(worker_spec("w1"));
  // A fresh host: nothing of install's.
  auto o = observe(reset, h);
  ASSERT_TRUE(o.status.ok());
  EXPECT_TRUE(o.needs.empty());
  run.transport.on("command -v kubeadm >/dev/null && {",
                   {.out = "kube=1\npkg_kubeadm=1\npkg_containerd=1\nfstab=1\n"
                           "file_/etc/sysctl.d/99-paictl-kubernetes.conf=1\ncni=1\nstate=1\n"});
  o = observe(reset, h);
  EXPECT_EQ(o.needs, (std::vector<std::string>{"kubeadm reset -f", "purge containerd kubeadm",
                                               "restore the swap lines of /etc/fstab and swap on",
                                               "remove /etc/sysctl.d/99-paictl-kubernetes.conf",
                                               "remove the CNI configuration in /etc/cni/net.d",
                                               "restore modules and sysctls, remove /etc/paictl"}));
}

TEST(ResetPhase, ApplyResetsKubeadmUnderItsLockAndPutsBackWhatWasThere) {
  InstallSettings s = install_settings();
  auto phases = reset_phases(s);
  Phase& reset = named(phases, "reset");
  ScriptedHosts run;
  HostRun& h = run.add(worker_spec("w1"));
  ASSERT_TRUE(reset.apply(h, {"kubeadm reset -f", "purge kubeadm"}).ok());
  std::string script = run.transport.calls().back().script;
  EXPECT_NE(script.find("flock -w 900 9"), std::string::npos);
  EXPECT_NE(script.find("kubeadm reset -f"), std::string::npos);
  // Only the packages install added (not in packages.before) are purged.
  EXPECT_NE(script.find("grep -qx \"$p\" $before && continue"), std::string::npos);
  EXPECT_NE(script.find("sed -i 's/^# paictl: //' /etc/fstab; swapon -a"), std::string::npos);
  EXPECT_NE(script.find("rm -rf /etc/paictl\n"), std::string::npos);
  // Without kubeadm's need, no kubeadm reset.
  ASSERT_TRUE(reset.apply(h, {"purge kubeadm"}).ok());
  EXPECT_EQ(run.transport.calls().back().script.find("kubeadm reset -f"), std::string::npos);

  run.transport.on("apt-get purge", {.err = "E: dpkg was interrupted\n", .exit_status = 100});
  auto r = reset.apply(h, {"purge kubeadm"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "resetting the host failed (exit 100): E: dpkg was interrupted");
}

}  // namespace
}  // namespace pai::deploy::phase_test
