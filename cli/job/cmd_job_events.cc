// paictl job events JOB: state transitions, retries and exit specs in time order.

#include <cstdio>

#include "api/client.h"
#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "job/follow.h"
#include "job/history.h"
#include "job/job_target.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/printable.h"

namespace paictl {

namespace {

struct EventsOptions {
  std::string job;
  jobcli::RemoteOptions remote;
  std::string output = "table";
};

std::string where(const pai::job::JobEvent& e) {
  if (e.scope == "job") return "job";
  if (e.scope == "attempt") return "attempt " + std::to_string(e.job_attempt);
  return e.task_role + "[" + std::to_string(e.task_index) + "] #" + std::to_string(e.task_attempt);
}

std::string what(const pai::job::JobEvent& e) {
  std::string s;
  if (!e.state.empty()) s = e.state;
  if (e.exit_code) s += std::string(s.empty() ? "" : ", ") + "exit " + std::to_string(*e.exit_code);
  if (!e.exit_phrase.empty()) s += " " + e.exit_phrase;
  if (!e.exit_type.empty()) s += " (" + e.exit_type + ")";
  if (e.event == "Retried") s = "after " + (e.exit_type.empty() ? "a failure" : e.exit_type);
  if (e.event == "Launched" && !e.node.empty()) s = "on " + e.node;
  return s.empty() ? "-" : s;
}

int run(const EventsOptions& o, const Globals& g) {
  auto target = jobcli::open_job(o.job, o.remote, g);
  if (!target) return kExitUsage;
  const auto& [conn, user, name, id] = *target;
  auto d = conn.api->get_job(user, name);
  if (!d.ok()) return jobcli::report_api_error(conn.cluster->name, "reading job " + id, d.error());
  // The job-attempts route is deprecated upstream: without it only the current
  // attempt is known (said on stderr).
  pai::api::Json attempts;
  auto a = conn.api->job_attempts(user, name);
  if (a.ok()) {
    attempts = *a;
  } else if (a.error().kind == pai::api::Error::Kind::Http && a.error().status == 404) {
    if (!g.quiet)
      std::fprintf(stderr,
                   "paictl: %s: the cluster has no job-attempts route; earlier job attempts are "
                   "not shown\n",
                   conn.cluster->name.c_str());
  } else {
    return jobcli::report_api_error(conn.cluster->name, "reading the attempts of " + id, a.error());
  }
  auto tasks = jobcli::fetch_task_attempts(conn, user, name, *d, true);
  auto events = pai::job::job_events(*d, attempts, tasks);
  if (is_structured(o.output)) {
    jobcli::Json items = jobcli::Json::array();
    for (const auto& e : events) {
      jobcli::Json j = {{"time", e.time_ms}, {"scope", e.scope}, {"event", e.event}};
      if (e.job_attempt >= 0) j["jobAttempt"] = e.job_attempt;
      if (!e.task_role.empty()) {
        j["taskRole"] = e.task_role;
        j["taskIndex"] = e.task_index;
        j["taskAttempt"] = e.task_attempt;
      }
      if (!e.state.empty()) j["state"] = e.state;
      if (e.exit_code) j["exitCode"] = *e.exit_code;
      if (!e.exit_type.empty()) j["exitType"] = e.exit_type;
      if (!e.exit_phrase.empty()) j["exitPhrase"] = e.exit_phrase;
      if (!e.node.empty()) j["node"] = e.node;
      items.push_back(j);
    }
    jobcli::Json doc = list_document("jobEvents", items);
    doc["cluster"] = conn.cluster->name;
    doc["job"] = id;
    print_document(doc, o.output);
    return kExitOk;
  }
  const auto& st = (*d)["jobStatus"];
  std::string head = id + "  (cluster " + conn.cluster->name + ")";
  if (st.is_object()) {
    head += ": " + st.value("state", std::string("?"));
    if (st.contains("retries") && st["retries"].is_number()) {
      head += ", retries " + st["retries"].dump();
      if (st.contains("retryDetails") && st["retryDetails"].is_object()) {
        const auto& rd = st["retryDetails"];
        head += " (user " + rd.value("user", pai::api::Json(0)).dump() + ", platform " +
                rd.value("platform", pai::api::Json(0)).dump() + ", resource " +
                rd.value("resource", pai::api::Json(0)).dump() + ")";
      }
    }
  }
  Table t({{"TIME"}, {"WHERE"}, {"EVENT"}, {"DETAIL"}});
  for (const auto& e : events)
    t.add({jobcli::format_time_ms(jobcli::Json(e.time_ms)), where(e), e.event, what(e)});
  std::string out = head + "\n\n" + render_table(t);
  out = pai::util::printable(out, true);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace

void build_job_events(Flags& cmd, Globals& g) {
  auto o = std::make_shared<EventsOptions>();
  cmd.add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  jobcli::add_remote_flags(&cmd, o->remote);
  add_output_option(cmd, o->output, g);
  cmd.footer(
      "Built from the job status, the job attempts and each task's attempts (REST API v2).\n\n"
      "EXIT STATUS:\n"
      "  0 ok, 2 unknown job or bad usage, 3 the cluster failed\n\n");
  define_command(cmd, g, o, {.run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace paictl
