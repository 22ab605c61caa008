// paictl job logs JOB [--task-role TR] [--index I] [--stream stdout|stderr|all] [--tail]
//                     [-f [--all-tasks] [--interval S]]

#include <cstdio>
#include <set>

#include "api/client.h"
#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "http/client.h"
#include "job/follow.h"
#include "job/job_target.h"
#include "output/output.h"
#include "output/printer.h"
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
  bool follow = false;
  bool all_tasks = false;
  double interval = 2;
  int max_drops = 10;
  std::string output = "text";
};

// One task whose log is followed.
struct Followed {
  std::string role;
  int index = 0;
  std::string prefix;  // "task-0 | " when several tasks are followed
  int attempt = -1;    // the task attempt whose log is read
  std::string uri;     // its log URL (re-asked after a failure)
  uint64_t offset = 0;
  std::string partial;  // the last line, until its newline comes
  bool done = false;
  bool said_waiting = false;
};

void emit(Followed& f, const std::string& data, bool flush_partial) {
  f.partial += data;
  std::string out;
  size_t start = 0;
  for (size_t nl; (nl = f.partial.find('\n', start)) != std::string::npos; start = nl + 1)
    out += f.prefix + f.partial.substr(start, nl - start + 1);
  f.partial.erase(0, start);
  if (flush_partial && !f.partial.empty()) {
    out += f.prefix + f.partial + "\n";
    f.partial.clear();
  }
  if (!out.empty()) {
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
  }
}

// Follows the logs until every followed task has ended and its log is read to
// the end. Transport failures (a dropped connection) resume at the last offset.
int follow(const LogsOptions& o, const Globals& g, const jobcli::JobTarget& target,
           const pai::api::Json& first) {
  const auto& conn = target.conn;
  const std::string& id = target.id;
  std::vector<Followed> tasks;
  const auto& roles = first["taskRoles"];
  std::set<std::string> role_names;
  for (auto it = roles.begin(); it != roles.end(); ++it) {
    if (!o.task_role.empty() && it.key() != o.task_role) continue;
    const auto& ts =
        it.value().contains("taskStatuses") ? it.value()["taskStatuses"] : pai::api::Json::array();
    for (const auto& t : ts) {
      int idx =
          t.contains("taskIndex") && t["taskIndex"].is_number() ? t["taskIndex"].get<int>() : 0;
      if (!o.all_tasks && idx != o.index) continue;
      Followed f;
      f.role = it.key();
      f.index = idx;
      tasks.push_back(f);
      role_names.insert(it.key());
    }
    if (!o.all_tasks) break;
  }
  if (tasks.empty()) {
    print_error(id + ": no task to follow");
    return kExitUsage;
  }
  if (tasks.size() > 1)
    for (auto& f : tasks)
      f.prefix = (role_names.size() > 1 ? f.role : std::string("task")) + "-" +
                 std::to_string(f.index) + " | ";
  jobcli::catch_interrupt();
  pai::api::Json d = first;
  int drops = 0;
  std::string job_state;
  while (true) {
    const auto& st = d["jobStatus"];
    job_state = st.is_object() ? st.value("state", std::string()) : std::string();
    int job_attempt = st.is_object() && st.contains("attemptId") && st["attemptId"].is_number()
                          ? st["attemptId"].get<int>()
                          : 0;
    bool job_final = jobcli::is_final_state(job_state);
    bool failed_now = false;
    for (auto& f : tasks) {
      if (f.done) continue;
      const pai::api::Json* task = nullptr;
      if (d["taskRoles"].contains(f.role))
        for (const auto& t : d["taskRoles"][f.role]["taskStatuses"])
          if (t.contains("taskIndex") && t["taskIndex"] == f.index) task = &t;
      std::string tstate = task ? task->value("taskState", std::string()) : std::string();
      int attempt = task && task->contains("attemptId") && (*task)["attemptId"].is_number()
                        ? (*task)["attemptId"].get<int>()
                        : 0;
      if (attempt != f.attempt) {
        if (f.attempt >= 0) {
          emit(f, "", true);
          if (!g.quiet)
            std::fprintf(stderr, "paictl: %s %s[%d]: attempt %d started\n", id.c_str(),
                         f.role.c_str(), f.index, attempt);
        }
        f.attempt = attempt;
        f.uri.clear();
        f.offset = 0;
      }
      bool final = job_final || jobcli::is_final_state(tstate);
      if (f.uri.empty()) {
        auto loc = conn.api->task_log_locations(target.user, target.name, job_attempt, f.role,
                                                f.index, f.attempt, false);
        if (!loc.ok()) {
          if (loc.error().code == "NoTaskLogError" && !final) {
            if (!f.said_waiting && !g.quiet)
              std::fprintf(stderr, "paictl: %s %s[%d] has no log yet (%s); waiting\n", id.c_str(),
                           f.role.c_str(), f.index, tstate.empty() ? "?" : tstate.c_str());
            f.said_waiting = true;
            continue;
          }
          if (loc.error().kind == pai::api::Error::Kind::Transport && ++drops <= o.max_drops) {
            failed_now = true;
            continue;
          }
          return jobcli::report_api_error(conn.cluster->name, "finding the logs of " + id,
                                          loc.error());
        }
        for (const auto& l : (*loc)["locations"])
          if (l.value("name", std::string()) == o.stream) f.uri = l.value("uri", std::string());
        if (f.uri.empty()) {
          print_error(id + ": no " + o.stream + " log");
          return kExitRemote;
        }
      }
      auto chunk = conn.api->fetch_log_from(f.uri, f.offset);
      if (!chunk.ok()) {
        if (chunk.error().kind == pai::api::Error::Kind::Transport && ++drops <= o.max_drops) {
          // Resume from the same offset; the URL is asked for again (its token may be new).
          if (!g.quiet)
            std::fprintf(stderr, "paictl: %s %s[%d]: %s; resuming at byte %llu\n", id.c_str(),
                         f.role.c_str(), f.index, chunk.error().summary().c_str(),
                         static_cast<unsigned long long>(f.offset));
          f.uri.clear();
          failed_now = true;
          continue;
        }
        return jobcli::report_api_error(conn.cluster->name, "reading the log of " + id,
                                        chunk.error());
      }
      if (chunk->whole && f.offset > chunk->next_offset) {
        // The log shrank (rotated): start over.
        emit(f, "", true);
      }
      f.offset = chunk->next_offset;
      emit(f, chunk->data, false);
      if (final && chunk->data.empty()) {
        emit(f, "", true);
        f.done = true;
      }
    }
    if (!failed_now) drops = 0;
    bool all_done = true;
    for (const auto& f : tasks) all_done &= f.done;
    if (all_done) break;
    if (!jobcli::pause_for(failed_now ? std::min(o.interval, 0.5) : o.interval)) {
      for (auto& f : tasks) emit(f, "", true);
      return kExitOk;  // Ctrl-C: the user ends the follow
    }
    auto r = conn.api->get_job(target.user, target.name);
    if (!r.ok()) {
      if (r.error().kind == pai::api::Error::Kind::Transport && ++drops <= o.max_drops) continue;
      return jobcli::report_api_error(conn.cluster->name, "reading job " + id, r.error());
    }
    if (r->contains("taskRoles") && (*r)["taskRoles"].is_object() && r->contains("jobStatus"))
      d = *r;
  }
  if (!g.quiet) std::fprintf(stderr, "paictl: %s %s\n", id.c_str(), job_state.c_str());
  return job_state == "SUCCEEDED" || !jobcli::is_final_state(job_state) ? kExitOk : kExitFindings;
}

// The usage errors before a cluster is asked.
void validate_job_logs(const LogsOptions& o, Usage& u) {
  u.error_if(o.follow && (is_structured(o.output) || o.urls || o.tail),
             "--follow prints the log as it grows: not with -o json/yaml, --urls or --tail");
}

int run(const LogsOptions& o, const Globals& g) {
  auto target = jobcli::open_job(o.job, o.remote, g);
  if (!target) return kExitUsage;
  const auto& [conn, user, name, id] = *target;
  auto d = conn.api->get_job(user, name);
  if (!d.ok()) return jobcli::report_api_error(conn.cluster->name, "reading job " + id, d.error());
  const auto& roles = d->contains("taskRoles") && (*d)["taskRoles"].is_object()
                          ? (*d)["taskRoles"]
                          : pai::api::Json::object();
  if (roles.empty()) {
    print_error(id + " has no task roles yet");
    return kExitRemote;
  }
  if (o.follow) {
    if (!o.task_role.empty() && !roles.contains(o.task_role)) {
      print_error(id + " has no task role \"" + o.task_role + "\"");
      return kExitUsage;
    }
    return follow(o, g, *target, *d);
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
    return jobcli::report_api_error(conn.cluster->name, "finding the logs of " + id, loc.error());
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
                                    text.error());
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

void add_job_logs(Flags& parent, Globals& g) {
  auto o = std::make_shared<LogsOptions>();
  Flags* cmd = &parent;
  cmd->add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  jobcli::add_remote_flags(cmd, o->remote);
  cmd->add_option("--task-role", o->task_role, "Task role (default: the first)");
  cmd->add_option("--index", o->index, "Task index in the task role")->capture_default_str();
  cmd->add_option("--attempt", o->attempt, "Job attempt (default: the latest)");
  cmd->add_option("--task-attempt", o->task_attempt, "Task attempt (default: the latest)");
  cmd->add_option("--stream", o->stream, "Which log")
      ->check(IsMember({"stdout", "stderr", "all"}))
      ->capture_default_str();
  cmd->add_flag("--tail", o->tail, "Only the end of the log (the server's tail mode)");
  cmd->add_flag("--urls", o->urls, "Print the log URLs (tokens redacted) instead of the logs");
  cmd->add_flag("-f,--follow", o->follow,
                "Print the log as it grows until the task ends (Ctrl-C stops); a dropped "
                "connection resumes at the last byte read");
  cmd->add_flag("--all-tasks", o->all_tasks,
                "With -f: every task (of --task-role, else of all task roles), each line "
                "prefixed 'task-N | ' (or 'ROLE-N | ' with several task roles)");
  cmd->add_option("--interval", o->interval, "With -f: seconds between two reads")
      ->check(Range(0.05, 3600.0))
      ->capture_default_str();
  cmd->footer(
      "EXIT STATUS:\n"
      "  0 ok (with -f: the job succeeded, or Ctrl-C), 1 with -f: the job failed or was stopped,\n"
      "  2 bad usage or unknown job/task, 3 the cluster failed\n\n");
  add_output_option(*cmd, o->output, g);
  define_command(*cmd, g, o, {.validate = validate_job_logs, .run = [](const auto& o, Globals& g) {
                                return run(o, g);
                              }});
}

}  // namespace

void build_job_logs(Flags& cmd, Globals& g) {
  add_job_logs(cmd, g);
}

}  // namespace paictl
