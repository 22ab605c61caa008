// paictl job logs JOB [--task-role TR] [--index I] [--stream stdout|stderr|all] [--tail]

#include <cstdio>

#include <CLI/CLI.hpp>

#include "api/client.h"
#include "app.h"
#include "cluster/registry.h"
#include "cmd_job_common.h"
#include "exit_codes.h"
#include "http/client.h"
#include "output.h"
#include "printer.h"
#include "util/printable.h"
#include "util/strings.h"

namespace paictl {

namespace {

struct LogsOptions {
  std::string job;
  jobcli::RemoteOptions remote;
  std::string task_role;
  int index = 0;
  int attempt = -1;       // job attempt (default: the latest)
  int task_attempt = -1;  // task attempt (default: the latest)
  std::string stream = "all";
  bool tail = false;
  bool urls = false;
  std::string output = "text";
};

int run(const LogsOptions& o, const Globals& g) {
  auto target = jobcli::open_job(o.job, o.remote, g);
  if (!target) return kExitUsage;
  const auto& [conn, user, name, id] = *target;
  auto d = conn.api->get_job(user, name);
  if (!d.ok()) return jobcli::report_api_error(conn.cluster->name, "reading job " + id, *d.error);
  const auto& roles = d->contains("taskRoles") && (*d)["taskRoles"].is_object()
                          ? (*d)["taskRoles"]
                          : pai::api::Json::object();
  if (roles.empty()) {
    print_error(id + " has no task roles yet");
    return kExitRemote;
  }
  std::string tr = o.task_role;
  if (tr.empty()) tr = roles.begin().key();
  if (!roles.contains(tr)) {
    std::vector<std::string> names;
    for (auto it = roles.begin(); it != roles.end(); ++it) names.push_back(it.key());
    print_error(id + " has no task role \"" + tr +
                "\" (task roles: " + pai::util::join(names, ", ") + ")");
    return kExitUsage;
  }
  const auto& tasks =
      roles[tr].contains("taskStatuses") ? roles[tr]["taskStatuses"] : pai::api::Json::array();
  const pai::api::Json* task = nullptr;
  for (const auto& t : tasks)
    if (t.contains("taskIndex") && t["taskIndex"] == o.index) task = &t;
  if (!task) {
    print_error(id + ": task role " + tr + " has no task " + std::to_string(o.index) + " (it has " +
                std::to_string(tasks.size()) + ")");
    return kExitUsage;
  }
  const auto& st = (*d)["jobStatus"];
  int job_attempt = o.attempt >= 0 ? o.attempt
                    : st.contains("attemptId") && st["attemptId"].is_number()
                        ? st["attemptId"].get<int>()
                        : 0;
  int task_attempt = o.task_attempt >= 0 ? o.task_attempt
                     : task->contains("attemptId") && (*task)["attemptId"].is_number()
                         ? (*task)["attemptId"].get<int>()
                         : 0;
  auto loc =
      conn.api->task_log_locations(user, name, job_attempt, tr, o.index, task_attempt, o.tail);
  if (!loc.ok())
    return jobcli::report_api_error(conn.cluster->name, "finding the logs of " + id, *loc.error);
  const auto& list = loc->contains("locations") && (*loc)["locations"].is_array()
                         ? (*loc)["locations"]
                         : pai::api::Json::array();
  if (o.urls) {
    // The URLs carry a token: show them redacted.
    jobcli::Json j = jobcli::Json::array();
    for (const auto& l : list) {
      std::string n = l.value("name", std::string("?")),
                  u = pai::http::redact_url(l.value("uri", std::string()));
      if (!is_structured(o.output))
        std::printf("%s\t%s\n", pai::util::printable(n).c_str(), pai::util::printable(u).c_str());
      else
        j.push_back({{"name", n}, {"uri", u}});
    }
    if (is_structured(o.output)) print_document(list_document("jobLogUrls", j), o.output);
    return kExitOk;
  }
  std::string uri;
  std::vector<std::string> names;
  for (const auto& l : list) {
    names.push_back(l.value("name", std::string("?")));
    if (l.value("name", std::string()) == o.stream) uri = l.value("uri", std::string());
  }
  if (uri.empty()) {
    print_error(id + ": no " + o.stream +
                " log (the server offers: " + pai::util::join(names, ", ") + ")");
    return kExitRemote;
  }
  auto text = conn.api->fetch_log(uri);
  if (!text.ok())
    return jobcli::report_api_error(conn.cluster->name, "downloading the " + o.stream + " log",
                                    *text.error);
  if (!is_structured(o.output)) {
    std::fwrite(text->data(), 1, text->size(), stdout);
  } else {
    print_document(document("jobLog", Json{{"cluster", conn.cluster->name},
                                           {"job", id},
                                           {"taskRole", tr},
                                           {"index", o.index},
                                           {"jobAttempt", job_attempt},
                                           {"taskAttempt", task_attempt},
                                           {"stream", o.stream},
                                           {"tail", o.tail},
                                           {"content", *text}}),
                   o.output);
  }
  if (g.verbose)
    std::fprintf(stderr, "paictl: %s %s[%d] attempt %d/%d %s: %zu bytes\n", id.c_str(), tr.c_str(),
                 o.index, job_attempt, task_attempt, o.stream.c_str(), text->size());
  return kExitOk;
}

void add_job_logs(CLI::App& parent, Globals& g) {
  auto o = std::make_shared<LogsOptions>();
  CLI::App* cmd = &parent;
  cmd->add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  jobcli::add_remote_flags(cmd, o->remote);
  cmd->add_option("--task-role", o->task_role, "Task role (default: the first)");
  cmd->add_option("--index", o->index, "Task index in the task role")->capture_default_str();
  cmd->add_option("--attempt", o->attempt, "Job attempt (default: the latest)");
  cmd->add_option("--task-attempt", o->task_attempt, "Task attempt (default: the latest)");
  cmd->add_option("--stream", o->stream, "Which log")
      ->check(CLI::IsMember({"stdout", "stderr", "all"}))
      ->capture_default_str();
  cmd->add_flag("--tail", o->tail, "Only the end of the log (the server's tail mode)");
  cmd->add_flag("--urls", o->urls, "Print the log URLs (tokens redacted) instead of the logs");
  add_output_option(*cmd, o->output, g);
  cmd->callback([o, &g]() { g.exit_code = run(*o, g); });
}

}  // namespace

void build_job_logs(CLI::App& cmd, Globals& g) {
  add_job_logs(cmd, g);
}

}  // namespace paictl
