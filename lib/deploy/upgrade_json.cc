#include "deploy/upgrade_json.h"

#include "hived/maintenance_json.h"
#include "util/json.h"

namespace pai::deploy {

DocJson upgrade_json(const UpgradePlan& p, const UpgradeOutcome* o) {
  DocJson doc = {{"apiVersion", "paictl.upgrade/v1"},
                 {"kind", "Upgrade"},
                 {"cluster", p.cluster->cluster_dir},
                 {"dryRun", p.request.dry_run},
                 {"to", p.target.str()},
                 {"controlPlane", p.control_plane.str()},
                 {"configVersion", p.config_version},
                 {"hived", p.hived_url},
                 {"runId", p.run_id}};
  DocJson nodes = DocJson::array();
  for (const auto& n : p.nodes)
    nodes.push_back({{"name", n.name},
                     {"master", n.master},
                     {"kubelet", n.kubelet},
                     {"ready", n.ready},
                     {"unschedulable", n.unschedulable},
                     {"maintenance", n.maintenance},
                     {"gpusAllocatable", n.gpus_allocatable},
                     {"gpusExpected", n.gpus_expected}});
  doc["nodes"] = nodes;
  DocJson steps = DocJson::array();
  for (const auto& s : p.steps) {
    DocJson st = {{"version", s.to.str()},
                  {"latestPatch", s.latest},
                  {"repository", s.repo},
                  {"controlPlane",
                   {{"kubeadmUpgradeApply", !s.control_plane_done},
                    {"kubeletDone", s.master_kubelet_done},
                    {"otherMasters", s.other_masters}}},
                  {"nodes", s.nodes}};
    if (!s.nodes.empty())
      st["maintenance"] = DocJson::parse(util::dump_json(hived::maintenance_json(s.batches)));
    steps.push_back(st);
  }
  doc["steps"] = steps;
  doc["upToDate"] = p.up_to_date();
  doc["warnings"] = p.warnings;
  if (o && !p.request.dry_run) {
    DocJson r = {{"ok", o->ok},
                 {"applied", o->applied},
                 {"upgraded", o->upgraded},
                 {"configVersion", o->config_version}};
    if (o->error)
      r["error"] = {{"message", o->error->error.message}, {"hint", o->error->error.hint}};
    doc["result"] = r;
  }
  return doc;
}

}  // namespace pai::deploy
