#include "deploy/quarantine.h"

#include <set>

#include "deploy/cluster_files.h"
#include "deploy/node_batches.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy {

std::string to_annotation(const QuarantineMark& m) {
  nlohmann::json j = {{"by", m.by}, {"at", m.at}, {"reason", m.reason}, {"cordoned", m.cordoned}};
  return util::dump_json(j);
}

std::optional<QuarantineMark> parse_quarantine_mark(const std::string& value) {
  auto j = util::parse_json_or_discarded(value);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  QuarantineMark m;
  auto str = [&j](const char* k) {
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  m.by = str("by");
  m.at = str("at");
  m.reason = str("reason");
  if (auto it = j.find("cordoned"); it != j.end() && it->is_boolean()) m.cordoned = it->get<bool>();
  return m;
}

util::Result<std::vector<QuarantineNodeState>> parse_quarantine_nodes(const std::string& text) {
  auto nodes = parse_node_states(text);
  if (!nodes.ok()) return std::move(nodes).error();
  std::vector<QuarantineNodeState> out;
  for (auto& [name, n] : *nodes) {
    QuarantineNodeState s;
    s.name = name;
    s.unschedulable = n.unschedulable;
    s.maintenance = std::move(n.maintenance);
    if (n.quarantine) {
      s.mark = parse_quarantine_mark(*n.quarantine);
      if (!s.mark) s.mark = QuarantineMark{"(unreadable)", "", *n.quarantine, false};
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string_view to_string(QuarantineNode::Action a) {
  switch (a) {
    case QuarantineNode::Action::Quarantine:
      return "quarantine";
    case QuarantineNode::Action::Release:
      return "release";
    case QuarantineNode::Action::Nothing:
      return "nothing";
    case QuarantineNode::Action::Refused:
      return "refused";
  }
  return "nothing";
}

bool QuarantinePlan::refused() const {
  for (const auto& n : nodes)
    if (n.action == QuarantineNode::Action::Refused) return true;
  return false;
}

bool QuarantinePlan::changes() const {
  for (const auto& n : nodes)
    if (n.action == QuarantineNode::Action::Quarantine ||
        n.action == QuarantineNode::Action::Release)
      return true;
  return false;
}

std::string QuarantinePlan::node_script(const QuarantineNode& n) const {
  const std::string k = master_kubectl();
  const std::string q = util::shell_quote(n.node);
  std::string s = "set -e\n";
  if (n.action == QuarantineNode::Action::Quarantine) {
    QuarantineMark m{request.by, request.at, request.reason, n.cordon};
    // Annotated first, without --overwrite: a quarantine another run made in
    // the meantime is not overwritten (kubectl refuses), and a run killed
    // between the two leaves a node release finds.
    s += k + " annotate node " + q + " " + kQuarantineAnnotation + "=" +
         util::shell_quote(to_annotation(m)) + " >/dev/null\n";
    if (n.cordon) s += k + " cordon " + q + " >/dev/null\n";
    if (request.drain)
      s += k + " drain " + q + " --ignore-daemonsets --delete-emptydir-data --timeout=" +
           std::to_string(request.drain_timeout_s) + "s >/dev/null\n";
  } else if (n.action == QuarantineNode::Action::Release) {
    if (n.cordon) s += k + " uncordon " + q + " >/dev/null\n";
    s += k + " annotate node " + q + " " + kQuarantineAnnotation + "- >/dev/null\n";
  }
  return s;
}

namespace {

std::string quarantine_mark_text(const QuarantineMark& m) {
  return "quarantined by " + m.by + (m.at.empty() ? "" : " at " + m.at) +
         (m.reason.empty() ? "" : " (" + m.reason + ")");
}

}  // namespace

UseCaseResult<QuarantinePlan> plan_quarantine(const QuarantineRequest& request,
                                              const QuarantineDeps& deps, const Callbacks& cb) {
  QuarantinePlan p;
  p.request = request;
  p.deps = deps;
  const char* what = request.release ? "hived release" : "hived quarantine";
  if (request.nodes.empty()) return input_error(std::string(what) + ": no node named");
  PrepareRequest pr;
  pr.cluster_dir = request.cluster_dir;
  auto prepared = prepare_cluster(pr, deps.install.load_hosts);
  if (!prepared.ok()) return std::move(prepared).error();
  p.cluster = std::make_shared<const PreparedCluster>(std::move(prepared).value());
  const HostSpec* master = p.cluster->master();
  if (!master) return input_error(std::string(what) + ": layout.yaml has no master");

  // The Nodes, as the cluster has them.
  auto transport = make_transport(deps.install.transport, p.cluster->hosts.ssh_password);
  auto x = run_on_master(*transport, *master, master_kubectl() + " get nodes -o json");
  if (!x.ok() || x.exit_status != 0)
    return remote_error("kubectl get nodes on " + master->name + ": " + exec_failure(x));
  auto states = parse_quarantine_nodes(x.out);
  if (!states.ok()) return remote_error(states.error().message);
  std::vector<std::string> names;
  for (const auto& s : *states) names.push_back(s.name);

  std::set<std::string> seen;
  std::vector<std::string> unknown;
  for (const auto& name : request.nodes) {
    if (!seen.insert(name).second) continue;
    const QuarantineNodeState* s = nullptr;
    for (const auto& st : *states)
      if (st.name == name) s = &st;
    if (!s) {
      unknown.push_back(name);
      continue;
    }
    QuarantineNode n;
    n.node = name;
    n.state = *s;
    using A = QuarantineNode::Action;
    if (!request.release) {
      if (s->mark && s->mark->by == request.by) {
        n.action = A::Nothing;
        n.why = "already " + quarantine_mark_text(*s->mark);
      } else if (s->mark) {
        n.action = A::Refused;
        n.why = "already " + quarantine_mark_text(*s->mark);
      } else if (s->unschedulable) {
        n.action = A::Refused;
        n.why = "cordoned by someone else" +
                (s->maintenance.empty() ? std::string()
                                        : " (paictl.io/maintenance: " + s->maintenance + ")");
      } else {
        n.action = A::Quarantine;
        n.cordon = true;
        n.why = "cordon and annotate" + std::string(request.drain ? ", then drain" : "");
      }
    } else {
      if (!s->mark) {
        n.action = A::Nothing;
        n.why = s->unschedulable ? "not quarantined by paictl (cordoned by someone else: left so)"
                                 : "not quarantined";
      } else {
        n.action = A::Release;
        n.cordon = s->mark->cordoned && s->unschedulable;
        n.why = std::string(n.cordon ? "uncordon and remove the annotation"
                                     : "remove the annotation (the quarantine did not cordon "
                                       "it: left as it is)") +
                "; was " + quarantine_mark_text(*s->mark);
      }
    }
    p.nodes.push_back(std::move(n));
  }
  if (!unknown.empty()) {
    std::string hint = "kubectl get nodes lists " +
                       (names.empty() ? std::string("no node") : util::join(names, ", "));
    UseCaseError u =
        input_error(util::join(unknown, ", ") + (unknown.size() == 1 ? " is" : " are") +
                        " not a node of the cluster",
                    hint);
    u.about = UseCaseError::About::UnknownHost;
    return u;
  }

  // The effect, on HiveD's live state.
  if (request.hived.empty()) {
    p.hived_source =
        "no HiveD URL given and no hived_url in config.yaml: the effect on HiveD is not known";
    return p;
  }
  auto http = hived_http_client(deps.hived_http, &cb);
  hived::Client client(*http, request.hived);
  std::string where = http::redact_url(request.hived);
  auto live = hived::read_live(client);
  if (!live.ok()) {
    UseCaseError u = remote_error("HiveD at " + where + ": " + live.error().summary());
    if (live.error().kind == hived::Error::Kind::Transport)
      u.about = UseCaseError::About::HivedUnreachable;
    return u;
  }
  std::vector<std::string> changing;
  for (const auto& n : p.nodes)
    if (n.action == QuarantineNode::Action::Quarantine ||
        (n.action == QuarantineNode::Action::Release && n.cordon))
      changing.push_back(n.node);
  auto effect = hived::quarantine_effect(*live, changing, !request.release);
  if (!effect.ok()) return other_error(effect.error().message, effect.error().hint);
  p.effect = std::move(effect).value();
  p.hived_source = "the live HiveD at " + where;
  return p;
}

QuarantineOutcome apply_quarantine(const QuarantinePlan& p, const Callbacks& cb) {
  QuarantineOutcome o;
  if (p.refused()) {
    std::vector<std::string> why;
    for (const auto& n : p.nodes)
      if (n.action == QuarantineNode::Action::Refused) why.push_back(n.node + ": " + n.why);
    o.end = QuarantineOutcome::End::Refused;
    o.error = other_error("refusing: " + util::join(why, "; "),
                          p.request.release
                              ? std::string()
                              : "left as it is; its owner releases it (paictl hived release, or "
                                "kubectl uncordon), then quarantine it again");
    return o;
  }
  if (p.request.dry_run) {
    o.end = QuarantineOutcome::End::DryRun;
    return o;
  }
  o.end = QuarantineOutcome::End::Applied;
  auto transport = make_transport(p.deps.install.transport, p.cluster->hosts.ssh_password);
  const HostSpec& master = *p.cluster->master();
  for (const auto& n : p.nodes) {
    if (n.action != QuarantineNode::Action::Quarantine &&
        n.action != QuarantineNode::Action::Release)
      continue;
    auto x = run_on_master(*transport, master, p.node_script(n));
    if (!x.ok() || x.exit_status != 0) {
      if (!o.error)
        o.error = remote_error((p.request.release ? "releasing " : "quarantining ") + n.node +
                               ": " + exec_failure(x));
      continue;
    }
    o.changed.push_back(n.node);
  }
  (void)cb;
  return o;
}

const char* to_string(QuarantineOutcome::End e) {
  switch (e) {
    case QuarantineOutcome::End::DryRun:
      return "dryRun";
    case QuarantineOutcome::End::Refused:
      return "refused";
    case QuarantineOutcome::End::Applied:
      return "applied";
  }
  return "dryRun";
}

DocJson quarantine_json(const QuarantinePlan& p, const QuarantineOutcome* o) {
  const QuarantineRequest& r = p.request;
  DocJson doc = {{"apiVersion", "paictl.hivedQuarantine/v1"},
                 {"kind", r.release ? "HivedRelease" : "HivedQuarantine"},
                 {"cluster", p.cluster ? p.cluster->cluster_dir : r.cluster_dir},
                 {"release", r.release},
                 {"dryRun", r.dry_run},
                 {"by", r.by},
                 {"at", r.at},
                 {"reason", r.reason},
                 {"drain", r.drain},
                 {"effectFrom", p.hived_source}};
  DocJson nodes = DocJson::array();
  for (const auto& n : p.nodes) {
    DocJson j = {{"node", n.node},
                 {"action", std::string(to_string(n.action))},
                 {"cordon", n.cordon},
                 {"why", n.why},
                 {"unschedulable", n.state.unschedulable}};
    if (n.state.mark)
      j["quarantine"] = {{"by", n.state.mark->by},
                         {"at", n.state.mark->at},
                         {"reason", n.state.mark->reason},
                         {"cordoned", n.state.mark->cordoned}};
    nodes.push_back(j);
  }
  doc["nodes"] = nodes;
  if (p.effect) {
    const auto& e = *p.effect;
    DocJson doomed = DocJson::array();
    for (const auto& d : e.doomed)
      doomed.push_back({{"vc", d.vc},
                        {"chain", d.chain},
                        {"cellType", d.cell_type},
                        {"cellsBefore", d.cells_before},
                        {"cellsAfter", d.cells_after},
                        {"leavesBefore", d.leaves_before},
                        {"leavesAfter", d.leaves_after},
                        {"guaranteedLeaves", d.guaranteed_leaves}});
    DocJson groups = DocJson::array();
    for (const auto& g : e.groups)
      groups.push_back({{"name", g.name},
                        {"vc", g.vc},
                        {"priority", g.priority},
                        {"state", g.state},
                        {"nodes", g.nodes},
                        {"leaves", g.leaves},
                        {"gpus", g.gpus},
                        {"keepsRunning", r.release || !r.drain}});
    doc["effect"] = {{"nodes", e.nodes},
                     {"unknownNodes", e.unknown_nodes},
                     {"alreadyBad", e.already_bad},
                     {"leaves", e.leaves},
                     {"doomed", doomed},
                     {"groups", groups}};
  }
  if (o) {
    DocJson out = {{"end", to_string(o->end)}, {"changed", o->changed}};
    if (o->error) out["error"] = o->error->error.message;
    doc["outcome"] = out;
  }
  return doc;
}

}  // namespace pai::deploy
