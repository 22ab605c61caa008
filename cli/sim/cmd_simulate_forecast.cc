// paictl simulate --from-live CLUSTER [--config NEW] [--horizon 24h]
//                 [--arrivals TRACE | --replay-last 7d]
//
// A forecast from the live cluster (lib/sim/forecast.h): the live inputs are
// read here (HiveD's inspect API, the REST API's job list), the forecast is
// computed by libpai, and printed; --report DIR also writes DIR/report.html
// and DIR/forecast.svg.

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "app.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "hived/cmd_hived_common.h"
#include "hived/inspect.h"
#include "output/output.h"
#include "output/printer.h"
#include "sim/cmd_simulate.h"
#include "sim/forecast.h"
#include "sim/forecast_input.h"
#include "sim/sim_progress.h"
#include "sim/text_input.h"
#include "sim/trace.h"
#include "util/printable.h"
#include "util/strings.h"
#include "util/version.h"

namespace paictl {

namespace {

bool forecast_is_url(const std::string& s) {
  return s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0;
}

void forecast_print_error(const pai::util::Error& e) {
  print_error(e.message);
  if (!e.hint.empty()) std::fprintf(stderr, "  hint: %s\n", pai::util::printable(e.hint).c_str());
}

}  // namespace

void add_forecast_options(Flags& cmd, SimulateOptions& o) {
  cmd.add_option("--from-live", o.from_live,
                 "Forecast from the live state of a registered cluster (or of HiveD at a URL): "
                 "its running groups, waiting jobs and bad nodes; --config is then the proposed "
                 "config")
      ->type_name("CLUSTER|URL");
  cmd.add_option("--horizon", o.horizon, "How far --from-live looks ahead")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd.add_option("--arrivals", o.arrivals,
                 "Jobs that arrive during the forecast: a trace (its first submission is now)")
      ->type_name("TRACE");
  cmd.add_option("--replay-last", o.replay_last,
                 "Jobs that arrive during the forecast: the cluster's own submissions of the last "
                 "DURATION, shifted forward by DURATION (REST API job list)")
      ->type_name("DURATION");
  cmd.add_option("--running-duration", o.running_duration,
                 "How long a running or waiting job runs (default: its user's median run time)")
      ->type_name("DURATION");
}

std::optional<double> validate_horizon(const std::string& text, Usage& u) {
  auto d = pai::sim::parse_duration(pai::util::trim(text));
  if (!d) {
    u.error("--horizon \"" + text + "\" is not a duration", "e.g. 24h, 90m, 7d");
    return std::nullopt;
  }
  if (!(*d > 0)) {
    u.error("--horizon must be above 0, not \"" + text + "\"",
            "a forecast looks ahead from now: e.g. 24h");
    return std::nullopt;
  }
  if (*d > pai::sim::kMaxForecastHorizon) {
    u.error("--horizon \"" + text + "\" is more than a year ahead",
            "a forecast plays today's queue and arrivals: at most 366d");
    return std::nullopt;
  }
  return *d;
}

void validate_forecast(const SimulateOptions& o, Usage& u) {
  validate_horizon(o.horizon, u);
  u.error_if(!o.arrivals.empty() && !o.replay_last.empty(),
             "--arrivals and --replay-last both name the arrivals; give one of them");
  u.error_if(!o.traces.empty(), "--trace is not used with --from-live",
             "give the arrivals with --arrivals TRACE or --replay-last DURATION");
  if (!o.replay_last.empty()) {
    auto d = pai::sim::parse_duration(o.replay_last);
    u.error_if(!d || !(*d > 0) || *d > pai::sim::kMaxForecastHorizon,
               "--replay-last \"" + o.replay_last + "\" is not a duration of 1s to 366d",
               "e.g. --replay-last 7d");
    u.error_if(forecast_is_url(o.from_live),
               "--replay-last reads the cluster's job list: --from-live must name a registered "
               "cluster, not a URL");
  }
  if (!o.running_duration.empty()) {
    auto d = pai::sim::parse_duration(o.running_duration);
    u.error_if(!d || !(*d > 0), "--running-duration \"" + o.running_duration +
                                    "\" is not a duration above 0 (e.g. 6h)");
  }
}

int run_forecast(const SimulateOptions& o, const Globals& g) {
  Usage checked;
  const double horizon = validate_horizon(o.horizon, checked).value();  // validated
  // The report's directory is checked before anything is read or played.
  if (!o.report.empty())
    if (std::string problem = report_dir_problem(o.report); !problem.empty()) {
      print_error("--report: cannot write the report to " + o.report + ": " + problem);
      return kExitUsage;
    }
  pai::sim::ForecastRequest req;
  req.horizon_s = horizon;
  if (!o.config.empty()) {
    auto proposed = load_simulation_cluster(o.config, g);
    if (!proposed) return kExitUsage;
    req.proposed = proposed;
    req.proposed_name = "proposed";
  }
  std::shared_ptr<pai::sim::Trace> arrivals;
  if (!o.arrivals.empty()) {
    arrivals = std::make_shared<pai::sim::Trace>();
    pai::sim::TraceOptions topt;
    topt.format = o.format;
    topt.default_priority = o.priority;
    topt.limit = o.limit;
    pai::sim::TraceError e;
    if (!pai::sim::read_trace({o.arrivals}, topt, *arrivals, e)) {
      print_trace_error(e);
      return kExitUsage;
    }
    arrivals->finish();
    req.arrivals_source = o.arrivals;
  }

  hivedcli::HivedOptions h;
  h.remote.cluster = forecast_is_url(o.from_live) ? std::string() : o.from_live;
  h.hived = forecast_is_url(o.from_live) ? o.from_live : std::string();
  auto conn = hivedcli::connect_hived(h, g);
  if (!conn) return kExitUsage;
  std::optional<double> running_duration;
  if (!o.running_duration.empty()) running_duration = pai::sim::parse_duration(o.running_duration);
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  pai::api::Client* rest = conn->rest ? conn->rest->api.get() : nullptr;
  auto in = pai::sim::read_forecast_input(*conn->client, rest, now, running_duration, 3600);
  if (!in.ok()) {
    print_error("HiveD at " + conn->where + ": " + in.error().message);
    if (!in.error().hint.empty()) std::fprintf(stderr, "  hint: %s\n", in.error().hint.c_str());
    return kExitRemote;
  }
  for (const auto& w : in->warnings) print_warning(w);
  req.current = in->model;
  req.current_name = "current";
  req.state = std::move(in->state);
  req.state.source = "the live HiveD at " + conn->where;
  if (!o.replay_last.empty()) {
    const double window = *pai::sim::parse_duration(o.replay_last);
    arrivals = std::make_shared<pai::sim::Trace>(
        pai::sim::replay_trace(in->jobs, window, now, o.priority));
    req.arrivals_source = "the last " + o.replay_last + " of " + conn->where + "'s submissions";
    for (const auto& [reason, n] : arrivals->skipped)
      print_warning(std::to_string(n) + " submission(s) left out: " + reason);
  }
  req.arrivals = arrivals;
  auto result = pai::sim::forecast(req);
  if (!result.ok()) {
    forecast_print_error(result.error());
    return kExitUsage;
  }
  for (const auto& w : result->warnings) print_warning(w);
  if (is_structured(o.output)) {
    print_document(document("simulationForecast", Json(pai::sim::forecast_json(*result))),
                   o.output);
  } else {
    std::string text = pai::sim::forecast_text(*result);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  if (!o.report.empty()) {
    std::fflush(stdout);
    const pai::sim::ForecastResult& r = *result;
    ReportFiles files = {
        {"report.html", [&] { return pai::sim::forecast_html_report(r, pai::kVersion); }},
        {"forecast.svg", [&] { return pai::sim::forecast_svg(r); }}};
    if (!write_report_files(o.report, files, g.quiet)) return kExitUsage;
  }
  return kExitOk;
}

}  // namespace paictl
