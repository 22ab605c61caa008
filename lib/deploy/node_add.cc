#include "deploy/node_add.h"

#include <utility>

#include "config/cluster_files.h"

namespace pai::deploy {

namespace {

InstallRequest node_add_join_request(const NodeAddRequest& r, std::vector<std::string> hosts) {
  InstallRequest j;
  j.cluster_dir = r.cluster_dir;
  j.dry_run = r.dry_run;
  j.yes = r.yes;
  j.limit = std::move(hosts);
  j.ignore_checks = r.ignore_checks;
  j.wait_s = r.wait_s;
  j.parallel = r.parallel;
  j.templates_dir = r.templates_dir;
  j.layouts_dir = r.layouts_dir;
  j.azure = r.azure;
  return j;
}

// The join: install --limit of the new hosts. Its end is reported by its events.
void node_add_join(NodeAddPlan& p, NodeAddOutcome& o, InstallRequest request, const Callbacks& cb) {
  auto plan = plan_install(request, p.deps, cb);
  if (!plan.ok()) {
    o.end = NodeAddOutcome::End::JoinNotPlanned;
    o.error = std::move(plan).error();
    return;
  }
  o.join_plan = std::move(plan).value();
  o.join = apply_install(*o.join_plan, cb);
  o.end = NodeAddOutcome::End::Joined;
  o.join_went_on = install_went_on(*o.join);
}

PushRequest node_add_push_request(const NodeAddRequest& r) {
  return {r.cluster_dir, r.wait_s, r.parallel, r.templates_dir};
}

}  // namespace

UseCaseResult<NodeAddPlan> plan_node_add(const NodeAddRequest& r, const InstallDeps& deps,
                                         const Callbacks& cb) {
  NodeAddPlan p;
  p.request = r;
  p.deps = deps;
  HivedAddRequest hr;
  hr.cluster_dir = r.cluster_dir;
  hr.vc = r.vc;
  hr.layouts_dir = r.layouts_dir;
  if (r.azure_pool.empty()) {
    for (const auto& n : r.nodes) hr.nodes.emplace_back(n, "");
    auto h = plan_hived_add(hr);
    if (!h.ok()) return std::move(h).error();
    p.hived = std::move(h).value();
    p.nodes = r.nodes;
    return p;
  }
  if (!r.vc.empty() || r.dry_run) {
    // Refuse a wrong VC before Azure changes; a dry run shows the cells with
    // placeholders for the VMs' names (Azure names them).
    std::string machine_type;
    auto loaded = config::check_paths({r.cluster_dir});
    if (!loaded.clusters.empty() && loaded.clusters[0].config && loaded.clusters[0].config->azure)
      for (const auto& pool : loaded.clusters[0].config->azure->pools)
        if (pool.name == r.azure_pool) machine_type = pool.machine_type;
    for (int i = 1; i <= r.count; ++i)
      hr.nodes.emplace_back("new-vm-" + std::to_string(i), machine_type);
    hr.check = false;
    if (!machine_type.empty()) {
      auto h = plan_hived_add(hr);
      if (!h.ok()) return std::move(h).error();
      p.hived = std::move(h).value();
    }
  }
  auto session = open_azure_required(r.cluster_dir, r.azure, deps.azure);
  if (!session.ok()) return std::move(session).error();
  auto grow = plan_azure_grow(*session, r.azure_pool, r.count, cb);
  if (!grow.ok()) return std::move(grow).error();
  p.grow = std::move(grow).value();
  return p;
}

NodeAddOutcome apply_node_add(NodeAddPlan& p, const Callbacks& cb) {
  const NodeAddRequest& r = p.request;
  NodeAddOutcome o;
  if (!p.grow) {
    node_add_join(p, o, node_add_join_request(r, p.nodes), cb);
    if (r.dry_run || !o.join_went_on) return o;
    o.push = push_hived_edit(p.hived, node_add_push_request(r), p.deps, cb);
    return o;
  }
  if (r.dry_run) {
    o.end = NodeAddOutcome::End::DryRun;
    return o;
  }
  if (!r.yes) {
    Question q;
    q.kind = Question::Kind::GrowPool;
    q.count = static_cast<size_t>(r.count);
    q.subject = p.grow->scale_set;
    Answer a = cb.ask(q);
    if (a != Answer::Yes) {
      o.end = a == Answer::No ? NodeAddOutcome::End::Declined : NodeAddOutcome::End::NoTerminal;
      return o;
    }
  }
  o.grow = apply_azure_grow(*p.grow, cb);
  for (const auto& m : o.grow->added) p.nodes.push_back(m.hostname);
  if (o.grow->error) {
    o.end = NodeAddOutcome::End::AzureFailed;
    o.error = *o.grow->error;
    return o;
  }
  // The VMs exist and are in layout.yaml: they join as on-prem hosts do.
  HivedAddRequest hr;
  hr.cluster_dir = r.cluster_dir;
  hr.vc = r.vc;
  hr.layouts_dir = r.layouts_dir;
  for (const auto& n : p.nodes) hr.nodes.emplace_back(n, "");
  auto h = plan_hived_add(hr);
  if (!h.ok()) {
    o.end = NodeAddOutcome::End::CellsFailed;
    o.error = std::move(h).error();
    return o;
  }
  p.hived = std::move(h).value();
  UseCaseEvent e;
  e.kind = UseCaseEvent::Kind::CellsPlanned;
  e.hived = &p.hived;
  cb.emit(e);
  InstallRequest join = node_add_join_request(r, p.nodes);
  join.skip_azure = true;
  join.yes = true;  // the operator confirmed the whole change above
  node_add_join(p, o, std::move(join), cb);
  if (!o.join_went_on) return o;
  o.push = push_hived_edit(p.hived, node_add_push_request(r), p.deps, cb);
  return o;
}

}  // namespace pai::deploy
