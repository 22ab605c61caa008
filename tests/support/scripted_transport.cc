#include "support/scripted_transport.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace pai::testing {

namespace {

// The words of a POSIX sh command line from `pos`, quotes removed: enough for
// the command lines paictl sends ('...' and "..." quoting, backslashes).
std::string unquote_word(const std::string& s, size_t pos) {
  std::string out;
  while (pos < s.size()) {
    char c = s[pos];
    if (c == '\'') {
      size_t end = s.find('\'', pos + 1);
      if (end == std::string::npos) end = s.size();
      out.append(s, pos + 1, end - pos - 1);
      pos = end + 1;
    } else if (c == '"') {
      ++pos;
      while (pos < s.size() && s[pos] != '"') {
        if (s[pos] == '\\' && pos + 1 < s.size()) ++pos;
        out += s[pos++];
      }
      ++pos;
    } else if (c == '\\' && pos + 1 < s.size()) {
      out += s[pos + 1];
      pos += 2;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      break;
    } else {
      out += c;
      ++pos;
    }
  }
  return out;
}

}  // namespace

std::string ScriptedTransport::script_of(const std::string& command, const std::string& input) {
  std::string c = command;
  if (c.starts_with("sudo -n ")) c.erase(0, 8);
  if (c.starts_with("exec ")) c.erase(0, 5);
  if (c == "sh -s" || c == "/bin/sh -s") return input;
  if (c.starts_with("sh -c ")) return unquote_word(c, 6);
  return command;
}

ScriptedTransport& ScriptedTransport::on(std::string pattern, ScriptedAnswer answer,
                                         std::string host) {
  return on(
      std::move(pattern), [answer = std::move(answer)](const ScriptedCall&) { return answer; },
      std::move(host));
}

ScriptedTransport& ScriptedTransport::on(std::string pattern, Handler handler, std::string host) {
  std::lock_guard lock(mu_);
  rules_.push_back({std::move(pattern), std::move(host), std::move(handler)});
  return *this;
}

void ScriptedTransport::unreachable(const std::string& host) {
  std::lock_guard lock(mu_);
  unreachable_.push_back(host);
}

std::vector<ScriptedCall> ScriptedTransport::calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

std::vector<ScriptedCall> ScriptedTransport::calls_to(const std::string& host) const {
  std::vector<ScriptedCall> out;
  for (auto& c : calls())
    if (c.host == host) out.push_back(std::move(c));
  return out;
}

size_t ScriptedTransport::count(const std::string& pattern, const std::string& host) const {
  std::lock_guard lock(mu_);
  return static_cast<size_t>(std::count_if(calls_.begin(), calls_.end(), [&](const auto& c) {
    return (host.empty() || c.host == host) && c.script.find(pattern) != std::string::npos;
  }));
}

void ScriptedTransport::clear_calls() {
  std::lock_guard lock(mu_);
  calls_.clear();
}

remote::ExecResult ScriptedTransport::exec(const remote::Target& target,
                                           const remote::ExecRequest& req) {
  ScriptedCall call{target.endpoint.name, req.command, script_of(req.command, req.input), req.input,
                    req.timeout_ms};
  Handler handler;
  bool down = false;
  {
    std::lock_guard lock(mu_);
    calls_.push_back(call);
    down = std::find(unreachable_.begin(), unreachable_.end(), call.host) != unreachable_.end();
    for (auto it = rules_.rbegin(); !down && it != rules_.rend(); ++it)
      if ((it->host.empty() || it->host == call.host) &&
          call.script.find(it->pattern) != std::string::npos) {
        handler = it->handler;
        break;
      }
  }
  remote::ExecResult r;
  r.logins = 1;  // as SSH: a command of its own opens a session of its own
  if (down) {
    r.failure = remote::Failure::Connect;
    r.error = "connection to " + call.host + " refused";
    return r;
  }
  // The handler runs outside the lock: it may look at the calls.
  ScriptedAnswer a = handler ? handler(call) : fallback;
  r.failure = a.failure;
  r.error = a.error;
  r.hint = a.hint;
  r.out = std::move(a.out);
  r.err = std::move(a.err);
  r.first_output_epoch = a.first_output_epoch;
  if (a.failure == remote::Failure::None) r.exit_status = a.exit_status;
  return r;
}

namespace {
// A kept connection: its first command logs in (as SshTransport's does), the
// others run on that session; after a refusal the next command tries again.
class ScriptedConnection : public remote::Connection {
 public:
  ScriptedConnection(ScriptedTransport& t, remote::Target target)
      : t_(t), target_(std::move(target)) {}
  remote::ExecResult exec(const remote::ExecRequest& request) override {
    std::lock_guard lock(mu_);
    remote::ExecResult r = t_.exec(target_, request);
    r.logins = logged_in_ ? 0 : 1;
    logged_in_ = r.ok();
    return r;
  }

 private:
  ScriptedTransport& t_;
  remote::Target target_;
  std::mutex mu_;
  bool logged_in_ = false;
};
}  // namespace

std::unique_ptr<remote::Connection> ScriptedTransport::connect(const remote::Target& target) {
  ++connections_;
  return std::make_unique<ScriptedConnection>(*this, target);
}

ScriptedTransport::Handler local_shell(std::string dir) {
  auto serial = std::make_shared<std::atomic<uint64_t>>(0);
  return [dir = std::move(dir), serial](const ScriptedCall& call) {
    std::string base = dir + "/" + call.host + "-" + std::to_string(++*serial);
    {
      std::ofstream in(base + ".in");
      in << call.input;
      std::ofstream cmd(base + ".sh");
      cmd << call.command;
    }
    std::string line = "HOST=" + call.host + " DIR=" + dir + " sh " + base + ".sh < " + base +
                       ".in > " + base + ".out 2>/dev/null";
    int st = std::system(line.c_str());
    ScriptedAnswer a;
    a.exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : 255;
    std::ifstream out(base + ".out");
    a.out.assign(std::istreambuf_iterator<char>(out), std::istreambuf_iterator<char>());
    return a;
  };
}

}  // namespace pai::testing
