#pragma once
// A test implementation of remote::Transport (as http::FakeClient stands in for
// the HTTP client): its hosts answer commands by pattern, it records every
// command it was sent (the host, the command line, the script the host's shell
// would run, the stdin), and it can be told that a host is unreachable or that
// a command fails. No sockets, no shells: the code under test sees the answers
// the test wrote, at once.
//
//   ScriptedTransport t;
//   t.on("dpkg-query", {.out = "pkg_kubeadm=1.30.10-1.1=ii\n"});
//   t.on("kubeadm init", {.err = "preflight failed", .exit_status = 1}, "master");
//   t.unreachable("worker2");
//   ... run phases over t ...
//   EXPECT_TRUE(t.ran("apt-get install", "worker1"));
//
// A pattern is a substring of the script (the command's `sh -c '...'` argument
// unquoted, or the stdin of `exec /bin/sh -s`); the rule added last wins, so a
// test can set a host's usual answers and then override one. A command no rule
// matches gets `fallback` (exit 0, no output).

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "remote/transport.h"

namespace pai::testing {

// One command the transport was sent.
struct ScriptedCall {
  std::string host{};     // the target's endpoint name
  std::string command{};  // the command line as sent
  std::string script{};   // what the host's shell runs (see script_of)
  std::string input{};    // the command's stdin
  int timeout_ms = 0;
};

// What a command gets.
struct ScriptedAnswer {
  std::string out{};
  std::string err{};
  int exit_status = 0;
  remote::Failure failure = remote::Failure::None;  // not None: the command did not run (whole)
  std::string error{};                              // with a failure: why, for the operator
  std::string hint{};
  double first_output_epoch = 0;  // ExecResult's
};

class ScriptedTransport : public remote::Transport {
 public:
  using Handler = std::function<ScriptedAnswer(const ScriptedCall&)>;

  // Commands whose script holds `pattern`, on `host` (any host when empty),
  // get `answer` (or what `handler` makes of the call).
  ScriptedTransport& on(std::string pattern, ScriptedAnswer answer, std::string host = {});
  ScriptedTransport& on(std::string pattern, Handler handler, std::string host = {});
  // Every command on `host` fails as a refused connection.
  void unreachable(const std::string& host);
  // What a command no rule matches gets.
  ScriptedAnswer fallback;

  // Every call so far, in the order they came (from many threads: serialised).
  std::vector<ScriptedCall> calls() const;
  std::vector<ScriptedCall> calls_to(const std::string& host) const;
  // The calls (on `host`, or any) whose script holds `pattern`.
  size_t count(const std::string& pattern, const std::string& host = {}) const;
  bool ran(const std::string& pattern, const std::string& host = {}) const {
    return count(pattern, host) > 0;
  }
  void clear_calls();
  // Kept connections made (Transport::connect), one per login.
  int connections() const { return connections_.load(); }

  remote::ExecResult exec(const remote::Target& target, const remote::ExecRequest& req) override;
  std::unique_ptr<remote::Connection> connect(const remote::Target& target) override;

  // The script a command line runs: the argument of `sh -c ARG` (after `sudo
  // -n`, as deploy::HostRun sends it) unquoted, the stdin of `... sh -s`, else
  // the command itself.
  static std::string script_of(const std::string& command, const std::string& input);

 private:
  struct Rule {
    std::string pattern;
    std::string host;
    Handler handler;
  };
  mutable std::mutex mu_;
  std::vector<Rule> rules_;
  std::vector<std::string> unreachable_;
  std::vector<ScriptedCall> calls_;
  std::atomic<int> connections_{0};
};

// A handler that runs each command for real, in a local sh (the "host" is
// only a name the scripts see as $HOST; $DIR is `dir`, where the command, its
// stdin and its output are kept as HOST-N.sh, .in, .out): for the tests where
// the scripts paictl writes must meet a real shell. Its stderr is dropped.
//   t.on("", local_shell(dir));
ScriptedTransport::Handler local_shell(std::string dir);

}  // namespace pai::testing
