#pragma once
// backup's and restore's -o json documents (docs/backup.md): what a plan says
// and, after an apply, what was written or restored.

#include "deploy/backup.h"
#include "deploy/install_json.h"
#include "deploy/restore.h"

namespace pai::deploy {

// {"cluster", "out", "contents", "dry_run"?} and, with an outcome: "path", "bytes",
// "sha256", "kubernetes_version", "etcd_version", "database", "members": [{"name",
// "bytes", "sha256"}], "record" (the cluster's backups.jsonl).
DocJson backup_json(const BackupPlan& plan, const BackupOutcome* outcome);

// {"archive", "archive_sha256", "cluster", "backup_time", "kubernetes_version",
// "etcd_version", "mismatches", "replaces", "pki_differ", "cluster_files_differ",
// "hived_differs", "hived" (the URL HiveD is checked at, null without its config),
// "resume"?: {"ts", "done"}, "already"?, "dry_run"?} and, with an outcome: "ts",
// "ran", "skipped", "pki_restored", "files_replaced", "missing", "checks":
// [{"name": "objects"|"hived", "result": "verified"|"failed"|"skipped", "detail"}]
// (those run this time), "verified", "old_data".
DocJson restore_json(const RestorePlan& plan, const RestoreOutcome* outcome);

}  // namespace pai::deploy
