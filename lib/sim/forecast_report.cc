// The forecast's tables (text), its -o json document body, and its report
// (an HTML page and an SVG picture of the series over the horizon).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "sim/chart.h"
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

// Averages to three decimals: the JSON stays short and reads the same everywhere.
std::vector<double> forecast_rounded(const std::vector<double>& v) {
  std::vector<double> out;
  out.reserve(v.size());
  for (double x : v) out.push_back(std::round(x * 1000) / 1000);
  return out;
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

namespace {

// The first lines of the text: what the forecast starts from, and how two
// values in a cell read.
std::string forecast_heading(const ForecastResult& r) {
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
  return out;
}

// The VCs of every config, by name.
std::vector<std::string> forecast_vc_names(const ForecastResult& r) {
  std::vector<std::string> vcs;
  for (const auto& c : r.configs)
    for (const auto& f : c.vcs)
      if (std::find(vcs.begin(), vcs.end(), f.vc) == vcs.end()) vcs.push_back(f.vc);
  std::sort(vcs.begin(), vcs.end());
  return vcs;
}

// The per-VC table: a header row, a row per VC, then (all).
std::vector<std::vector<std::string>> forecast_vc_rows(const ForecastResult& r) {
  const std::vector<std::string> vcs = forecast_vc_names(r);
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
  return rows;
}

// The groups waiting now (at most `limit`) and when each starts.
std::vector<std::vector<std::string>> forecast_waiting_rows(const ForecastResult& r, size_t limit) {
  std::vector<std::vector<std::string>> w = {{"WAITING NOW", "STARTS IN"}};
  const size_t n = r.configs.empty() ? 0 : r.configs[0].waiting_start_s.size();
  for (size_t i = 0; i < n && i < limit; ++i) {
    std::vector<std::string> v;
    for (const auto& c : r.configs) {
      double s = i < c.waiting_start_s.size() ? c.waiting_start_s[i] : -1;
      v.push_back(s < 0 ? "after the horizon" : human_duration(s));
    }
    w.push_back({i < r.waiting_names.size() ? r.waiting_names[i] : "", forecast_cell(v)});
  }
  return w;
}

}  // namespace

std::string forecast_text(const ForecastResult& r) {
  std::string out = forecast_heading(r) + "\n";
  const auto rows = forecast_vc_rows(r);
  out += forecast_table(rows);
  out +=
      "\nGPUS: the VC's guaranteed GPUs (the cluster's for (all)); WAIT: from now, or from the "
      "arrival, to the start;\nSTILL WAITING: queued when the horizon ends (the longest wait); "
      "UTIL: GPU-hours used / GPUS x horizon.\n";
  // The groups waiting now: when each starts.
  if (r.waiting > 0 && !r.configs.empty()) {
    out += "\n";
    out += forecast_table(forecast_waiting_rows(r, 20));
    const size_t n = r.configs[0].waiting_start_s.size();
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
    nlohmann::ordered_json item = {{"name", c.name},
                                   {"gpus", c.gpus},
                                   {"utilization", c.utilization},
                                   {"overall", forecast_vc_json(c.overall)},
                                   {"vcs", vcs},
                                   {"runningGroups", running},
                                   {"waitingGroups", waiting},
                                   {"notes", c.notes}};
    if (!c.series.empty()) {
      nlohmann::ordered_json series = nlohmann::ordered_json::array();
      for (const auto& v : c.series)
        series.push_back({{"vc", v.vc},
                          {"usedGpus", forecast_rounded(v.used_gpus)},
                          {"waitingJobs", forecast_rounded(v.waiting_jobs)},
                          {"preemptedAtSeconds", v.preempted_at}});
      item["series"] = {{"stepSeconds", c.step_s}, {"vcs", series}};
    }
    configs.push_back(std::move(item));
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

// ---------------------------------------------------------------------------
// The report: the table as HTML, and per VC its GPUs in use and its waiting
// jobs over the horizon, one line per config (lib/sim/chart.h).
// ---------------------------------------------------------------------------

namespace {

const char* forecast_color(size_t config) {
  static const char* colors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759"};
  return colors[config % 4];
}

// Step averages as steps: each value from its step's start to the next one's.
std::vector<std::pair<double, double>> forecast_steps(const std::vector<double>& v, double step_h) {
  std::vector<std::pair<double, double>> pts;
  for (size_t b = 0; b < v.size(); ++b) pts.push_back({static_cast<double>(b) * step_h, v[b]});
  if (!v.empty()) pts.push_back({static_cast<double>(v.size()) * step_h, v.back()});
  return pts;
}

struct ForecastChartPair {
  std::string gpus, waiting;
};

// One VC's two charts ("" for the whole cluster: the VCs summed, against
// the cluster's GPUs).
ForecastChartPair forecast_vc_charts(const ForecastResult& r, const std::string& vc, int width,
                                     int height) {
  const bool all = vc.empty();
  const std::string name = all ? std::string("the cluster") : "VC " + vc;
  ChartAxis tx = chart_time_axis(r.horizon_s / 3600, "hours from now");
  std::vector<ChartSeries> used, waiting, reference;
  std::vector<ChartMark> marks;
  double max_used = 0, max_waiting = 0;
  std::vector<int64_t> guarantees;
  for (size_t i = 0; i < r.configs.size(); ++i) {
    const ConfigForecast& c = r.configs[i];
    const double step_h = c.step_s / 3600;
    std::vector<double> u, q;
    std::vector<double> preempted;
    const VcForecast* f = all ? nullptr : forecast_find(c, vc);
    guarantees.push_back(all ? c.gpus : f ? f->guaranteed_gpus : -1);
    for (const VcSeries& s : c.series) {
      if (!all && s.vc != vc) continue;
      if (u.size() < s.used_gpus.size()) {
        u.resize(s.used_gpus.size(), 0);
        q.resize(s.waiting_jobs.size(), 0);
      }
      for (size_t b = 0; b < s.used_gpus.size(); ++b) u[b] += s.used_gpus[b];
      for (size_t b = 0; b < s.waiting_jobs.size() && b < q.size(); ++b) q[b] += s.waiting_jobs[b];
      preempted.insert(preempted.end(), s.preempted_at.begin(), s.preempted_at.end());
    }
    for (double v : u) max_used = std::max(max_used, v);
    for (double v : q) max_waiting = std::max(max_waiting, v);
    used.push_back({c.name, forecast_color(i), forecast_steps(u, step_h), "", true});
    waiting.push_back({c.name, forecast_color(i), forecast_steps(q, step_h), "", true});
    std::sort(preempted.begin(), preempted.end());
    for (double t : preempted)
      marks.push_back({t / 3600, forecast_color(i),
                       c.name + ": a job preempted at " + human_duration(t) + " from now"});
  }
  // The guarantee: one grey dashed line when the configs agree, else one per
  // config in its colour.
  bool same = true;
  for (int64_t g : guarantees) same = same && g == guarantees[0];
  for (size_t i = 0; i < guarantees.size(); ++i) {
    if (guarantees[i] < 0 || (same && i > 0)) continue;
    const double g = static_cast<double>(guarantees[i]);
    max_used = std::max(max_used, g);
    const std::string n = std::to_string(guarantees[i]);
    const std::string label = all ? n + " GPUs" : "guaranteed " + n;
    reference.push_back({same ? label : r.configs[i].name + " " + label,
                         same ? "#777777" : forecast_color(i),
                         {{0, g}, {r.horizon_s / 3600, g}},
                         "6,4",
                         false});
  }
  used.insert(used.end(), reference.begin(), reference.end());
  ForecastChartPair out;
  out.gpus = line_chart(name + ": GPUs in use", used, tx,
                        chart_value_axis(std::max(max_used, 1.0), "GPUs"), width, height, marks);
  out.waiting = line_chart(name + ": jobs waiting", waiting, tx,
                           chart_value_axis(std::max(max_waiting, 1.0), "jobs"), width, height);
  return out;
}

const char* const kForecastLegend[] = {
    "Each step of the horizon shows its average. GPUs in use: by the VC's running jobs "
    "(opportunistic ones too), against its guarantee (dashed);",
    "triangles under a chart: jobs preempted. Jobs waiting: the VC's queued jobs (the jobs "
    "waiting now, the arrivals, the preempted ones)."};

}  // namespace

std::string forecast_html_report(const ForecastResult& r, const std::string& version) {
  const auto& esc = chart_escape;
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>paictl "
      "forecast</title>\n<style>\n";
  h += kChartStyle;
  h += "</style>\n</head>\n<body>\n<h1>paictl forecast of the live cluster</h1>\n";
  // split() returns views into its argument: the heading must outlive the loop.
  const std::string heading = forecast_heading(r);
  for (const auto& line : util::split(heading, '\n'))
    if (!line.empty()) h += "<p class=\"note\">" + esc(line) + "</p>\n";
  h += "<h2>Per virtual cluster</h2>\n<table>\n";
  const auto rows = forecast_vc_rows(r);
  for (size_t i = 0; i < rows.size(); ++i) {
    h += "<tr>";
    for (size_t k = 0; k < rows[i].size(); ++k) {
      const char* tag = i == 0 ? "th" : "td";
      h += std::string("<") + tag + (k == 0 ? " class=\"l\"" : "") + ">" + esc(rows[i][k]) + "</" +
           tag + ">";
    }
    h += "</tr>\n";
  }
  h += "</table>\n<p class=\"note\">GPUS: the VC's guaranteed GPUs (the cluster's for (all)); "
       "WAIT: from now, or from the arrival, to the start; STILL WAITING: queued when the horizon "
       "ends (the longest wait); UTIL: GPU-hours used / GPUS x horizon.</p>\n";
  h += "<h2>Over the horizon</h2>\n<p class=\"note\">" + esc(kForecastLegend[0]) + " " +
       esc(kForecastLegend[1]) + "</p>\n";
  auto pair = forecast_vc_charts(r, "", 640, 280);
  h += "<div class=\"charts\">\n" + pair.gpus + pair.waiting + "</div>\n";
  for (const auto& vc : forecast_vc_names(r)) {
    pair = forecast_vc_charts(r, vc, 640, 280);
    h += "<div class=\"charts\">\n" + pair.gpus + pair.waiting + "</div>\n";
  }
  if (r.waiting > 0 && !r.configs.empty()) {
    h += "<h2>Waiting now</h2>\n<table>\n";
    const auto w = forecast_waiting_rows(r, 500);
    for (size_t i = 0; i < w.size(); ++i) {
      const char* tag = i == 0 ? "th" : "td";
      h += std::string("<tr><") + tag + " class=\"l\">" + esc(w[i][0]) + "</" + tag + "><" + tag +
           ">" + esc(w[i][1]) + "</" + tag + "></tr>\n";
    }
    h += "</table>\n";
    const size_t n = r.configs[0].waiting_start_s.size();
    if (n > 500)
      h += "<p class=\"note\">... and " + std::to_string(n - 500) +
           " more (the JSON document lists them).</p>\n";
  }
  std::vector<std::string> notes = r.warnings;
  for (const auto& c : r.configs) notes.insert(notes.end(), c.notes.begin(), c.notes.end());
  if (!notes.empty()) {
    h += "<h2>Notes</h2>\n<ul>\n";
    for (size_t i = 0; i < notes.size() && i < 200; ++i) h += "<li>" + esc(notes[i]) + "</li>\n";
    h += "</ul>\n";
  }
  h += "<p class=\"note\">paictl " + esc(version) + ".</p>\n</body>\n</html>\n";
  return h;
}

std::string forecast_svg(const ForecastResult& r) {
  constexpr int kWidth = 560, kHeight = 250, kGap = 16, kTop = 66;
  std::vector<std::string> vcs = forecast_vc_names(r);
  vcs.insert(vcs.begin(), std::string());  // the whole cluster first
  const int width = 2 * kWidth + 3 * kGap;
  const int height = kTop + static_cast<int>(vcs.size()) * (kHeight + kGap) + kGap;
  std::string names;
  for (const auto& c : r.configs) names += (names.empty() ? "" : " against ") + c.name;
  const std::string title = "Forecast of the next " + human_duration(r.horizon_s) + ", " + names +
                            " config, per virtual cluster";
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                  "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
                  std::to_string(width) + " " + std::to_string(height) +
                  "\" role=\"img\" aria-label=\"" + chart_escape(title) + "\">\n";
  s += chart_svg_style();
  s += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  s += "<text x=\"" + std::to_string(kGap) + "\" y=\"22\" class=\"t\">" + chart_escape(title) +
       "</text>\n";
  for (int line = 0; line < 2; ++line)
    s += "<text x=\"" + std::to_string(kGap) + "\" y=\"" + std::to_string(40 + 14 * line) +
         "\" class=\"a\">" + chart_escape(kForecastLegend[line]) + "</text>\n";
  for (size_t i = 0; i < vcs.size(); ++i) {
    const auto pair = forecast_vc_charts(r, vcs[i], kWidth, kHeight);
    const int y = kTop + static_cast<int>(i) * (kHeight + kGap);
    s += "<g transform=\"translate(" + std::to_string(kGap) + "," + std::to_string(y) + ")\">\n" +
         pair.gpus + "</g>\n";
    s += "<g transform=\"translate(" + std::to_string(2 * kGap + kWidth) + "," + std::to_string(y) +
         ")\">\n" + pair.waiting + "</g>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace pai::sim
