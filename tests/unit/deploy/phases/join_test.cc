// The `join` phase over the scripted transport: a worker joins with a token
// the master mints, sent on the join's stdin only; leftover tokens of a killed
// run are deleted.

#include <gtest/gtest.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

const char* kJoinCommand =
    "kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef "
    "--discovery-token-ca-cert-hash sha256:0011\n";

TEST(JoinPhase, AFreshWorkerNeedsToJoinADoneOneIsUpToDate) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& join = named(phases, "join");
  EXPECT_EQ(join.traits().hosts, PhaseTraits::Hosts::AllButMaster);
  EXPECT_FALSE(join.traits().apply_changes_others_reads);
  ScriptedHosts run;
  run.add(master_spec());
  HostRun& w1 = run.add(worker_spec("w1"));
  run.transport.on("/api/v1/nodes", {.out = api_answer("NodeList", {node("master")})});
  auto o = observe(join, w1);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs, std::vector<std::string>{
                         "kubeadm join 10.0.0.1:6443 (a token valid 15 min, sent on stdin)"});
  // Its kubelet configured and its Node listed: up to date.
  run.transport.on("kubelet.conf ] && echo kubelet_conf=1", {.out = "kubelet_conf=1\nca=1\n"});
  run.transport.on("/api/v1/nodes", {.out = api_answer("NodeList", {node("master"), node("w1")})});
  EXPECT_TRUE(observe(join, w1).needs.empty());
  // Configured but unknown to the cluster: reset, then joined again.
  run.transport.on("/api/v1/nodes", {.out = api_answer("NodeList", {node("master")})});
  o = observe(join, w1);
  ASSERT_EQ(o.needs.size(), 2u);
  EXPECT_EQ(o.needs[0], "reset a join the cluster does not know (kubeadm reset -f)");
}

TEST(JoinPhase, TheTokenGoesOnTheJoinsStdinOnlyAndIsDeletedAfter) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& join = named(phases, "join");
  ScriptedHosts run;
  run.add(master_spec());
  HostRun& w1 = run.add(worker_spec("w1"));
  run.transport.on("kubeadm token create", {.out = kJoinCommand}, "master");
  auto o = observe(join, w1);
  ASSERT_TRUE(join.apply(w1, o.needs).ok());
  // Minted once on the master, with a short TTL and this run's description.
  EXPECT_EQ(run.transport.count("kubeadm token create --ttl 900s", "master"), 1u);
  EXPECT_EQ(run.transport.count("paictl join wave of run ", "master"), 1u);
  auto calls = run.transport.calls_to("w1");
  ASSERT_FALSE(calls.empty());
  const auto& joined = calls.back();
  EXPECT_NE(joined.script.find("kubeadm join --config /dev/stdin"), std::string::npos);
  EXPECT_NE(joined.input.find("token: \"abcdef.0123456789abcdef\""), std::string::npos);
  EXPECT_NE(joined.input.find("sha256:0011"), std::string::npos);
  // Never in a command line, on any host.
  for (const auto& c : run.transport.calls())
    EXPECT_EQ(c.command.find("0123456789abcdef"), std::string::npos) << c.command;
  // The run masks it from now on.
  EXPECT_EQ(run.masker.mask("abcdef.0123456789abcdef"), "***");
  // The wave's last worker deletes it (by its id), reading the master after.
  EXPECT_EQ(run.transport.count("kubeadm token delete abcdef", "master"), 1u);
}

TEST(JoinPhase, ATokenAKilledRunLeftIsDeleted) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& join = named(phases, "join");
  ScriptedHosts run;
  run.add(master_spec());
  HostRun& w1 = run.add(worker_spec("w1"));
  HostRun& w2 = run.add(worker_spec("w2", 0, "10.0.0.3"));
  run.transport.on("kubelet.conf ] && echo kubelet_conf=1", {.out = "kubelet_conf=1\n"});
  run.transport.on("/api/v1/nodes", {.out = api_answer("NodeList", {node("w1"), node("w2")})});
  run.transport.on("kubeadm token list", {.out = "token=one111 10m paictl join of w1\n"
                                                 "token=wave22 10m paictl join wave of run 1-2\n"});
  auto o = observe(join, w1);
  // w1's own, and (the first worker) the wave's of a run that is gone.
  EXPECT_EQ(o.needs, std::vector<std::string>{"delete 2 join token(s) an interrupted run left"});
  EXPECT_TRUE(observe(join, w2).needs.empty());
  ASSERT_TRUE(join.apply(w1, o.needs).ok());
  EXPECT_TRUE(run.transport.ran("kubeadm token delete one111", "master"));
  EXPECT_TRUE(run.transport.ran("kubeadm token delete wave22", "master"));
  EXPECT_FALSE(run.transport.ran("kubeadm join", "w1"));  // joined already
}

TEST(JoinPhase, AFailedMintJoinsNothing) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& join = named(phases, "join");
  ScriptedHosts run;
  run.add(master_spec());
  HostRun& w1 = run.add(worker_spec("w1"));
  run.transport.on("kubeadm token create",
                   {.err = "failed to create or update bootstrap token\n", .exit_status = 1},
                   "master");
  auto r = join.apply(w1, {"kubeadm join 10.0.0.1:6443 (a token valid 15 min, sent on stdin)"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "minting a join token failed (exit 1): failed to create or update bootstrap token");
  EXPECT_FALSE(run.transport.ran("kubeadm join", "w1"));
  // Printed no join command: nothing joins either.
  run.transport.on("kubeadm token create", {.out = "abcdef.0123\n"}, "master");
  r = join.apply(w1, {"kubeadm join 10.0.0.1:6443 (a token valid 15 min, sent on stdin)"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "kubeadm token create printed no join command");
}

}  // namespace
}  // namespace pai::deploy::phase_test
