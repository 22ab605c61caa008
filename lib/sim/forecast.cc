#include "sim/forecast.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "sim/report.h"
#include "sim/text_input.h"
#include "util/strings.h"

namespace pai::sim {

std::vector<std::string> unknown_arrival_vcs(const Trace& arrivals,
                                             const config::HivedModel& model) {
  std::set<std::string> known;
  for (const auto& vc : model.vcs) known.insert(vc.name);
  std::vector<uint8_t> used(arrivals.vc_names.size(), 0);
  for (const auto& j : arrivals.jobs)
    if (j.vc >= 0) used[static_cast<size_t>(j.vc)] = 1;
  std::vector<std::string> out;
  for (size_t i = 0; i < arrivals.vc_names.size(); ++i)
    if (used[i] && !known.count(arrivals.vc_names[i])) out.push_back(arrivals.vc_names[i]);
  return out;
}

namespace {

// Pods of a group as members: pods of one size form one member.
std::vector<TraceMember> forecast_members(const scheduler::LiveGroup& g) {
  std::map<int32_t, int32_t> by_size;
  for (const auto& p : g.pods) by_size[static_cast<int32_t>(p.leaf_indices.size())]++;
  std::vector<TraceMember> out;
  for (const auto& [gpus, pods] : by_size) out.push_back({pods, gpus});
  return out;
}

int16_t forecast_priority(int32_t p) {
  return static_cast<int16_t>(std::clamp<int32_t>(p, -1, 1000));
}

}  // namespace

ForecastTrace forecast_trace(const ForecastState& state, const Trace* arrivals,
                             const config::HivedModel& model, double horizon_s) {
  ForecastTrace out;
  out.trace = std::make_shared<Trace>();
  out.initial = std::make_shared<InitialState>();
  Trace& t = *out.trace;
  t.format = "csv";  // leaf cell types are HiveD's own names
  t.files.push_back("live");
  // A group with no known end runs past the horizon.
  const double past = 2 * horizon_s + 1;
  for (const auto& r : state.running) {
    TraceJob j;
    j.submit = 0;
    j.duration = r.ends_in_s ? std::max(0.0, *r.ends_in_s) : past;
    j.vc = t.intern_vc(r.group.vc);
    j.priority = forecast_priority(r.group.priority);
    j.flags = TraceJob::kPrioritySet | (r.group.lazy_preemption_enable ? TraceJob::kLazy : 0);
    if (!r.group.pinned_cell_id.empty()) j.pinned = t.intern_pinned(r.group.pinned_cell_id);
    out.initial->running.push_back({static_cast<uint32_t>(t.jobs.size()), r.group});
    t.add(j, r.group.name, forecast_members(r.group));
  }
  out.waiting_first = t.jobs.size();
  // FIFO within a priority: the longest waiting first (stable: then as given).
  std::vector<size_t> order(state.waiting.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return state.waiting[a].waited_s > state.waiting[b].waited_s;
  });
  for (size_t i : order) {
    const auto& w = state.waiting[i];
    TraceJob j;
    j.submit = 0;
    j.duration = std::max(0.0, w.duration_s);
    j.vc = t.intern_vc(w.request.virtual_cluster);
    j.priority = forecast_priority(w.request.priority);
    j.flags = TraceJob::kPrioritySet | (w.request.lazy_preemption_enable ? TraceJob::kLazy : 0);
    if (!w.request.leaf_cell_type.empty())
      j.leaf_type = static_cast<int16_t>(t.intern_leaf_type(w.request.leaf_cell_type));
    if (!w.request.pinned_cell_id.empty()) j.pinned = t.intern_pinned(w.request.pinned_cell_id);
    std::vector<TraceMember> ms;
    for (const auto& m : w.request.members) ms.push_back({m.pod_number, m.leaf_cell_number});
    t.add(j, w.name, ms);
  }
  out.arrivals_first = t.jobs.size();
  if (arrivals) {
    for (const auto& a : arrivals->jobs) {
      if (a.submit > horizon_s) break;  // in submission order
      TraceJob j = a;
      j.vc = t.intern_vc(arrivals->vc_names[static_cast<size_t>(a.vc)]);
      if (a.leaf_type >= 0)
        j.leaf_type = static_cast<int16_t>(
            t.intern_leaf_type(arrivals->leaf_type_names[static_cast<size_t>(a.leaf_type)]));
      if (a.pinned >= 0)
        j.pinned = t.intern_pinned(arrivals->pinned_names[static_cast<size_t>(a.pinned)]);
      t.add(j, arrivals->id(a), arrivals->members(a));
    }
    t.format = arrivals->format == "alibaba" ? "alibaba" : "csv";
  }
  t.records = static_cast<int64_t>(t.jobs.size());
  const auto shape = scheduler::describe_cluster(model);
  for (const auto& n : state.bad_nodes)
    if (int32_t i = shape.find_node(n); i >= 0) out.initial->bad_nodes.push_back(i);
  return out;
}

namespace {

std::vector<uint8_t> forecast_gpu_types(const config::HivedModel& model,
                                        const scheduler::ClusterShape& shape) {
  std::vector<uint8_t> gpu(shape.leaf_types.size(), 1);
  for (size_t t = 0; t < shape.leaf_types.size(); ++t)
    for (const auto& s : model.sku_types)
      if (s.name == shape.leaf_types[t].name) gpu[t] = s.gpu > 0;
  return gpu;
}

util::Result<ConfigForecast> forecast_one(const ForecastRequest& req,
                                          const config::HivedModel& model,
                                          const std::string& name) {
  ForecastTrace ft = forecast_trace(req.state, req.arrivals.get(), model, req.horizon_s);
  SimOptions opt;
  opt.vc_map = "strict";
  opt.horizon = req.horizon_s;
  opt.backfill = req.backfill > 0;
  opt.backfill_depth = std::max<int32_t>(req.backfill, 1);
  opt.initial = ft.initial;
  const int32_t steps = std::max<int32_t>(req.steps, 0);
  opt.vc_series = steps > 0;
  if (steps > 0) opt.bin_seconds = req.horizon_s / steps;
  Simulator sim(model, *ft.trace, opt);
  if (auto p = sim.prepare(); !p.ok()) return p.error();
  ConfigForecast cf;
  cf.name = name;
  if (auto r = sim.run("hived", cf.run); !r.ok()) return r.error();
  const Trace& t = *ft.trace;
  const auto& shape = sim.cluster();
  const PolicyRun& run = cf.run;
  const auto gpu = forecast_gpu_types(model, shape);

  std::map<std::string, VcForecast> vcs;
  for (size_t v = 0; v < shape.vcs.size(); ++v) {
    VcForecast& f = vcs[shape.vcs[v].name];
    f.vc = shape.vcs[v].name;
    for (size_t k = 0; k < shape.leaf_types.size(); ++k)
      if (gpu[k]) f.guaranteed_gpus += shape.vcs[v].guaranteed[k] + shape.vcs[v].pinned[k];
    f.used_gpu_hours = run.vcs[v].used_gpu_seconds / 3600;
  }
  for (size_t k = 0; k < shape.leaf_types.size(); ++k)
    if (gpu[k]) cf.gpus += shape.leaf_types[k].leaf_cells;
  std::map<std::string, std::vector<double>> waits;
  for (size_t j = 0; j < t.jobs.size(); ++j) {
    const TraceJob& tj = t.jobs[j];
    const JobOutcome& o = run.jobs[j];
    const std::string& vc = t.vc_names[static_cast<size_t>(tj.vc)];
    VcForecast& f = vcs[vc];
    f.vc = vc;
    const bool running = j < ft.waiting_first, waiting = !running && j < ft.arrivals_first;
    if (running) {
      f.running_now++;
      cf.running_end_s.push_back(o.state == JobState::Finished ? o.finish : -1);
    } else {
      (waiting ? f.waiting_now : f.arrivals)++;
      if (waiting) cf.waiting_start_s.push_back(o.first_start);
      if (o.first_start >= 0) {
        f.started++;
        waits[vc].push_back(o.first_start - tj.submit);
      } else if (o.state == JobState::NeverStarted) {
        f.waiting_at_end++;
        f.waited_at_end_s = std::max(f.waited_at_end_s, req.horizon_s - tj.submit);
      }
    }
    if (o.state == JobState::Finished) f.finished++;
    if (o.state == JobState::Unschedulable) f.unschedulable++;
    f.preemptions += o.preemptions;
    f.lost_gpu_hours += static_cast<double>(o.lost_gpu_seconds) / 3600;
  }
  // The waiting groups' starts in the order they were given, not queue order.
  {
    std::vector<size_t> order(req.state.waiting.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return req.state.waiting[a].waited_s > req.state.waiting[b].waited_s;
    });
    std::vector<double> given(order.size(), -1);
    for (size_t q = 0; q < order.size(); ++q) given[order[q]] = cf.waiting_start_s[q];
    cf.waiting_start_s = std::move(given);
  }
  for (const auto& rg : run.restored) cf.restored.push_back(rg.outcome);
  for (size_t i = 0; i < run.restored.size() && i < req.state.running.size(); ++i)
    if (run.restored[i].outcome == scheduler::RestoreOutcome::LazyPreempted ||
        run.restored[i].outcome == scheduler::RestoreOutcome::Ignored)
      cf.notes.push_back(req.state.running[i].group.name + " is " +
                         (run.restored[i].outcome == scheduler::RestoreOutcome::Ignored
                              ? "not seen by HiveD"
                              : "lazily preempted") +
                         " on " + name + ": " + run.restored[i].reason);
  for (const auto& [reason, n] : run.unschedulable_by_reason)
    cf.notes.push_back(std::to_string(n) + " job(s) can never run on " + name + ": " + reason);

  std::vector<double> all;
  VcForecast& all_f = cf.overall;
  all_f.vc = "(all)";
  for (auto& [vc, f] : vcs) {
    auto& w = waits[vc];
    all.insert(all.end(), w.begin(), w.end());
    f.wait_s = summarize(std::move(w));
    const double cap = static_cast<double>(f.guaranteed_gpus) * req.horizon_s / 3600;
    f.utilization = cap > 0 ? f.used_gpu_hours / cap : 0;
    all_f.guaranteed_gpus += f.guaranteed_gpus;
    all_f.running_now += f.running_now;
    all_f.waiting_now += f.waiting_now;
    all_f.arrivals += f.arrivals;
    all_f.started += f.started;
    all_f.waiting_at_end += f.waiting_at_end;
    all_f.waited_at_end_s = std::max(all_f.waited_at_end_s, f.waited_at_end_s);
    all_f.finished += f.finished;
    all_f.unschedulable += f.unschedulable;
    all_f.preemptions += f.preemptions;
    all_f.lost_gpu_hours += f.lost_gpu_hours;
    all_f.used_gpu_hours += f.used_gpu_hours;
    cf.vcs.push_back(f);
  }
  // The series, cut to the steps (the last bin may hold a rounding's sliver).
  if (steps > 0) {
    cf.step_s = req.horizon_s / steps;
    std::map<std::string, size_t> index;
    for (size_t v = 0; v < shape.vcs.size(); ++v) index[shape.vcs[v].name] = v;
    for (const auto& f : cf.vcs) {
      VcSeries s;
      s.vc = f.vc;
      s.used_gpus.assign(static_cast<size_t>(steps), 0);
      s.waiting_jobs.assign(static_cast<size_t>(steps), 0);
      if (auto it = index.find(f.vc); it != index.end() && it->second < run.vc_used_gpus.size()) {
        const auto& u = run.vc_used_gpus[it->second];
        const auto& q = run.vc_queued_jobs[it->second];
        for (size_t b = 0; b < s.used_gpus.size() && b < u.size(); ++b) {
          s.used_gpus[b] = u[b];
          s.waiting_jobs[b] = q[b];
        }
        if (it->second < run.vc_preempted_at.size())
          s.preempted_at = run.vc_preempted_at[it->second];
      }
      cf.series.push_back(std::move(s));
    }
  }
  all_f.wait_s = summarize(std::move(all));
  all_f.guaranteed_gpus = cf.gpus;
  cf.utilization =
      cf.gpus > 0 ? all_f.used_gpu_hours / (static_cast<double>(cf.gpus) * req.horizon_s / 3600)
                  : 0;
  all_f.utilization = cf.utilization;
  return cf;
}

}  // namespace

util::Result<ForecastResult> forecast(const ForecastRequest& req) {
  if (!req.current) return util::Error{"a forecast needs the config HiveD runs", {}};
  if (!(req.horizon_s > 0) || req.horizon_s > kMaxForecastHorizon)
    return util::Error{"the horizon must be above 0 and at most 366 days", {}};
  if (req.arrivals) {
    auto unknown = unknown_arrival_vcs(*req.arrivals, *req.current);
    if (!unknown.empty()) {
      std::vector<std::string> names;
      for (const auto& vc : req.current->vcs) names.push_back(vc.name);
      return util::Error{"the arrivals name virtual clusters the cluster does not have: " +
                             util::join(unknown, ", "),
                         "the cluster's virtual clusters: " + util::join(names, ", ") +
                             " (a trace of another cluster?)"};
    }
  }
  ForecastResult res;
  res.horizon_s = req.horizon_s;
  res.source = req.state.source;
  res.arrivals_source = req.arrivals_source;
  res.running = static_cast<int64_t>(req.state.running.size());
  res.waiting = static_cast<int64_t>(req.state.waiting.size());
  res.bad_nodes = static_cast<int64_t>(req.state.bad_nodes.size());
  for (const auto& g : req.state.running) res.running_names.push_back(g.group.name);
  for (const auto& w : req.state.waiting) res.waiting_names.push_back(w.name);
  if (req.arrivals) {
    res.arrivals = static_cast<int64_t>(req.arrivals->jobs.size());
    for (const auto& j : req.arrivals->jobs) res.arrivals_in_horizon += j.submit <= req.horizon_s;
  }
  {
    const auto shape = scheduler::describe_cluster(*req.current);
    for (const auto& n : req.state.bad_nodes)
      if (shape.find_node(n) < 0)
        res.warnings.push_back("bad node " + n + " is not in the current config");
  }
  auto cur = forecast_one(req, *req.current, req.current_name);
  if (!cur.ok()) return util::Error{req.current_name + " config: " + cur.error().message, {}};
  res.configs.push_back(std::move(*cur));
  if (req.proposed) {
    auto prop = forecast_one(req, *req.proposed, req.proposed_name);
    if (!prop.ok()) return util::Error{req.proposed_name + " config: " + prop.error().message, {}};
    res.configs.push_back(std::move(*prop));
  }
  return res;
}

}  // namespace pai::sim
