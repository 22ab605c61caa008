// The node maintain use case on the quickstart cluster over a scripted SSH
// transport (no HiveD: plain order): the driver package of the host's OS at the
// version apt offers, the other branch it replaces and its hold passed on, a
// reboot; a version apt does not offer refused; a host with nothing to change
// left out of the batches; the change script unholds, installs, holds again and
// reboots; the dry run changes nothing.

#include "deploy/maintain.h"

#include <gtest/gtest.h>

#include "deploy/journal.h"
#include "usecase_fixture.h"

namespace pai::deploy {
namespace {

using namespace usecase_test;

// A host's read: Ubuntu 22.04, nvidia-driver-535 installed and held, apt offering
// 550 and 560, nvidia-smi reporting 4 GPUs at `smi`.
testing::ScriptedAnswer maintain_read(const std::string& smi) {
  std::string out =
      "os ubuntu 22.04\n"
      "pkg nvidia-driver-535 535.104.05-0ubuntu1\n"
      "pkg kubelet 1.30.10-1.1\n"
      "hold nvidia-driver-535\n"
      "hold kubelet\n"
      "smi-ok\n";
  for (int i = 0; i < 4; ++i) out += "smi " + smi + "\n";
  out += "avail nvidia-driver-550 550.127.05-0ubuntu1\n";
  out += "avail nvidia-driver-550 550.90.07-0ubuntu1\n";
  return {.out = out};
}

MaintainRequest maintain_request(const TempCluster& c) {
  MaintainRequest r;
  r.cluster_dir = c.dir();
  r.hosts = {"pai-worker1", "pai-worker2"};
  r.driver = "550";
  r.dry_run = true;
  return r;
}

TEST(MaintainUseCase, PlansTheDriverPackageOfTheOsAndAReboot) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  ssh.on("apt-cache madison", maintain_read("535.104.05"));
  MaintainDeps deps;
  deps.install = deps_of(c.dir(), ssh);
  auto p = plan_maintain(maintain_request(c), deps, {});
  ASSERT_TRUE(p.ok()) << p.error().error.message;
  ASSERT_EQ(p->hosts.size(), 2u);
  const HostChange& h = p->hosts[0];
  EXPECT_EQ(h.host, "pai-worker1");
  EXPECT_EQ(h.os, "ubuntu 22.04");
  EXPECT_EQ(h.gpus, 4);
  EXPECT_EQ(h.driver_now, "535.104.05");
  EXPECT_EQ(h.driver_expected, "550.127.05");
  ASSERT_EQ(h.packages.size(), 1u);
  EXPECT_EQ(h.packages[0].name, "nvidia-driver-550");
  EXPECT_EQ(h.packages[0].from, "");
  EXPECT_EQ(h.packages[0].to, "550.127.05-0ubuntu1");  // the newest of the branch
  EXPECT_EQ(h.packages[0].removes, std::vector<std::string>{"nvidia-driver-535"});
  EXPECT_TRUE(h.packages[0].held);  // the old driver's hold passes to the new one
  EXPECT_TRUE(h.reboot);
  EXPECT_FALSE(p->maintenance.hived);  // no HiveD: plain order
  ASSERT_EQ(p->maintenance.batches.size(), 2u);
  EXPECT_EQ(p->maintenance.batches[0].nodes, std::vector<std::string>{"pai-worker1"});
  // Reading changes nothing: no apt-get install, no reboot.
  EXPECT_FALSE(ssh.ran("apt-get install"));
  EXPECT_FALSE(ssh.ran("reboot"));
  auto o = apply_maintain(*p, {});
  EXPECT_EQ(o.end, MaintainOutcome::End::DryRun);
  EXPECT_FALSE(ssh.ran("kubectl"));

  std::string s = MaintainPlan::change_script(h, "RUN1");
  auto at = [&](const std::string& x) { return s.find(x); };
  ASSERT_NE(at("apt-mark unhold nvidia-driver-535"), std::string::npos) << s;
  ASSERT_NE(at("apt-get install -y -q --allow-downgrades nvidia-driver-550=550.127.05-0ubuntu1"),
            std::string::npos)
      << s;
  ASSERT_NE(at("apt-mark hold nvidia-driver-550"), std::string::npos) << s;
  ASSERT_NE(at("systemctl reboot"), std::string::npos) << s;
  EXPECT_LT(at("apt-mark unhold"), at("apt-get install"));
  EXPECT_LT(at("apt-get install"), at("apt-mark hold"));
  EXPECT_LT(at("apt-mark hold"), at("RUN1"));
  EXPECT_LT(at("RUN1"), at("systemctl reboot"));
}

TEST(MaintainUseCase, NotBesideAnotherRunOfTheCluster) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  ssh.on("apt-cache madison", maintain_read("535.104.05"));
  MaintainDeps deps;
  deps.install = deps_of(c.dir(), ssh);
  MaintainRequest r = maintain_request(c);
  r.dry_run = false;
  r.yes = true;
  auto p = plan_maintain(r, deps, {});
  ASSERT_TRUE(p.ok()) << p.error().error.message;
  LocalLock upgrade;
  ASSERT_TRUE(upgrade.acquire(c.dir() + "/.paictl/install.lock", "upgrade").ok());
  auto o = apply_maintain(*p, {});
  EXPECT_EQ(o.end, MaintainOutcome::End::Busy);
  ASSERT_TRUE(o.error.has_value());
  EXPECT_NE(o.error->error.message.find("(paictl upgrade, pid "), std::string::npos)
      << o.error->error.message;
  EXPECT_FALSE(ssh.ran("apt-get install"));
  EXPECT_FALSE(ssh.ran("cordon"));
}

TEST(MaintainUseCase, AVersionAptDoesNotOfferIsRefused) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  ssh.on("apt-cache madison", maintain_read("535.104.05"));
  MaintainDeps deps;
  deps.install = deps_of(c.dir(), ssh);
  auto r = maintain_request(c);
  r.driver = "550.54.14";
  auto p = plan_maintain(r, deps, {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().error.kind, util::Error::Kind::Input);
  EXPECT_NE(p.error().error.message.find("550.54.14"), std::string::npos);
  EXPECT_NE(p.error().error.message.find("550.127.05-0ubuntu1"), std::string::npos);
}

TEST(MaintainUseCase, AHostThatHasTheDriverIsInNoBatch) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  ssh.on("apt-cache madison", maintain_read("535.104.05"));
  auto done = maintain_read("550.127.05");
  done.out += "pkg nvidia-driver-550 550.127.05-0ubuntu1\n";
  // pai-worker2 already runs 550.127.05, and has no other driver package.
  std::string out;
  std::istringstream in(done.out);
  for (std::string line; std::getline(in, line);)
    if (line.find("535") == std::string::npos) out += line + "\n";
  ssh.on("apt-cache madison", {.out = out}, "pai-worker2");
  MaintainDeps deps;
  deps.install = deps_of(c.dir(), ssh);
  auto p = plan_maintain(maintain_request(c), deps, {});
  ASSERT_TRUE(p.ok()) << p.error().error.message;
  EXPECT_FALSE(p->hosts[1].changes());
  ASSERT_EQ(p->maintenance.batches.size(), 1u);
  EXPECT_EQ(p->maintenance.batches[0].nodes, std::vector<std::string>{"pai-worker1"});
}

TEST(MaintainUseCase, NothingToChangeAndUnknownHostsAreRefused) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  MaintainDeps deps;
  deps.install = deps_of(c.dir(), ssh);
  auto r = maintain_request(c);
  r.driver.clear();
  auto p = plan_maintain(r, deps, {});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().error.message.find("nothing to change"), std::string::npos);
  r = maintain_request(c);
  r.hosts = {"pai-worker9"};
  p = plan_maintain(r, deps, {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().about, UseCaseError::About::UnknownHost);
  EXPECT_TRUE(ssh.calls().empty());
}

}  // namespace
}  // namespace pai::deploy
