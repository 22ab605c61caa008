#include "deploy/backup_json.h"

#include "http/client.h"

namespace pai::deploy {

DocJson backup_json(const BackupPlan& plan, const BackupOutcome* outcome) {
  DocJson doc;
  doc["cluster"] = plan.cluster_name;
  doc["out"] = plan.out;
  doc["contents"] = plan.contents;
  if (plan.request.dry_run) doc["dry_run"] = true;
  if (!outcome) return doc;
  doc["path"] = outcome->path;
  doc["bytes"] = outcome->bytes;
  doc["sha256"] = outcome->sha256;
  doc["kubernetes_version"] = outcome->manifest.kubernetes_version;
  doc["etcd_version"] = outcome->manifest.etcd_version;
  doc["database"] = outcome->manifest.database;
  auto members = DocJson::array();
  for (const auto& m : outcome->manifest.members)
    members.push_back({{"name", m.name}, {"bytes", m.bytes}, {"sha256", m.sha256}});
  doc["members"] = members;
  doc["record"] = plan.cluster->cluster_dir + "/.paictl/backups.jsonl";
  return doc;
}

DocJson restore_json(const RestorePlan& p, const RestoreOutcome* outcome) {
  DocJson doc;
  const auto& m = p.archive->manifest;
  doc["archive"] = p.request.from;
  doc["archive_sha256"] = p.archive_sha256;
  doc["cluster"] = m.cluster;
  doc["backup_time"] = m.time_utc;
  doc["kubernetes_version"] = m.kubernetes_version;
  doc["etcd_version"] = m.etcd_version;
  doc["mismatches"] = p.mismatches;
  doc["replaces"] = p.replaces;
  doc["pki_differ"] = p.pki_differ;
  doc["cluster_files_differ"] = p.cluster_files_differ;
  doc["hived_differs"] = p.hived_differs;
  doc["hived"] = p.hived_url.empty() ? DocJson(nullptr) : DocJson(http::redact_url(p.hived_url));
  if (p.resume) doc["resume"] = {{"ts", p.resume->ts}, {"done", p.resume->done}};
  if (p.already) doc["already"] = p.already->ts;
  if (p.request.dry_run && !p.already) doc["dry_run"] = true;
  if (!outcome) return doc;
  doc["ts"] = outcome->ts;
  doc["ran"] = outcome->ran;
  doc["skipped"] = outcome->skipped;
  doc["pki_restored"] = outcome->pki_restored;
  doc["files_replaced"] = outcome->files_replaced;
  doc["missing"] = outcome->missing;
  auto checks = DocJson::array();
  for (const auto& c : outcome->checks)
    checks.push_back({{"name", c.name}, {"result", to_string(c.result)}, {"detail", c.detail}});
  doc["checks"] = checks;
  doc["verified"] = outcome->verified;
  doc["old_data"] = outcome->layout.old_dir;
  return doc;
}

}  // namespace pai::deploy
