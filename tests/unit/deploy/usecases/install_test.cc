// The install use case's plans and decisions, with the scripted SSH transport
// and http::FakeClient for ARM: a hybrid install refused by the pre-install
// checks before anything is created in Azure, Azure's changes not confirmed,
// --azure-only's plan, a dry run's plan document, the cluster directory's lock.

#include "deploy/install.h"

#include <gtest/gtest.h>

#include <filesystem>

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
  EXPECT_EQ(second.error().error.message.rfind(
                "another paictl run on this cluster is running (paictl install, pid ", 0),
            0u)
      << second.error().error.message;
  // The apply's end releases it.
  auto out = apply_install(*first, {});
  EXPECT_EQ(out.hosts.end, HostStage::End::Failed);
  EXPECT_TRUE(plan_install(r, deps_of(c.dir(), ssh), {}).ok());
}

TEST(InstallUseCase, AnApplyThatCannotJournalIsRefusedBeforeAnyHost) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  // A directory where the journal should be: it cannot be written, as on a full disk.
  std::filesystem::create_directories(c.path(".paictl/install.journal"));
  InstallRequest r = install_request_for(c);
  auto plan = plan_install(r, deps_of(c.dir(), ssh), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().error.kind, util::Error::Kind::Input);
  EXPECT_EQ(plan.error().error.message.rfind("the install journal cannot be written (", 0), 0u)
      << plan.error().error.message;
  EXPECT_NE(plan.error().error.message.find("nothing was changed"), std::string::npos);
  EXPECT_TRUE(ssh.calls().empty()) << "a host was reached";
  // A dry run writes no journal and is not refused.
  r.dry_run = true;
  EXPECT_TRUE(plan_install(r, deps_of(c.dir(), ssh), {}).ok());
}

TEST(InstallUseCase, HostLogsThatCannotBeKeptAreAWarning) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  std::filesystem::create_directories(c.path(".paictl"));
  c.write(".paictl/logs", "a file where the logs' directory should be");
  Recorder rec;
  auto cb = rec.callbacks();
  auto plan = plan_install(install_request_for(c), deps_of(c.dir(), ssh), cb);
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  ASSERT_EQ(rec.warnings.size(), 1u);
  EXPECT_EQ(rec.warnings[0], "the hosts' logs cannot be kept: " + c.path(".paictl/logs") +
                                 " is not a directory (the run goes on; its journal records "
                                 "what changes)");
}

TEST(InstallUseCase, AnAzureSecretFileOthersMayReadIsAWarning) {
  TempCluster c;
  c.make_hybrid();
  ::chmod(c.path("azure-secret").c_str(), 0644);
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
  ASSERT_EQ(rec.warnings.size(), 1u);
  EXPECT_EQ(rec.warnings[0], "client-secret-file " + c.path("azure-secret") +
                                 " holds the service principal's secret but its mode is 0644, so "
                                 "other users may read it (run: chmod 600 " +
                                 c.path("azure-secret") + ")");
  ::chmod(c.path("azure-secret").c_str(), 0600);
  Recorder quiet;
  auto cb2 = quiet.callbacks();
  ASSERT_TRUE(plan_install(r, deps_of(c.dir(), ssh, &arm), cb2).ok());
  EXPECT_TRUE(quiet.warnings.empty());
}

TEST(InstallUseCase, TheVmsKeyDefaultsToThePublicKeyBesideSshKeyFilePath) {
  TempCluster c;
  c.make_hybrid();
  std::string config = c.read("config.yaml");
  auto at = config.find("  ssh-public-key-file: id.pub\n");
  ASSERT_NE(at, std::string::npos);
  config.erase(at, std::string("  ssh-public-key-file: id.pub\n").size());
  c.write("config.yaml", "ssh_key_file_path: id\n" + config);
  c.write("id", "-----BEGIN OPENSSH PRIVATE KEY-----\n");
  http::FakeClient arm;
  arm_has_nothing(arm);
  testing::ScriptedTransport ssh;
  InstallRequest r = install_request_for(c);
  r.azure_only = true;
  r.dry_run = true;
  auto plan = plan_install(r, deps_of(c.dir(), ssh, &arm), {});
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  ASSERT_TRUE(plan->azure);
  EXPECT_EQ(plan->azure->session->spec.ssh_public_key,
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample paictl-test");
  // Without KEY.pub: what is missing, and how to make it.
  std::filesystem::remove(c.path("id.pub"));
  auto none = plan_install(r, deps_of(c.dir(), ssh, &arm), {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().error.message,
            "config.yaml's azure: section has no ssh-public-key-file, and " + c.path("id.pub") +
                " (beside ssh_key_file_path) does not exist");
  EXPECT_NE(none.error().error.hint.find("ssh-keygen -y -f KEY > KEY.pub"), std::string::npos);
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
