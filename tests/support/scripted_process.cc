#include "support/scripted_process.h"

namespace pai::util {

std::string ProcessCall::command_line() const {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

void ScriptedProcessRunner::on(std::string pattern, ScriptedAnswer answer, int times) {
  on(
      std::move(pattern), [answer](const ProcessRequest&) { return answer; }, times);
}

void ScriptedProcessRunner::on(std::string pattern, Answerer answer, int times) {
  std::lock_guard<std::mutex> lock(mu_);
  rules_.push_back({std::move(pattern), std::move(answer), times});
}

Result<ProcessResult> ScriptedProcessRunner::run(const ProcessRequest& request) {
  ProcessCall call{request.argv, request.program, request.stdin_text, request.env,
                   request.timeout_s};
  const std::string line = call.command_line();
  Answerer answer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(call);
    for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
      if (it->times == 0 || line.find(it->pattern) == std::string::npos) continue;
      if (it->times > 0) --it->times;
      answer = it->answer;
      break;
    }
  }
  int now = ++in_flight_;
  for (int seen = max_in_flight_; now > seen && !max_in_flight_.compare_exchange_weak(seen, now);) {
  }
  ScriptedAnswer a;
  if (answer) {
    a = answer(request);
  } else {
    a.exit_code = 127;
    a.err = "no scripted answer for " + line + "\n";
  }
  --in_flight_;
  if (a.cannot_start) return Error{"cannot start " + request.argv.front() + ": scripted", ""};
  ProcessResult r;
  if (request.capture_out) r.out = a.out;
  if (request.capture_err) r.err = a.err;
  if (request.on_output) {
    if (request.capture_out && !a.out.empty()) request.on_output(OutputStream::Out, a.out);
    if (request.capture_err && !a.err.empty()) request.on_output(OutputStream::Err, a.err);
  }
  if (a.timed_out) {
    r.timed_out = true;
    r.signal = 9;
  } else if (a.signal) {
    r.signal = a.signal;
  } else {
    r.exit_code = a.exit_code;
  }
  return r;
}

std::vector<ProcessCall> ScriptedProcessRunner::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

std::vector<std::string> ScriptedProcessRunner::command_lines() const {
  std::vector<std::string> v;
  for (const auto& c : calls()) v.push_back(c.command_line());
  return v;
}

}  // namespace pai::util
