// The forecast's tables (text) and its -o json document body.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "sim/forecast.h"
#include "sim/report.h"
#include "util/strings.h"

namespace pai::sim {

namespace {

std::string forecast_percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * x);
  return buf;
}

std::string forecast_hours(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  return buf;
}

// "a" when every config gives the same, else "a -> b".
std::string forecast_cell(const std::vector<std::string>& v) {
  if (v.empty()) return "-";
  bool same = std::all_of(v.begin(), v.end(), [&](const std::string& s) { return s == v[0]; });
  return same ? v[0] : util::join(v, " -> ");
}

std::string forecast_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], r[c].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      const size_t pad = width[c] - r[c].size();
      if (c == 0)
        line += r[c] + std::string(pad, ' ');
      else
        line += "  " + std::string(pad, ' ') + r[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

const VcForecast* forecast_find(const ConfigForecast& c, const std::string& vc) {
  for (const auto& f : c.vcs)
    if (f.vc == vc) return &f;
  return nullptr;
}

nlohmann::ordered_json forecast_vc_json(const VcForecast& f) {
  nlohmann::ordered_json w = {{"n", f.wait_s.n},
                              {"mean", f.wait_s.mean},
                              {"p50", f.wait_s.p50},
                              {"p95", f.wait_s.p95},
                              {"max", f.wait_s.max}};
  return {{"vc", f.vc},
          {"guaranteedGpus", f.guaranteed_gpus},
          {"runningNow", f.running_now},
          {"waitingNow", f.waiting_now},
          {"arrivals", f.arrivals},
          {"started", f.started},
          {"waitSeconds", w},
          {"waitingAtEnd", f.waiting_at_end},
          {"longestWaitAtEndSeconds", f.waited_at_end_s},
          {"finished", f.finished},
          {"unschedulable", f.unschedulable},
          {"preemptions", f.preemptions},
          {"lostGpuHours", f.lost_gpu_hours},
          {"usedGpuHours", f.used_gpu_hours},
          {"utilization", f.utilization}};
}

}  // namespace

std::string forecast_text(const ForecastResult& r) {
  std::string out = "Forecast of the next " + human_duration(r.horizon_s) + " from " + r.source +
                    ": " + std::to_string(r.running) + " running group(s), " +
                    std::to_string(r.waiting) + " waiting, " + std::to_string(r.bad_nodes) +
                    " bad node(s); " + std::to_string(r.arrivals_in_horizon) + " arrival(s)" +
                    (r.arrivals_source.empty() ? "" : " from " + r.arrivals_source) + ".\n";
  if (r.configs.size() > 1) {
    std::vector<std::string> names;
    for (const auto& c : r.configs) names.push_back(c.name);
    out += "Columns with two values: " + util::join(names, " -> ") + ".\n";
  }
  out += "\n";
  std::vector<std::string> vcs;
  for (const auto& c : r.configs)
    for (const auto& f : c.vcs)
      if (std::find(vcs.begin(), vcs.end(), f.vc) == vcs.end()) vcs.push_back(f.vc);
  std::sort(vcs.begin(), vcs.end());
  std::vector<std::vector<std::string>> rows = {
      {"VC", "GPUS", "NOW RUN/WAIT", "ARRIVALS", "STARTED", "WAIT P50", "WAIT P95", "WAIT MAX",
       "STILL WAITING", "PREEMPTED", "GPU-HOURS", "UTIL"}};
  auto row = [&](const std::string& name, auto get) {
    std::vector<std::string> cells(12);
    cells[0] = name;
    for (size_t k = 1; k < 12; ++k) {
      std::vector<std::string> v;
      for (const auto& c : r.configs) {
        const VcForecast* f = get(c);
        v.push_back(f ? [&]() -> std::string {
          switch (k) {
            case 1:
              return std::to_string(f->guaranteed_gpus);
            case 2:
              return std::to_string(f->running_now) + "/" + std::to_string(f->waiting_now);
            case 3:
              return std::to_string(f->arrivals);
            case 4:
              return std::to_string(f->started);
            case 5:
              return f->wait_s.n ? human_duration(f->wait_s.p50) : "-";
            case 6:
              return f->wait_s.n ? human_duration(f->wait_s.p95) : "-";
            case 7:
              return f->wait_s.n ? human_duration(f->wait_s.max) : "-";
            case 8:
              return f->waiting_at_end ? std::to_string(f->waiting_at_end) + " (" +
                                             human_duration(f->waited_at_end_s) + ")"
                                       : "0";
            case 9:
              return std::to_string(f->preemptions);
            case 10:
              return forecast_hours(f->used_gpu_hours);
            default:
              return forecast_percent(f->utilization);
          }
        }()
                  : "-");
      }
      cells[k] = forecast_cell(v);
    }
    rows.push_back(std::move(cells));
  };
  for (const auto& vc : vcs) row(vc, [&](const ConfigForecast& c) { return forecast_find(c, vc); });
  row("(all)", [](const ConfigForecast& c) { return &c.overall; });
  out += forecast_table(rows);
  out +=
      "\nGPUS: the VC's guaranteed GPUs (the cluster's for (all)); WAIT: from now, or from the "
      "arrival, to the start;\nSTILL WAITING: queued when the horizon ends (the longest wait); "
      "UTIL: GPU-hours used / GPUS x horizon.\n";
  // The groups waiting now: when each starts.
  if (r.waiting > 0 && !r.configs.empty()) {
    out += "\n";
    std::vector<std::vector<std::string>> w = {{"WAITING NOW", "STARTS IN"}};
    const size_t n = r.configs[0].waiting_start_s.size();
    for (size_t i = 0; i < n && i < 20; ++i) {
      std::vector<std::string> v;
      for (const auto& c : r.configs) {
        double s = i < c.waiting_start_s.size() ? c.waiting_start_s[i] : -1;
        v.push_back(s < 0 ? "after the horizon" : human_duration(s));
      }
      w.push_back({i < r.waiting_names.size() ? r.waiting_names[i] : "", forecast_cell(v)});
    }
    out += forecast_table(w);
    if (n > 20) out += "... and " + std::to_string(n - 20) + " more (-o json lists them)\n";
  }
  for (const auto& c : r.configs)
    for (size_t i = 0; i < c.notes.size() && i < 10; ++i) out += "note: " + c.notes[i] + "\n";
  return out;
}

nlohmann::ordered_json forecast_json(const ForecastResult& r) {
  nlohmann::ordered_json configs = nlohmann::ordered_json::array();
  for (const auto& c : r.configs) {
    nlohmann::ordered_json vcs = nlohmann::ordered_json::array();
    for (const auto& f : c.vcs) vcs.push_back(forecast_vc_json(f));
    nlohmann::ordered_json waiting = nlohmann::ordered_json::array();
    for (size_t i = 0; i < c.waiting_start_s.size(); ++i) {
      const double s = c.waiting_start_s[i];
      waiting.push_back({{"name", i < r.waiting_names.size() ? r.waiting_names[i] : std::string()},
                         {"startsInSeconds",
                          s < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s)}});
    }
    nlohmann::ordered_json running = nlohmann::ordered_json::array();
    for (size_t i = 0; i < c.running_end_s.size(); ++i)
      running.push_back(
          {{"name", i < r.running_names.size() ? r.running_names[i] : std::string()},
           {"endsInSeconds", c.running_end_s[i] < 0 ? nlohmann::ordered_json(nullptr)
                                                    : nlohmann::ordered_json(c.running_end_s[i])},
           {"restored", i < c.restored.size() ? std::string(scheduler::to_string(c.restored[i]))
                                              : std::string()}});
    configs.push_back({{"name", c.name},
                       {"gpus", c.gpus},
                       {"utilization", c.utilization},
                       {"overall", forecast_vc_json(c.overall)},
                       {"vcs", vcs},
                       {"runningGroups", running},
                       {"waitingGroups", waiting},
                       {"notes", c.notes}});
  }
  return {{"horizonSeconds", r.horizon_s},
          {"source", r.source},
          {"arrivalsSource", r.arrivals_source},
          {"runningGroups", r.running},
          {"waitingGroups", r.waiting},
          {"badNodes", r.bad_nodes},
          {"arrivals", r.arrivals},
          {"arrivalsInHorizon", r.arrivals_in_horizon},
          {"configs", configs},
          {"warnings", r.warnings}};
}

}  // namespace pai::sim
