// The backup archive: a round trip keeps every member and the manifest; a
// truncated archive, a member whose bytes changed, a member the manifest does
// not list, an oversized member and unsafe names (absolute, '..') are refused
// with the member named.

#include "deploy/backup_archive.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "util/sha256.h"

namespace pai::deploy {
namespace {

BackupManifest archive_test_manifest() {
  BackupManifest m;
  m.cluster = "lab";
  m.masters = {{"pai-master", "10.0.0.1"}};
  m.nodes = {{"gpu-1", "10.0.0.2"}, {"gpu-2", "10.0.0.3"}};
  m.kubernetes_version = "v1.30.10";
  m.etcd_version = "3.4.23";
  m.time = 1796550000;
  m.time_utc = "2026-12-06T11:00:00Z";
  m.database = "none found";
  m.etcd = {"pai-master", "/var/lib/etcd", "pai-master=https://10.0.0.1:2380",
            "https://10.0.0.1:2380", "https://10.0.0.1:2379"};
  m.namespaces = {"default", "kube-system", "openpai"};
  m.configmaps = {"default/a", "openpai/hivedscheduler-config"};
  return m;
}

std::vector<std::pair<std::string, std::string>> archive_test_members() {
  // Incompressible, so that most of the archive is the snapshot's data.
  std::string snapshot(200000, '\0');
  uint32_t x = 12345;
  for (auto& c : snapshot) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 24);
  }
  return {{kSnapshotMember, snapshot},
          {"pki/ca.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"},
          {"pki/ca.key", "-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n"},
          {"pki/etcd/ca.crt", "etcd ca\n"},
          {"cluster/layout.yaml", "machine-sku: {}\n"},
          {kHivedMember, "{\"data\": {\"hivedscheduler.yaml\": \"x\"}}\n"}};
}

std::string archive_test_bytes() {
  BackupManifest m = archive_test_manifest();
  auto bytes = write_backup_archive(m, archive_test_members());
  EXPECT_TRUE(bytes.ok());
  return bytes.ok() ? *bytes : std::string();
}

TEST(BackupArchive, RoundTripKeepsTheManifestAndEveryMember) {
  BackupManifest m = archive_test_manifest();
  auto bytes = write_backup_archive(m, archive_test_members());
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  ASSERT_EQ(m.members.size(), 6u);
  EXPECT_EQ(m.members[0].name, kSnapshotMember);
  EXPECT_EQ(m.members[0].bytes, 200000u);
  EXPECT_EQ(m.members[0].sha256, util::sha256_hex(archive_test_members()[0].second));

  auto a = read_backup_archive(*bytes);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->manifest.cluster, "lab");
  EXPECT_EQ(a->manifest.masters, m.masters);
  EXPECT_EQ(a->manifest.nodes, m.nodes);
  EXPECT_EQ(a->manifest.kubernetes_version, "v1.30.10");
  EXPECT_EQ(a->manifest.etcd_version, "3.4.23");
  EXPECT_EQ(a->manifest.database, "none found");
  EXPECT_EQ(a->manifest.etcd, m.etcd);
  EXPECT_EQ(a->manifest.namespaces, m.namespaces);
  EXPECT_EQ(a->manifest.configmaps, m.configmaps);
  EXPECT_EQ(a->manifest.time, m.time);
  for (const auto& [name, data] : archive_test_members()) {
    ASSERT_TRUE(a->members.count(name)) << name;
    EXPECT_EQ(a->members.at(name), data) << name;
  }
  EXPECT_EQ(a->members.size(), 6u);
}

TEST(BackupArchive, TruncatedArchivesAreRefusedAtEveryLength) {
  std::string bytes = archive_test_bytes();
  ASSERT_GT(bytes.size(), 1000u);
  int named = 0;
  for (size_t cut : {size_t{0}, size_t{10}, size_t{100}, bytes.size() / 4, bytes.size() / 2,
                     bytes.size() * 3 / 4, bytes.size() - 100, bytes.size() - 1}) {
    auto a = read_backup_archive(std::string_view(bytes).substr(0, cut));
    ASSERT_FALSE(a.ok()) << "cut at " << cut;
    EXPECT_EQ(a.error().kind, util::Error::Kind::Input);
    const std::string& msg = a.error().message;
    EXPECT_TRUE(msg.find("truncated") != std::string::npos ||
                msg.find("not a backup archive") != std::string::npos)
        << msg;
    if (msg.find("member ") != std::string::npos) ++named;
  }
  EXPECT_GE(named, 3);  // cut inside the data: the member is named
}

TEST(BackupArchive, AMemberWhoseBytesChangedIsNamed) {
  BackupManifest m = archive_test_manifest();
  auto members = archive_test_members();
  auto good = write_backup_archive(m, members);
  ASSERT_TRUE(good.ok());
  // The same manifest, one byte of the CA key flipped.
  std::vector<std::pair<std::string, std::string>> raw = {{kManifestMember, manifest_json(m)}};
  for (auto [name, data] : members) {
    if (name == "pki/ca.key") data[30] ^= 0x01;
    raw.emplace_back(name, data);
  }
  auto bytes = write_raw_archive(raw);
  ASSERT_TRUE(bytes.ok());
  auto a = read_backup_archive(*bytes);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("member pki/ca.key does not match its checksum"),
            std::string::npos)
      << a.error().message;

  // A member the manifest does not list.
  raw.clear();
  raw.emplace_back(kManifestMember, manifest_json(m));
  for (const auto& mm : members) raw.push_back(mm);
  raw.emplace_back("pki/extra.key", "x");
  a = read_backup_archive(*write_raw_archive(raw));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("member pki/extra.key is not listed"), std::string::npos)
      << a.error().message;

  // A member the manifest lists is missing.
  raw.clear();
  raw.emplace_back(kManifestMember, manifest_json(m));
  for (const auto& mm : members)
    if (mm.first != "cluster/layout.yaml") raw.push_back(mm);
  a = read_backup_archive(*write_raw_archive(raw));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("member cluster/layout.yaml of manifest.json is missing"),
            std::string::npos)
      << a.error().message;
}

TEST(BackupArchive, TheManifestComesFirstAndMustBeReadable) {
  auto members = archive_test_members();
  auto a = read_backup_archive(*write_raw_archive(members));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("the first member is etcd/snapshot.db, not manifest.json"),
            std::string::npos)
      << a.error().message;
  a = read_backup_archive(*write_raw_archive({{kManifestMember, "{\"format\": "}}));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("manifest.json is not JSON"), std::string::npos);
  a = read_backup_archive(*write_raw_archive(
      {{kManifestMember, "{\"format\": \"other/v9\", \"cluster\": \"x\", \"members\": []}"}}));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("is not paictl.backup/v1"), std::string::npos);
  a = read_backup_archive("plain text, not an archive at all");
  ASSERT_FALSE(a.ok());
}

TEST(BackupArchive, OversizedMembersAreRefusedBeforeTheyAreRead) {
  BackupManifest m = archive_test_manifest();
  auto bytes = write_backup_archive(m, archive_test_members());
  ASSERT_TRUE(bytes.ok());
  ArchiveLimits small;
  small.max_snapshot_bytes = 1000;
  auto a = read_backup_archive(*bytes, small);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("member etcd/snapshot.db is larger than 1000 bytes (200000)"),
            std::string::npos)
      << a.error().message;
  ArchiveLimits few;
  few.max_members = 3;
  a = read_backup_archive(*bytes, few);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("more than 3 members"), std::string::npos);
}

TEST(BackupArchive, UnsafeMemberNamesAreRefused) {
  EXPECT_EQ(unsafe_member_name("pki/etcd/ca.crt"), "");
  EXPECT_NE(unsafe_member_name("/etc/passwd"), "");
  EXPECT_NE(unsafe_member_name("../etc/passwd"), "");
  EXPECT_NE(unsafe_member_name("pki/../../x"), "");
  EXPECT_NE(unsafe_member_name("pki//x"), "");
  EXPECT_NE(unsafe_member_name("pki/./x"), "");
  EXPECT_NE(unsafe_member_name("pki/x\n"), "");
  EXPECT_NE(unsafe_member_name(""), "");
  EXPECT_NE(unsafe_member_name(std::string(300, 'a')), "");

  BackupManifest m = archive_test_manifest();
  auto bytes = write_backup_archive(m, archive_test_members());
  ASSERT_TRUE(bytes.ok());
  for (const char* bad : {"../../etc/cron.d/x", "/etc/kubernetes/pki/ca.key", "pki/../x"}) {
    std::vector<std::pair<std::string, std::string>> raw = {{kManifestMember, manifest_json(m)},
                                                            {bad, "x"}};
    auto a = read_backup_archive(*write_raw_archive(raw));
    ASSERT_FALSE(a.ok()) << bad;
    EXPECT_NE(a.error().message.find("is refused"), std::string::npos) << a.error().message;
  }
  // Nor may the writer make one.
  BackupManifest m2 = archive_test_manifest();
  EXPECT_FALSE(write_backup_archive(m2, {{"../x", "y"}}).ok());
}

TEST(BackupArchive, AFileOnDiskIsReadTheSameWay) {
  std::string path = ::testing::TempDir() + "/paictl-archive-test.tar.gz";
  std::string bytes = archive_test_bytes();
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size() - 50, f);
    std::fclose(f);
  }
  auto a = read_backup_archive_file(path);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message.rfind(path + ": ", 0), 0u) << a.error().message;
  EXPECT_NE(a.error().message.find("truncated"), std::string::npos) << a.error().message;
  std::remove(path.c_str());
}

std::string archive_test_tar_of(const std::string& dir) {
  std::string out;
  std::FILE* p = ::popen(("tar -C " + dir + " -cf - pki").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

TEST(BackupArchive, APlainTarOfThePkiIsReadAsItsFiles) {
  std::string dir = ::testing::TempDir() + "/paictl-pki-tar";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/pki/etcd");
  std::ofstream(dir + "/pki/ca.crt") << "crt";
  std::ofstream(dir + "/pki/etcd/ca.key") << "key";
  auto files = read_plain_tar(archive_test_tar_of(dir));
  ASSERT_TRUE(files.ok()) << files.error().message;
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ(files->at("pki/ca.crt"), "crt");
  EXPECT_EQ(files->at("pki/etcd/ca.key"), "key");
  // A link is not taken along.
  std::filesystem::create_symlink("/etc/shadow", dir + "/pki/link");
  files = read_plain_tar(archive_test_tar_of(dir));
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.error().message.find("pki/link is not a regular file"), std::string::npos)
      << files.error().message;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pai::deploy
