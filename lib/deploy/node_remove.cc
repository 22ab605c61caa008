#include "deploy/node_remove.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <future>
#include <utility>

#include "config/cluster_files.h"
#include "deploy/cluster_files.h"
#include "hived/diff.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "util/fs.h"
#include "util/strings.h"

namespace pai::deploy {

namespace {

// A checked HiveD config (a file or a cluster directory): its model.
UseCaseResult<std::shared_ptr<config::HivedModel>> node_remove_model(const std::string& path) {
  config::CheckOutcome out = config::check_paths({path});
  if (out.diagnostics.has_errors() || out.input_error) {
    UseCaseError e =
        other_error("the HiveD config " + path + " has errors (paictl check config " + path + ")");
    e.about = UseCaseError::About::HivedConfig;
    for (const auto& d : out.diagnostics.items())
      if (d.severity == diag::Severity::Error) e.findings.push_back(d);
    e.files = out.files.size();
    return e;
  }
  for (const auto& c : out.clusters)
    if (c.model) return c.model;
  return other_error("no HiveD config in " + path);
}

// HiveD's live state: the cluster status and the affinity groups, read at once.
// The one place that speaks hived::Client's result type.
UseCaseResult<hived::LiveState> node_remove_read_live(hived::Client& client,
                                                      const std::string& where) {
  auto failed = [&](const std::string& doing, const hived::Error& e) {
    UseCaseError u = remote_error("HiveD at " + where + ": " + doing + ": " + e.summary());
    if (e.kind == hived::Error::Kind::Transport) u.about = UseCaseError::About::HivedUnreachable;
    return u;
  };
  auto st = std::async(std::launch::async, [&] { return client.get("/v1/inspect/clusterstatus"); });
  auto gr =
      std::async(std::launch::async, [&] { return client.get("/v1/inspect/affinitygroups/"); });
  auto s = st.get();
  auto g = gr.get();
  if (!s.ok()) return failed("reading the cluster status", s.error());
  if (!g.ok()) return failed("reading the affinity groups", g.error());
  auto decode = [](const std::string& err) {
    hived::Error e;
    e.kind = hived::Error::Kind::Decode;
    e.status = 200;
    e.message = err;
    return e;
  };
  auto pst = hived::parse_cluster_status(*s);
  if (!pst.ok()) return failed("reading the cluster status", decode(pst.error().message));
  auto pg = hived::parse_affinity_groups(*g);
  if (!pg.ok()) return failed("reading the affinity groups", decode(pg.error().message));
  return hived::index_live(std::move(pst).value(), std::move(pg).value());
}

// The running groups that use the cells of removed nodes, from the live HiveD:
// lib/hived's diff of the configs before and after.
UseCaseResult<std::vector<AffectedGroup>> node_remove_running_groups(const NodeRemovePlan& p,
                                                                     const Callbacks& cb,
                                                                     std::string& source) {
  char tmpl[] = "/tmp/paictl-node-XXXXXX";
  const char* tmp = ::mkdtemp(tmpl);
  if (!tmp) return input_error("node remove: no temporary directory for the new HiveD config");
  std::string dir = tmp;
  std::string next = dir + "/services-configuration.yaml";
  (void)util::write_file_atomic(next, p.hived.services_after, 0600);
  auto cleanup = [&] {
    std::remove(next.c_str());
    ::rmdir(dir.c_str());
  };
  // The new config first: it is what will run.
  auto new_model = node_remove_model(next);
  if (!new_model.ok()) {
    cleanup();
    return std::move(new_model).error();
  }
  auto old_model = node_remove_model(p.hived.services_file);
  if (!old_model.ok()) {
    cleanup();
    return std::move(old_model).error();
  }
  auto http = hived_http_client(p.deps.hived_http, &cb);
  hived::Client client(*http, p.request.hived);
  std::string where = http::redact_url(p.request.hived);
  auto live = node_remove_read_live(client, where);
  cleanup();
  if (!live.ok()) return std::move(live).error();
  for (const auto& w : live->warnings) {
    UseCaseEvent e;
    e.kind = UseCaseEvent::Kind::Warning;
    e.message = w;
    cb.emit(e);
  }
  source = "the live HiveD at " + where;
  auto groups = hived::live_groups(*live, old_model->get());
  auto bad = hived::bad_nodes(*live);
  auto d = hived::diff_configs(**old_model, **new_model, groups, bad);
  if (!d.ok()) return input_error("node remove: the HiveD diff: " + d.error().message);
  std::vector<AffectedGroup> out;
  for (const auto& gc : d->groups) {
    if (gc.effect == hived::GroupEffect::Keeps) continue;
    out.push_back({gc.name, gc.vc, std::string(hived::to_string(gc.effect)), gc.reason});
  }
  return out;
}

}  // namespace

std::string NodeRemovePlan::node_script(const std::string& n) const {
  std::string kubectl =
      "kubectl --kubeconfig=/etc/kubernetes/admin.conf --cache-dir=/etc/paictl/kube-cache";
  std::string q = util::shell_quote(n);
  std::string script;
  if (request.drain)
    script += kubectl + " drain " + q + " --ignore-daemonsets --delete-emptydir-data --timeout=" +
              std::to_string(request.wait_s) + "s\n";
  script += kubectl + " delete node " + q + " --ignore-not-found --wait=false\n";
  return script;
}

UseCaseResult<NodeRemovePlan> plan_node_remove(const NodeRemoveRequest& r,
                                               const NodeRemoveDeps& deps, const Callbacks& cb) {
  NodeRemovePlan p;
  p.request = r;
  p.deps = deps;
  PrepareRequest pr;
  pr.cluster_dir = r.cluster_dir;
  pr.limit = r.nodes;
  pr.wait_s = r.wait_s;
  pr.templates_dir = r.templates_dir;
  auto prepared = prepare_cluster(pr, deps.install.load_hosts);
  if (!prepared.ok()) return std::move(prepared).error();
  p.cluster = std::make_shared<const PreparedCluster>(std::move(prepared).value());
  for (const auto& h : p.cluster->specs) {
    if (!h.selected) continue;
    if (h.master)
      return input_error("node remove: " + h.name +
                         " is the master; paictl reset removes the cluster");
    p.nodes.push_back(h.name);
  }
  // With --azure every node must be a VM of a pool; nothing changes before that is known.
  if (r.azure) {
    auto session = open_azure_required(p.cluster->cluster_dir, r.azure_access, deps.install.azure);
    if (!session.ok()) return std::move(session).error();
    auto a = plan_azure_removal(std::move(*session), p.nodes, cb);
    if (!a.ok()) return std::move(a).error();
    p.azure = std::move(a).value();
  }
  // The nodes' cells leave the HiveD config (and on-prem hosts layout.yaml; the
  // Azure step writes layout.yaml from what Azure shows).
  auto h = plan_hived_remove(p.cluster->cluster_dir, p.nodes, r.vc, !r.azure);
  if (!h.ok()) return std::move(h).error();
  p.hived = std::move(h).value();
  if (!r.hived.empty() && p.hived.services_changed()) {
    std::string source;
    auto groups = node_remove_running_groups(p, cb, source);
    if (!groups.ok()) return std::move(groups).error();
    p.running_groups = std::move(groups).value();
    if (p.running_groups->empty()) {
      UseCaseEvent e;
      e.kind = UseCaseEvent::Kind::NoRunningGroups;
      e.message = util::join(p.nodes, ", ") + " (" + source + ")";
      cb.emit(e);
    } else if (!r.force) {
      std::vector<std::string> names;
      for (const auto& g : *p.running_groups)
        names.push_back(g.name + " (VC " + g.vc + ", " + g.effect + ")");
      UseCaseError e = other_error("node remove: running groups use the cells of " +
                                   util::join(p.nodes, ", ") + ": " + util::join(names, ", "));
      e.about = UseCaseError::About::RunningGroups;
      return e;
    }
  }
  return p;
}

NodeRemoveOutcome apply_node_remove(NodeRemovePlan& p, const Callbacks& cb) {
  const NodeRemoveRequest& r = p.request;
  NodeRemoveOutcome o;
  HostStageRequest reset = host_stage_request(HostOperation::Reset, r, r.nodes);
  reset.yes = true;
  auto run_reset = [&] {
    auto plan = plan_host_stage(reset, p.deps.install, cb);
    if (!plan.ok()) {
      o.end = NodeRemoveOutcome::End::ResetNotPlanned;
      o.error = std::move(plan).error();
      return;
    }
    o.reset = finish_host_stage(std::move(plan).value(), true, cb);
    o.end = NodeRemoveOutcome::End::Reset;
    const HostStage& s = *o.reset;
    o.reset_went_on = s.end == HostStage::End::UpToDate || s.end == HostStage::End::DryRun ||
                      (s.end == HostStage::End::Applied && s.result.ok());
  };
  if (r.dry_run) {
    o.end = NodeRemoveOutcome::End::DryRun;
    if (!p.azure) run_reset();
    if (o.end == NodeRemoveOutcome::End::Reset) o.end = NodeRemoveOutcome::End::DryRun;
    return o;
  }
  if (!r.yes) {
    Question q;
    q.kind = Question::Kind::RemoveNodes;
    q.nodes = p.nodes;
    q.azure = p.azure.has_value();
    if (cb.ask(q) != Answer::Yes) {
      o.end = NodeRemoveOutcome::End::Declined;
      return o;
    }
  }
  auto transport = make_transport(p.deps.install.transport, p.cluster->hosts.ssh_password);
  const HostSpec& master = *p.cluster->master();
  for (const auto& n : p.nodes) {
    auto x = run_on_master(*transport, master, "set -e\n" + p.node_script(n));
    if (!x.ok() || x.exit_status != 0) {
      o.end = NodeRemoveOutcome::End::DeleteFailed;
      o.error = remote_error(
          "node remove: " + std::string(r.drain ? "draining and deleting" : "deleting") +
          " the node " + n + " failed: " + (x.ok() ? std::string(util::trim(x.err)) : x.error));
      return o;
    }
    o.deleted.push_back(n);
    UseCaseEvent e;
    e.kind = UseCaseEvent::Kind::NodeDeleted;
    e.message = n;
    e.drained = r.drain;
    cb.emit(e);
  }
  PushRequest push{r.cluster_dir, r.wait_s, r.parallel, r.templates_dir};
  if (p.azure) {
    // The VMs go (nothing on them needs resetting), and the files follow.
    o.azure = apply_azure_removal(*p.azure, cb);
    if (o.azure->error) {
      o.end = NodeRemoveOutcome::End::AzureFailed;
      o.error = *o.azure->error;
      return o;
    }
    o.end = NodeRemoveOutcome::End::AzureDeleted;
    o.push = push_hived_edit(p.hived, push, p.deps.install, cb);
    return o;
  }
  // Then what install put on the hosts goes, as reset --limit does.
  run_reset();
  if (!o.reset_went_on) return o;
  o.push = push_hived_edit(p.hived, push, p.deps.install, cb);
  return o;
}

}  // namespace pai::deploy
