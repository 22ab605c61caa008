// The `packages` phase over the scripted transport.

#include <gtest/gtest.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

const char* kPackagesDone =
    "pkg_kubeadm=1.30.10-1.1=hi\npkg_kubelet=1.30.10-1.1=hi\npkg_kubectl=1.30.10-1.1=hi\n"
    "pkg_containerd=1.7.12-0ubuntu2=ii\nsource_kube=1\n";

TEST(PackagesPhase, AFreshHostNeedsTheRepositoryThePackagesAndTheirHold) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& packages = named(phases, "packages");
  ScriptedHosts run;
  HostRun& cpu = run.add(worker_spec("w1"));
  HostRun& gpu = run.add(worker_spec("w2", 4));
  auto o = observe(packages, cpu);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs,
            (std::vector<std::string>{
                "add the Kubernetes v1.30 package repository "
                "(https://pkgs.k8s.io/core:/stable:/v1.30/deb/)",
                "install kubeadm=1.30.10-1.1 kubelet=1.30.10-1.1 kubectl=1.30.10-1.1 containerd",
                "hold kubeadm kubelet kubectl"}));
  EXPECT_EQ(cpu.facts()["kubeadm_package"], "");
  // A GPU host needs the NVIDIA Container Toolkit and its repository too.
  o = observe(packages, gpu);
  EXPECT_TRUE(needs_has(o.needs, "add the NVIDIA Container Toolkit package repository"));
  EXPECT_TRUE(needs_has(o.needs, "containerd nvidia-container-toolkit"));
  // Another version installed, or not held: installed again, held.
  run.transport.on("dpkg-query", {.out = "pkg_kubeadm=1.29.3-1.1=ii\nsource_kube=1\n"});
  o = observe(packages, cpu);
  EXPECT_TRUE(needs_has(o.needs, "install kubeadm=1.30.10-1.1"));
  EXPECT_TRUE(needs_has(o.needs, "hold kubeadm kubelet kubectl"));
  EXPECT_EQ(cpu.facts()["kubeadm_package"], "1.29.3-1.1");
}

TEST(PackagesPhase, ADoneHostIsUpToDateAndItsKubeadmVersionIsKnown) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  ScriptedHosts run;
  HostRun& h = run.add(worker_spec("w1"));
  run.transport.on("dpkg-query", {.out = kPackagesDone});
  auto o = observe(named(phases, "packages"), h);
  ASSERT_TRUE(o.status.ok());
  EXPECT_TRUE(o.needs.empty()) << o.needs[0];
  EXPECT_EQ(h.facts()["kubeadm_package"], "1.30.10-1.1");
}

TEST(PackagesPhase, ApplyInstallsAndHoldsThePackagesOfTheRelease) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  ScriptedHosts run;
  HostRun& h = run.add(worker_spec("w1", 2));
  ASSERT_TRUE(named(phases, "packages").apply(h, {"install kubeadm=1.30.10-1.1"}).ok());
  ASSERT_EQ(run.transport.calls().size(), 1u);
  std::string script = run.transport.calls()[0].script;
  EXPECT_NE(script.find("https://pkgs.k8s.io/core:/stable:/v1.30/deb/Release.key"),
            std::string::npos);
  EXPECT_NE(script.find("apt-get install -y -q --allow-change-held-packages kubeadm=1.30.10-1.1 "
                        "kubelet=1.30.10-1.1 kubectl=1.30.10-1.1 containerd "
                        "nvidia-container-toolkit\n"),
            std::string::npos);
  EXPECT_NE(script.find("apt-mark hold kubeadm kubelet kubectl"), std::string::npos);
  EXPECT_EQ(run.transport.calls()[0].timeout_ms, 1800000);

  run.transport.on(
      "apt-get update",
      {.err = "W: some warning\nE: Unable to locate package kubeadm\n", .exit_status = 100});
  auto r = named(phases, "packages").apply(h, {"install kubeadm=1.30.10-1.1"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "installing packages failed (exit 100): W: some warning / E: Unable to locate "
            "package kubeadm");
}

}  // namespace
}  // namespace pai::deploy::phase_test
