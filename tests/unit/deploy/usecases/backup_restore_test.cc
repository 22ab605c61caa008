// backup and restore over the scripted transport: the archive a backup writes
// (mode 0600, its record line, every member, the snapshot taken from stdout);
// archives restore refuses without contacting any host (another cluster, a
// tampered member, a truncated file); a dry run's plan (the PKI files that
// differ); an apply's steps in order; a run stopped at the swap resumed by the
// next one with the same stamp, the steps done not run again; a restored
// cluster that lacks a recorded ConfigMap is not called verified; HiveD's
// check (http::FakeClient): answering with the restored config verified, not
// answering a remote failure the next run resumes, another config a finding,
// no HiveD config in the archive no check.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include "deploy/backup.h"
#include "deploy/restore.h"
#include "hived/config_file.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"
#include "usecase_fixture.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace pai::deploy {
namespace {

using namespace usecase_test;

constexpr double kBackupTestNow = 1796554800;  // 2026-12-06T11:00:00Z

std::string backup_test_pki_tar(const std::string& root) {
  std::string dir = root + "/master-etc-kubernetes";
  std::filesystem::create_directories(dir + "/pki/etcd");
  std::ofstream(dir + "/pki/ca.crt") << "ca certificate\n";
  std::ofstream(dir + "/pki/ca.key") << "ca private key\n";
  std::ofstream(dir + "/pki/etcd/ca.crt") << "etcd ca\n";
  std::string out;
  std::FILE* p = ::popen(("tar -C " + dir + " -cf - pki").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

std::string backup_test_snapshot() {
  std::string s(5000, '\0');
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>(i * 31 % 256);
  return s;
}

const char* kBackupTestEtcdManifest =
    "spec:\n  containers:\n  - command:\n    - etcd\n"
    "    - --advertise-client-urls=https://10.0.0.1:2379\n"
    "    - --data-dir=/var/lib/etcd\n"
    "    - --initial-advertise-peer-urls=https://10.0.0.1:2380\n"
    "    - --initial-cluster=pai-master=https://10.0.0.1:2380\n"
    "    - --name=pai-master\n";

// The HiveD ConfigMap's data holds `hived_yaml` ("": no ConfigMap).
std::string backup_test_inspection(const std::vector<std::string>& configmaps,
                                   const std::string& hived_yaml = "vc: 1") {
  std::string out = "@@paictl etcd-manifest@@\n";
  out += kBackupTestEtcdManifest;
  out += "@@paictl version@@\n{\"gitVersion\": \"v1.30.10\"}\n";
  out += "@@paictl namespaces@@\ndefault\nkube-system\nopenpai\n";
  out += "@@paictl configmaps@@\n";
  for (const auto& c : configmaps) out += c + "\n";
  out += "@@paictl hived@@\n";
  if (!hived_yaml.empty())
    out += nlohmann::json{{"data", {{"hivedscheduler.yaml", hived_yaml}}}}.dump() + "\n";
  out += "@@paictl database@@\n@@paictl end@@\n";
  return out;
}

// The master of a cluster that holds these ConfigMaps.
void backup_test_master(testing::ScriptedTransport& ssh, const std::string& root,
                        const std::vector<std::string>& configmaps,
                        const std::string& hived_yaml = "vc: 1") {
  ssh.on("@@paictl etcd-manifest@@", {.out = backup_test_inspection(configmaps, hived_yaml)});
  ssh.on("snapshot save", {.out = backup_test_snapshot()});
  ssh.on("endpoint status -w json",
         {.out = R"([{"Endpoint":"https://10.0.0.1:2379","Status":{"version":"3.4.23"}}])"});
  ssh.on("-cf - pki", {.out = backup_test_pki_tar(root)});
}

BackupDeps backup_test_deps(const TempCluster& c, testing::ScriptedTransport& ssh) {
  BackupDeps d;
  d.install = deps_of(c.dir(), ssh);
  d.now = [] { return kBackupTestNow; };
  return d;
}

// A backup of `c` written by the use case; its path.
std::string backup_test_write(const TempCluster& c, testing::ScriptedTransport& ssh) {
  BackupRequest r;
  r.cluster_dir = c.dir();
  auto plan = plan_backup(r, backup_test_deps(c, ssh));
  EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().error.message);
  if (!plan.ok()) return {};
  auto out = apply_backup(*plan);
  EXPECT_FALSE(out.error) << out.error->error.message;
  return out.path;
}

TEST(BackupUseCase, WritesOneArchiveAtMode0600AndRecordsIt) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  backup_test_master(ssh, c.dir() + "/..", {"default/a", "openpai/hivedscheduler-config"});
  std::string path = backup_test_write(c, ssh);
  EXPECT_EQ(path, c.dir() + "/backups/pai-20261206T110000Z.tar.gz");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  std::string bytes = util::read_file(path).value();
  auto record = c.read(".paictl/backups.jsonl");
  ASSERT_FALSE(record.empty());
  EXPECT_EQ(record.back(), '\n');
  auto j = util::parse_json(record).value();
  EXPECT_EQ(j["time"], static_cast<long long>(kBackupTestNow));
  EXPECT_EQ(j["path"], path);
  EXPECT_EQ(j["sha256"], util::sha256_hex(bytes));
  EXPECT_EQ(j["bytes"], bytes.size());
  EXPECT_EQ(j["cluster"], "pai");

  auto a = read_backup_archive(bytes);
  ASSERT_TRUE(a.ok()) << a.error().message;
  const auto& m = a->manifest;
  EXPECT_EQ(m.cluster, "pai");
  ASSERT_EQ(m.masters.size(), 1u);
  EXPECT_EQ(m.masters[0].address, "10.0.0.1");
  EXPECT_EQ(m.nodes.size(), 2u);
  EXPECT_EQ(m.kubernetes_version, "v1.30.10");
  EXPECT_EQ(m.etcd_version, "3.4.23");
  EXPECT_EQ(m.database, "none found");
  EXPECT_EQ(m.time_utc, "2026-12-06T11:00:00Z");
  EXPECT_EQ(m.etcd.endpoint, "https://10.0.0.1:2379");
  EXPECT_EQ(m.etcd.initial_cluster, "pai-master=https://10.0.0.1:2380");
  EXPECT_EQ(m.configmaps, (std::vector<std::string>{"default/a", "openpai/hivedscheduler-config"}));
  EXPECT_EQ(a->members.at(kSnapshotMember), backup_test_snapshot());
  EXPECT_EQ(a->members.at("pki/ca.key"), "ca private key\n");
  EXPECT_EQ(a->members.at("pki/etcd/ca.crt"), "etcd ca\n");
  EXPECT_EQ(a->members.at("cluster/layout.yaml"), c.read("layout.yaml"));
  EXPECT_TRUE(a->members.count(kHivedMember));

  // The snapshot came on stdout: etcdctl wrote it in a private temporary
  // directory, with etcd's client certificate, and nothing went on stdin.
  bool saw = false;
  for (const auto& call : ssh.calls())
    if (call.script.find("snapshot save") != std::string::npos) {
      saw = true;
      EXPECT_NE(call.script.find("mktemp -d"), std::string::npos);
      EXPECT_NE(call.script.find("healthcheck-client"), std::string::npos);
      EXPECT_NE(call.script.find("--endpoints=https://10.0.0.1:2379"), std::string::npos);
      EXPECT_TRUE(call.input.empty());
    }
  EXPECT_TRUE(saw);

  // A second backup appends a second line.
  backup_test_write(c, ssh);
  std::string two = c.read(".paictl/backups.jsonl");
  EXPECT_EQ(std::count(two.begin(), two.end(), '\n'), 2);
}

TEST(BackupUseCase, AMasterThatFailsTheSnapshotWritesNothing) {
  TempCluster c;
  testing::ScriptedTransport ssh;
  backup_test_master(ssh, c.dir() + "/..", {});
  ssh.on("snapshot save", {.err = "context deadline exceeded", .exit_status = 1});
  BackupRequest r;
  r.cluster_dir = c.dir();
  auto plan = plan_backup(r, backup_test_deps(c, ssh));
  ASSERT_TRUE(plan.ok());
  auto out = apply_backup(*plan);
  ASSERT_TRUE(out.error);
  EXPECT_NE(out.error->error.message.find("etcdctl snapshot save on pai-master failed: context "
                                          "deadline exceeded"),
            std::string::npos)
      << out.error->error.message;
  EXPECT_EQ(out.error->error.kind, util::Error::Kind::Remote);
  EXPECT_FALSE(util::path_exists(c.dir() + "/backups"));
  EXPECT_FALSE(util::path_exists(c.dir() + "/.paictl/backups.jsonl"));
}

// The master as a restore sees it: every step's script answered, etcd and the
// API server down between the stop and the start.
struct RestoreTestMaster {
  bool down = false;
  int swaps = 0;
  bool fail_swap = false;
  std::vector<std::string> configmaps_after = {"default/a", "openpai/hivedscheduler-config"};
  std::string hived_yaml;  // the HiveD ConfigMap's data after the restore
  std::string pki_sums;

  void install(testing::ScriptedTransport& ssh) {
    ssh.on("stat -c %d", {.out = "sibling\n"});
    ssh.on("sha256sum {}", [this](const testing::ScriptedCall&) {
      return testing::ScriptedAnswer{.out = pki_sums};
    });
    ssh.on("for f in \"$M\"/*.yaml", [this](const testing::ScriptedCall&) {
      down = true;
      return testing::ScriptedAnswer{.out = "moved etcd.yaml\n"};
    });
    ssh.on("for f in \"$S\"/*.yaml", [this](const testing::ScriptedCall&) {
      down = false;
      return testing::ScriptedAnswer{.out = "moved back etcd.yaml\n"};
    });
    auto health = [this](const testing::ScriptedCall&) {
      return testing::ScriptedAnswer{.exit_status = down ? 1 : 0};
    };
    ssh.on("endpoint health", health);
    ssh.on("get --raw /readyz", health);
    ssh.on("already swapped", [this](const testing::ScriptedCall&) {
      if (fail_swap)
        return testing::ScriptedAnswer{.err = "mv: Permission denied", .exit_status = 1};
      ++swaps;
      return testing::ScriptedAnswer{.out = "restored data: /var/lib/etcd/member\n"};
    });
    ssh.on("@@paictl etcd-manifest@@", [this](const testing::ScriptedCall&) {
      return testing::ScriptedAnswer{.out = backup_test_inspection(configmaps_after, hived_yaml)};
    });
  }
};

// HiveD's answer for the HiveD config `yaml`: every cell free.
std::string restore_test_cluster_status(const std::string& yaml) {
  auto loaded = config::check_sources({{"hivedscheduler.yaml", yaml}});
  EXPECT_TRUE(!loaded.clusters.empty() && loaded.clusters[0].model);
  if (loaded.clusters.empty() || !loaded.clusters[0].model) return {};
  const auto& model = *loaded.clusters[0].model;
  auto policy = scheduler::make_hived_policy(model);
  EXPECT_TRUE(policy.ok());
  if (!policy.ok()) return {};
  auto snap = scheduler::snapshot_hived(**policy);
  return hived::to_json(hived::cluster_status_of(model, *snap)).dump();
}

// Another config than the quickstart's: one node of pai-worker1's, a VC "other".
const char* kRestoreTestOtherHived =
    "physicalCluster:\n"
    "  skuTypes:\n"
    "    K80: {gpu: 1, cpu: 4, memory: 8192Mi}\n"
    "  cellTypes:\n"
    "    K80-NODE: {childCellType: K80, childCellNumber: 4, isNodeLevel: true}\n"
    "  physicalCells:\n"
    "  - {cellType: K80-NODE, cellAddress: pai-worker1}\n"
    "virtualClusters:\n"
    "  other:\n"
    "    virtualCells:\n"
    "    - {cellType: K80-NODE, cellNumber: 1}\n";

const char* kRestoreTestHivedUrl = "http://10.0.0.1:30096";

struct RestoreTest : ::testing::Test {
  TempCluster c;
  testing::ScriptedTransport backup_ssh;
  std::string archive;
  std::string hived_yaml;          // the archive's HiveD config (the quickstart's)
  mutable http::FakeClient hived;  // HiveD's inspect API: answers with the archive's config

  void SetUp() override {
    hived_yaml = pai::hived::hived_config_text(c.path("services-configuration.yaml")).value();
    backup_test_master(backup_ssh, c.dir() + "/..", {"default/a", "openpai/hivedscheduler-config"},
                       hived_yaml);
    archive = backup_test_write(c, backup_ssh);
    hived.add("GET", "/v1/inspect/clusterstatus", 200, restore_test_cluster_status(hived_yaml));
  }
  RestoreTestMaster master_of() const {
    RestoreTestMaster m;
    m.hived_yaml = hived_yaml;
    return m;
  }
  RestoreRequest request() const {
    RestoreRequest r;
    r.cluster_dir = c.dir();
    r.from = archive;
    r.wait_s = 30;
    return r;
  }
  RestoreDeps deps(testing::ScriptedTransport& ssh) const {
    RestoreDeps d;
    d.install = deps_of(c.dir(), ssh);
    d.now = [] { return kBackupTestNow + 3600; };
    auto t = std::make_shared<double>(0);
    d.clock.now = [t] { return *t; };
    d.clock.sleep = [t](double s) { *t += s; };
    d.hived_http = &hived;
    return d;
  }
  // The archive rewritten: the manifest changed by `edit`, a member by `flip`.
  void rewrite(const std::function<void(BackupManifest&)>& edit, const std::string& flip = {}) {
    auto a = read_backup_archive_file(archive).value();
    BackupManifest m = a.manifest;
    edit(m);
    std::vector<std::pair<std::string, std::string>> raw = {{kManifestMember, manifest_json(m)}};
    for (const auto& mi : a.manifest.members) {
      std::string data = a.members.at(mi.name);
      if (mi.name == flip) data[data.size() / 2] ^= 0x20;
      raw.emplace_back(mi.name, data);
    }
    ASSERT_TRUE(util::write_file_atomic(archive, write_raw_archive(raw).value(), 0600).ok());
  }
};

TEST_F(RestoreTest, RefusedArchivesContactNoHost) {
  testing::ScriptedTransport ssh;
  // Another cluster's archive.
  rewrite([](BackupManifest& m) { m.cluster = "other"; });
  auto plan = plan_restore(request(), deps(ssh));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().error.kind, util::Error::Kind::Input);
  EXPECT_NE(plan.error().error.message.find("the archive is of cluster \"other\""),
            std::string::npos)
      << plan.error().error.message;
  EXPECT_NE(plan.error().error.hint.find("--force-other-cluster"), std::string::npos);
  EXPECT_TRUE(ssh.calls().empty());

  // Other addresses.
  rewrite([](BackupManifest& m) {
    m.cluster = "pai";
    m.masters[0].address = "10.9.9.9";
  });
  plan = plan_restore(request(), deps(ssh));
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().error.message.find("the masters differ"), std::string::npos);
  EXPECT_TRUE(ssh.calls().empty());

  // Forced: planned, the difference said.
  RestoreTestMaster master = master_of();
  master.install(ssh);
  auto r = request();
  r.force_other_cluster = true;
  plan = plan_restore(r, deps(ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  ASSERT_EQ(plan->mismatches.size(), 1u);
  ssh.clear_calls();

  // A tampered member.
  rewrite([](BackupManifest& m) { m.masters[0].address = "10.0.0.1"; }, "pki/ca.key");
  plan = plan_restore(request(), deps(ssh));
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().error.message.find("member pki/ca.key does not match its checksum"),
            std::string::npos)
      << plan.error().error.message;
  EXPECT_TRUE(ssh.calls().empty());

  // A truncated file.
  std::string bytes = util::read_file(archive).value();
  ASSERT_TRUE(util::write_file_atomic(archive, bytes.substr(0, bytes.size() * 2 / 3), 0600).ok());
  plan = plan_restore(request(), deps(ssh));
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().error.message.find("truncated"), std::string::npos)
      << plan.error().error.message;
  EXPECT_TRUE(ssh.calls().empty());
}

TEST_F(RestoreTest, ADryRunSaysWhatItWouldReplace) {
  testing::ScriptedTransport ssh;
  RestoreTestMaster master = master_of();
  // The master's CA key differs; its CA certificate is the archive's.
  master.pki_sums = util::sha256_hex("ca certificate\n") + "  ./ca.crt\n" +
                    util::sha256_hex("a new key\n") + "  ./ca.key\n";
  master.install(ssh);
  c.append("layout.yaml", "# edited\n");
  auto r = request();
  r.dry_run = true;
  auto plan = plan_restore(r, deps(ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  EXPECT_EQ(plan->pki_differ, (std::vector<std::string>{"pki/ca.key", "pki/etcd/ca.crt"}));
  EXPECT_EQ(plan->cluster_files_differ, (std::vector<std::string>{"cluster/layout.yaml"}));
  EXPECT_FALSE(plan->hived_differs);
  std::string all = util::join(plan->replaces, "\n");
  EXPECT_NE(all.find("/var/lib/etcd/member replaced by the snapshot of 2026-12-06T11:00:00Z"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("PKI files that differ: pki/ca.key, pki/etcd/ca.crt"), std::string::npos);
  EXPECT_EQ(plan->hived_url, kRestoreTestHivedUrl);
  EXPECT_NE(all.find("HiveD: checked after the restore at http://10.0.0.1:30096: "
                     "/v1/inspect/clusterstatus must answer within 30 s"),
            std::string::npos)
      << all;
  EXPECT_TRUE(hived.requests().empty());
  // Only reads.
  for (const auto& call : ssh.calls()) {
    EXPECT_EQ(call.script.find("mv "), std::string::npos) << call.script;
    EXPECT_EQ(call.script.find("etcdctl snapshot restore"), std::string::npos);
  }
  EXPECT_FALSE(util::path_exists(c.dir() + "/.paictl/restore.json"));
}

TEST_F(RestoreTest, AppliesEveryStepInOrderAndVerifies) {
  testing::ScriptedTransport ssh;
  RestoreTestMaster master = master_of();
  master.install(ssh);
  auto plan = plan_restore(request(), deps(ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  ssh.clear_calls();
  auto out = apply_restore(*plan);
  ASSERT_FALSE(out.error) << out.error->error.message;
  EXPECT_EQ(out.ran, restore_steps());
  EXPECT_TRUE(out.verified);
  EXPECT_EQ(out.ts, "20261206T120000Z");
  EXPECT_EQ(out.layout.new_dir, "/var/lib/etcd-restore-20261206T120000Z");
  EXPECT_EQ(out.layout.old_dir, "/var/lib/etcd.before-restore-20261206T120000Z");
  EXPECT_EQ(master.swaps, 1);
  // Every PKI file differed (the master answered no checksums): all put back, keys at 0600.
  EXPECT_EQ(out.pki_restored.size(), 3u);
  // The snapshot went on stdin, checked by its SHA-256 on the master.
  auto calls = ssh.calls();
  size_t upload = 0, restore = 0, stop = 0, swap = 0, start = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    const auto& s = calls[i].script;
    if (s.find("the snapshot arrived damaged") != std::string::npos) {
      upload = i;
      EXPECT_EQ(calls[i].input, backup_test_snapshot());
      EXPECT_NE(s.find(util::sha256_hex(backup_test_snapshot())), std::string::npos);
    }
    if (s.find("etcdctl snapshot restore") != std::string::npos) {
      restore = i;
      EXPECT_NE(s.find("--name pai-master"), std::string::npos);
      EXPECT_NE(s.find("--initial-cluster pai-master=https://10.0.0.1:2380"), std::string::npos);
    }
    if (s.find("for f in \"$M\"/*.yaml") != std::string::npos) stop = i;
    if (s.find("already swapped") != std::string::npos) swap = i;
    if (s.find("for f in \"$S\"/*.yaml") != std::string::npos) start = i;
    if (s.find("pki/ca.key.tmp") != std::string::npos) {
      EXPECT_NE(s.find("chmod 600"), std::string::npos);
    }
    if (s.find("pki/ca.crt.tmp") != std::string::npos) {
      EXPECT_NE(s.find("chmod 644"), std::string::npos);
    }
  }
  EXPECT_LT(upload, restore);
  EXPECT_LT(restore, stop);
  EXPECT_LT(stop, swap);
  EXPECT_LT(swap, start);
  auto j = parse_restore_journal(c.read(".paictl/restore.json")).value();
  EXPECT_TRUE(j.finished);
  EXPECT_EQ(j.done, restore_steps());
}

TEST_F(RestoreTest, ARunStoppedAtTheSwapIsResumedWithTheSameStamp) {
  testing::ScriptedTransport ssh;
  RestoreTestMaster master = master_of();
  master.fail_swap = true;
  master.install(ssh);
  auto plan = plan_restore(request(), deps(ssh));
  ASSERT_TRUE(plan.ok());
  auto out = apply_restore(*plan);
  ASSERT_TRUE(out.error);
  EXPECT_NE(out.error->error.message.find("mv: Permission denied"), std::string::npos);
  EXPECT_NE(out.error->error.hint.find("resumes"), std::string::npos);
  EXPECT_EQ(out.ran, (std::vector<std::string>{"upload", "etcd-restore", "stop"}));

  // The next run resumes it.
  master.fail_swap = false;
  ssh.clear_calls();
  auto again = plan_restore(request(), deps(ssh));
  ASSERT_TRUE(again.ok()) << again.error().error.message;
  ASSERT_TRUE(again->resume);
  EXPECT_EQ(again->resume->ts, out.ts);
  auto out2 = apply_restore(*again);
  ASSERT_FALSE(out2.error) << out2.error->error.message;
  EXPECT_EQ(out2.ts, out.ts);
  EXPECT_EQ(out2.skipped, (std::vector<std::string>{"upload", "etcd-restore", "stop"}));
  EXPECT_EQ(ssh.count("the snapshot arrived damaged"), 0u);
  EXPECT_EQ(ssh.count("etcdctl snapshot restore"), 0u);
  EXPECT_EQ(master.swaps, 1);
  EXPECT_TRUE(out2.verified);

  // Finished: a re-run has nothing to do, unless told to restore again.
  auto third = plan_restore(request(), deps(ssh));
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(third->resume);
  ASSERT_TRUE(third->already);
  EXPECT_EQ(third->already->ts, out.ts);
  auto r = request();
  r.again = true;
  auto fourth = plan_restore(r, deps(ssh));
  ASSERT_TRUE(fourth.ok());
  EXPECT_FALSE(fourth->resume);
  EXPECT_FALSE(fourth->already);
}

TEST_F(RestoreTest, ARestoredClusterWithoutARecordedConfigMapIsNotVerified) {
  testing::ScriptedTransport ssh;
  RestoreTestMaster master = master_of();
  master.configmaps_after = {"openpai/hivedscheduler-config"};
  master.install(ssh);
  auto plan = plan_restore(request(), deps(ssh));
  ASSERT_TRUE(plan.ok());
  auto out = apply_restore(*plan);
  ASSERT_TRUE(out.error);
  EXPECT_FALSE(out.verified);
  EXPECT_EQ(out.missing, (std::vector<std::string>{"configmap default/a"}));
  EXPECT_NE(out.error->error.message.find("lacks what the backup recorded: configmap default/a"),
            std::string::npos)
      << out.error->error.message;
}

TEST_F(RestoreTest, HivedAnsweringWithTheRestoredConfigIsVerified) {
  testing::ScriptedTransport ssh;
  RestoreTestMaster master = master_of();
  master.install(ssh);
  auto r = request();
  r.hived = "http://hived.test:30096";
  // HiveD restarts after its ConfigMap came back: it refuses connections first.
  http::Route down;
  down.path = "/v1/inspect/clusterstatus";
  down.answers = {
      {.response = {}, .error = http::ErrorKind::Connect, .message = "connection refused"}};
  down.times = 3;
  hived.add(down);
  auto plan = plan_restore(r, deps(ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  auto out = apply_restore(*plan);
  ASSERT_FALSE(out.error) << out.error->error.message;
  EXPECT_TRUE(out.verified);
  ASSERT_EQ(out.checks.size(), 2u);
  EXPECT_EQ(out.checks[0].name, "objects");
  EXPECT_EQ(out.checks[0].result, RestoreCheck::Result::Verified);
  EXPECT_EQ(out.checks[1].name, "hived");
  EXPECT_EQ(out.checks[1].result, RestoreCheck::Result::Verified);
  EXPECT_NE(out.checks[1].detail.find("http://hived.test:30096 answers with the restored config "
                                      "(1 top cell, nodes pai-worker1, pai-worker2, VCs"),
            std::string::npos)
      << out.checks[1].detail;
  auto seen = hived.requests();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen.back().url, "http://hived.test:30096/v1/inspect/clusterstatus");
}

TEST_F(RestoreTest, HivedNotAnsweringIsARemoteFailureTheNextRunResumes) {
  testing::ScriptedTransport ssh;
  RestoreTestMaster master = master_of();
  master.install(ssh);
  http::Route down;
  down.path = "/v1/inspect/clusterstatus";
  down.answers = {
      {.response = {}, .error = http::ErrorKind::Connect, .message = "connection refused"}};
  hived.add(down);
  auto plan = plan_restore(request(), deps(ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  auto out = apply_restore(*plan);
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.error->error.kind, util::Error::Kind::Remote);
  const std::string& msg = out.error->error.message;
  EXPECT_NE(msg.find("HiveD at http://10.0.0.1:30096 did not answer /v1/inspect/clusterstatus "
                     "within 30 s"),
            std::string::npos)
      << msg;
  EXPECT_NE(out.error->error.hint.find("resumes"), std::string::npos);
  EXPECT_NE(out.error->error.hint.find("--hived URL"), std::string::npos);
  EXPECT_FALSE(out.verified);
  ASSERT_FALSE(out.checks.empty());
  EXPECT_EQ(out.checks.back().name, "hived");
  EXPECT_EQ(out.checks.back().result, RestoreCheck::Result::Failed);
  // Bounded: asked every 2 s of the fake clock for the 30 s of the wait.
  EXPECT_GE(hived.requests().size(), 15u);
  EXPECT_LE(hived.requests().size(), 17u);
  auto j = parse_restore_journal(c.read(".paictl/restore.json")).value();
  EXPECT_FALSE(j.finished);
  EXPECT_EQ(j.done.back(), "verify");

  // HiveD is back: the next run resumes with its check and finishes.
  hived.add("GET", "/v1/inspect/clusterstatus", 200, restore_test_cluster_status(hived_yaml));
  ssh.clear_calls();
  auto again = plan_restore(request(), deps(ssh));
  ASSERT_TRUE(again.ok()) << again.error().error.message;
  ASSERT_TRUE(again->resume);
  auto out2 = apply_restore(*again);
  ASSERT_FALSE(out2.error) << out2.error->error.message;
  EXPECT_EQ(out2.ran, (std::vector<std::string>{"hived", "cleanup"}));
  EXPECT_EQ(ssh.count("etcdctl snapshot restore"), 0u);
  EXPECT_TRUE(out2.verified);
  EXPECT_TRUE(parse_restore_journal(c.read(".paictl/restore.json")).value().finished);
}

TEST_F(RestoreTest, HivedRunningAnotherConfigIsAFinding) {
  testing::ScriptedTransport ssh;
  RestoreTestMaster master = master_of();
  master.install(ssh);
  hived.add("GET", "/v1/inspect/clusterstatus", 200,
            restore_test_cluster_status(kRestoreTestOtherHived));
  auto plan = plan_restore(request(), deps(ssh));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  auto out = apply_restore(*plan);
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.error->error.kind, util::Error::Kind::Other);
  const std::string& msg = out.error->error.message;
  EXPECT_NE(msg.find("HiveD at http://10.0.0.1:30096 runs another config than the restored one "
                     "after 30 s: it has 1 top cell, nodes pai-worker1, VCs other; the restored "
                     "config has 1 top cell, nodes pai-worker1, pai-worker2, VCs"),
            std::string::npos)
      << msg;
  EXPECT_FALSE(out.verified);
  ASSERT_FALSE(out.checks.empty());
  EXPECT_EQ(out.checks.back().name, "hived");
  EXPECT_EQ(out.checks.back().result, RestoreCheck::Result::Failed);
  EXPECT_NE(out.checks.back().detail.find("runs another config"), std::string::npos);
  EXPECT_FALSE(parse_restore_journal(c.read(".paictl/restore.json")).value().finished);
}

TEST(RestoreWithoutHived, AnArchiveWithoutAHivedConfigSkipsHivedsCheck) {
  TempCluster c;
  testing::ScriptedTransport backup_ssh;
  backup_test_master(backup_ssh, c.dir() + "/..", {"default/a"}, "");
  std::string archive = backup_test_write(c, backup_ssh);
  testing::ScriptedTransport ssh;
  RestoreTestMaster master;
  master.configmaps_after = {"default/a"};
  master.install(ssh);
  http::FakeClient hived;
  RestoreRequest r;
  r.cluster_dir = c.dir();
  r.from = archive;
  r.wait_s = 30;
  RestoreDeps d;
  d.install = deps_of(c.dir(), ssh);
  d.now = [] { return kBackupTestNow + 3600; };
  d.clock.now = [] { return 0.0; };
  d.clock.sleep = [](double) {};
  d.hived_http = &hived;
  auto plan = plan_restore(r, d);
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  EXPECT_TRUE(plan->hived_url.empty());
  std::string all = util::join(plan->replaces, "\n");
  EXPECT_NE(all.find("HiveD: no HiveD config in the archive, HiveD is not checked"),
            std::string::npos)
      << all;
  auto out = apply_restore(*plan);
  ASSERT_FALSE(out.error) << out.error->error.message;
  EXPECT_TRUE(out.verified);
  ASSERT_EQ(out.checks.size(), 2u);
  EXPECT_EQ(out.checks[1].name, "hived");
  EXPECT_EQ(out.checks[1].result, RestoreCheck::Result::Skipped);
  EXPECT_TRUE(hived.requests().empty());
}

}  // namespace
}  // namespace pai::deploy
