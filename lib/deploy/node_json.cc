#include "deploy/node_json.h"

#include <algorithm>

#include "deploy/install_json.h"

namespace pai::deploy {

namespace {

// The plan and result of one hosts' run, for a node document.
DocJson node_json_run(const HostStage& s) {
  DocJson out = DocJson::object();
  out["plan"] = s.plan->plan.to_json();
  if (s.end == HostStage::End::Applied) out["result"] = s.result.to_json();
  out["stats"] = run_stats_json(*s.plan);
  return out;
}

void node_json_push(DocJson& doc, const std::optional<PushOutcome>& push) {
  if (push && push->stage.plan) doc["push"] = node_json_run(push->stage);
}

}  // namespace

DocJson azure_grow_json(const AzureGrowPlan& g, const AzureGrowOutcome* o) {
  DocJson doc = {{"pool", g.pool}, {"scaleSet", g.scale_set},
                 {"sku", g.sku},   {"machineType", g.machine_type},
                 {"from", g.from}, {"to", g.to}};
  if (o && o->files_written) {
    DocJson added = DocJson::array();
    for (const auto& m : o->added)
      added.push_back({{"hostname", m.hostname}, {"hostip", m.ip}, {"instanceId", m.instance_id}});
    doc["added"] = added;
  }
  return doc;
}

DocJson azure_removal_json(const AzureRemovalPlan& r, const AzureRemovalOutcome* o) {
  DocJson vms = DocJson::array();
  for (const auto& m : r.machines)
    vms.push_back({{"hostname", m.hostname},
                   {"hostip", m.ip},
                   {"pool", m.pool},
                   {"instanceId", m.instance_id},
                   {"id", azure::machine_path(r.session->spec, m)}});
  DocJson counts = DocJson::object();
  for (const auto& [pool, c] : r.counts) counts[pool] = {{"from", c.first}, {"to", c.second}};
  DocJson doc = {{"delete", vms}, {"counts", counts}};
  if (o && o->listed) doc["deleted"] = o->deleted;
  return doc;
}

DocJson node_add_json(const NodeAddPlan& p, const NodeAddOutcome* o) {
  DocJson doc = {{"apiVersion", "paictl.nodeAdd/v1"},
                 {"kind", "NodeAdd"},
                 {"cluster", p.request.cluster_dir},
                 {"dryRun", p.request.dry_run}};
  doc["nodes"] = p.nodes;
  if (p.grow) {
    const AzureGrowOutcome* grown = o && o->grow ? &*o->grow : nullptr;
    doc["azure"] = azure_grow_json(*p.grow, grown);
    bool joining = grown && !grown->error;
    if (!joining || !o || o->end != NodeAddOutcome::End::CellsFailed)
      doc["hived"] = hived_edit_json(p.hived);
  } else {
    doc["hived"] = hived_edit_json(p.hived);
  }
  if (o && o->join && o->join->end == InstallOutcome::End::Hosts)
    doc["join"] = node_json_run(o->join->hosts);
  if (o) node_json_push(doc, o->push);
  return doc;
}

DocJson node_remove_json(const NodeRemovePlan& p, const NodeRemoveOutcome* o) {
  DocJson doc = {{"apiVersion", "paictl.nodeRemove/v1"},
                 {"kind", "NodeRemove"},
                 {"cluster", p.cluster->cluster_dir},
                 {"dryRun", p.request.dry_run}};
  doc["nodes"] = p.nodes;
  doc["drain"] = p.request.drain;
  doc["hived"] = hived_edit_json(p.hived);
  if (p.running_groups) {
    DocJson groups = DocJson::array();
    for (const auto& g : *p.running_groups)
      groups.push_back(
          {{"name", g.name}, {"vc", g.vc}, {"effect", g.effect}, {"reason", g.reason}});
    doc["runningGroups"] = groups;
  }
  if (!p.etcd_remove.empty() || !p.lost.empty()) {
    DocJson members = DocJson::array();
    for (const auto& m : p.etcd_remove) {
      DocJson x = {{"name", m.name}, {"id", m.id}, {"healthy", m.healthy}};
      if (o)
        x["removed"] = std::find(o->etcd_removed.begin(), o->etcd_removed.end(), m.name) !=
                       o->etcd_removed.end();
      members.push_back(x);
    }
    doc["etcd"] = {{"via", p.etcd_via}, {"members", members}, {"lost", p.lost}};
  }
  if (p.azure && (p.request.dry_run || (o && o->azure)))
    doc["azure"] = azure_removal_json(*p.azure, o && o->azure ? &*o->azure : nullptr);
  if (o && o->reset && !p.request.dry_run) doc["reset"] = node_json_run(*o->reset);
  if (o) node_json_push(doc, o->push);
  return doc;
}

}  // namespace pai::deploy
