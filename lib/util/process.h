#pragma once
// Running another program, behind one interface, so that code which starts
// processes (hived apply's push and restart commands, a sweep's worker pool)
// runs in tests without starting any: tests/support's ScriptedProcessRunner
// answers by argv pattern and records every call.
//
// A program runs from an argv, without a shell unless the request asks for one
// (ProcessRequest::shell), with a text on its stdin, its stdout and stderr
// captured (and handed to `on_output` as they arrive) or shared with this
// process, and an optional timeout after which it is killed.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace pai::util {

enum class OutputStream { Out, Err };

struct ProcessRequest {
  // argv[0] is the program's name; it is found on PATH unless it has a '/'.
  std::vector<std::string> argv{};
  // The file to run when it is not argv[0] (e.g. /proc/self/exe): argv[0] is
  // then only the name the program sees.
  std::string program{};
  std::string stdin_text{};  // the whole of its stdin (empty: an empty stdin)
  std::map<std::string, std::string>
      env{};             // added to (or replacing in) this process's environment
  double timeout_s = 0;  // killed after this long; <= 0: no limit
  // Captured: kept in the result and given to on_output as it arrives.
  // Inherited: the child writes to this process's stdout or stderr itself.
  bool capture_out = true;
  bool capture_err = true;
  std::function<void(OutputStream, std::string_view)> on_output{};

  // /bin/sh -c COMMAND: a command line a user wrote (--push-command).
  static ProcessRequest shell(std::string command);
};

struct ProcessResult {
  int exit_code = -1;      // when it exited; -1 otherwise
  int signal = 0;          // the signal that ended it, when one did
  bool timed_out = false;  // killed after the request's timeout
  std::string out, err;    // captured output
  bool exited() const { return exit_code >= 0; }
  bool succeeded() const { return exit_code == 0; }
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Runs it to its end. An error only when it could not start (no such
  // program, no pipes); a program that fails is a result with its status.
  virtual Result<ProcessResult> run(const ProcessRequest& request) = 0;
  // posix_spawn, pipes and poll; safe to call from several threads at once.
  static ProcessRunner& real();
};

}  // namespace pai::util
