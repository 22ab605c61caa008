// The install use case's plans and decisions, with the scripted SSH transport
// and http::FakeClient for ARM: a hybrid install refused by the pre-install
// checks before anything is created in Azure, Azure's changes not confirmed,
// --azure-only's plan, a dry run's plan document, the cluster directory's lock.

#include "deploy/install.h"

#include <gtest/gtest.h>

#include "deploy/install_json.h"
#include "usecase_fixture.h"

namespace pai::deploy {
namespace {

using namespace usecase_test;

InstallRequest install_request_for(const TempCluster& c) {
  InstallRequest r;
  r.cluster_dir = c.dir();
  r.templates_dir = std::string(PAI_SOURCE_DIR) + "/templates";
  r.layouts_dir = std::string(PAI_SOURCE_DIR) + "/layouts";
  r.azure = test_azure_access();
  return r;
}

TEST(InstallUseCase, ChecksRefuseTheInstallBeforeAnythingIsCreatedInAzure) {
  TempCluster c;
  c.make_hybrid();
  std::string layout = c.read("layout.yaml");
  http::FakeClient arm;
  arm_has_nothing(arm);
  testing::ScriptedTransport ssh;
  ssh.fallback.failure = remote::Failure::Connect;  // no host answers: the checks fail
  ssh.fallback.error = "connection refused";
  Recorder rec;
  rec.answer = Answer::Yes;
  auto cb = rec.callbacks();
  InstallRequest r = install_request_for(c);
  r.yes = true;

  auto plan = plan_install(r, deps_of(c.dir(), ssh, &arm), cb);
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  ASSERT_TRUE(plan->azure);
  EXPECT_TRUE(plan->azure->changed());
  ASSERT_TRUE(plan->checks);
  EXPECT_TRUE(plan->checks_failed());
  EXPECT_FALSE(plan->hosts) << "the hosts are planned only once Azure made its VMs";
  EXPECT_TRUE(rec.saw(UseCaseEvent::Kind::ChecksBeforeAzure));

  auto out = apply_install(*plan, cb);
  EXPECT_EQ(out.end, InstallOutcome::End::ChecksFailed);
  EXPECT_FALSE(out.azure);
  EXPECT_EQ(arm_writes(arm), 0u) << "nothing is created in Azure";
  EXPECT_EQ(c.read("layout.yaml"), layout);
  EXPECT_TRUE(rec.questions.empty()) << "nothing is asked before a refusal";
  EXPECT_TRUE(rec.saw(UseCaseEvent::Kind::InstallEnded));

  auto doc = install_json(*plan, out);
  EXPECT_EQ(doc["apiVersion"], "paictl.install/v1");
  EXPECT_EQ(doc["kind"], "Install");
  EXPECT_EQ(doc["azure"]["resources"].size(), 4u);
  EXPECT_EQ(doc["plan"]["hosts"].size(), 3u);
  EXPECT_FALSE(doc.contains("result"));
}

TEST(InstallUseCase, AzureChangesNotConfirmedChangeNothing) {
  for (Answer a : {Answer::No, Answer::NoTerminal}) {
    TempCluster c;
    c.make_hybrid();
    http::FakeClient arm;
    arm_has_nothing(arm);
    testing::ScriptedTransport ssh;
    Recorder rec;
    rec.answer = a;
    auto cb = rec.callbacks();
    InstallRequest r = install_request_for(c);
    r.azure_only = true;

    auto plan = plan_install(r, deps_of(c.dir(), ssh, &arm), cb);
    ASSERT_TRUE(plan.ok()) << plan.error().error.message;
    EXPECT_FALSE(plan->checks) << "--azure-only runs no checks on the hosts";
    auto out = apply_install(*plan, cb);
    EXPECT_EQ(out.end, a == Answer::No ? InstallOutcome::End::AzureDeclined
                                       : InstallOutcome::End::AzureNoTerminal);
    ASSERT_EQ(rec.questions.size(), 1u);
    EXPECT_EQ(rec.questions[0], Question::Kind::ApplyAzure);
    EXPECT_EQ(arm_writes(arm), 0u);
    EXPECT_TRUE(ssh.calls().empty()) << "no host is reached";
  }
}

TEST(InstallUseCase, AzureOnlyDryRunIsArmsPlan) {
  TempCluster c;
  c.make_hybrid();
  http::FakeClient arm;
  arm_has_nothing(arm);
  testing::ScriptedTransport ssh;
  Recorder rec;
  auto cb = rec.callbacks();
  InstallRequest r = install_request_for(c);
  r.azure_only = true;
  r.dry_run = true;

  auto plan = plan_install(r, deps_of(c.dir(), ssh, &arm), cb);
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  EXPECT_TRUE(rec.saw(UseCaseEvent::Kind::ReadingAzure));
  EXPECT_TRUE(rec.saw(UseCaseEvent::Kind::AzurePlanned));
  auto out = apply_install(*plan, cb);
  EXPECT_EQ(out.end, InstallOutcome::End::AzureOnly);
  EXPECT_TRUE(out.azure_changed);
  EXPECT_TRUE(rec.questions.empty());
  EXPECT_EQ(arm_writes(arm), 0u);

  auto doc = install_json(*plan, out);
  EXPECT_EQ(doc["cluster"], c.dir());
  std::vector<std::string> actions;
  for (const auto& x : doc["azure"]["resources"]) actions.push_back(x["action"]);
  EXPECT_EQ(actions, (std::vector<std::string>{"create", "create", "create", "create"}));
  EXPECT_FALSE(doc["azure"].contains("result"));
  EXPECT_FALSE(doc.contains("plan"));
}

TEST(InstallUseCase, AzureOnlyNeedsAnAzureSection) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  InstallRequest r = install_request_for(c);
  r.azure_only = true;
  auto plan = plan_install(r, deps_of(c.dir(), ssh), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().error.kind, util::Error::Kind::Input);
  EXPECT_EQ(plan.error().error.message,
            c.dir() + "/config.yaml has no azure: section (docs/azure.md)");
}

TEST(InstallUseCase, DryRunPlanDocument) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  ssh.unreachable("pai-worker2");
  Recorder rec;
  auto cb = rec.callbacks();
  InstallRequest r = install_request_for(c);
  r.dry_run = true;

  auto plan = plan_install(r, deps_of(c.dir(), ssh), cb);
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  EXPECT_FALSE(plan->azure);
  ASSERT_TRUE(plan->hosts) << "an on-prem cluster's hosts are planned before anything changes";
  EXPECT_TRUE(plan->hosts->dry_run);
  EXPECT_EQ(rec.kinds.front(), UseCaseEvent::Kind::Observing);
  EXPECT_EQ(rec.counts.front(), 3u);
  EXPECT_TRUE(rec.saw(UseCaseEvent::Kind::HostsPlanned));
  EXPECT_FALSE(fs::exists(c.path(".paictl/install.lock"))) << "a dry run takes no lock";

  auto out = apply_install(*plan, cb);
  ASSERT_EQ(out.end, InstallOutcome::End::Hosts);
  EXPECT_EQ(out.hosts.end, HostStage::End::Failed) << "pai-worker2 is unreachable";
  EXPECT_TRUE(unreached(out.hosts.plan->plan));
  EXPECT_TRUE(rec.questions.empty());
  EXPECT_TRUE(rec.saw(UseCaseEvent::Kind::HostsEnded));

  auto doc = install_json(*plan, out);
  EXPECT_EQ(doc["apiVersion"], "paictl.install/v1");
  EXPECT_EQ(doc["kind"], "Install");
  EXPECT_EQ(doc["cluster"], c.dir());
  EXPECT_EQ(doc["plan"]["dry_run"], true);
  std::vector<std::string> hosts;
  for (const auto& h : doc["plan"]["hosts"]) hosts.push_back(h["host"]);
  EXPECT_EQ(hosts, (std::vector<std::string>{"pai-master", "pai-worker1", "pai-worker2"}));
  EXPECT_FALSE(doc.contains("result"));
  EXPECT_FALSE(doc.contains("azure"));
}

TEST(InstallUseCase, APlanForAnApplyHoldsTheClusterDirectorysLock) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  ssh.fallback.failure = remote::Failure::Connect;
  ssh.fallback.error = "connection refused";
  InstallRequest r = install_request_for(c);
  r.cluster_dir = c.dir() + "/";
  auto first = plan_install(r, deps_of(c.dir(), ssh), {});
  ASSERT_TRUE(first.ok()) << first.error().error.message;
  EXPECT_EQ(first->hosts->cluster->cluster_dir, c.dir()) << "without its trailing slash";
  auto second = plan_install(r, deps_of(c.dir(), ssh), {});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().error.kind, util::Error::Kind::Input);
  EXPECT_EQ(second.error().error.message.rfind("another install of this cluster is running", 0), 0u)
      << second.error().error.message;
  // The apply's end releases it.
  auto out = apply_install(*first, {});
  EXPECT_EQ(out.hosts.end, HostStage::End::Failed);
  EXPECT_TRUE(plan_install(r, deps_of(c.dir(), ssh), {}).ok());
}

TEST(InstallUseCase, ALimitNamesHostsOfTheLayout) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  InstallRequest r = install_request_for(c);
  r.dry_run = true;
  r.limit = {"pai-worker1", "nosuch"};
  auto plan = plan_install(r, deps_of(c.dir(), ssh), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().about, UseCaseError::About::UnknownHost);
  EXPECT_EQ(plan.error().error.message, "nosuch is not a host of " + c.dir() + "/layout.yaml");
  EXPECT_TRUE(ssh.calls().empty());
}

TEST(InstallWentOn, RefusalsAndFailuresStopWhatFollows) {
  InstallOutcome o;
  o.end = InstallOutcome::End::AzureDeclined;
  EXPECT_TRUE(install_went_on(o));
  o.end = InstallOutcome::End::AzureNoTerminal;
  EXPECT_FALSE(install_went_on(o));
  o.end = InstallOutcome::End::ChecksFailed;
  EXPECT_FALSE(install_went_on(o));
  o.end = InstallOutcome::End::Hosts;
  o.hosts.end = HostStage::End::UpToDate;
  EXPECT_TRUE(install_went_on(o));
  o.hosts.end = HostStage::End::NoTerminal;
  EXPECT_FALSE(install_went_on(o));
  o.hosts.end = HostStage::End::Applied;
  EXPECT_TRUE(install_went_on(o)) << "an empty result is ok";
  o.hosts.result.hosts.push_back({});
  o.hosts.result.hosts.back().error = "connection refused";
  EXPECT_FALSE(install_went_on(o));
}

}  // namespace
}  // namespace pai::deploy
