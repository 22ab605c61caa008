#include "deploy/hived_edit.h"

#include <utility>

#include "config/cluster_files.h"
#include "planner/profiles.h"
#include "planner/unified_diff.h"
#include "util/fs.h"

namespace pai::deploy {

namespace {

// The cluster's files as they are.
UseCaseResult<void> hived_edit_load(const std::string& dir, config::CheckOutcome& loaded,
                                    HivedEdit& h) {
  loaded = config::check_paths({dir});
  if (loaded.clusters.empty() || !loaded.clusters[0].layout)
    return input_error(dir + " has no layout.yaml");
  const auto& c = loaded.clusters[0];
  h.layout_file = c.layout->file;
  h.services_file = c.services ? c.services->file : dir + "/services-configuration.yaml";
  auto l = util::read_file(h.layout_file);
  if (!l.ok()) return input_error(h.layout_file + ": " + l.error().message);
  h.layout_before = h.layout_after = *l;
  if (c.services) {
    auto sv = util::read_file(h.services_file);
    if (!sv.ok()) return input_error(h.services_file + ": " + sv.error().message);
    h.services_before = h.services_after = *sv;
  }
  // The push goes to the first master, as the joins, the upgrades and the etcd
  // reads do (not to a master being added, nor to the last one, which may be lost).
  for (const auto& m : c.layout->machines)
    if (m.master && h.master.empty()) h.master = m.hostname;
  return {};
}

UseCaseError hived_edit_failed(const planner::NodeCellsEdit& e) {
  return input_error("HiveD config: " + e.error, e.hint);
}

// The planner's profiles of the Azure pools' VM sizes (layouts/), by the pools'
// machine-types: a machine-type without cells gets its chain from them.
planner::ChainProfiles hived_edit_azure_profiles(const config::Cluster& c,
                                                 const std::string& layouts_dir) {
  planner::ChainProfiles out;
  if (!c.config || !c.config->azure) return out;
  for (const auto& p : c.config->azure->pools) {
    std::string name = planner::azure_profile_name(p.sku);
    if (p.machine_type.empty() || name.empty() || out.count(p.machine_type)) continue;
    diag::List ignored;  // no profile: the node joins without cells, with a warning
    if (auto prof = planner::load_profile(layouts_dir, name, ignored))
      out.emplace(p.machine_type, std::move(*prof));
  }
  return out;
}

}  // namespace

std::string HivedEdit::diff() const {
  return planner::unified_diff(services_before, services_after, "a/services-configuration.yaml",
                               "b/services-configuration.yaml");
}

UseCaseResult<HivedEdit> plan_hived_add(const HivedAddRequest& r) {
  HivedEdit h;
  config::CheckOutcome loaded;
  if (auto l = hived_edit_load(r.cluster_dir, loaded, h); !l.ok()) return std::move(l).error();
  const auto& c = loaded.clusters[0];
  if (!c.services) return h;
  std::vector<NewNode> hosts = r.nodes;
  if (r.only_new && c.model)
    std::erase_if(hosts, [&](const auto& x) { return c.model->node_index.count(x.first) > 0; });
  for (auto& [name, sku] : hosts)
    if (sku.empty())
      if (const auto* m = c.layout->find_machine(name)) sku = m->machine_type;
  // Hosts not in layout.yaml are refused by the join's own checks.
  std::erase_if(hosts, [](const auto& x) { return x.second.empty(); });
  h.edit = planner::add_node_cells(h.services_before, h.layout_before, c, hosts, r.vc, r.check,
                                   hived_edit_azure_profiles(c, r.layouts_dir));
  if (!h.edit.ok()) return hived_edit_failed(h.edit);
  h.services_after = h.edit.text;
  return h;
}

UseCaseResult<HivedEdit> plan_hived_remove(const std::string& cluster_dir,
                                           const std::vector<std::string>& nodes,
                                           const std::string& vc, bool from_layout) {
  HivedEdit h;
  config::CheckOutcome loaded;
  if (auto l = hived_edit_load(cluster_dir, loaded, h); !l.ok()) return std::move(l).error();
  const auto& c = loaded.clusters[0];
  std::string layout = planner::remove_layout_machines(h.layout_before, *c.layout, nodes);
  if (from_layout) h.layout_after = layout;
  if (!c.services) return h;
  h.edit = planner::remove_node_cells(h.services_before, layout, c, nodes, vc);
  if (!h.edit.ok()) return hived_edit_failed(h.edit);
  h.services_after = h.edit.text;
  return h;
}

UseCaseResult<void> write_hived_edit(const HivedEdit& h) {
  if (h.layout_changed())
    if (auto w = util::write_file_atomic(h.layout_file, h.layout_after, 0644); !w.ok())
      return input_error(h.layout_file + ": " + w.error().message);
  if (h.services_changed())
    if (auto w = util::write_file_atomic(h.services_file, h.services_after, 0600); !w.ok())
      return input_error(h.services_file + ": " + w.error().message);
  return {};
}

PushOutcome push_hived_edit(const HivedEdit& h, const PushRequest& r, const InstallDeps& deps,
                            const Callbacks& cb) {
  PushOutcome out;
  if (!h.services_changed() && !h.layout_changed()) return out;
  out.ran = true;
  if (auto w = write_hived_edit(h); !w.ok()) {
    out.error = std::move(w).error();
    return out;
  }
  out.written = true;
  if (h.services_changed()) {
    UseCaseEvent e;
    e.kind = UseCaseEvent::Kind::HivedPush;
    cb.emit(e);
  }
  HostStageRequest s;
  s.operation = HostOperation::HivedPush;
  s.prepare.cluster_dir = r.cluster_dir;
  s.prepare.limit = {h.master};
  s.prepare.wait_s = r.wait_s;
  s.prepare.templates_dir = r.templates_dir;
  s.prepare.accept_master_count = r.accept_master_count;
  s.run.parallel = r.parallel;
  s.yes = true;
  auto plan = plan_host_stage(s, deps, cb);
  if (!plan.ok()) {
    out.error = std::move(plan).error();
    return out;
  }
  out.stage = finish_host_stage(std::move(plan).value(), true, cb);
  return out;
}

}  // namespace pai::deploy
