// The `control-plane` phase over the scripted transport.

#include <gtest/gtest.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

TEST(ControlPlanePhase, AFreshMasterNeedsKubeadmInit) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& cp = named(phases, "control-plane");
  EXPECT_TRUE(cp.traits().barrier);
  EXPECT_EQ(cp.traits().hosts, PhaseTraits::Hosts::Master);
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  auto o = observe(cp, m);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs, std::vector<std::string>{
                         "kubeadm init (Kubernetes v1.30.10, kubeadm.k8s.io/v1beta3, pods "
                         "10.244.0.0/16, services 10.96.0.0/12, endpoint 10.0.0.1:6443)"});
  // What an interrupted init left is cleaned up first.
  run.transport.on("manifests/kube-apiserver.yaml", {.out = "pki=1\nkubelet_config=1\n"});
  o = observe(cp, m);
  EXPECT_EQ(o.needs[0], "clean up an interrupted kubeadm init (kubeadm reset -f)");
}

TEST(ControlPlanePhase, AMasterWhoseApiServerAnswersIsUpToDate) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& cp = named(phases, "control-plane");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  run.transport.on("manifests/kube-apiserver.yaml", {.out = "admin=1\nmanifest=1\npki=1\n"});
  run.transport.on("/api/v1/nodes", {.out = api_answer("NodeList", {node("master")})});
  auto o = observe(cp, m);
  ASSERT_TRUE(o.status.ok());
  EXPECT_TRUE(o.needs.empty());
  // A killed run left init's own token.
  run.transport.on("kubeadm token list",
                   {.out = "token=abcdef 23h ... paictl install: kubeadm init's token\n"});
  o = observe(cp, m);
  EXPECT_EQ(o.needs, std::vector<std::string>{
                         "delete kubeadm init's bootstrap token (an interrupted run left it)"});
  // admin.conf there, no answer: the API server is waited for.
  run.transport.on("/api/v1/nodes", {.out = "{}\n"});
  o = observe(cp, m);
  EXPECT_TRUE(needs_has(o.needs, "wait for the API server"));
}

TEST(ControlPlanePhase, ApplyInitsWithItsConfigurationOnStdinThenDeletesInitsToken) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& cp = named(phases, "control-plane");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  auto o = observe(cp, m);
  ASSERT_TRUE(cp.apply(m, o.needs).ok());
  auto calls = run.transport.calls();
  ASSERT_GE(calls.size(), 3u);
  const auto& init = calls[calls.size() - 2];
  EXPECT_NE(init.script.find("kubeadm init --config /dev/stdin --skip-token-print"),
            std::string::npos);
  EXPECT_NE(init.script.find("flock -w 900 9"), std::string::npos);  // the kubeadm lock
  EXPECT_NE(init.input.find("kind: InitConfiguration"), std::string::npos);
  EXPECT_NE(init.input.find("advertiseAddress: 10.0.0.1"), std::string::npos);
  EXPECT_EQ(init.timeout_ms, 900000);
  EXPECT_NE(calls.back().script.find("kubeadm token delete"), std::string::npos);

  run.transport.on("kubeadm init",
                   {.err = "[ERROR Port-6443]: Port 6443 is in use\n", .exit_status = 1});
  auto r = cp.apply(m, o.needs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "kubeadm init failed (exit 1): [ERROR Port-6443]: Port 6443 is in use");
}

TEST(ControlPlanePhase, WaitingForTheApiServerSleepsOnTheRunsClock) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& cp = named(phases, "control-plane");
  ScriptedHosts run;
  FakeClock fc;
  run.run.clock = fc.clock();
  HostRun& m = run.add(master_spec());
  run.transport.on("get --raw=/readyz", {.exit_status = 1});
  auto r = cp.apply(m, {"wait for the API server (admin.conf is there, /readyz does not answer)"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "the API server does not answer on the master");
  ASSERT_FALSE(fc.sleeps.empty());
  EXPECT_EQ(fc.sleeps[0], 0.1);  // then 0.2, 0.4 ... every second
  EXPECT_EQ(fc.sleeps.back(), 1.0);
  EXPECT_GE(fc.t, 1000.0 + s.wait_s);
  // It answers on the third look.
  size_t looks = 0;
  run.transport.on("get --raw=/readyz", [&](const testing::ScriptedCall&) {
    return testing::ScriptedAnswer{.exit_status = ++looks >= 3 ? 0 : 1};
  });
  EXPECT_TRUE(cp.apply(m, {"wait for the API server"}).ok());
  EXPECT_EQ(looks, 3u);
}

}  // namespace
}  // namespace pai::deploy::phase_test
