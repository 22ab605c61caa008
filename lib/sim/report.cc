#include "sim/report.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "sim/chart.h"
#include "sim/text_input.h"

namespace pai::sim {

using nlohmann::json;

std::string human_duration(double s) {
  char buf[32];
  if (!std::isfinite(s)) return "-";
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%.1fm", s / 60);
  } else if (s < 86400) {
    std::snprintf(buf, sizeof buf, "%.1fh", s / 3600);
  } else {
    std::snprintf(buf, sizeof buf, "%.1fd", s / 86400);
  }
  return buf;
}

std::string with_thousands(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(v));
  std::string digits = buf, frac;
  if (auto dot = digits.find('.'); dot != std::string::npos) {
    frac = digits.substr(dot);
    digits.resize(dot);
  }
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  bool zero = out.find_first_not_of("0,") == std::string::npos &&
              frac.find_first_not_of(".0") == std::string::npos;
  return (v < 0 && !zero ? "-" : "") + out + frac;
}

namespace {

// How the headline names a policy.
std::string report_policy_words(const std::string& p) {
  if (p == "hived") return "HiveD";
  if (p == "quota") return "quota sharing";
  if (p == "k8s-default") return "the Kubernetes default scheduler";
  if (p == "private") return "private partitions";
  return p;
}

// The mean queueing delay of the jobs that started (guaranteed ones only, or all).
double report_mean_wait(const ReportContext& c, const PolicyRun& r, bool guaranteed_only) {
  double sum = 0;
  int64_t n = 0;
  for (size_t j = 0; j < c.trace.jobs.size() && j < r.jobs.size(); ++j) {
    if (guaranteed_only && c.trace.jobs[j].priority < 0) continue;
    if (r.jobs[j].first_start < 0) continue;
    sum += r.jobs[j].first_start - c.trace.jobs[j].submit;
    ++n;
  }
  return n ? sum / static_cast<double>(n) : 0;
}

}  // namespace

std::string headline(const ReportContext& c) {
  if (c.runs.empty()) return {};
  bool opportunistic = false;
  for (const auto& j : c.trace.jobs)
    if (j.priority < 0) opportunistic = true;
  const std::string of = opportunistic ? " of guaranteed jobs" : "";
  const PolicyRun& first = c.runs[0];
  const std::string me = report_policy_words(first.policy);
  const double mine = report_mean_wait(c, first, opportunistic);
  if (c.runs.size() == 1) {
    char util[32];
    std::snprintf(util, sizeof util, "%.1f %%", 100 * first.gpu_utilization);
    return me + " started " + with_thousands(static_cast<double>(first.overall.jobs)) +
           " jobs with a mean queueing delay" + of + " of " + human_duration(mine) + " and kept " +
           util + " of the GPUs busy.";
  }
  // The strongest rival: the other policy with the shortest mean wait.
  size_t best = 1;
  std::vector<double> waits(c.runs.size(), 0);
  for (size_t i = 1; i < c.runs.size(); ++i) {
    waits[i] = report_mean_wait(c, c.runs[i], opportunistic);
    if (waits[i] < waits[best]) best = i;
  }
  const std::string rival = report_policy_words(c.runs[best].policy);
  const double theirs = waits[best];
  std::string s;
  if (theirs <= 0 && mine <= 0) {
    s = "No job" + std::string(opportunistic ? " with a guarantee" : "") + " waited under " + me +
        " or " + rival;
  } else if (theirs <= 0) {
    s = me + " made jobs wait " + human_duration(mine) + " on average" + of + ", " + rival +
        " not at all";
  } else {
    const double change = (theirs - mine) / theirs;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.0f %%", std::fabs(change) * 100);
    if (std::fabs(change) < 0.005)
      s = me + " and " + rival + " gave the same mean queueing delay" + of + " (" +
          human_duration(mine) + ")";
    else
      s = me + (change > 0 ? " cut" : " raised") + " the mean queueing delay" + of + " by " + pct +
          " against " + rival + " (" + human_duration(theirs) + " to " + human_duration(mine) + ")";
  }
  if (first.overall.anomaly_jobs || c.runs[best].overall.anomaly_jobs)
    s += "; sharing-anomaly jobs: " +
         with_thousands(static_cast<double>(first.overall.anomaly_jobs)) + " against " +
         with_thousands(static_cast<double>(c.runs[best].overall.anomaly_jobs));
  return s + ".";
}

namespace {

double round3(double v) {
  return std::round(v * 1000.0) / 1000.0;
}

json summary(const Summary& s) {
  return json{{"n", s.n},
              {"mean", round3(s.mean)},
              {"p50", round3(s.p50)},
              {"p95", round3(s.p95)},
              {"p99", round3(s.p99)},
              {"max", round3(s.max)}};
}

json group(const GroupMetrics& g) {
  return json{{"jobs", g.jobs},
              {"finished", g.finished},
              {"unschedulable", g.unschedulable},
              {"never_started", g.never_started},
              {"queue_delay_s", summary(g.queue_delay)},
              {"jct_s", summary(g.jct)},
              {"preemptions", g.preemptions},
              {"lazy_preemptions", g.lazy_preemptions},
              {"overflow_starts", g.overflow_starts},
              {"failure_restarts", g.failure_restarts},
              {"lost_gpu_hours", round3(g.lost_gpu_seconds / 3600)},
              {"gpu_hours", round3(g.gpu_seconds / 3600)},
              {"sharing_anomaly",
               {{"jobs", g.anomaly_jobs}, {"wait_hours", round3(g.anomaly_wait_seconds / 3600)}}}};
}

json cluster_json(const ReportContext& c) {
  const auto& shape = c.sim.cluster();
  json types = json::object(), vcs = json::array();
  for (const auto& t : shape.leaf_types) types[t.name] = t.leaf_cells;
  for (const auto& v : shape.vcs) {
    json g = json::object(), p = json::object();
    for (size_t t = 0; t < shape.leaf_types.size(); ++t) {
      if (v.guaranteed[t]) g[shape.leaf_types[t].name] = v.guaranteed[t];
      if (v.pinned[t]) p[shape.leaf_types[t].name] = v.pinned[t];
    }
    json e{{"name", v.name}, {"guaranteed", g}};
    if (!p.empty()) e["pinned"] = p;
    vcs.push_back(e);
  }
  return json{{"config", c.config_path},
              {"nodes", shape.nodes.size()},
              {"leaf_cells", types},
              {"vcs", vcs}};
}

json trace_json(const ReportContext& c) {
  const Trace& t = c.trace;
  json j{{"files", t.files},     {"format", t.format},
         {"records", t.records}, {"jobs", t.jobs.size()},
         {"skipped", t.skipped}, {"span_s", t.jobs.empty() ? 0.0 : t.jobs.back().submit}};
  if (!t.notes.empty()) j["notes"] = t.notes;
  if (t.has_dates && !t.jobs.empty()) j["start"] = format_timestamp(t.origin);
  json ex = json::array();
  for (const auto& e : t.examples)
    ex.push_back(e.file + ":" + std::to_string(e.line) + ": " + e.message);
  if (!ex.empty()) j["skipped_examples"] = ex;
  return j;
}

}  // namespace

json summary_json(const ReportContext& c) {
  json out;
  out["paictl"] = c.version;
  out["trace"] = trace_json(c);
  out["cluster"] = cluster_json(c);
  const auto& mapping = c.sim.vc_mapping();
  json vc_map = json::object();
  for (size_t i = 0; i < c.trace.vc_names.size(); ++i)
    vc_map[c.trace.vc_names[i]] =
        mapping.to_cluster[i] >= 0
            ? json(c.sim.cluster().vcs[static_cast<size_t>(mapping.to_cluster[i])].name)
            : json(nullptr);
  out["vc_map"] = vc_map;
  out["faults"] = json{{"events", c.sim.faults().size()}};
  json policies = json::array();
  for (const PolicyRun& r : c.runs) {
    json p;
    p["policy"] = r.policy;
    p["jobs"] = r.overall.jobs;
    p["finished"] = r.overall.finished;
    p["unschedulable"] = r.overall.unschedulable;
    p["never_started"] = r.overall.never_started;
    p["unschedulable_reasons"] = r.unschedulable_by_reason;
    p["overall"] = group(r.overall);
    json vcs = json::object();
    for (size_t v = 0; v < r.vcs.size(); ++v) vcs[c.sim.cluster().vcs[v].name] = group(r.vcs[v]);
    p["vcs"] = vcs;
    if (r.unmapped.jobs) p["unmapped_vcs"] = group(r.unmapped);
    p["gpus"] = r.gpus;
    p["gpu_utilization"] = round3(r.gpu_utilization);
    p["fragmentation"] = round3(r.fragmentation);
    p["makespan_s"] = round3(r.makespan);
    p["preemptions"] = r.overall.preemptions;
    p["lazy_preemptions"] = r.overall.lazy_preemptions;
    p["lost_gpu_hours"] = round3(r.overall.lost_gpu_seconds / 3600);
    p["node_failures"] = r.node_failures;
    p["failure_restarts"] = r.overall.failure_restarts;
    p["sharing_anomaly"] = json{{"jobs", r.overall.anomaly_jobs},
                                {"wait_hours", round3(r.overall.anomaly_wait_seconds / 3600)}};
    p["decisions"] = r.decisions;
    policies.push_back(p);
  }
  out["policies"] = policies;
  return out;
}

json metrics_json(const ReportContext& c) {
  json out = summary_json(c);
  json series = json::object();
  for (const PolicyRun& r : c.runs) {
    auto rounded = [](const std::vector<double>& v) {
      json a = json::array();
      for (double x : v) a.push_back(round3(x));
      return a;
    };
    series[r.policy] = json{{"bin_s", r.bin_seconds},
                            {"used_gpus", rounded(r.used_gpus)},
                            {"queued_jobs", rounded(r.queued_jobs)},
                            {"idle_waiting_gpus", rounded(r.idle_waiting_gpus)}};
  }
  out["timeseries"] = series;
  return out;
}

namespace {

std::string csv_cell(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string num(double v, int decimals = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

std::string jobs_csv(const ReportContext& c) {
  const Trace& t = c.trace;
  std::string out =
      "policy,job_id,vc,cluster_vc,gpus,members,priority,submit_s,first_start_s,finish_s,queue_"
      "delay_s,jct_s,"
      "state,reason,leaf_cell_type,preemptions,failure_restarts,lazy_preemptions,overflow_starts,"
      "lost_gpu_s,anomaly_wait_s\n";
  const auto& shape = c.sim.cluster();
  const auto& mapping = c.sim.vc_mapping();
  for (const PolicyRun& r : c.runs) {
    for (size_t j = 0; j < t.jobs.size(); ++j) {
      const TraceJob& tj = t.jobs[j];
      const JobOutcome& o = r.jobs[j];
      int32_t cvc = mapping.to_cluster[static_cast<size_t>(tj.vc)];
      out += csv_cell(r.policy);
      out += ',';
      out += csv_cell(t.id(tj));
      out += ',';
      out += csv_cell(t.vc_names[static_cast<size_t>(tj.vc)]);
      out += ',';
      if (cvc >= 0) out += csv_cell(shape.vcs[static_cast<size_t>(cvc)].name);
      out += ',' + std::to_string(t.gpus(tj)) + ',' + format_members(t.members(tj)) + ',' +
             std::to_string(tj.priority);
      out += ',' + num(tj.submit);
      out += ',' + (o.first_start >= 0 ? num(o.first_start) : "");
      out += ',' + (o.finish >= 0 ? num(o.finish) : "");
      out += ',' + (o.first_start >= 0 ? num(o.first_start - tj.submit) : "");
      out += ',' + (o.finish >= 0 ? num(o.finish - tj.submit) : "");
      const char* state = o.state == JobState::Finished        ? "finished"
                          : o.state == JobState::Unschedulable ? "unschedulable"
                          : o.state == JobState::Running       ? "running"
                                                               : "never_started";
      out += std::string(",") + state + ',';
      if (o.reason >= 0) out += csv_cell(r.reasons[static_cast<size_t>(o.reason)]);
      out += ',';
      if (o.leaf_type >= 0)
        out += csv_cell(shape.leaf_types[static_cast<size_t>(o.leaf_type)].name);
      out += ',' + std::to_string(o.preemptions) + ',' + std::to_string(o.failures) + ',' +
             std::to_string(o.lazy) + ',' + std::to_string(o.overflow) + ',' +
             num(o.lost_gpu_seconds, 1) + ',' + num(o.anomaly_wait, 1) + '\n';
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// HTML with inline SVG
// ---------------------------------------------------------------------------

namespace {

using Series = ChartSeries;
using Axis = ChartAxis;

std::string esc(std::string_view s) {
  return chart_escape(s);
}

const char* color_of(const std::string& policy, size_t i) {
  return chart_color(policy, i);
}

// Queueing delays on a log axis: position = log10(1 + seconds).
Axis delay_axis(double max_delay) {
  Axis a;
  a.label = "queueing delay (log scale)";
  a.min = 0;
  a.max = std::max(std::log10(1 + max_delay), std::log10(61.0));
  const std::pair<double, const char*> ticks[] = {{0, "0"},      {10, "10s"},    {60, "1m"},
                                                  {600, "10m"},  {3600, "1h"},   {21600, "6h"},
                                                  {86400, "1d"}, {604800, "1w"}, {2592000, "30d"}};
  for (const auto& [sec, label] : ticks) a.ticks.push_back({std::log10(1 + sec), label});
  return a;
}

Axis fraction_axis() {
  Axis a;
  a.label = "fraction of jobs started";
  for (int i = 0; i <= 4; ++i) a.ticks.push_back({i / 4.0, std::to_string(i * 25) + "%"});
  return a;
}

std::vector<std::pair<double, double>> cdf_points(std::vector<double> delays, size_t total_jobs) {
  std::vector<std::pair<double, double>> pts;
  if (delays.empty() || total_jobs == 0) return pts;
  std::sort(delays.begin(), delays.end());
  const size_t n = delays.size(), steps = std::min<size_t>(n, 240);
  pts.push_back({std::log10(1 + delays[0]), 0});
  for (size_t k = 1; k <= steps; ++k) {
    size_t idx = k * n / steps - 1;
    pts.push_back({std::log10(1 + delays[idx]),
                   static_cast<double>(idx + 1) / static_cast<double>(total_jobs)});
  }
  return pts;
}

Axis time_axis(double end_hours) {
  return chart_time_axis(end_hours);
}

Axis value_axis(double max, const std::string& label, bool percent = false) {
  return chart_value_axis(max, label, percent);
}

std::vector<std::pair<double, double>> time_points(const std::vector<double>& v, double bin_s,
                                                   double scale) {
  std::vector<std::pair<double, double>> pts;
  const size_t stride = std::max<size_t>(1, v.size() / 800);
  for (size_t i = 0; i < v.size(); i += stride) {
    double sum = 0;
    size_t n = 0;
    for (size_t k = i; k < std::min(v.size(), i + stride); ++k, ++n) sum += v[k];
    pts.push_back({(static_cast<double>(i) + 0.5 * static_cast<double>(n)) * bin_s / 3600.0,
                   sum / static_cast<double>(n) * scale});
  }
  return pts;
}

}  // namespace

// At most this many per-VC CDF panels; a run this many times longer than the
// shortest cuts the time series at the shortest.
constexpr size_t kReportVcPanels = 4;
constexpr double kReportClipRatio = 1.5;

std::string html_report(const ReportContext& c) {
  const Trace& t = c.trace;
  const auto& shape = c.sim.cluster();
  const auto& mapping = c.sim.vc_mapping();
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>paictl "
       "simulate report</title>\n<style>\n";
  h += kChartStyle;
  h += "td.best{font-weight:700;background:#e3f2e8}"
       "p.finding{font-size:18px;margin:8px 0 14px;padding:8px 12px;border-left:4px solid "
       "#1b9e77;background:#f4faf7}\n";
  h += "</style>\n</head>\n<body>\n<h1>paictl simulate</h1>\n";
  if (std::string finding = headline(c); !finding.empty())
    h += "<p class=\"finding\">" + esc(finding) + "</p>\n";
  h += "<p class=\"note\">Cluster <b>" + esc(c.config_path) +
       "</b>: " + std::to_string(shape.nodes.size()) + " nodes";
  for (const auto& lt : shape.leaf_types)
    h += ", " + with_thousands(static_cast<double>(lt.leaf_cells)) + " " + esc(lt.name);
  h += ", " + std::to_string(shape.vcs.size()) + " virtual clusters. Trace <b>";
  for (size_t i = 0; i < t.files.size(); ++i) h += (i ? ", " : "") + esc(t.files[i]);
  h += "</b> (" + esc(t.format) + "): " + with_thousands(static_cast<double>(t.jobs.size())) +
       " jobs over " + human_duration(t.jobs.empty() ? 0 : t.jobs.back().submit);
  if (t.has_dates && !t.jobs.empty()) h += " from " + esc(format_timestamp(t.origin));
  int64_t skipped = 0;
  for (const auto& [reason, n] : t.skipped) skipped += n;
  if (skipped)
    h += "; " + with_thousands(static_cast<double>(skipped)) + " records left out of " +
         with_thousands(static_cast<double>(t.records));
  h += ". paictl " + esc(c.version) + ".</p>\n";

  // Summary table.
  h += "<h2>Summary</h2>\n<table>\n<tr><th class=\"l\">metric</th>";
  for (const auto& r : c.runs) h += "<th>" + esc(r.policy) + "</th>";
  h += "</tr>\n";
  // Each row: the text of each policy's value and the value itself; the best
  // value (lowest or highest) is highlighted when the policies differ.
  enum class Better { None, Lower, Higher };
  auto row = [&](const std::string& name, Better better, auto value, auto text) {
    h += "<tr><td class=\"l\">" + esc(name) + "</td>";
    std::vector<double> values;
    for (const auto& r : c.runs) values.push_back(value(r));
    double best = values.empty() ? 0 : values[0];
    bool differ = false;
    for (double v : values) {
      if (better == Better::Lower ? v < best : v > best) best = v;
      if (v != values[0]) differ = true;
    }
    for (size_t i = 0; i < c.runs.size(); ++i) {
      bool mark = better != Better::None && differ && values[i] == best;
      h += std::string(mark ? "<td class=\"best\">" : "<td>") + esc(text(c.runs[i])) + "</td>";
    }
    h += "</tr>\n";
  };
  auto as_count = [](auto pick) {
    return [pick](const PolicyRun& r) { return static_cast<double>(pick(r)); };
  };
  auto count_text = [](auto pick) {
    return [pick](const PolicyRun& r) { return with_thousands(static_cast<double>(pick(r))); };
  };
  auto dur = [](auto pick) {
    return [pick](const PolicyRun& r) { return human_duration(pick(r)); };
  };
  using B = Better;
  using R = PolicyRun;
  auto jobs = [](const R& r) { return r.overall.jobs; };
  auto finished = [](const R& r) { return r.overall.finished; };
  auto unsched = [](const R& r) { return r.overall.unschedulable; };
  auto never = [](const R& r) { return r.overall.never_started; };
  row("jobs", B::None, as_count(jobs), count_text(jobs));
  row("finished", B::Higher, as_count(finished), count_text(finished));
  row("unschedulable", B::Lower, as_count(unsched), count_text(unsched));
  row("never started", B::Lower, as_count(never), count_text(never));
  auto qmean = [](const R& r) { return r.overall.queue_delay.mean; };
  auto q50 = [](const R& r) { return r.overall.queue_delay.p50; };
  auto q95 = [](const R& r) { return r.overall.queue_delay.p95; };
  auto q99 = [](const R& r) { return r.overall.queue_delay.p99; };
  auto qmax = [](const R& r) { return r.overall.queue_delay.max; };
  auto j50 = [](const R& r) { return r.overall.jct.p50; };
  auto j95 = [](const R& r) { return r.overall.jct.p95; };
  auto span = [](const R& r) { return r.makespan; };
  row("queueing delay mean", B::Lower, qmean, dur(qmean));
  row("queueing delay p50", B::Lower, q50, dur(q50));
  row("queueing delay p95", B::Lower, q95, dur(q95));
  row("queueing delay p99", B::Lower, q99, dur(q99));
  row("queueing delay max", B::Lower, qmax, dur(qmax));
  row("JCT p50", B::Lower, j50, dur(j50));
  row("JCT p95", B::Lower, j95, dur(j95));
  row("makespan", B::Lower, span, dur(span));
  auto util_pct = [](const R& r) { return std::round(1000 * r.gpu_utilization) / 10; };
  auto frag = [](const R& r) { return std::round(1000 * r.fragmentation) / 10; };
  row("GPU utilisation", B::Higher, util_pct,
      [&](const R& r) { return with_thousands(util_pct(r), 1) + "%"; });
  row("idle GPUs while work waits", B::Lower, frag,
      [&](const R& r) { return with_thousands(frag(r), 1) + "%"; });
  auto anomaly = [](const R& r) { return r.overall.anomaly_jobs; };
  auto anomaly_wait = [](const R& r) { return r.overall.anomaly_wait_seconds; };
  auto preempt = [](const R& r) { return r.overall.preemptions; };
  auto lazy = [](const R& r) { return r.overall.lazy_preemptions; };
  auto overflow = [](const R& r) { return r.overall.overflow_starts; };
  auto lost = [](const R& r) { return std::round(r.overall.lost_gpu_seconds / 360) / 10; };
  auto failures = [](const R& r) { return r.node_failures; };
  row("sharing-anomaly jobs", B::Lower, as_count(anomaly), count_text(anomaly));
  row("sharing-anomaly wait", B::Lower, anomaly_wait, dur(anomaly_wait));
  row("preemptions", B::Lower, as_count(preempt), count_text(preempt));
  row("lazy preemptions", B::None, as_count(lazy), count_text(lazy));
  row("opportunistic overflow starts", B::None, as_count(overflow), count_text(overflow));
  row("lost GPU-hours", B::Lower, lost, [&](const R& r) { return with_thousands(lost(r), 1); });
  row("node failures", B::None, as_count(failures), count_text(failures));
  h += "</table>\n";
  h += "<p class=\"note\">Queueing delay: submission to first start. JCT: submission to finish. A "
       "sharing anomaly is a "
       "job that could not start although its VC was within its guarantee for the job's GPU type. "
       "Idle GPUs while work "
       "waits: healthy GPUs left idle while a job that could use their type waits, as a share of "
       "all GPU time. The best value of each row is highlighted.</p>\n";

  // Per VC.
  h += "<h2>Virtual clusters</h2>\n<table>\n<tr><th class=\"l\">VC</th><th "
       "class=\"l\">policy</th><th>jobs</th>"
       "<th>finished</th><th>unschedulable</th><th>delay p50</th><th>delay p95</th><th>delay "
       "max</th><th>JCT p50</th>"
       "<th>anomaly jobs</th><th>preemptions</th></tr>\n";
  for (size_t v = 0; v < shape.vcs.size(); ++v)
    for (const auto& r : c.runs) {
      const GroupMetrics& g = r.vcs[v];
      h += "<tr><td class=\"l\">" + esc(shape.vcs[v].name) + "</td><td class=\"l\">" +
           esc(r.policy) + "</td><td>" + with_thousands(static_cast<double>(g.jobs)) + "</td><td>" +
           with_thousands(static_cast<double>(g.finished)) + "</td><td>" +
           with_thousands(static_cast<double>(g.unschedulable)) + "</td><td>" +
           human_duration(g.queue_delay.p50) + "</td><td>" + human_duration(g.queue_delay.p95) +
           "</td><td>" + human_duration(g.queue_delay.max) + "</td><td>" +
           human_duration(g.jct.p50) + "</td><td>" +
           with_thousands(static_cast<double>(g.anomaly_jobs)) + "</td><td>" +
           with_thousands(static_cast<double>(g.preemptions)) + "</td></tr>\n";
    }
  h += "</table>\n";

  // CDFs.
  h += "<h2>Queueing delay CDF</h2>\n<div class=\"charts\">\n";
  double max_delay = 1;
  for (const auto& r : c.runs) max_delay = std::max(max_delay, r.overall.queue_delay.max);
  Axis dx = delay_axis(max_delay), fy = fraction_axis();
  fy.max = 1;
  auto cdf_chart = [&](const std::string& title, int32_t vc) {
    std::vector<Series> ss;
    for (size_t i = 0; i < c.runs.size(); ++i) {
      const PolicyRun& r = c.runs[i];
      std::vector<double> d;
      size_t total = 0;
      for (size_t j = 0; j < t.jobs.size(); ++j) {
        int32_t cvc = mapping.to_cluster[static_cast<size_t>(t.jobs[j].vc)];
        if (vc >= 0 && cvc != vc) continue;
        if (r.jobs[j].state == JobState::Unschedulable) continue;
        ++total;
        if (r.jobs[j].first_start >= 0) d.push_back(r.jobs[j].first_start - t.jobs[j].submit);
      }
      ss.push_back({r.policy, color_of(r.policy, i), cdf_points(std::move(d), total)});
    }
    h += line_chart(title, ss, dx, fy, vc < 0 ? 1000 : 560, vc < 0 ? 400 : 320);
  };
  cdf_chart("all jobs", -1);
  // The VCs with the most jobs get a panel each; the others are in the VC table.
  std::vector<size_t> by_jobs;
  for (size_t v = 0; v < shape.vcs.size(); ++v)
    if (!c.runs.empty() && c.runs[0].vcs[v].jobs > 0) by_jobs.push_back(v);
  std::stable_sort(by_jobs.begin(), by_jobs.end(), [&](size_t a, size_t b) {
    return c.runs[0].vcs[a].jobs > c.runs[0].vcs[b].jobs;
  });
  const size_t panels = std::min<size_t>(by_jobs.size(), kReportVcPanels);
  for (size_t i = 0; i < panels; ++i)
    cdf_chart("VC " + shape.vcs[by_jobs[i]].name + " (" +
                  with_thousands(static_cast<double>(c.runs[0].vcs[by_jobs[i]].jobs)) + " jobs)",
              static_cast<int32_t>(by_jobs[i]));
  h += "</div>\n";
  if (by_jobs.size() > panels)
    h += "<p class=\"note\">The " + std::to_string(panels) +
         " virtual clusters with the most jobs are drawn; the delays of the other " +
         std::to_string(by_jobs.size() - panels) + " are in the table above.</p>\n";

  // Time series.
  // A policy that runs much longer (a queue that drains for weeks) would squeeze
  // the others into the left edge: the charts stop soon after the shortest run
  // ends, and say so.
  double end_h = 0, shortest_h = 0, max_queue = 0, max_idle = 0;
  size_t shortest = 0;
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const PolicyRun& r = c.runs[i];
    end_h = std::max(end_h, r.end / 3600.0);
    if (i == 0 || r.end / 3600.0 < shortest_h) {
      shortest_h = r.end / 3600.0;
      shortest = i;
    }
  }
  const bool clipped = c.runs.size() > 1 && shortest_h > 0 && end_h > kReportClipRatio * shortest_h;
  const double shown_h = clipped ? shortest_h * 1.1 : end_h;
  for (const auto& r : c.runs) {
    for (size_t b = 0; b < r.queued_jobs.size(); ++b) {
      if (static_cast<double>(b) * r.bin_seconds / 3600.0 > shown_h) break;
      max_queue = std::max(max_queue, r.queued_jobs[b]);
      if (b < r.idle_waiting_gpus.size()) max_idle = std::max(max_idle, r.idle_waiting_gpus[b]);
    }
  }
  Axis tx = time_axis(shown_h);
  auto ts_chart = [&](const std::string& title, const Axis& y, auto pick, double scale) {
    std::vector<Series> ss;
    for (size_t i = 0; i < c.runs.size(); ++i)
      ss.push_back({c.runs[i].policy, color_of(c.runs[i].policy, i),
                    time_points(pick(c.runs[i]), c.runs[i].bin_seconds, scale)});
    h += line_chart(title, ss, tx, y, 1000, 300);
  };
  h += "<h2>Over time</h2>\n";
  if (clipped) {
    std::string longer;
    for (const auto& r : c.runs)
      if (r.end / 3600.0 > shown_h)
        longer += (longer.empty() ? "" : ", ") + esc(r.policy) + " until " + human_duration(r.end);
    h += "<p class=\"note clip\">The charts stop at " + human_duration(shown_h * 3600) +
         ", a little after " + esc(c.runs[shortest].policy) +
         " ended; the longer runs are cut there (" + longer +
         "): their whole span is in the summary (makespan).</p>\n";
  }
  h += "<div class=\"charts\">\n";
  const double gpus = c.runs.empty() ? 1 : std::max<double>(1, static_cast<double>(c.runs[0].gpus));
  ts_chart(
      "GPU utilisation", value_axis(1.0, "used GPUs", true),
      [](const PolicyRun& r) -> const std::vector<double>& { return r.used_gpus; }, 1.0 / gpus);
  ts_chart(
      "queue length", value_axis(max_queue, "waiting jobs"),
      [](const PolicyRun& r) -> const std::vector<double>& { return r.queued_jobs; }, 1.0);
  ts_chart(
      "idle GPUs while work for them waits", value_axis(max_idle, "GPUs"),
      [](const PolicyRun& r) -> const std::vector<double>& { return r.idle_waiting_gpus; }, 1.0);
  h += "</div>\n";

  // Unschedulable reasons and skipped records.
  h += "<h2>Jobs that could not run</h2>\n";
  bool any = false;
  for (const auto& r : c.runs)
    for (const auto& [reason, n] : r.unschedulable_by_reason) {
      if (!any)
        h += "<table>\n<tr><th class=\"l\">policy</th><th "
             "class=\"l\">reason</th><th>jobs</th></tr>\n";
      any = true;
      h += "<tr><td class=\"l\">" + esc(r.policy) + "</td><td class=\"l\">" + esc(reason) +
           "</td><td>" + std::to_string(n) + "</td></tr>\n";
    }
  h += any ? "</table>\n" : "<p class=\"note\">None: every job could run under every policy.</p>\n";
  if (!t.skipped.empty()) {
    h += "<h2>Trace records left out</h2>\n<table>\n<tr><th "
         "class=\"l\">reason</th><th>records</th></tr>\n";
    for (const auto& [reason, n] : t.skipped)
      h += "<tr><td class=\"l\">" + esc(reason) + "</td><td>" + std::to_string(n) + "</td></tr>\n";
    h += "</table>\n";
  }
  if (!mapping.notes.empty()) {
    h += "<h2>VC mapping</h2>\n<p class=\"note\">Trace VCs that the cluster does not have were "
         "assigned automatically "
         "(--vc-map auto):</p>\n<ul>\n";
    for (size_t i = 0; i < mapping.notes.size() && i < 200; ++i)
      h += "<li>" + esc(mapping.notes[i]) + "</li>\n";
    h += "</ul>\n";
  }
  h += "</body>\n</html>\n";
  return h;
}

// ---------------------------------------------------------------------------
// A sweep's report: every point in one table, then each metric against the
// first axis that varies (load, seed or window), one line per other coordinate.
// ---------------------------------------------------------------------------

namespace {

std::string cell_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v.get<double>());
    return buf;
  }
  return v.dump();
}

double metric(const json& item, const char* a, const char* b = nullptr) {
  // NAN: the point has no such figure (it failed).
  if (!item.contains("result")) return NAN;
  const json* j = &item["result"]["result"];
  if (!j->contains(a)) return NAN;
  j = &(*j)[a];
  if (b) {
    if (!j->contains(b)) return NAN;
    j = &(*j)[b];
  }
  return j->is_number() ? j->get<double>() : NAN;
}

}  // namespace

std::string sweep_html_report(const json& doc) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>paictl "
      "simulate sweep</title>\n<style>\n";
  h += kChartStyle;
  h += "</style>\n</head>\n<body>\n<h1>paictl simulate sweep</h1>\n";
  const json& items = doc.at("items");
  h += "<p class=\"note\">Spec <b>" + esc(doc.value("spec", "")) +
       "</b>: " + std::to_string(items.size()) + " points. paictl " + esc(doc.value("paictl", "")) +
       ".</p>\n";
  static const char* axes[] = {"config",         "trace", "window",
                               "load",           "seed",  "suggested_fraction",
                               "suggested_seed", "policy"};
  h += "<h2>Points</h2>\n<table>\n<tr>";
  for (const char* a : axes) h += std::string("<th class=\"l\">") + a + "</th>";
  h += "<th>jobs</th><th>finished</th><th>unschedulable</th><th>delay p50</th><th>delay "
       "p95</th><th>JCT p50</th><th>GPU utilisation</th><th>preemptions</th><th>anomaly "
       "jobs</th><th class=\"l\">status</th></tr>\n";
  for (const json& it : items) {
    h += "<tr>";
    for (const char* a : axes)
      h += "<td class=\"l\">" + esc(cell_text(it.value(a, json()))) + "</td>";
    auto n = [&](double v) { return std::isnan(v) ? std::string("-") : num(v, 0); };
    h += "<td>" + n(metric(it, "jobs")) + "</td><td>" + n(metric(it, "finished")) + "</td><td>" +
         n(metric(it, "unschedulable")) + "</td>";
    const json* qd = it.contains("result") ? &it["result"]["result"]["overall"] : nullptr;
    auto q = [&](const char* group, const char* k) {
      if (!qd || !qd->contains(group)) return std::string("-");
      return human_duration((*qd)[group].value(k, 0.0));
    };
    double util = metric(it, "gpu_utilization");
    h += "<td>" + q("queue_delay_s", "p50") + "</td><td>" + q("queue_delay_s", "p95") +
         "</td><td>" + q("jct_s", "p50") + "</td><td>" +
         (std::isnan(util) ? std::string("-") : num(100 * util, 1) + "%") + "</td><td>" +
         n(metric(it, "preemptions")) + "</td><td>" + n(metric(it, "sharing_anomaly", "jobs")) +
         "</td><td class=\"l\">" + esc(it.value("status", "")) +
         (it.contains("error") ? ": " + esc(it.value("error", "")) : "") + "</td></tr>\n";
  }
  h += "</table>\n";

  // The x axis: the first of load, seed, suggested fraction, suggested seed,
  // window with two values or more.
  std::string xname;
  for (const char* a : {"load", "seed", "suggested_fraction", "suggested_seed", "window"}) {
    std::set<std::string> values;
    for (const json& it : items) values.insert(it.value(a, json()).dump());
    if (values.size() > 1) {
      xname = a;
      break;
    }
  }
  if (!xname.empty()) {
    // Categories of x in first-seen order (numbers sorted).
    std::vector<json> xs;
    for (const json& it : items) {
      json v = it.value(xname, json());
      if (std::find(xs.begin(), xs.end(), v) == xs.end()) xs.push_back(v);
    }
    const bool numeric = xname != "window";
    if (numeric)
      std::sort(xs.begin(), xs.end(), [](const json& a, const json& b) {
        return a.is_number() && b.is_number() ? a.get<double>() < b.get<double>()
                                              : a.dump() < b.dump();
      });
    auto xpos = [&](const json& v) -> double {
      if (numeric && v.is_number()) return v.get<double>();
      return static_cast<double>(std::find(xs.begin(), xs.end(), v) - xs.begin());
    };
    // Which other axes vary: they name the lines.
    std::vector<std::string> varying;
    for (const char* a : axes) {
      if (a == xname) continue;
      std::set<std::string> values;
      for (const json& it : items) values.insert(it.value(a, json()).dump());
      if (values.size() > 1 || std::string(a) == "policy") varying.push_back(a);
    }
    auto line_of = [&](const json& it) {
      std::string name;
      for (const auto& a : varying)
        name += (name.empty() ? "" : " ") + (a == "policy" ? "" : a + "=") +
                cell_text(it.value(a, json()));
      return name;
    };
    std::vector<std::string> lines;
    for (const json& it : items) {
      std::string l = line_of(it);
      if (std::find(lines.begin(), lines.end(), l) == lines.end()) lines.push_back(l);
    }
    Axis x;
    x.label = xname == "load"                 ? "load factor"
              : xname == "suggested_fraction" ? "suggested fraction"
              : xname == "suggested_seed"     ? "suggested seed"
                                              : xname;
    x.min = xpos(xs.front());
    x.max = xpos(xs.back());
    if (x.max <= x.min) x.max = x.min + 1;
    for (const json& v : xs) x.ticks.push_back({xpos(v), cell_text(v)});
    struct Metric {
      const char* title;
      std::function<double(const json&)> get;
      bool percent;
    };
    auto overall = [](const char* group, const char* k) {
      return [group, k](const json& it) -> double {
        if (!it.contains("result")) return NAN;
        const json& o = it["result"]["result"]["overall"];
        return o.contains(group) ? o[group].value(k, 0.0) / 3600 : NAN;
      };
    };
    std::vector<Metric> metrics{
        {"queueing delay p95 (hours)", overall("queue_delay_s", "p95"), false},
        {"queueing delay mean (hours)", overall("queue_delay_s", "mean"), false},
        {"JCT p50 (hours)", overall("jct_s", "p50"), false},
        {"GPU utilisation", [](const json& it) { return metric(it, "gpu_utilization"); }, true},
        {"preemptions", [](const json& it) { return metric(it, "preemptions"); }, false},
        {"sharing-anomaly jobs",
         [](const json& it) { return metric(it, "sharing_anomaly", "jobs"); }, false}};
    h += "<h2>Against " + esc(x.label) + "</h2>\n<div class=\"charts\">\n";
    for (const Metric& m : metrics) {
      std::vector<Series> ss;
      double ymax = 0;
      for (size_t li = 0; li < lines.size(); ++li) {
        Series se;
        se.name = lines[li];
        std::string pol;
        std::vector<std::pair<double, double>> pts;
        for (const json& it : items) {
          if (line_of(it) != lines[li]) continue;
          pol = it.value("policy", "");
          double v = m.get(it);
          if (std::isnan(v)) continue;
          ymax = std::max(ymax, v);
          pts.push_back({xpos(it.value(xname, json())), v});
        }
        std::sort(pts.begin(), pts.end());
        se.color = lines.size() <= 4 ? color_of(pol, li) : color_of("", li);
        se.points = std::move(pts);
        ss.push_back(std::move(se));
      }
      h += line_chart(m.title, ss, x, value_axis(m.percent ? 1.0 : ymax, m.title, m.percent), 560,
                      280);
    }
    h += "</div>\n";
  }
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace pai::sim
