// backup's and restore's -o json documents: what a plan says, and what an
// apply adds.
#include "deploy/backup_json.h"

#include <gtest/gtest.h>

#include "deploy/prepare.h"

namespace pai::deploy {
namespace {

BackupPlan backup_json_plan(bool dry_run) {
  BackupPlan p;
  p.request.dry_run = dry_run;
  auto c = std::make_shared<PreparedCluster>();
  c->cluster_dir = "/srv/c1";
  p.cluster = c;
  p.cluster_name = "c1";
  p.out = "/srv/c1/backups/c1.tar.gz";
  p.contents = {"etcd snapshot", "pki"};
  return p;
}

TEST(BackupJson, APlanSaysWhatTheArchiveWouldHoldAndNothingWritten) {
  auto doc = backup_json(backup_json_plan(true), nullptr);
  EXPECT_EQ(doc["cluster"], "c1");
  EXPECT_EQ(doc["out"], "/srv/c1/backups/c1.tar.gz");
  EXPECT_EQ(doc["contents"].size(), 2u);
  EXPECT_EQ(doc["dry_run"], true);
  EXPECT_FALSE(doc.contains("path"));
  EXPECT_FALSE(doc.contains("sha256"));
}

TEST(BackupJson, AnOutcomeAddsTheArchiveItsMembersAndTheRecord) {
  BackupOutcome out;
  out.path = "/srv/c1/backups/c1.tar.gz";
  out.bytes = 4096;
  out.sha256 = std::string(64, 'a');
  out.manifest.kubernetes_version = "v1.30.4";
  out.manifest.etcd_version = "3.5.12";
  out.manifest.database = "none found";
  out.manifest.members = {{"etcd/snapshot.db", 4000, std::string(64, 'b')}};
  auto doc = backup_json(backup_json_plan(false), &out);
  EXPECT_FALSE(doc.contains("dry_run"));
  EXPECT_EQ(doc["bytes"], 4096);
  EXPECT_EQ(doc["kubernetes_version"], "v1.30.4");
  ASSERT_EQ(doc["members"].size(), 1u);
  EXPECT_EQ(doc["members"][0]["name"], "etcd/snapshot.db");
  EXPECT_EQ(doc["members"][0]["bytes"], 4000);
  EXPECT_EQ(doc["record"], "/srv/c1/.paictl/backups.jsonl");
}

TEST(RestoreJson, AFinishedRestoreIsNamedAndADryRunSaidSo) {
  RestorePlan p;
  p.request.from = "/tmp/a.tar.gz";
  p.request.dry_run = true;
  auto a = std::make_shared<BackupArchive>();
  a->manifest.cluster = "c1";
  a->manifest.time_utc = "2026-12-01T10:00:00Z";
  p.archive = a;
  p.replaces = {"etcd's data on tb-master"};
  auto doc = restore_json(p, nullptr);
  EXPECT_EQ(doc["archive"], "/tmp/a.tar.gz");
  EXPECT_EQ(doc["backup_time"], "2026-12-01T10:00:00Z");
  EXPECT_EQ(doc["dry_run"], true);
  EXPECT_FALSE(doc.contains("already"));
  RestoreJournal done;
  done.ts = "20261201T100000Z";
  p.already = done;
  doc = restore_json(p, nullptr);
  EXPECT_EQ(doc["already"], "20261201T100000Z");
  EXPECT_FALSE(doc.contains("dry_run"));
  RestoreOutcome out;
  out.ts = "20261206T100000Z";
  out.ran = {"snapshot", "swap"};
  out.verified = true;
  out.layout.old_dir = "/var/lib/etcd.old";
  doc = restore_json(p, &out);
  EXPECT_EQ(doc["ran"].size(), 2u);
  EXPECT_EQ(doc["verified"], true);
  EXPECT_EQ(doc["old_data"], "/var/lib/etcd.old");
  EXPECT_TRUE(doc["hived"].is_null());
  EXPECT_TRUE(doc["checks"].empty());
}

TEST(RestoreJson, TheChecksListHivedsWithItsAddress) {
  RestorePlan p;
  p.request.from = "/tmp/a.tar.gz";
  p.archive = std::make_shared<BackupArchive>();
  p.hived_url = "http://10.0.0.1:30096";
  auto doc = restore_json(p, nullptr);
  EXPECT_EQ(doc["hived"], "http://10.0.0.1:30096");
  RestoreOutcome out;
  out.checks = {{"objects", RestoreCheck::Result::Verified, "2 namespaces, 3 ConfigMaps"},
                {"hived", RestoreCheck::Result::Failed, "http://10.0.0.1:30096 did not answer"}};
  doc = restore_json(p, &out);
  ASSERT_EQ(doc["checks"].size(), 2u);
  EXPECT_EQ(doc["checks"][0]["name"], "objects");
  EXPECT_EQ(doc["checks"][0]["result"], "verified");
  EXPECT_EQ(doc["checks"][1]["name"], "hived");
  EXPECT_EQ(doc["checks"][1]["result"], "failed");
  EXPECT_EQ(doc["checks"][1]["detail"], "http://10.0.0.1:30096 did not answer");
  EXPECT_EQ(doc["verified"], false);
}

}  // namespace
}  // namespace pai::deploy
