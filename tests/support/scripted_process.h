#pragma once
// A test implementation of util::ProcessRunner: it starts nothing. Calls are
// answered by the rules a test gives, matched on the command line (argv joined
// by spaces, the shell's command included), and every call is recorded with
// its argv, stdin, environment and timeout, so a test asserts on exactly what
// would have run, in which order, and how many ran at once.

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "util/process.h"

namespace pai::util {

struct ScriptedAnswer {
  int exit_code = 0;
  std::string out{}, err{};   // given to on_output too, as one chunk each
  int signal = 0;             // ended by this signal (exit_code is then ignored)
  bool timed_out = false;     // as if the request's timeout had expired
  bool cannot_start = false;  // run() fails: the program could not start
};

// A call as the runner received it.
struct ProcessCall {
  std::vector<std::string> argv;
  std::string program;
  std::string stdin_text;
  std::map<std::string, std::string> env;
  double timeout_s = 0;
  // argv joined by spaces: "/bin/sh -c kubectl -n openpai apply -f -"
  std::string command_line() const;
};

class ScriptedProcessRunner : public ProcessRunner {
 public:
  using Answerer = std::function<ScriptedAnswer(const ProcessRequest&)>;

  // Calls whose command line contains `pattern` ("" matches every call) get
  // `answer`; `times` answers before the rule stops matching (-1: always). A
  // rule added later takes precedence, so a test can override one answer.
  void on(std::string pattern, ScriptedAnswer answer, int times = -1);
  void on(std::string pattern, Answerer answer, int times = -1);

  // A call no rule matches exits 127 with "no scripted answer for ..." on
  // stderr, and is recorded with the others.
  Result<ProcessResult> run(const ProcessRequest& request) override;

  std::vector<ProcessCall> calls() const;
  std::vector<std::string> command_lines() const;
  // The most calls that were running at the same time.
  int max_in_flight() const { return max_in_flight_; }
  int in_flight() const { return in_flight_; }

 private:
  struct Rule {
    std::string pattern;
    Answerer answer;
    int times = -1;
  };
  mutable std::mutex mu_;
  std::vector<Rule> rules_;
  std::vector<ProcessCall> calls_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
};

}  // namespace pai::util
