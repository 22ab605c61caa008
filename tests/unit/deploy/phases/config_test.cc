// The `config` phase over the scripted transport: the cluster files pushed
// to the cluster when they differ.

#include <gtest/gtest.h>

#include "deploy/cluster_files.h"
#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

InstallSettings files_settings() {
  InstallSettings s = install_settings();
  s.cluster_files = {{"layout.yaml", "machine-list: []\n"},
                     {"config.yaml", "user: root\npassword: hunter2-pw\n"}};
  return s;
}

// The API server's answer to the read of the ConfigMap and the Secret that
// hold `files`.
std::string files_answer(const ClusterFiles& files) {
  std::string manifest = cluster_files_manifest(files, "openpai");
  std::string out;
  size_t cut = manifest.find("\n---\n");
  out += manifest.substr(0, cut) + "\n@@paictl-api 200\n";
  out += manifest.substr(cut + 5);
  out += "@@paictl-api 200\n";
  return out;
}

TEST(ConfigPhase, PushesWhatTheClusterLacksOrHoldsOtherwise) {
  InstallSettings s = files_settings();
  auto phases = install_phases(s);
  Phase& config = named(phases, "config");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  // Before the control plane exists the read prints {}.
  run.transport.on("configmaps/pai-configuration", {.out = "{}\n"});
  auto o = observe(config, m);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs, (std::vector<std::string>{"push config.yaml (not on the cluster yet)",
                                               "push layout.yaml (not on the cluster yet)"}));
  run.transport.on("configmaps/pai-configuration", {.out = files_answer(s.cluster_files)});
  EXPECT_TRUE(observe(config, m).needs.empty());
  ClusterFiles older = s.cluster_files;
  older["layout.yaml"] = "machine-list: [a]\n";
  run.transport.on("configmaps/pai-configuration", {.out = files_answer(older)});
  EXPECT_EQ(observe(config, m).needs, std::vector<std::string>{"push layout.yaml (changed)"});
  // Without cluster files, nothing is read.
  InstallSettings none = install_settings();
  auto others = install_phases(none);
  run.transport.clear_calls();
  EXPECT_TRUE(observe(named(others, "config"), m).needs.empty());
  EXPECT_TRUE(run.transport.calls().empty());
}

TEST(ConfigPhase, TheFilesGoOnStdinNeverOnTheCommandLine) {
  InstallSettings s = files_settings();
  auto phases = install_phases(s);
  Phase& config = named(phases, "config");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  ASSERT_TRUE(config.apply(m, {"push layout.yaml (changed)"}).ok());
  auto c = run.transport.calls().back();
  EXPECT_NE(c.script.find("apply --server-side --field-manager=paictl"), std::string::npos);
  EXPECT_EQ(c.command.find("hunter2-pw"), std::string::npos);
  EXPECT_EQ(c.command.find(base64("user: root\npassword: hunter2-pw\n")), std::string::npos);
  EXPECT_NE(c.input.find(base64("user: root\npassword: hunter2-pw\n")), std::string::npos);
  EXPECT_NE(c.input.find("\"kind\":\"ConfigMap\""), std::string::npos);

  run.transport.on(
      "apply --server-side",
      {.err = "Error from server (Forbidden): secrets is forbidden\n", .exit_status = 1});
  auto r = config.apply(m, {"push layout.yaml (changed)"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "pushing the cluster files failed (exit 1): Error from server (Forbidden): secrets "
            "is forbidden");
}

}  // namespace
}  // namespace pai::deploy::phase_test
