#include "deploy/node_batches.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <ctime>
#include <future>
#include <mutex>
#include <set>
#include <sstream>
#include <utility>

#include "deploy/journal.h"
#include "hived/inspect.h"
#include "hived/maintenance.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy {

const char* to_string(NodeStep s) {
  switch (s) {
    case NodeStep::Cordon:
      return "cordon";
    case NodeStep::Wait:
      return "wait";
    case NodeStep::Drain:
      return "drain";
    case NodeStep::Action:
      return "action";
    case NodeStep::Verify:
      return "verify";
    case NodeStep::Uncordon:
      return "uncordon";
    case NodeStep::Resume:
      return "resume";
  }
  return "?";
}

const char* to_string(NodeResult::End e) {
  switch (e) {
    case NodeResult::End::Done:
      return "done";
    case NodeResult::End::NotReached:
      return "not reached";
    case NodeResult::End::WaitTimedOut:
      return "wait timed out";
    case NodeResult::End::DrainFailed:
      return "drain failed";
    case NodeResult::End::ActionFailed:
      return "action failed";
    case NodeResult::End::VerifyFailed:
      return "verify failed";
    case NodeResult::End::Failed:
      return "failed";
    case NodeResult::End::Released:
      return "released";
  }
  return "?";
}

std::string exec_failure(const remote::ExecResult& x) {
  if (!x.ok()) return x.error;
  std::string e(util::trim(x.err));
  if (e.empty()) e = std::string(util::trim(x.out));
  if (e.empty()) e = "exit status " + std::to_string(x.exit_status);
  return e;
}

std::string master_kubectl() {
  return "kubectl --kubeconfig=/etc/kubernetes/admin.conf --cache-dir=/etc/paictl/kube-cache";
}

util::Result<std::map<std::string, NodeState>> parse_node_states(const std::string& nodes_json) {
  auto j = util::parse_json_or_discarded(nodes_json);
  if (j.is_discarded() || !j.is_object())
    return util::Error{"kubectl get nodes: the answer is not a JSON object", {}};
  std::map<std::string, NodeState> out;
  if (!j.contains("items") || !j["items"].is_array()) return out;
  for (const auto& n : j["items"]) {
    if (!n.is_object()) continue;
    const auto& md = n.value("metadata", nlohmann::json::object());
    if (!md.is_object() || !md.contains("name") || !md["name"].is_string()) continue;
    NodeState s;
    const auto& spec = n.value("spec", nlohmann::json::object());
    if (spec.is_object() && spec.contains("unschedulable") && spec["unschedulable"].is_boolean())
      s.unschedulable = spec["unschedulable"].get<bool>();
    const auto& an = md.value("annotations", nlohmann::json::object());
    if (an.is_object() && an.contains(kMaintenanceAnnotation) &&
        an[kMaintenanceAnnotation].is_string())
      s.maintenance = an[kMaintenanceAnnotation].get<std::string>();
    if (an.is_object() && an.contains(kQuarantineAnnotation) &&
        an[kQuarantineAnnotation].is_string())
      s.quarantine = an[kQuarantineAnnotation].get<std::string>();
    out[md["name"].get<std::string>()] = s;
  }
  return out;
}

std::function<util::Result<std::vector<std::string>>(const std::string& node)> hived_groups_on_node(
    std::shared_ptr<hived::Client> client) {
  return [client](const std::string& node) -> util::Result<std::vector<std::string>> {
    auto g = client->affinity_groups();
    if (!g.ok())
      return util::Error{
          "HiveD at " + client->base() + ": reading the affinity groups: " + g.error().summary(),
          {}};
    std::vector<std::string> out;
    for (const auto& a : *g)
      if (a.physical_placement.count(node)) out.push_back(a.name);
    return out;
  };
}

namespace {

std::string node_batches_run_id() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return std::string(buf) + "-" + std::to_string(::getpid());
}

remote::ExecResult node_batches_sh(remote::Connection& c, const remote::Target& t,
                                   const std::string& script, int timeout_ms = 120000) {
  remote::ExecRequest req;
  std::string q = util::shell_quote(script);
  req.command =
      t.endpoint.user == "root" || t.endpoint.user.empty() ? "sh -c " + q : "sudo -n sh -c " + q;
  req.timeout_ms = timeout_ms;
  return c.exec(req);
}

// One run's shared state: the request, the journal, the events.
class NodeBatchRun {
 public:
  NodeBatchRun(const NodeBatchRequest& r, const NodeBatchDeps& d, const Callbacks& cb)
      : r_(r), d_(d), cb_(cb) {}

  NodeBatchOutcome run();

 private:
  struct NodeJob {
    BatchNode node;
    size_t batch = 0;
    bool was_unschedulable = false;  // cordoned before the run: left cordoned
    bool verified_before = false;    // resumed: its verification already passed
  };

  void emit(size_t batch, const std::string& node, NodeStep step, NodeStepEvent::State st,
            std::string message = {});
  void journal(const std::string& node, NodeStep step, const char* event, const char* result,
               nlohmann::json extra = nlohmann::json::object());
  NodeResult run_node(const NodeJob& job);
  // Uncordons (unless it was cordoned before) and removes the annotation.
  util::Result<void> release(remote::Connection& m, const NodeJob& job);
  NodeResult release_only(const NodeJob& job);

  const NodeBatchRequest& r_;
  const NodeBatchDeps& d_;
  const Callbacks& cb_;
  std::string run_id_;
  Journal journal_;
  std::vector<nlohmann::json> earlier_;  // the journal's records before this run
  std::mutex emit_mu_;
};

void NodeBatchRun::emit(size_t batch, const std::string& node, NodeStep step,
                        NodeStepEvent::State st, std::string message) {
  NodeStepEvent ne{batch, node, step, st, std::move(message)};
  UseCaseEvent e;
  e.kind = UseCaseEvent::Kind::NodeStep;
  e.message = node;
  e.node_step = &ne;
  std::lock_guard lock(emit_mu_);
  cb_.emit(e);
}

void NodeBatchRun::journal(const std::string& node, NodeStep step, const char* event,
                           const char* result, nlohmann::json extra) {
  nlohmann::json j = std::move(extra);
  j["run"] = run_id_;
  j["event"] = event;
  j["host"] = node;
  j["phase"] = r_.operation + ":" + to_string(step);
  if (result) j["result"] = result;
  (void)journal_.append(std::move(j));
}

util::Result<void> NodeBatchRun::release(remote::Connection& m, const NodeJob& job) {
  std::string k = master_kubectl();
  std::string q = util::shell_quote(job.node.name);
  std::string script = "set -e\n";
  if (!job.was_unschedulable) script += k + " uncordon " + q + " >/dev/null\n";
  script += k + " annotate node " + q + " " + kMaintenanceAnnotation + "- >/dev/null\n";
  auto x = node_batches_sh(m, d_.master.target, script);
  if (!x.ok() || x.exit_status != 0)
    return util::Error{"uncordoning " + job.node.name + ": " + exec_failure(x), {}};
  return {};
}

NodeResult NodeBatchRun::release_only(const NodeJob& job) {
  NodeResult res{job.node.name, job.batch, NodeResult::End::Released, {}};
  auto m = d_.transport->connect(d_.master.target);
  emit(job.batch, job.node.name, NodeStep::Uncordon, NodeStepEvent::State::Started);
  journal(job.node.name, NodeStep::Uncordon, "start", nullptr);
  auto rel = release(*m, job);
  if (!rel.ok()) {
    journal(job.node.name, NodeStep::Uncordon, "end", "failed");
    emit(job.batch, job.node.name, NodeStep::Uncordon, NodeStepEvent::State::Failed,
         rel.error().message);
    res.end = NodeResult::End::Failed;
    res.message = rel.error().message;
    return res;
  }
  journal(job.node.name, NodeStep::Uncordon, "end", "ok");
  emit(job.batch, job.node.name, NodeStep::Uncordon, NodeStepEvent::State::Done);
  return res;
}

NodeResult NodeBatchRun::run_node(const NodeJob& job) {
  const std::string& n = job.node.name;
  NodeResult res{n, job.batch, NodeResult::End::Done, {}};
  auto m = d_.transport->connect(d_.master.target);
  std::string k = master_kubectl();
  std::string q = util::shell_quote(n);
  using S = NodeStepEvent::State;
  auto fail = [&](NodeStep step, NodeResult::End end, std::string msg) {
    journal(n, step, "end", "failed");
    emit(job.batch, n, step, S::Failed, msg);
    res.end = end;
    res.message = std::move(msg);
    return res;
  };
  // Left as it was found: uncordoned (unless it was before), unannotated.
  auto restore = [&](NodeStep step, NodeResult::End end, std::string msg) {
    auto rel = release(*m, job);
    if (!rel.ok()) msg += "; and " + rel.error().message + ": the node stays cordoned";
    return fail(step, end, std::move(msg));
  };

  // 1. annotate, then cordon.
  emit(job.batch, n, NodeStep::Cordon, S::Started);
  journal(n, NodeStep::Cordon, "start", nullptr, {{"was_unschedulable", job.was_unschedulable}});
  std::string value = r_.operation + " " + run_id_;
  auto x = node_batches_sh(*m, d_.master.target,
                           "set -e\n" + k + " annotate node " + q + " --overwrite " +
                               kMaintenanceAnnotation + "=" + util::shell_quote(value) +
                               " >/dev/null\n" + k + " cordon " + q + " >/dev/null\n");
  if (!x.ok() || x.exit_status != 0)
    return fail(NodeStep::Cordon, NodeResult::End::Failed,
                "cordoning " + n + ": " + exec_failure(x));
  journal(n, NodeStep::Cordon, "end", "ok");
  emit(job.batch, n, NodeStep::Cordon, S::Done);

  if (!job.verified_before) {
    // 2. wait for its groups, or drain it.
    if (job.node.drain) {
      emit(job.batch, n, NodeStep::Drain, S::Started);
      journal(n, NodeStep::Drain, "start", nullptr);
      int t = std::max(1, r_.drain_timeout_s);
      auto dx = node_batches_sh(
          *m, d_.master.target,
          k + " drain " + q +
              " --ignore-daemonsets --delete-emptydir-data --timeout=" + std::to_string(t) + "s",
          (t + 60) * 1000);
      if (!dx.ok() || dx.exit_status != 0)
        return restore(NodeStep::Drain, NodeResult::End::DrainFailed,
                       "draining " + n + " failed (--timeout=" + std::to_string(t) +
                           "s): " + exec_failure(dx));
      journal(n, NodeStep::Drain, "end", "ok");
      emit(job.batch, n, NodeStep::Drain, S::Done);
    } else if (!job.node.wait_for.empty() && d_.groups_on_node) {
      journal(n, NodeStep::Wait, "start", nullptr);
      double deadline = d_.clock.now() + std::max(0.0, r_.wait_for_groups_s);
      std::set<std::string> wanted(job.node.wait_for.begin(), job.node.wait_for.end());
      for (;;) {
        auto g = d_.groups_on_node(n);
        if (!g.ok())
          return restore(NodeStep::Wait, NodeResult::End::Failed,
                         "waiting for the groups on " + n + ": " + g.error().message);
        std::vector<std::string> left;
        for (const auto& name : *g)
          if (wanted.count(name)) left.push_back(name);
        if (left.empty()) break;
        double now = d_.clock.now();
        std::string names = util::join(left, ", ");
        if (now >= deadline)
          return restore(NodeStep::Wait, NodeResult::End::WaitTimedOut,
                         n + ": " + names + " still running after " +
                             std::to_string(static_cast<long long>(r_.wait_for_groups_s)) +
                             " s (--evict drains it)");
        emit(job.batch, n, NodeStep::Wait, S::Started,
             "waiting for " + names + " (" +
                 std::to_string(static_cast<long long>(deadline - now + 0.5)) + " s left)");
        d_.clock.sleep(std::min(std::max(0.1, r_.poll_s), deadline - now));
      }
      journal(n, NodeStep::Wait, "end", "ok");
      emit(job.batch, n, NodeStep::Wait, S::Done);
    }

    // 3. the action, on the node's own session.
    auto t = d_.nodes.find(n);
    if (t == d_.nodes.end())
      return fail(NodeStep::Action, NodeResult::End::ActionFailed,
                  n + ": no SSH target for the node");
    auto h = d_.transport->connect(t->second);
    if (d_.action) {
      emit(job.batch, n, NodeStep::Action, S::Started);
      journal(n, NodeStep::Action, "start", nullptr);
      auto a = d_.action(n, *h);
      if (!a.ok())
        return fail(NodeStep::Action, NodeResult::End::ActionFailed,
                    n + ": " + a.error().message + " (left cordoned; a re-run finishes it)");
      journal(n, NodeStep::Action, "end", "ok");
      emit(job.batch, n, NodeStep::Action, S::Done);
    }
    // 4. verify.
    if (d_.verify) {
      emit(job.batch, n, NodeStep::Verify, S::Started);
      journal(n, NodeStep::Verify, "start", nullptr);
      auto v = d_.verify(n, *h, *m);
      if (!v.ok())
        return fail(NodeStep::Verify, NodeResult::End::VerifyFailed,
                    n + ": " + v.error().message + " (left cordoned; a re-run finishes it)");
      journal(n, NodeStep::Verify, "end", "ok");
      emit(job.batch, n, NodeStep::Verify, S::Done);
    }
  }

  // 5. uncordon, then remove the annotation.
  emit(job.batch, n, NodeStep::Uncordon, S::Started);
  journal(n, NodeStep::Uncordon, "start", nullptr);
  auto rel = release(*m, job);
  if (!rel.ok()) return fail(NodeStep::Uncordon, NodeResult::End::Failed, rel.error().message);
  journal(n, NodeStep::Uncordon, "end", "ok");
  emit(job.batch, n, NodeStep::Uncordon, S::Done);
  return res;
}

NodeBatchOutcome NodeBatchRun::run() {
  NodeBatchOutcome o;
  run_id_ = r_.run_id.empty() ? node_batches_run_id() : r_.run_id;
  o.run_id = run_id_;
  auto stop = [&](UseCaseError e) {
    o.error = std::move(e);
    for (const auto& b : r_.batches)
      for (const auto& n : b.nodes) o.nodes.push_back({n.name, 0, NodeResult::End::NotReached, {}});
    return o;
  };
  if (!d_.transport) return stop(other_error("node batches: no transport"));
  if (!r_.state_dir.empty()) {
    std::string path = r_.state_dir + "/" + r_.operation + ".journal";
    auto rd = read_journal(path);
    if (rd.ok()) earlier_ = std::move(rd).value();
    auto op = journal_.open(path);
    if (!op.ok()) return stop(input_error("the journal: " + op.error().message));
  }

  // The Nodes as they are now.
  auto m = d_.transport->connect(d_.master.target);
  auto x = node_batches_sh(*m, d_.master.target, master_kubectl() + " get nodes -o json");
  if (!x.ok() || x.exit_status != 0)
    return stop(
        remote_error("reading the nodes on the master " + d_.master.name + ": " + exec_failure(x)));
  auto states = parse_node_states(x.out);
  if (!states.ok()) return stop(remote_error(states.error().message));

  // Where a node of the plan is, and its plan.
  std::map<std::string, std::pair<size_t, BatchNode>> planned;
  for (size_t b = 0; b < r_.batches.size(); ++b)
    for (const auto& n : r_.batches[b].nodes) planned[n.name] = {b, n};
  for (const auto& [name, where] : planned)
    if (!states->count(name))
      return stop(input_error("node " + name + " is not a Node of the cluster",
                              "kubectl get nodes lists the cluster's nodes"));

  // What an earlier run of this operation left: from the annotation (the truth)
  // and its journal (whether the node was cordoned before, whether it passed).
  auto earlier_flag = [&](const std::string& run, const std::string& node, const std::string& phase,
                          const char* key) {
    for (const auto& rec : earlier_) {
      if (rec.value("run", "") != run || rec.value("host", "") != node ||
          rec.value("phase", "") != r_.operation + ":" + phase)
        continue;
      if (std::string(key) == "verified" && rec.value("event", "") == "end" &&
          rec.value("result", "") == "ok")
        return true;
      if (std::string(key) == "was_unschedulable" && rec.value("event", "") == "start" &&
          rec.value("was_unschedulable", false))
        return true;
    }
    return false;
  };
  std::vector<NodeJob> resumed;
  std::set<std::string> resumed_names;
  for (const auto& [name, st] : *states) {
    if (st.maintenance.empty()) continue;
    std::vector<std::string> words;
    {
      std::istringstream in(st.maintenance);
      for (std::string w; in >> w;) words.push_back(w);
    }
    if (words.empty() || words[0] != r_.operation) {
      UseCaseEvent w;
      w.kind = UseCaseEvent::Kind::Warning;
      w.message = "node " + name + " is held by another operation (" + kMaintenanceAnnotation +
                  ": " + st.maintenance + "); left as it is";
      cb_.emit(w);
      continue;
    }
    std::string run = words.size() > 1 ? words[1] : "";
    NodeJob j;
    j.batch = SIZE_MAX;
    j.was_unschedulable = earlier_flag(run, name, "cordon", "was_unschedulable");
    if (auto p = planned.find(name); p != planned.end()) {
      j.node = p->second.second;
      j.verified_before = earlier_flag(run, name, "verify", "verified");
    } else {
      j.node.name = name;
    }
    emit(SIZE_MAX, name, NodeStep::Resume, NodeStepEvent::State::Started,
         "left by run " + run + (j.verified_before ? " (verified)" : ""));
    resumed.push_back(j);
    resumed_names.insert(name);
    o.resumed.push_back(name);
  }

  bool stopped = false;
  auto run_jobs = [&](const std::vector<NodeJob>& jobs) {
    std::vector<std::future<NodeResult>> fs;
    for (const auto& j : jobs) {
      bool in_plan = planned.count(j.node.name) > 0;
      fs.push_back(std::async(std::launch::async, [this, j, in_plan] {
        return in_plan ? run_node(j) : release_only(j);
      }));
    }
    for (auto& f : fs) {
      NodeResult nr = f.get();
      if (nr.end != NodeResult::End::Done && nr.end != NodeResult::End::Released) {
        if (!o.error) {
          o.error = other_error(nr.message);
          if (nr.end == NodeResult::End::Failed) o.error->error.kind = util::Error::Kind::Remote;
        }
        stopped = true;
      }
      o.nodes.push_back(std::move(nr));
    }
  };
  if (!resumed.empty()) run_jobs(resumed);
  for (size_t b = 0; b < r_.batches.size(); ++b) {
    std::vector<NodeJob> jobs;
    for (const auto& n : r_.batches[b].nodes) {
      if (resumed_names.count(n.name)) continue;
      if (stopped) {
        o.nodes.push_back({n.name, b, NodeResult::End::NotReached, {}});
        continue;
      }
      NodeJob j;
      j.node = n;
      j.batch = b;
      j.was_unschedulable = (*states)[n.name].unschedulable;
      jobs.push_back(std::move(j));
    }
    if (!jobs.empty()) run_jobs(jobs);
  }
  o.ok = !stopped;
  return o;
}

}  // namespace

NodeBatchOutcome run_node_batches(const NodeBatchRequest& request, const NodeBatchDeps& deps,
                                  const Callbacks& callbacks) {
  NodeBatchRun run(request, deps, callbacks);
  return run.run();
}

std::vector<NodeBatch> node_batches_of(const hived::MaintenancePlan& m) {
  std::vector<NodeBatch> out;
  for (const auto& b : m.batches) {
    NodeBatch nb;
    for (const auto& n : b.nodes) {
      BatchNode bn;
      bn.name = n;
      for (const auto& g : b.groups) {
        if (std::find(g.nodes.begin(), g.nodes.end(), n) == g.nodes.end()) continue;
        if (g.action == hived::GroupAction::WaitedFor) bn.wait_for.push_back(g.name);
        if (g.action == hived::GroupAction::Evicted) bn.drain = true;
      }
      nb.nodes.push_back(std::move(bn));
    }
    out.push_back(std::move(nb));
  }
  return out;
}

}  // namespace pai::deploy
