// The `openpai` phase over the scripted transport: the services and the Secret
// pai-secrets, whose values reach the master on stdin only.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "deploy/credentials.h"

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

InstallSettings services_settings() {
  InstallSettings s = install_settings();
  s.openpai.enabled = true;
  s.openpai.admin_password = remote::Secret("s3cret-admin-pw");
  return s;
}

std::string secret_answer(const std::map<std::string, std::string>& data) {
  nlohmann::json j = {{"kind", "Secret"},
                      {"apiVersion", "v1"},
                      {"metadata", {{"name", "pai-secrets"}, {"namespace", "openpai"}}},
                      {"data", data}};
  return j.dump() + "\n@@paictl-api 200\n";
}

TEST(OpenPaiPhase, AFreshClusterNeedsTheSecretAndEveryService) {
  InstallSettings s = services_settings();
  auto phases = install_phases(s);
  Phase& openpai = named(phases, "openpai");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  auto o = observe(openpai, m);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs,
            (std::vector<std::string>{
                "write the Secret openpai/pai-secrets (the database password, the REST server's "
                "JWT key, the admin password)",
                "apply frameworkcontroller", "apply postgresql", "apply rest-server",
                "apply webportal", "apply pylon"}));
  // The read of the Secret is marked as holding a secret.
  std::vector<ObservationRead> reads;
  dynamic_cast<ReadsAhead&>(openpai).observation_reads(m, reads);
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_TRUE(reads[0].secret);
  EXPECT_FALSE(reads[1].secret);
}

TEST(OpenPaiPhase, TheSecretsValuesGoOnStdinOnlyAndADoneClusterIsUpToDate) {
  InstallSettings s = services_settings();
  auto phases = install_phases(s);
  Phase& openpai = named(phases, "openpai");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  auto o = observe(openpai, m);
  std::map<std::string, std::string> hashes;
  run.transport.on("apply --server-side", [&](const testing::ScriptedCall& c) {
    if (c.input.find("kind: Deployment") != std::string::npos) hashes = workload_hashes(c.input);
    return testing::ScriptedAnswer{};
  });
  run.transport.on("get daemonsets,statefulsets,deployments", [&](const testing::ScriptedCall&) {
    return testing::ScriptedAnswer{.out = kubectl_workloads(hashes, "openpai")};
  });
  ASSERT_TRUE(openpai.apply(m, o.needs).ok());
  const std::string pw64 = base64("s3cret-admin-pw");
  bool on_stdin = false;
  for (const auto& c : run.transport.calls()) {
    EXPECT_EQ(c.command.find("s3cret-admin-pw"), std::string::npos);
    EXPECT_EQ(c.command.find(pw64), std::string::npos);
    on_stdin |= c.input.find(pw64) != std::string::npos;
  }
  EXPECT_TRUE(on_stdin);
  EXPECT_EQ(hashes.size(), 5u);

  // Done: the Secret holds every key and this admin password; the services run.
  run.transport.on("secrets/pai-secrets",
                   {.out = secret_answer({{"admin-password", pw64},
                                          {"postgres-password", base64("pg")},
                                          {"jwt-secret", base64("jwt")}})});
  run.transport.on("/api/v1/nodes", {.out = workloads_answer(hashes, "openpai")});
  o = observe(openpai, m);
  ASSERT_TRUE(o.status.ok());
  EXPECT_TRUE(o.needs.empty()) << o.needs[0];
  // Another admin password in the file: the Secret is written again, keeping
  // the database's and the JWT key.
  s.openpai.admin_password = remote::Secret("a-new-admin-pw");
  o = observe(openpai, m);
  ASSERT_EQ(o.needs.size(), 1u);
  EXPECT_NE(o.needs[0].find("(the admin password)"), std::string::npos);
  run.transport.clear_calls();
  ASSERT_TRUE(openpai.apply(m, o.needs).ok());
  std::string body;
  for (const auto& c : run.transport.calls())
    if (c.input.find("\"kind\":\"Secret\"") != std::string::npos) body = c.input;
  EXPECT_NE(body.find(base64("pg")), std::string::npos);
  EXPECT_NE(body.find(base64("a-new-admin-pw")), std::string::npos);
}

// No admin password in services-configuration.yaml: one is made and written
// there (mode 0600) before the Secret that gives it to the cluster is applied,
// and it reaches the master on stdin only.
TEST(OpenPaiPhase, AMadeAdminPasswordIsWrittenIntoTheFileBeforeTheClusterGetsIt) {
  std::string dir =
      std::string(::testing::TempDir()) + "paictl-openpai-pw-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  InstallSettings s = services_settings();
  s.openpai.admin_password = remote::Secret();
  s.openpai.services_file = dir + "/services-configuration.yaml";
  std::ofstream(s.openpai.services_file) << "# lab\nrest-server:\n  server-port: 9186\n";
  auto phases = install_phases(s);
  Phase& openpai = named(phases, "openpai");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  auto o = observe(openpai, m);
  ASSERT_TRUE(needs_has(o.needs,
                        "an admin password (services-configuration.yaml has none: one "
                        "is made and written there first)"));
  std::string in_file_when_applied, secret_body;
  std::map<std::string, std::string> hashes;
  run.transport.on("apply --server-side", [&](const testing::ScriptedCall& c) {
    if (c.input.find("\"kind\":\"Secret\"") != std::string::npos) {
      secret_body = c.input;
      auto pw = read_admin_password(s.openpai.services_file);
      in_file_when_applied = pw.ok() ? pw->reveal() : "";
    }
    if (c.input.find("kind: Deployment") != std::string::npos) hashes = workload_hashes(c.input);
    return testing::ScriptedAnswer{};
  });
  run.transport.on("get daemonsets,statefulsets,deployments", [&](const testing::ScriptedCall&) {
    return testing::ScriptedAnswer{.out = kubectl_workloads(hashes, "openpai")};
  });
  ASSERT_TRUE(openpai.apply(m, o.needs).ok());
  ASSERT_EQ(in_file_when_applied.size(), 20u);
  EXPECT_NE(secret_body.find("\"admin-password\":\"" + base64(in_file_when_applied) + "\""),
            std::string::npos);
  for (const auto& c : run.transport.calls())
    EXPECT_EQ(c.command.find(in_file_when_applied), std::string::npos);
  EXPECT_EQ(m.run().masker->mask("pw " + in_file_when_applied), "pw ***");
  struct stat st {};
  ASSERT_EQ(::stat(s.openpai.services_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::ifstream in(s.openpai.services_file);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "# lab");
  std::filesystem::remove_all(dir);
}

// A file the password cannot be written into fails the phase before the
// cluster is given a password nobody would know.
TEST(OpenPaiPhase, APasswordThatCannotBeWrittenIsNotApplied) {
  InstallSettings s = services_settings();
  s.openpai.admin_password = remote::Secret();
  s.openpai.services_file = "/nonexistent-paictl-dir/services-configuration.yaml";
  auto phases = install_phases(s);
  Phase& openpai = named(phases, "openpai");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  auto o = observe(openpai, m);
  bool secret_applied = false;
  run.transport.on("apply --server-side", [&](const testing::ScriptedCall& c) {
    secret_applied |= c.input.find("\"kind\":\"Secret\"") != std::string::npos;
    return testing::ScriptedAnswer{};
  });
  auto r = openpai.apply(m, o.needs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("writing the new admin password into"), std::string::npos);
  EXPECT_FALSE(secret_applied);
}

TEST(OpenPaiPhase, AFailedReadOfTheSecretIsAFailedObservation) {
  InstallSettings s = services_settings();
  auto phases = install_phases(s);
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  run.transport.on("secrets/pai-secrets",
                   {.failure = remote::Failure::Protocol, .error = "the connection broke"});
  auto o = observe(named(phases, "openpai"), m);
  ASSERT_FALSE(o.status.ok());
  EXPECT_EQ(o.status.error().message, "reading the Secret pai-secrets: the connection broke");
}

}  // namespace
}  // namespace pai::deploy::phase_test
