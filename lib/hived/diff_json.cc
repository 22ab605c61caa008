#include "hived/diff_json.h"

#include "scheduler/hived_state.h"

namespace pai::hived {

Json diff_json(const DiffInput& in, const ConfigDiff& d) {
  Json vcs = Json::array();
  for (const auto& v : d.vcs)
    vcs.push_back({{"vc", v.vc},
                   {"chain", v.chain},
                   {"cellType", v.cell_type},
                   {"sku", v.sku},
                   {"before", v.before},
                   {"after", v.after},
                   {"leafCellsBefore", v.leaves_before},
                   {"leafCellsAfter", v.leaves_after},
                   {"changed", v.changed()}});
  Json pinned = Json::array();
  for (const auto& p : d.pinned)
    pinned.push_back({{"id", p.id},
                      {"vcBefore", p.vc_before},
                      {"vcAfter", p.vc_after},
                      {"addressBefore", p.address_before},
                      {"addressAfter", p.address_after},
                      {"change", p.change}});
  Json groups = Json::array();
  for (const auto& gc : d.groups)
    groups.push_back({{"name", gc.name},
                      {"vc", gc.vc},
                      {"priority", gc.priority},
                      {"guaranteed", gc.guaranteed},
                      {"leafCells", gc.leaves},
                      {"effect", std::string(to_string(gc.effect))},
                      {"restartOnOld", std::string(scheduler::to_string(gc.before))},
                      {"restartOnNew", std::string(scheduler::to_string(gc.after))},
                      {"reason", gc.reason},
                      {"removedLeafCells", gc.removed_leaves}});
  return Json{{"old", in.old_path},
              {"new", in.new_path},
              {"groupSource", in.source},
              {"groupSourceDetail", in.source_detail},
              {"badNodes", in.bad},
              {"changes", d.changes()},
              {"summary",
               {{"groups", static_cast<int64_t>(d.groups.size())},
                {"keep", d.keeps},
                {"lazilyPreempted", d.lazily_preempted},
                {"onRemovedCells", d.on_removed_cells},
                {"guaranteedPreempted", d.guaranteed_preempted}}},
              {"virtualClusters", vcs},
              {"pinnedCells", pinned},
              {"nodesRemoved", d.nodes_removed},
              {"nodesAdded", d.nodes_added},
              {"groups", groups}};
}

}  // namespace pai::hived
