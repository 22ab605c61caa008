#include "deploy/node_remove.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <future>
#include <utility>

#include "config/cluster_files.h"
#include "deploy/backup.h"
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

// A control plane of several losing masters: the members read through the
// first master that stays and answers, the quorum checked, and the masters
// that are lost (member unhealthy, SSH unanswered) marked not to be reset.
UseCaseResult<void> node_remove_plan_etcd(NodeRemovePlan& p,
                                          const std::vector<const HostSpec*>& masters) {
  auto transport = make_transport(p.deps.install.transport, p.cluster->hosts.ssh_password);
  std::vector<EtcdMember> members;
  std::vector<std::string> tried;
  for (const auto& h : p.cluster->specs) {
    if (!h.master || std::find(masters.begin(), masters.end(), &h) != masters.end()) continue;
    auto r = run_on_master(*transport, h, etcd_members_script("https://" + h.address + ":2379"));
    auto parsed = r.ok() ? parse_etcd_members(r.out)
                         : util::Result<std::vector<EtcdMember>>(
                               util::Error{r.error, "", util::Error::Kind::Remote});
    if (!parsed.ok()) {
      tried.push_back(h.name + ": " + parsed.error().message);
      continue;
    }
    members = std::move(parsed).value();
    p.etcd_via = h.name;
    break;
  }
  if (p.etcd_via.empty())
    return remote_error(
        "node remove: no master that stays answered etcdctl (" + util::join(tried, "; ") + ")",
        "a master's etcd must answer to remove another's member; look at the "
        "masters' etcd pods (crictl ps --name etcd)");
  std::set<std::string> removing;
  for (const auto* m : masters) {
    const EtcdMember* em = find_etcd_member(members, m->name, m->address);
    if (!em) continue;  // not a member (an earlier run removed it)
    removing.insert(em->name);
    p.etcd_remove.push_back(*em);
  }
  if (auto why = etcd_quorum_refusal(members, removing)) {
    UseCaseError e = why->kind == util::Error::Kind::Remote
                         ? remote_error("node remove: " + why->message, why->hint)
                         : input_error("node remove: " + why->message, why->hint);
    return e;
  }
  for (const auto* m : masters) {
    const EtcdMember* em = find_etcd_member(members, m->name, m->address);
    if (em && em->healthy) continue;
    auto r = run_on_master(*transport, *m, "true");
    if (!r.ok()) p.lost.push_back(m->name);
  }
  return {};
}

}  // namespace

const HostSpec* NodeRemovePlan::kubectl_host() const {
  if (!etcd_via.empty())
    for (const auto& h : cluster->specs)
      if (h.name == etcd_via) return &h;
  return cluster->master();
}

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
  size_t masters = 0;
  std::vector<const HostSpec*> leaving;  // masters among the nodes
  for (const auto& h : p.cluster->specs) masters += h.master;
  for (const auto& h : p.cluster->specs) {
    if (!h.selected) continue;
    if (h.master && masters == 1)
      return input_error("node remove: " + h.name +
                         " is the master; paictl reset removes the cluster");
    if (h.master) leaving.push_back(&h);
    p.nodes.push_back(h.name);
  }
  if (!leaving.empty() && leaving.size() == masters)
    return input_error("node remove: every master would go; paictl reset removes the cluster",
                       "keep at least one master");
  if (!leaving.empty() && r.azure)
    return input_error("node remove --azure: the masters are not VMs of a pool");
  // With --azure every node must be a VM of a pool; nothing changes before that is known.
  if (r.azure) {
    auto session = open_azure_required(p.cluster->cluster_dir, r.azure_access, deps.install.azure);
    if (!session.ok()) return std::move(session).error();
    auto a = plan_azure_removal(std::move(*session), p.nodes, cb);
    if (!a.ok()) return std::move(a).error();
    p.azure = std::move(a).value();
  }
  if (!leaving.empty())
    if (auto e = node_remove_plan_etcd(p, leaving); !e.ok()) return std::move(e).error();
  // The nodes' cells leave the HiveD config (and on-prem hosts layout.yaml; the
  // Azure step writes layout.yaml from what Azure shows).
  auto h = plan_hived_remove(p.cluster->cluster_dir, p.nodes, r.vc, !r.azure);
  if (!h.ok()) return std::move(h).error();
  p.hived = std::move(h).value();
  if (!p.etcd_via.empty()) p.hived.master = p.etcd_via;  // a master that stays
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
  std::vector<std::string> to_reset;
  for (const auto& n : p.nodes)
    if (std::find(p.lost.begin(), p.lost.end(), n) == p.lost.end()) to_reset.push_back(n);
  HostStageRequest reset = host_stage_request(HostOperation::Reset, r, to_reset);
  reset.yes = true;
  auto run_reset = [&] {
    if (to_reset.empty()) {
      o.end = NodeRemoveOutcome::End::NothingToReset;
      o.reset_went_on = true;
      return;
    }
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
    if (o.end == NodeRemoveOutcome::End::Reset || o.end == NodeRemoveOutcome::End::NothingToReset)
      o.end = NodeRemoveOutcome::End::DryRun;
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
  const HostSpec& master = *p.kubectl_host();
  // The masters' etcd members first, one at a time: the cluster keeps its quorum
  // (planned), and a re-run finds a removed member gone and goes on. etcd refuses
  // a change while a peer's connection is under 5 s old ("unhealthy cluster", a
  // leader just elected after a loss): tried again for 30 s, as kubeadm does.
  for (const auto& m : p.etcd_remove) {
    auto x = run_on_master(*transport, master,
                           etcdctl_prelude("https://" + master.address + ":2379", 30) +
                               "for i in $(seq 60); do\n"
                               "out=$($E member remove " +
                               util::shell_quote(m.id) +
                               " 2>&1) && exit 0\n"
                               "case $out in *'not found'*) exit 0 ;; *'unhealthy cluster'*) "
                               "sleep 0.5 ;; *) break ;; esac\n"
                               "done\n"
                               "echo \"$out\" >&2; exit 1\n");
    if (!x.ok() || x.exit_status != 0) {
      o.end = NodeRemoveOutcome::End::EtcdFailed;
      o.error = remote_error("node remove: removing the etcd member of " + m.name + " (" + m.id +
                             ") through " + master.name +
                             " failed: " + (x.ok() ? std::string(util::trim(x.err)) : x.error));
      return o;
    }
    o.etcd_removed.push_back(m.name);
    UseCaseEvent e;
    e.kind = UseCaseEvent::Kind::EtcdMemberRemoved;
    e.message = m.name + " (member " + m.id + ", through " + master.name + ")";
    cb.emit(e);
  }
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
  push.accept_master_count = !p.etcd_remove.empty() || !p.etcd_via.empty();
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
