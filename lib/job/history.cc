#include "job/history.h"

#include <algorithm>

namespace pai::job {

namespace {

double ms(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return -1;
  return j[key].get<double>();
}

std::string text(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return {};
  return j[key].get<std::string>();
}

std::optional<long> integer(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<long>();
}

// Exit code, type and phrase of an attempt: the spec's, else the plain fields.
void read_exit(const Json& spec, const Json& fallback, const char* code_key, const char* type_key,
               const char* phrase_key, JobEvent& e) {
  e.exit_code = integer(fallback, code_key);
  e.exit_type = text(fallback, type_key);
  e.exit_phrase = text(fallback, phrase_key);
  if (spec.is_object()) {
    if (!e.exit_code) e.exit_code = integer(spec, "code");
    if (e.exit_type.empty()) e.exit_type = text(spec, "type");
    if (e.exit_phrase.empty()) e.exit_phrase = text(spec, "phrase");
  }
}

bool finished(const std::string& state) {
  return state == "SUCCEEDED" || state == "FAILED" || state == "STOPPED" || state == "Succeeded" ||
         state == "Failed" || state == "Completed";
}

}  // namespace

std::pair<std::string, int> split_task_key(const std::string& key) {
  size_t slash = key.rfind('/');
  if (slash == std::string::npos) return {key, 0};
  int idx = 0;
  for (char c : key.substr(slash + 1))
    if (c >= '0' && c <= '9') idx = idx * 10 + (c - '0');
  return {key.substr(0, slash), idx};
}

std::vector<JobEvent> job_events(const Json& detail, const Json& job_attempts,
                                 const TaskAttempts& tasks) {
  std::vector<JobEvent> out;
  const Json status =
      detail.is_object() && detail.contains("jobStatus") ? detail["jobStatus"] : Json::object();
  auto add = [&](JobEvent e) {
    if (e.time_ms >= 0) out.push_back(std::move(e));
  };
  {
    JobEvent e;
    e.time_ms = ms(status, "submissionTime");
    e.scope = "job";
    e.event = "Submitted";
    add(e);
  }
  if (job_attempts.is_array() && !job_attempts.empty()) {
    for (size_t i = 0; i < job_attempts.size(); ++i) {
      const Json& a = job_attempts[i];
      int idx = integer(a, "attemptIndex").value_or(static_cast<long>(i));
      JobEvent s;
      s.scope = "attempt";
      s.job_attempt = idx;
      s.time_ms = ms(a, "attemptStartedTime");
      s.event = "Started";
      add(s);
      std::string state = text(a, "state");
      double done = ms(a, "attemptCompletedTime");
      if (done >= 0 && (finished(state) || i + 1 < job_attempts.size())) {
        JobEvent c;
        c.scope = "attempt";
        c.job_attempt = idx;
        c.time_ms = done;
        c.event = "Completed";
        c.state = state;
        read_exit(a.contains("appExitSpec") ? a["appExitSpec"] : Json(), a, "exitCode", "exitType",
                  "exitPhrase", c);
        add(c);
        if (i + 1 < job_attempts.size()) {
          JobEvent r = c;
          r.event = "Retried";
          r.state.clear();
          add(r);
        }
      }
    }
  } else {
    // Only the current attempt is known.
    int idx = integer(status, "attemptId").value_or(0);
    JobEvent s;
    s.scope = "attempt";
    s.job_attempt = idx;
    s.time_ms = ms(status, "launchedTime");
    s.event = "Started";
    add(s);
    std::string state = text(status, "state");
    if (finished(state)) {
      JobEvent c;
      c.scope = "attempt";
      c.job_attempt = idx;
      c.time_ms = ms(status, "completedTime");
      c.event = "Completed";
      c.state = state;
      read_exit(status.contains("appExitSpec") ? status["appExitSpec"] : Json(), status,
                "appExitCode", "appExitType", "", c);
      add(c);
    }
  }
  int job_attempt = integer(status, "attemptId").value_or(0);
  for (const auto& [key, t] : tasks) {
    auto [role, index] = split_task_key(key);
    if (!t.is_object() || !t.contains("attempts") || !t["attempts"].is_array()) continue;
    for (const auto& a : t["attempts"]) {
      JobEvent base;
      base.scope = "task";
      base.job_attempt = job_attempt;
      base.task_role = role;
      base.task_index = index;
      base.task_attempt = integer(a, "attemptId").value_or(0);
      base.node = text(a, "containerNodeName");
      JobEvent q = base;
      q.event = "Queued";
      q.time_ms = ms(a, "currentAttemptCreatedTime");
      add(q);
      JobEvent l = base;
      l.event = "Launched";
      l.time_ms = ms(a, "currentAttemptLaunchedTime");
      add(l);
      std::string state = text(a, "attemptState");
      if (finished(state)) {
        JobEvent c = base;
        c.event = "Completed";
        c.state = state;
        c.time_ms = ms(a, "currentAttemptCompletedTime");
        read_exit(a.contains("containerExitSpec") ? a["containerExitSpec"] : Json(), a,
                  "containerExitCode", "", "", c);
        add(c);
      }
    }
  }
  // Time order; at the same time the job before its attempts before its tasks,
  // and within one scope the order they happened in.
  auto rank = [](const JobEvent& e) {
    int r = e.scope == "job" ? 0 : e.scope == "attempt" ? 1 : 2;
    int ev = e.event == "Submitted"   ? 0
             : e.event == "Started"   ? 1
             : e.event == "Queued"    ? 2
             : e.event == "Launched"  ? 3
             : e.event == "Completed" ? 4
                                      : 5;
    return std::make_pair(ev, r);
  };
  std::stable_sort(out.begin(), out.end(), [&](const JobEvent& a, const JobEvent& b) {
    if (a.time_ms != b.time_ms) return a.time_ms < b.time_ms;
    return rank(a) < rank(b);
  });
  return out;
}

std::vector<TaskHistory> task_histories(const TaskAttempts& tasks, double now_ms) {
  std::vector<TaskHistory> out;
  for (const auto& [key, t] : tasks) {
    TaskHistory h;
    std::tie(h.task_role, h.index) = split_task_key(key);
    if (t.is_object() && t.contains("attempts") && t["attempts"].is_array()) {
      for (const auto& a : t["attempts"]) {
        TaskAttempt ta;
        ta.attempt = integer(a, "attemptId").value_or(static_cast<long>(h.attempts.size()));
        ta.state = text(a, "attemptState");
        ta.created_ms = ms(a, "currentAttemptCreatedTime");
        ta.launched_ms = ms(a, "currentAttemptLaunchedTime");
        ta.completed_ms = ms(a, "currentAttemptCompletedTime");
        ta.node = text(a, "containerNodeName");
        JobEvent e;
        read_exit(a.contains("containerExitSpec") ? a["containerExitSpec"] : Json(), a,
                  "containerExitCode", "", "", e);
        ta.exit_code = e.exit_code;
        ta.exit_type = e.exit_type;
        ta.exit_phrase = e.exit_phrase;
        if (ta.created_ms >= 0)
          ta.queued_ms = (ta.launched_ms >= 0    ? ta.launched_ms
                          : ta.completed_ms >= 0 ? ta.completed_ms
                                                 : now_ms) -
                         ta.created_ms;
        if (ta.launched_ms >= 0)
          ta.running_ms = (ta.completed_ms >= 0 ? ta.completed_ms : now_ms) - ta.launched_ms;
        if (ta.queued_ms < 0 && ta.created_ms >= 0) ta.queued_ms = 0;
        if (ta.running_ms < 0 && ta.launched_ms >= 0) ta.running_ms = 0;
        bool failed = ta.state == "FAILED" || ta.state == "Failed" ||
                      (finished(ta.state) && ta.exit_code && *ta.exit_code != 0);
        if (failed) {
          ++h.failures;
          ++h.failures_by_type[ta.exit_type.empty() ? "UNKNOWN" : ta.exit_type];
        }
        h.attempts.push_back(std::move(ta));
      }
    }
    std::sort(h.attempts.begin(), h.attempts.end(),
              [](const TaskAttempt& a, const TaskAttempt& b) { return a.attempt < b.attempt; });
    out.push_back(std::move(h));
  }
  std::sort(out.begin(), out.end(), [](const TaskHistory& a, const TaskHistory& b) {
    return a.task_role != b.task_role ? a.task_role < b.task_role : a.index < b.index;
  });
  return out;
}

}  // namespace pai::job
