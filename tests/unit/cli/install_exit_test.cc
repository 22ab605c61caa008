// The exit codes of install, reset and node add|remove from their use cases'
// outcomes: 1 for findings, 3 for an unreachable host, the plan's changes
// (kExitChanges) and the confirmations.

#include <gtest/gtest.h>

#include "exit_codes.h"
#include "install/install_view.h"

namespace paictl {
namespace {

using pai::deploy::HostStage;

HostStage stage_with_plan(const pai::deploy::RunResult& plan) {
  HostStage s;
  s.plan = std::make_shared<pai::deploy::HostRunPlan>();
  s.plan->plan = plan;
  return s;
}

TEST(InstallExit, AHostsStage) {
  pai::deploy::RunResult unreachable;
  unreachable.hosts.push_back({});
  unreachable.hosts.back().error = "connection refused";
  HostStage s = stage_with_plan(unreachable);
  s.end = HostStage::End::Failed;
  EXPECT_EQ(stage_exit_code(s, false), kExitRemote);
  s.plan->plan.hosts.back().reached = true;
  EXPECT_EQ(stage_exit_code(s, false), kExitFindings);
  s.end = HostStage::End::UpToDate;
  EXPECT_EQ(stage_exit_code(s, false), kExitOk);
  EXPECT_EQ(stage_exit_code(s, true), kExitChanges) << "Azure changed something before";
  s.end = HostStage::End::DryRun;
  EXPECT_EQ(stage_exit_code(s, false), kExitChanges);
  s.end = HostStage::End::NoTerminal;
  EXPECT_EQ(stage_exit_code(s, false), kExitUsage);
  s.end = HostStage::End::Declined;
  EXPECT_EQ(stage_exit_code(s, false), kExitOk);
  s.end = HostStage::End::Applied;
  EXPECT_EQ(stage_exit_code(s, false), kExitOk) << "nothing changed";
  s.result = unreachable;
  EXPECT_EQ(stage_exit_code(s, false), kExitRemote);
}

TEST(InstallExit, AnInstall) {
  Globals g;
  UseCaseView view;
  view.g = &g;
  pai::deploy::InstallPlan p;
  pai::deploy::InstallOutcome o;
  o.end = pai::deploy::InstallOutcome::End::AzureDeclined;
  EXPECT_EQ(install_exit_code(p, o, view), kExitOk);
  o.end = pai::deploy::InstallOutcome::End::AzureNoTerminal;
  EXPECT_EQ(install_exit_code(p, o, view), kExitUsage);
  o.end = pai::deploy::InstallOutcome::End::PendingMaster;
  EXPECT_EQ(install_exit_code(p, o, view), kExitChanges);
  o.end = pai::deploy::InstallOutcome::End::AzureOnly;
  o.azure_changed = true;
  EXPECT_EQ(install_exit_code(p, o, view), kExitChanges);
  o.end = pai::deploy::InstallOutcome::End::Failed;
  o.error = pai::deploy::remote_error("azure: 500");
  EXPECT_EQ(install_exit_code(p, o, view), kExitRemote);
  o.error->about = pai::deploy::UseCaseError::About::HostsNotLoaded;
  view.hosts_failed = 7;
  EXPECT_EQ(install_exit_code(p, o, view), 7) << "the hosts' read said why and with what code";
}

}  // namespace
}  // namespace paictl
