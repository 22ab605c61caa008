#include "sim/from_live.h"

#include <algorithm>
#include <set>

#include "scheduler/hived.h"
#include "scheduler/hived_state.h"
#include "sim/engine.h"

namespace pai::sim {

namespace {

// The running groups' seat: asked for one of them, answers with where it runs
// now (it was restored there); every other call goes to the HiveD policy.
class FromLiveSeeded : public scheduler::Policy {
 public:
  FromLiveSeeded(std::unique_ptr<scheduler::Policy> inner,
                 std::map<std::string, scheduler::ScheduleResult> seated)
      : inner_(std::move(inner)), seated_(std::move(seated)) {}
  std::string_view name() const override { return inner_->name(); }
  const scheduler::ClusterShape& cluster() const override { return inner_->cluster(); }
  scheduler::ScheduleResult schedule(const scheduler::GroupRequest& r,
                                     bool allow_preemption) override {
    auto it = seated_.find(r.affinity_group);
    if (it != seated_.end() && !started_.count(r.affinity_group)) {
      started_.insert(r.affinity_group);
      return it->second;
    }
    return inner_->schedule(r, allow_preemption);
  }
  void schedule_into(const scheduler::GroupRequest& r, bool allow_preemption,
                     scheduler::ScheduleResult& out) override {
    if (seated_.count(r.affinity_group) && !started_.count(r.affinity_group)) {
      out = schedule(r, allow_preemption);
      return;
    }
    inner_->schedule_into(r, allow_preemption, out);
  }
  scheduler::ScheduleResult schedule_pod(std::string_view g, int32_t n) override {
    return inner_->schedule_pod(g, n);
  }
  bool release(std::string_view g) override { return inner_->release(g); }
  bool release_group(int32_t id, std::string_view g) override {
    if (seated_.count(std::string(g))) return inner_->release(g);
    return inner_->release_group(id, g);
  }
  void set_node_health(int32_t n, bool healthy) override { inner_->set_node_health(n, healthy); }
  uint64_t release_epoch() const override { return inner_->release_epoch(); }
  scheduler::UsageSummary usage() const override { return inner_->usage(); }
  bool has_group(std::string_view g) const override { return inner_->has_group(g); }
  std::string check_invariants() const override { return inner_->check_invariants(); }

 private:
  std::unique_ptr<scheduler::Policy> inner_;
  std::map<std::string, scheduler::ScheduleResult> seated_;
  std::set<std::string> started_;
};

std::string from_live_name(size_t j) {
  return "j" + std::to_string(j);  // the engine's name for trace job j
}

}  // namespace

util::Result<FromLiveResult> run_from_live(const FromLive& in) {
  const auto& model = *in.model;
  const auto& live = *in.live;
  auto groups = hived::live_groups(live, &model);

  // The trace: the running groups first, then the waiting ones, all at 0.
  Trace trace;
  trace.format = "live";
  std::vector<std::string> names;  // trace job -> group
  auto add = [&](const std::string& name, const std::string& vc, int32_t priority,
                 const std::string& leaf_type, std::vector<TraceMember> members, double duration) {
    TraceJob j;
    j.submit = 0;
    j.duration = duration;
    j.vc = trace.intern_vc(vc);
    j.leaf_type =
        leaf_type.empty() ? int16_t{-1} : static_cast<int16_t>(trace.intern_leaf_type(leaf_type));
    j.priority = static_cast<int16_t>(priority);
    j.flags = TraceJob::kPrioritySet;
    trace.add(j, name, members);
    names.push_back(name);
  };
  constexpr double kNever = 1e9;  // a group with no expected end outlives the run
  for (const auto& g : groups) {
    std::map<int32_t, int32_t> pods;  // leaves per pod -> pods
    std::string leaf_type;
    for (const auto& p : g.pods) {
      pods[static_cast<int32_t>(p.leaf_indices.size())]++;
      auto leaf = live.leaf_index.find(
          p.node + ":" + std::to_string(p.leaf_indices.empty() ? 0 : p.leaf_indices[0]));
      if (leaf != live.leaf_index.end()) leaf_type = live.leaves[leaf->second].leaf_type;
    }
    std::vector<TraceMember> members;
    for (auto it = pods.rbegin(); it != pods.rend(); ++it)
      members.push_back({it->second, it->first});
    if (members.empty()) members.push_back({1, 1});
    auto end = in.expected_end.find(g.name);
    add(g.name, g.vc, g.priority, leaf_type, members,
        end == in.expected_end.end() ? kNever : std::max(0.0, end->second - in.now_s));
  }
  const size_t running = names.size();
  for (const auto& w : in.waiting) {
    std::vector<TraceMember> members;
    for (const auto& m : w.members) members.push_back({m.pod_number, m.leaf_cell_number});
    add(w.affinity_group, w.virtual_cluster, w.priority, w.leaf_cell_type, members, kNever);
  }
  trace.finish();

  // The policy: HiveD's, bad nodes marked, the running groups restored under
  // the engine's names for them.
  auto made = scheduler::make_hived_policy(model);
  if (!made.ok()) return std::move(made).error();
  auto inner = std::move(*made);
  for (const auto& n : hived::bad_nodes(live))
    if (int32_t i = inner->cluster().find_node(n); i >= 0) inner->set_node_health(i, false);
  std::map<std::string, scheduler::ScheduleResult> seated;
  for (size_t j = 0; j < running; ++j) {
    groups[j].name = from_live_name(j);
    scheduler::ScheduleResult r;
    r.outcome = scheduler::Outcome::Bound;
    r.cell_chain = groups[j].chain;
    for (const auto& p : groups[j].pods) {
      scheduler::PodPlacement pp;
      pp.node = inner->cluster().find_node(p.node);
      pp.leaf_cell_number = static_cast<int32_t>(p.leaf_indices.size());
      pp.physical_leaf_cell_indices = p.leaf_indices;
      r.pods.push_back(std::move(pp));
    }
    seated[groups[j].name] = std::move(r);
  }
  auto restored = scheduler::restore_hived_groups(*inner, groups);
  if (!restored) return util::Error{"the live state cannot be restored on the config", {}};

  SimOptions opt;
  bool first = true;
  auto seeded = std::make_shared<std::unique_ptr<scheduler::Policy>>(
      std::make_unique<FromLiveSeeded>(std::move(inner), std::move(seated)));
  opt.make_policy = [&first, seeded](const std::string& name, const config::HivedModel& m)
      -> util::Result<std::unique_ptr<scheduler::Policy>> {
    if (first && *seeded) {
      first = false;
      return std::move(*seeded);
    }
    return scheduler::make_policy(name, m);  // the probe: an empty cluster
  };
  Simulator sim(model, trace, opt);
  if (auto p = sim.prepare(); !p.ok()) return std::move(p).error();
  PolicyRun run;
  if (auto r = sim.run("hived", run); !r.ok()) return std::move(r).error();
  FromLiveResult out;
  out.end_s = in.now_s + run.end;
  for (size_t k = 0; k < in.waiting.size(); ++k) {
    const auto& o = run.jobs[running + k];
    // A start once a group with no expected end has "ended" is no start.
    out.starts.push_back(o.first_start < 0 || o.first_start >= kNever ? -1
                                                                      : in.now_s + o.first_start);
  }
  return out;
}

}  // namespace pai::sim
