// paictl job status JOB

#include <cstdio>

#include <CLI/CLI.hpp>

#include "api/client.h"
#include "app.h"
#include "cluster/registry.h"
#include "cmd_job_common.h"
#include "exit_codes.h"
#include "output.h"
#include "printer.h"
#include "util/printable.h"
#include "util/strings.h"

namespace paictl {

namespace {

struct StatusOptions {
  std::string job;
  jobcli::RemoteOptions remote;
  std::string output = "table";
  bool attempts = false;
};

std::string str(const pai::api::Json& j, const char* key, const char* dflt = "-") {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return dflt;
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

jobcli::Json ordered(const pai::api::Json& j) {
  return jobcli::Json::parse(j.dump());
}

int run(const StatusOptions& o, const Globals& g) {
  auto target = jobcli::open_job(o.job, o.remote, g);
  if (!target) return kExitUsage;
  const auto& [conn, user, name, id] = *target;
  auto r = conn.api->get_job(user, name);
  if (!r.ok()) return jobcli::report_api_error(conn.cluster->name, "reading job " + id, *r.error);
  const pai::api::Json& d = *r;
  const pai::api::Json status = d.contains("jobStatus") ? d["jobStatus"] : pai::api::Json::object();
  const pai::api::Json roles = d.contains("taskRoles") && d["taskRoles"].is_object()
                                   ? d["taskRoles"]
                                   : pai::api::Json::object();

  // Attempt history of the tasks that were retried (or of all with --attempts).
  std::map<std::string, pai::api::Json> history;
  int job_attempt = status.contains("attemptId") && status["attemptId"].is_number()
                        ? status["attemptId"].get<int>()
                        : 0;
  int fetched = 0;
  for (auto it = roles.begin(); it != roles.end(); ++it) {
    const auto& tasks =
        it.value().contains("taskStatuses") ? it.value()["taskStatuses"] : pai::api::Json::array();
    for (const auto& t : tasks) {
      int retries = t.contains("retries") && t["retries"].is_number() ? t["retries"].get<int>() : 0;
      if ((!o.attempts && retries == 0) || fetched >= 50) continue;
      int idx =
          t.contains("taskIndex") && t["taskIndex"].is_number() ? t["taskIndex"].get<int>() : 0;
      auto h = conn.api->task_attempts(user, name, job_attempt, it.key(), idx);
      ++fetched;
      if (h.ok()) history[it.key() + "/" + std::to_string(idx)] = *h;
    }
  }

  if (is_structured(o.output)) {
    jobcli::Json j = ordered(d);
    j["cluster"] = conn.cluster->name;
    if (!history.empty()) {
      jobcli::Json hj = jobcli::Json::object();
      for (const auto& [k, v] : history) hj[k] = ordered(v);
      j["taskAttempts"] = hj;
    }
    print_document(document("job", j), o.output);
    return kExitOk;
  }

  std::string out;
  auto field = [&](const std::string& k, const std::string& v) {
    out += k + std::string(13 - std::min<size_t>(12, k.size()), ' ') + v + "\n";
  };
  field("Job:", id + "  (cluster " + conn.cluster->name + ")");
  std::string state = str(status, "state");
  std::string sub = str(status, "subState", "");
  field("State:", state + (sub.empty() ? "" : " (" + sub + ")") + ", attempt " +
                      str(status, "attemptId", "0") + ", retries " + str(status, "retries", "0"));
  field("VC:", str(status, "virtualCluster") + ", " + str(status, "totalGpuNumber", "0") +
                   " GPU, " + str(status, "totalTaskNumber", "0") + " tasks in " +
                   str(status, "totalTaskRoleNumber", "0") + " task roles");
  field("Submitted:",
        jobcli::format_time_ms(status.contains("submissionTime") ? ordered(status["submissionTime"])
                                                                 : nullptr));
  field("Launched:",
        jobcli::format_time_ms(status.contains("launchedTime") ? ordered(status["launchedTime"])
                                                               : nullptr));
  field("Completed:",
        jobcli::format_time_ms(status.contains("completedTime") ? ordered(status["completedTime"])
                                                                : nullptr));
  if (d.contains("tags") && d["tags"].is_array() && !d["tags"].empty()) {
    std::vector<std::string> tags;
    for (const auto& t : d["tags"]) tags.push_back(t.is_string() ? t.get<std::string>() : t.dump());
    field("Tags:", pai::util::join(tags, ", "));
  }
  if (status.contains("appExitCode") && !status["appExitCode"].is_null()) {
    std::string e = "code " + str(status, "appExitCode");
    const auto spec = status.contains("appExitSpec") ? status["appExitSpec"] : pai::api::Json();
    if (spec.is_object()) {
      e += " " + str(spec, "phrase", "") + " (" + str(spec, "type", "?") + ")";
      field("Exit:", e);
      if (spec.contains("reason") && spec["reason"].is_string())
        field("Reason:", spec["reason"].get<std::string>());
      if (spec.contains("solution") && spec["solution"].is_array())
        for (const auto& s : spec["solution"])
          if (s.is_string()) field("Solution:", s.get<std::string>());
    } else {
      field("Exit:", e);
    }
    if (status.contains("appExitDiagnostics") && status["appExitDiagnostics"].is_string())
      field("Diagnostics:", status["appExitDiagnostics"].get<std::string>().substr(0, 300));
  }
  out += "\n";
  Table t({{"TASK ROLE"},
           {"INDEX"},
           {"STATE"},
           {"NODE"},
           {"IP"},
           {"GPUS"},
           {"RETRIES"},
           {"EXIT"},
           {"PORTS"}});
  for (auto it = roles.begin(); it != roles.end(); ++it) {
    const auto& tasks =
        it.value().contains("taskStatuses") ? it.value()["taskStatuses"] : pai::api::Json::array();
    for (const auto& ts : tasks) {
      std::string ports;
      if (ts.contains("containerPorts") && ts["containerPorts"].is_object())
        for (auto p = ts["containerPorts"].begin(); p != ts["containerPorts"].end(); ++p)
          ports += (ports.empty() ? "" : ",") + p.key() + ":" + p.value().dump();
      std::string exit = str(ts, "containerExitCode");
      if (ts.contains("containerExitSpec") && ts["containerExitSpec"].is_object())
        exit += " " + str(ts["containerExitSpec"], "phrase", "");
      t.add({it.key(), str(ts, "taskIndex"), str(ts, "taskState"), str(ts, "containerNodeName"),
             str(ts, "containerIp"), str(ts, "containerGpus"), str(ts, "retries", "0"), exit,
             ports.empty() ? "-" : ports});
    }
  }
  out += render_table(t);
  for (const auto& [task, h] : history) {
    out += "\nattempts of " + task + ":\n";
    if (h.contains("attempts") && h["attempts"].is_array())
      for (const auto& a : h["attempts"])
        out += "  #" + str(a, "attemptId") + " " + str(a, "attemptState") + " on " +
               str(a, "containerNodeName") + ", exit " + str(a, "containerExitCode") + "\n";
  }
  // Reasons, diagnostics, tags and node names come from the server.
  out = pai::util::printable(out, true);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

void add_job_status(CLI::App& parent, Globals& g) {
  auto o = std::make_shared<StatusOptions>();
  CLI::App* cmd = &parent;
  cmd->add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  jobcli::add_remote_flags(cmd, o->remote);
  cmd->add_flag("--attempts", o->attempts,
                "Show the attempt history of every task (default: retried tasks only)");
  add_output_option(*cmd, o->output, g);
  cmd->footer(
      "EXIT STATUS:\n"
      "  0 ok, 2 unknown job or bad usage, 3 the cluster failed\n\n");
  cmd->callback([o, &g]() { g.exit_code = run(*o, g); });
}

}  // namespace

void build_job_status(CLI::App& cmd, Globals& g) {
  add_job_status(cmd, g);
}

}  // namespace paictl
