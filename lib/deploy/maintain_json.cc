#include "deploy/maintain_json.h"

#include <climits>
#include <cstdint>

#include "hived/maintenance_json.h"

namespace pai::deploy {

const char* to_string(MaintainOutcome::End e) {
  switch (e) {
    case MaintainOutcome::End::DryRun:
      return "dryRun";
    case MaintainOutcome::End::Blocked:
      return "blocked";
    case MaintainOutcome::End::UpToDate:
      return "upToDate";
    case MaintainOutcome::End::Declined:
      return "declined";
    case MaintainOutcome::End::Applied:
      return "applied";
    case MaintainOutcome::End::Busy:
      return "busy";
  }
  return "?";
}

DocJson maintain_json(const MaintainPlan& p, const MaintainOutcome* o) {
  const MaintainRequest& r = p.request;
  DocJson doc = {{"apiVersion", "paictl.nodeMaintain/v1"},
                 {"kind", "NodeMaintain"},
                 {"cluster", p.cluster ? p.cluster->cluster_dir : r.cluster_dir},
                 {"dryRun", r.dry_run}};
  DocJson change = DocJson::object();
  if (!r.driver.empty()) change["driver"] = r.driver;
  change["packages"] = r.packages;
  change["reboot"] = r.reboot;
  doc["change"] = change;
  doc["groupsFrom"] = p.hived_source;
  DocJson hosts = DocJson::array();
  for (const auto& h : p.hosts) {
    DocJson j = {{"host", h.host}, {"os", h.os}, {"gpus", h.gpus}, {"driverNow", h.driver_now}};
    if (!h.driver_expected.empty()) j["driverExpected"] = h.driver_expected;
    j["reboot"] = h.reboot;
    j["changes"] = h.changes();
    DocJson pk = DocJson::array();
    for (const auto& c : h.packages)
      pk.push_back({{"name", c.name},
                    {"from", c.from},
                    {"to", c.to},
                    {"held", c.held},
                    {"removes", c.removes}});
    j["packages"] = pk;
    hosts.push_back(j);
  }
  doc["hosts"] = hosts;
  doc["plan"] = hived::maintenance_json(p.maintenance);
  if (o) {
    DocJson out = {{"end", to_string(o->end)}};
    if (o->run) {
      out["runId"] = o->run->run_id;
      out["resumed"] = o->run->resumed;
      DocJson nodes = DocJson::array();
      for (const auto& n : o->run->nodes) {
        DocJson j = {{"node", n.node}};
        if (n.batch != SIZE_MAX) j["batch"] = n.batch + 1;
        j["end"] = to_string(n.end);
        if (!n.message.empty()) j["message"] = n.message;
        nodes.push_back(j);
      }
      out["nodes"] = nodes;
    }
    if (o->error) out["error"] = o->error->error.message;
    doc["outcome"] = out;
  }
  return doc;
}

}  // namespace pai::deploy
