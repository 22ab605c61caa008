#include "hived/maintenance_json.h"

#include <cmath>
#include <cstdint>

namespace pai::hived {

namespace {

// Seconds as an integer when whole (they nearly always are).
Json maintenance_seconds(double s) {
  if (std::isfinite(s) && s == std::floor(s) && std::fabs(s) < 9e15) return static_cast<int64_t>(s);
  return s;
}

Json maintenance_group_json(const PlannedGroup& g) {
  Json j{{"name", g.name},
         {"vc", g.vc},
         {"priority", g.priority},
         {"action", std::string(to_string(g.action))}};
  if (g.until_s) j["until"] = maintenance_seconds(*g.until_s);
  if (g.end_s) j["expectedEnd"] = maintenance_seconds(*g.end_s);
  j["nodes"] = g.nodes;
  j["leafCells"] = g.leaves;
  j["reason"] = g.reason;
  if (g.lazily_preempted) {
    j["lazilyPreempted"] = true;
    j["lazyReason"] = g.lazy_reason;
  }
  return j;
}

}  // namespace

Json maintenance_json(const MaintenancePlan& plan) {
  Json batches = Json::array();
  for (const auto& b : plan.batches) {
    Json groups = Json::array();
    for (const auto& g : b.groups) groups.push_back(maintenance_group_json(g));
    Json doomed = Json::array();
    for (const auto& d : b.doomed) {
      Json j{{"vc", d.vc},
             {"chain", d.chain},
             {"cellType", d.cell_type},
             {"cells", d.cells},
             {"leafCells", d.leaves},
             {"addedLeafCells", d.added_leaves},
             {"guaranteedLeafCells", d.guaranteed_leaves}};
      if (d.allowed_leaves >= 0) j["allowedLeafCells"] = d.allowed_leaves;
      doomed.push_back(std::move(j));
    }
    batches.push_back({{"index", b.index},
                       {"nodes", b.nodes},
                       {"start", maintenance_seconds(b.start_s)},
                       {"reason", b.reason},
                       {"groups", std::move(groups)},
                       {"doomed", std::move(doomed)}});
  }
  Json blocking = Json::array();
  for (const auto& g : plan.blocking) blocking.push_back(maintenance_group_json(g));
  Json blocked = Json::array();
  for (const auto& b : plan.blocked)
    blocked.push_back({{"node", b.node}, {"groups", b.groups}, {"reason", b.reason}});
  Json j{{"order", plan.hived ? "hived" : "plain"}};
  if (!plan.hived) j["fallbackReason"] = plan.fallback_reason;
  j["maxUnavailable"] = to_string(plan.max_unavailable);
  j["nodesPerBatch"] = plan.nodes_per_batch;
  j["clusterNodes"] = plan.cluster_nodes;
  j["waitForGroupsSeconds"] = maintenance_seconds(plan.wait_for_groups_s);
  j["evict"] = plan.evict;
  j["now"] = maintenance_seconds(plan.now_s);
  j["end"] = maintenance_seconds(plan.end_s);
  j["replayedBatches"] = plan.replayed_batches;
  j["batches"] = std::move(batches);
  j["blocking"] = std::move(blocking);
  j["blocked"] = std::move(blocked);
  j["evicted"] = plan.evicted;
  j["unknownNodes"] = plan.unknown_nodes;
  j["warnings"] = plan.warnings;
  return j;
}

}  // namespace pai::hived
