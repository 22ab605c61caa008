#pragma once
// The backup archive of `paictl backup` and `paictl restore` (docs/backup.md): a
// gzip-compressed tar (libarchive) whose first member is `manifest.json` — the
// format, the cluster's name and addresses, the versions, when, the objects the
// cluster held, and the size and SHA-256 of every other member — followed by
// those members: `etcd/snapshot.db`, `pki/...` (/etc/kubernetes/pki, keys
// included), `cluster/{layout,config,services-configuration}.yaml`,
// `hived/hivedscheduler-config.json` and, when the cluster has one,
// `database/...`. Reading is bounded and strict: members are regular files with
// plain relative names (no '..', no absolute path, no links or devices), each
// at most its limit, every one listed in the manifest with its checksum; an
// error names the member.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace pai::deploy {

inline constexpr const char* kBackupFormat = "paictl.backup/v1";
inline constexpr const char* kManifestMember = "manifest.json";
inline constexpr const char* kSnapshotMember = "etcd/snapshot.db";
inline constexpr const char* kHivedMember = "hived/hivedscheduler-config.json";

struct BackupHost {
  std::string name, address;
  bool operator==(const BackupHost&) const = default;
};

struct BackupMemberInfo {
  std::string name;
  uint64_t bytes = 0;
  std::string sha256;
};

// How etcd runs on the master (its static pod's flags), for the restore.
struct EtcdSettings {
  std::string name;             // --name
  std::string data_dir;         // --data-dir
  std::string initial_cluster;  // --initial-cluster
  std::string peer_urls;        // --initial-advertise-peer-urls
  std::string endpoint;         // the first of --advertise-client-urls
  bool operator==(const EtcdSettings&) const = default;
};

struct BackupManifest {
  std::string format = kBackupFormat;
  std::string cluster;  // layout.yaml's cluster name
  std::vector<BackupHost> masters, nodes;
  std::string kubernetes_version, etcd_version;
  double time = 0;       // epoch seconds
  std::string time_utc;  // the same, RFC 3339
  std::string database;  // what was dumped, or "none found"
  EtcdSettings etcd;
  // What the cluster held, for the restore's verification: namespaces and
  // ConfigMaps ("NAMESPACE/NAME"), sorted.
  std::vector<std::string> namespaces, configmaps;
  std::vector<BackupMemberInfo> members;  // every member but the manifest, in archive order
};

std::string manifest_json(const BackupManifest& m);
// The manifest of `text`, or what is wrong with it (Kind::Input).
util::Result<BackupManifest> parse_manifest(std::string_view text);

// What a reader accepts at most.
struct ArchiveLimits {
  size_t max_members = 2048;
  uint64_t max_member_bytes = 64ull << 20;   // any member but the ones below
  uint64_t max_snapshot_bytes = 8ull << 30;  // etcd/snapshot.db (etcd's largest quota)
  uint64_t max_database_bytes = 8ull << 30;  // database/*
  uint64_t max_manifest_bytes = 8ull << 20;  // manifest.json
};

// A member's name is a plain relative path: components of [A-Za-z0-9._-]
// (not "." or ".."), at most 255 bytes. "" when it is; else why not.
std::string unsafe_member_name(std::string_view name);

struct BackupArchive {
  BackupManifest manifest;
  std::string manifest_text;
  std::map<std::string, std::string> members;  // name -> content (the manifest excluded)
};

// The archive's bytes (tar, gzip): manifest.json first, then `members` in
// their order. The manifest's `members` are filled in here from `members`
// (sizes and SHA-256).
util::Result<std::string> write_backup_archive(
    BackupManifest& manifest, const std::vector<std::pair<std::string, std::string>>& members);

// A tar.gz of exactly these members, in this order, nothing checked or added:
// for tests and fuzzing seeds (a tampered or hostile archive).
util::Result<std::string> write_raw_archive(
    const std::vector<std::pair<std::string, std::string>>& members);

// Reads and verifies an archive: the manifest first and readable, every member
// as the manifest says (size, SHA-256), none missing, none extra, none unsafe,
// none truncated. Errors (Kind::Input) name the member.
util::Result<BackupArchive> read_backup_archive(std::string_view bytes,
                                                const ArchiveLimits& limits = {});
util::Result<BackupArchive> read_backup_archive_file(const std::string& path,
                                                     const ArchiveLimits& limits = {});

// The regular files of a plain (uncompressed) tar stream, as `tar -cf - DIR`
// makes it (directories are skipped; links and devices refused), at most
// `max_files` of at most `max_bytes` each.
util::Result<std::map<std::string, std::string>> read_plain_tar(std::string_view bytes,
                                                                size_t max_files = 1024,
                                                                uint64_t max_bytes = 1u << 20);

}  // namespace pai::deploy
