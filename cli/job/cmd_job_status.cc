// paictl job status JOB [--attempts] [--watch [--interval S]]

#include <cctype>
#include <cstdio>

#include "api/client.h"
#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "hived/inspect.h"
#include "http/client.h"
#include "job/follow.h"
#include "job/history.h"
#include "job/job_file.h"
#include "job/job_target.h"
#include "job/submit.h"
#include "job/waiting.h"
#include "output/json_convert.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/printable.h"
#include "util/strings.h"

namespace paictl {

namespace {

struct StatusOptions {
  std::string job;
  jobcli::RemoteOptions remote;
  std::string output = "table";
  bool attempts = false;
  bool watch = false;
  double interval = 5;
};

std::string str(const pai::api::Json& j, const char* key, const char* dflt = "-") {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return dflt;
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

jobcli::Json ordered(const pai::api::Json& j) {
  return to_ordered(j);
}

// Why a WAITING job waits: HiveD's reason codes and wouldFit on the live
// cells, the kube-scheduler's from the pod events. nullopt for other states.
std::optional<pai::job::WaitingExplanation> waiting_of(const jobcli::Connection& conn,
                                                       const std::string& user,
                                                       const std::string& name,
                                                       const pai::api::Json& d) {
  const pai::api::Json status = d.contains("jobStatus") ? d["jobStatus"] : pai::api::Json::object();
  if (str(status, "state") != "WAITING") return std::nullopt;
  pai::job::JobRequest jr;
  bool have_job = false;
  if (auto text = conn.api->job_config(user, name); text.ok()) {
    auto file = pai::job::JobFile::parse(*text, pai::api::job_id(user, name) + "'s config");
    jr = pai::job::request_of(file);
    if (jr.name.empty()) jr.name = name;
    have_job = true;
  }
  const pai::job::HivedEndpoint e = jobcli::hived_endpoint(conn, 20);
  pai::hived::Client hived(*e.http, e.base, e.token, e.token_host);
  pai::job::WaitingInput in{user, name, have_job ? &jr : nullptr, std::nullopt, {}};
  return pai::job::explain_waiting(in, *conn.api, &hived);
}

std::string waiting_text(const pai::job::WaitingExplanation& w) {
  std::string out;
  auto line = [&](const std::string& k, const std::string& v) {
    out += k + std::string(13 - std::min<size_t>(12, k.size()), ' ') + v + "\n";
  };
  for (size_t i = 0; i < w.reasons.size(); ++i) {
    const auto& r = w.reasons[i];
    const auto& info = pai::hived::reason_info(r.code);
    line(i == 0 ? "Waits:" : "Also:", std::string(info.name) + " (tier " +
                                          std::to_string(info.tier) + ", " +
                                          std::string(info.family) + "): " + r.detail);
    if (!r.hint.empty()) line("", "hint: " + r.hint);
  }
  if (w.reasons.empty())
    line("Waits:", w.hived_unknown.empty() ? std::string("no reason found on the live state")
                                           : "no HiveD verdict: " + w.hived_unknown);
  if (w.would_fit) line("Would fit:", w.would_fit->text);
  return out;
}

}  // namespace

// The attempt answers of the tasks that were retried (or of all with `all`),
// keyed "ROLE/INDEX"; at most 50 requests.
pai::job::TaskAttempts jobcli::fetch_task_attempts(const jobcli::Connection& conn,
                                                   const std::string& user, const std::string& name,
                                                   const pai::api::Json& d, bool all) {
  pai::job::TaskAttempts history;
  const pai::api::Json status = d.contains("jobStatus") ? d["jobStatus"] : pai::api::Json::object();
  const pai::api::Json roles = d.contains("taskRoles") && d["taskRoles"].is_object()
                                   ? d["taskRoles"]
                                   : pai::api::Json::object();
  int job_attempt = status.contains("attemptId") && status["attemptId"].is_number()
                        ? status["attemptId"].get<int>()
                        : 0;
  int fetched = 0;
  for (auto it = roles.begin(); it != roles.end(); ++it) {
    const auto& tasks =
        it.value().contains("taskStatuses") ? it.value()["taskStatuses"] : pai::api::Json::array();
    for (const auto& t : tasks) {
      int retries = t.contains("retries") && t["retries"].is_number() ? t["retries"].get<int>() : 0;
      if ((!all && retries == 0) || fetched >= 50) continue;
      int idx =
          t.contains("taskIndex") && t["taskIndex"].is_number() ? t["taskIndex"].get<int>() : 0;
      auto h = conn.api->task_attempts(user, name, job_attempt, it.key(), idx);
      ++fetched;
      if (h.ok()) history[it.key() + "/" + std::to_string(idx)] = *h;
    }
  }
  return history;
}

namespace {

jobcli::Json history_json(const std::vector<pai::job::TaskHistory>& hs) {
  jobcli::Json out = jobcli::Json::array();
  auto t = [](double v) { return v < 0 ? jobcli::Json(nullptr) : jobcli::Json(v); };
  for (const auto& h : hs) {
    jobcli::Json by_type = jobcli::Json::object();
    for (const auto& [k, v] : h.failures_by_type) by_type[k] = v;
    jobcli::Json attempts = jobcli::Json::array();
    for (const auto& a : h.attempts)
      attempts.push_back(
          {{"attempt", a.attempt},
           {"state", a.state},
           {"node", a.node.empty() ? jobcli::Json(nullptr) : jobcli::Json(a.node)},
           {"createdTime", t(a.created_ms)},
           {"launchedTime", t(a.launched_ms)},
           {"completedTime", t(a.completed_ms)},
           {"queuedMs", t(a.queued_ms)},
           {"runningMs", t(a.running_ms)},
           {"exitCode", a.exit_code ? jobcli::Json(*a.exit_code) : jobcli::Json()},
           {"exitType", a.exit_type.empty() ? jobcli::Json() : jobcli::Json(a.exit_type)},
           {"exitPhrase", a.exit_phrase.empty() ? jobcli::Json() : jobcli::Json(a.exit_phrase)}});
    out.push_back({{"taskRole", h.task_role},
                   {"index", h.index},
                   {"attempts", attempts},
                   {"failures", h.failures},
                   {"failuresByType", by_type}});
  }
  return out;
}

std::string history_text(const std::vector<pai::job::TaskHistory>& hs) {
  std::string out;
  for (const auto& h : hs) {
    out += "\nattempts of " + h.task_role + "[" + std::to_string(h.index) +
           "]: " + std::to_string(h.attempts.size()) + " attempt" +
           (h.attempts.size() == 1 ? "" : "s") + ", " + std::to_string(h.failures) + " failed";
    if (!h.failures_by_type.empty()) {
      std::string types;
      for (const auto& [k, v] : h.failures_by_type)
        types += (types.empty() ? "" : ", ") + k + " " + std::to_string(v);
      out += " (" + types + ")";
    }
    out += "\n";
    Table t({{"ATTEMPT", false, true}, {"STATE"}, {"NODE"}, {"QUEUED"}, {"RAN"}, {"EXIT"}});
    for (const auto& a : h.attempts) {
      std::string exit = a.exit_code ? std::to_string(*a.exit_code) : "-";
      if (!a.exit_phrase.empty()) exit += " " + a.exit_phrase;
      if (!a.exit_type.empty()) exit += " (" + a.exit_type + ")";
      t.add({std::to_string(a.attempt), a.state.empty() ? "-" : a.state,
             a.node.empty() ? "-" : a.node, jobcli::format_duration_ms(a.queued_ms),
             jobcli::format_duration_ms(a.running_ms), exit});
    }
    std::string table = render_table(t);
    for (size_t start = 0; start < table.size();) {
      size_t nl = table.find('\n', start);
      if (nl == std::string::npos) nl = table.size();
      out += "  " + table.substr(start, nl - start) + "\n";
      start = nl + 1;
    }
  }
  return out;
}

// Why a job ended, from REST v2's exit fields: the exit code and its spec
// (phrase, type, reason, solution), what triggered it (which task), the
// messages of the container and the runtime, the diagnostics.
template <class Field>
void exit_text(const pai::api::Json& status, Field field) {
  const auto spec = status.contains("appExitSpec") ? status["appExitSpec"] : pai::api::Json();
  const bool has_code = status.contains("appExitCode") && !status["appExitCode"].is_null();
  const std::string type =
      spec.is_object() ? str(spec, "type", "") : str(status, "appExitType", "");
  if (!has_code && !spec.is_object() && type.empty()) return;
  std::string e = has_code ? "code " + str(status, "appExitCode")
                           : (spec.is_object() ? "code " + str(spec, "code", "?") : "code -");
  if (spec.is_object() && !str(spec, "phrase", "").empty()) e += " " + str(spec, "phrase", "");
  if (!type.empty()) e += " (" + type + ")";
  field("Exit:", e);
  auto text_of = [](const pai::api::Json& v) {
    return v.is_string() ? v.get<std::string>() : v.is_null() ? std::string() : v.dump();
  };
  if (status.contains("appExitTriggerMessage")) {
    std::string trigger = text_of(status["appExitTriggerMessage"]);
    std::string role = str(status, "appExitTriggerTaskRoleName", "");
    std::string index = str(status, "appExitTriggerTaskIndex", "");
    if (!role.empty()) {
      std::string task = "task " + role + (index.empty() ? "" : "[" + index + "]");
      trigger = trigger.empty() ? task : trigger + " (" + task + ")";
    }
    if (!trigger.empty()) field("Trigger:", trigger.substr(0, 300));
  }
  if (spec.is_object()) {
    if (spec.contains("reason") && spec["reason"].is_string())
      field("Reason:", spec["reason"].get<std::string>());
    if (spec.contains("solution") && spec["solution"].is_array())
      for (const auto& s : spec["solution"])
        if (s.is_string()) field("Solution:", s.get<std::string>());
  }
  if (status.contains("appExitMessages") && status["appExitMessages"].is_object()) {
    const auto& m = status["appExitMessages"];
    // The container's last words (its stderr's tail), then the runtime's and the launcher's.
    for (const char* k : {"container", "runtime", "launcher"})
      if (m.contains(k)) {
        std::string msg = text_of(m[k]);
        if (msg.empty() || msg == "{}") continue;
        if (msg.size() > 300) msg = "..." + msg.substr(msg.size() - 297);
        for (char& ch : msg)
          if (ch == '\n') ch = ' ';
        field(std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(k[0])))) +
                  (k + 1) + ":",
              msg);
      }
  }
  if (status.contains("appExitDiagnostics") && status["appExitDiagnostics"].is_string())
    field("Diagnostics:", status["appExitDiagnostics"].get<std::string>().substr(0, 300));
}

std::string status_text(const jobcli::Connection& conn, const std::string& id,
                        const pai::api::Json& d, const pai::job::TaskAttempts& history,
                        bool attempts_view) {
  const pai::api::Json status = d.contains("jobStatus") ? d["jobStatus"] : pai::api::Json::object();
  const pai::api::Json roles = d.contains("taskRoles") && d["taskRoles"].is_object()
                                   ? d["taskRoles"]
                                   : pai::api::Json::object();
  std::string out;
  auto field = [&](const std::string& k, const std::string& v) {
    out += k + std::string(13 - std::min<size_t>(12, k.size()), ' ') + v + "\n";
  };
  field("Job:", id + "  (cluster " + conn.cluster->name + ")");
  std::string state = str(status, "state");
  std::string sub = str(status, "subState", "");
  std::string retry_detail;
  if (status.contains("retryDetails") && status["retryDetails"].is_object() &&
      str(status, "retries", "0") != "0")
    retry_detail = " (user " + str(status["retryDetails"], "user", "0") + ", platform " +
                   str(status["retryDetails"], "platform", "0") + ", resource " +
                   str(status["retryDetails"], "resource", "0") + ")";
  field("State:", state + (sub.empty() ? "" : " (" + sub + ")") + ", attempt " +
                      str(status, "attemptId", "0") + ", retries " + str(status, "retries", "0") +
                      retry_detail);
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
  exit_text(status, field);
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
  (void)attempts_view;
  out += history_text(pai::job::task_histories(history, jobcli::now_ms()));
  // Reasons, diagnostics, tags and node names come from the server.
  return pai::util::printable(out, true);
}

// What a watch without a terminal prints: one line per change of the job or of a task.
std::map<std::string, std::string> watch_state(const pai::api::Json& d) {
  std::map<std::string, std::string> m;
  const pai::api::Json status = d.contains("jobStatus") ? d["jobStatus"] : pai::api::Json::object();
  std::string job = str(status, "state") + " (attempt " + str(status, "attemptId", "0") +
                    ", retries " + str(status, "retries", "0") + ")";
  if (status.contains("appExitCode") && !status["appExitCode"].is_null())
    job += " exit " + str(status, "appExitCode");
  m[""] = job;
  if (d.contains("taskRoles") && d["taskRoles"].is_object())
    for (auto it = d["taskRoles"].begin(); it != d["taskRoles"].end(); ++it) {
      if (!it.value().contains("taskStatuses")) continue;
      for (const auto& ts : it.value()["taskStatuses"]) {
        std::string v = str(ts, "taskState") + " (attempt " + str(ts, "attemptId", "0") + ")";
        if (ts.contains("containerNodeName") && ts["containerNodeName"].is_string())
          v += " on " + ts["containerNodeName"].get<std::string>();
        m[it.key() + "-" + str(ts, "taskIndex")] = v;
      }
    }
  return m;
}

std::string clock_now() {
  return jobcli::format_time_ms(jobcli::Json(jobcli::now_ms()));
}

int watch(const StatusOptions& o, const jobcli::JobTarget& target) {
  const auto& [conn, user, name, id] = target;
  jobcli::catch_interrupt();
  bool tty = is_tty(1);
  std::map<std::string, std::string> last;
  while (true) {
    auto r = conn.api->get_job(user, name);
    if (!r.ok())
      return jobcli::report_api_error(conn.cluster->name, "reading job " + id, r.error());
    const pai::api::Json& d = *r;
    std::string state = d.contains("jobStatus") ? str(d["jobStatus"], "state") : "-";
    if (tty) {
      auto history = jobcli::fetch_task_attempts(conn, user, name, d, o.attempts);
      std::string text = "\033[H\033[2J" + status_text(conn, id, d, history, o.attempts) +
                         "\nevery " + jobcli::format_duration_ms(o.interval * 1000) + ", " +
                         clock_now() + "; Ctrl-C stops\n";
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      auto now = watch_state(d);
      std::string t = clock_now();
      for (const auto& [k, v] : now) {
        auto it = last.find(k);
        if (it != last.end() && it->second == v) continue;
        std::string line = t + "  " + id + "  " + (k.empty() ? "" : k + "  ") + v + "\n";
        line = pai::util::printable(line, true);
        std::fwrite(line.data(), 1, line.size(), stdout);
      }
      last = std::move(now);
    }
    std::fflush(stdout);
    if (jobcli::is_final_state(state)) return kExitOk;
    if (!jobcli::pause_for(o.interval)) {
      if (tty) std::fputs("\n", stdout);
      return kExitOk;
    }
  }
}

int run(const StatusOptions& o, const Globals& g) {
  auto target = jobcli::open_job(o.job, o.remote, g);
  if (!target) return kExitUsage;
  if (o.watch) {
    if (is_structured(o.output)) {
      print_error(
          "--watch prints a table (redrawn on a terminal, one line per change otherwise); "
          "not with -o json/yaml");
      return kExitUsage;
    }
    return watch(o, *target);
  }
  const auto& [conn, user, name, id] = *target;
  auto r = conn.api->get_job(user, name);
  if (!r.ok()) return jobcli::report_api_error(conn.cluster->name, "reading job " + id, r.error());
  const pai::api::Json& d = *r;
  auto history = jobcli::fetch_task_attempts(conn, user, name, d, o.attempts);
  auto waiting = waiting_of(conn, user, name, d);
  if (is_structured(o.output)) {
    jobcli::Json j = ordered(d);
    j["cluster"] = conn.cluster->name;
    if (waiting) j["waiting"] = pai::job::to_json(*waiting);
    if (!history.empty()) {
      jobcli::Json hj = jobcli::Json::object();
      for (const auto& [k, v] : history) hj[k] = ordered(v);
      j["taskAttempts"] = hj;
      j["taskHistory"] = history_json(pai::job::task_histories(history, jobcli::now_ms()));
    }
    print_document(document("job", j), o.output);
    return kExitOk;
  }
  std::string out = status_text(conn, id, d, history, o.attempts);
  if (waiting) {
    // After the job's fields, before the task table.
    std::string why = pai::util::printable(waiting_text(*waiting), true);
    size_t blank = out.find("\n\n");
    out.insert(blank == std::string::npos ? out.size() : blank + 1, why);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

void add_job_status(Flags& parent, Globals& g) {
  auto o = std::make_shared<StatusOptions>();
  Flags* cmd = &parent;
  cmd->add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  jobcli::add_remote_flags(cmd, o->remote);
  cmd->add_flag("--attempts", o->attempts,
                "Show the attempt history of every task (default: retried tasks only): failures "
                "per exit type, queueing and running time of each attempt");
  cmd->add_flag("-w,--watch", o->watch,
                "Look again every --interval until the job ends: redrawn on a terminal, one line "
                "per change otherwise; Ctrl-C stops");
  cmd->add_option("--interval", o->interval, "With --watch: seconds between two looks")
      ->check(Range(0.05, 3600.0))
      ->capture_default_str();
  add_output_option(*cmd, o->output, g);
  cmd->footer(
      "EXIT STATUS:\n"
      "  0 ok, 2 unknown job or bad usage, 3 the cluster failed\n\n");
  define_command(*cmd, g, o, {.run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace

void build_job_status(Flags& cmd, Globals& g) {
  add_job_status(cmd, g);
}

}  // namespace paictl
