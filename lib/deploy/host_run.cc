// One host during a run (phase.h): its commands, observations and log; the
// secret masker; the steps phases run.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#include <unistd.h>

#include "deploy/engine.h"
#include "deploy/phase.h"
#include "util/strings.h"

namespace pai::deploy {

// ------------------------------------------------------------------ masker, host

void Masker::add(const std::string& secret) {
  if (secret.size() < 4) return;  // masking "a" everywhere would mangle every line
  std::lock_guard lock(mu_);
  for (const auto& s : secrets_)
    if (s == secret) return;
  secrets_.push_back(secret);
  // Longest first, so a secret that contains another is masked whole.
  std::sort(secrets_.begin(), secrets_.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string Masker::mask(std::string text) const {
  std::lock_guard lock(mu_);
  for (const auto& s : secrets_) {
    size_t pos = 0;
    while ((pos = text.find(s, pos)) != std::string::npos) {
      text.replace(pos, s.size(), "***");
      pos += 3;
    }
  }
  return text;
}

HostRun* RunContext::master() const {
  for (auto* h : hosts)
    if (h->spec().master && !h->spec().other_master) return h;
  return nullptr;
}

void HostRun::log(const std::string& line) {
  if (!log_sink) return;
  log_sink(run_.masker ? run_.masker->mask(line) : line);
}

remote::ExecResult HostRun::sh(const std::string& script, const std::string& input, int timeout_ms,
                               bool secret_output) {
  remote::ExecRequest req;
  bool root = spec_.target.endpoint.user == "root" || spec_.target.endpoint.user.empty();
  // A shell that reads its script from stdin is asked for directly: `exec` means
  // the same to every login shell (sh, bash, zsh, fish), and a `sh -c` around it
  // would only start one shell more on the host.
  if (script == "exec /bin/sh -s")
    req.command = root ? script : "sudo -n /bin/sh -s";
  else
    req.command = (root ? "sh -c " : "sudo -n sh -c ") + util::shell_quote(script);
  req.input = input;
  req.timeout_ms = timeout_ms;
  if (!connection) {
    remote::ExecResult r;
    r.failure = remote::Failure::Channel;
    r.error = "no connection to " + spec_.name;
    return r;
  }
  auto t0 = std::chrono::steady_clock::now();
  remote::ExecResult r;
  {
    std::lock_guard lock(mu_);
    r = connection->exec(req);
  }
  std::fill(req.input.begin(), req.input.end(), '\0');
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (log_sink) {
    std::string text = "$ " + script + "\n";
    if (!input.empty()) text += "(stdin: " + std::to_string(input.size()) + " bytes, not logged)\n";
    if (secret_output)
      text += "(output withheld: it holds a secret)\n";
    else if (!r.out.empty())
      text += r.out + (r.out.back() == '\n' ? "" : "\n");
    if (!r.err.empty()) text += "stderr: " + r.err + (r.err.back() == '\n' ? "" : "\n");
    char tail[96];
    std::snprintf(tail, sizeof tail, "# exit %d after %.0f ms", r.exit_status, ms);
    text += tail;
    if (!r.ok()) text += " (" + r.error + ")";
    log(text);
  }
  return r;
}

remote::ExecResult HostRun::observe_sh(const std::string& script, int timeout_ms,
                                       bool secret_output) {
  return finish_read(script, observe_raw(script, timeout_ms, secret_output), timeout_ms,
                     secret_output);
}

remote::ExecResult HostRun::finish_read(const std::string& script, remote::ExecResult r,
                                        int timeout_ms, bool secret_output) {
  std::string fallback = api_read_fallback(script);
  if (fallback.empty() || !r.ok() || r.exit_status != 0) return r;
  // An API read: its answers as kubectl's List, or kubectl's own read.
  std::string list;
  bool ok = api_read_as_list(r.out, list);
  std::fill(r.out.begin(), r.out.end(), '\0');
  if (ok) {
    r.out = std::move(list);
    return r;
  }
  return observe_raw(kubectl_json_read_script(fallback), timeout_ms, secret_output);
}

std::shared_ptr<const remote::ExecResult> HostRun::observe_shared(const std::string& script,
                                                                  int timeout_ms) {
  auto raw = observations_.find_shared(script);
  if (!raw) {
    uint64_t ticket = observations_.ticket();
    remote::ExecResult r = sh(script, {}, timeout_ms);
    observations_.offer(ticket, script, r);
    raw = observations_.find_shared(script);
    if (!raw) raw = std::make_shared<const remote::ExecResult>(std::move(r));
  }
  return finish_shared(script, std::move(raw));
}

std::shared_ptr<const remote::ExecResult> HostRun::finish_shared(
    const std::string& script, std::shared_ptr<const remote::ExecResult> raw) {
  if (api_read_fallback(script).empty()) return raw;
  // Held while turning, so that the workers that ask at once (64 in parallel)
  // wait for one turn instead of each making its own.
  std::lock_guard lock(list_memo_mu_);
  if (list_memo_raw_ == raw) return list_memo_list_;
  list_memo_list_ = std::make_shared<const remote::ExecResult>(finish_read(script, *raw));
  list_memo_raw_ = std::move(raw);
  return list_memo_list_;
}

remote::ExecResult HostRun::observe_raw(const std::string& script, int timeout_ms,
                                        bool secret_output) {
  remote::ExecResult r;
  if (observations_.find(script, r)) return r;
  uint64_t ticket = observations_.ticket();
  r = sh(script, {}, timeout_ms, secret_output);
  observations_.offer(ticket, script, r);
  return r;
}

remote::ExecResult HostRun::sh_then_read(const std::string& script, const std::string& input,
                                         int timeout_ms) {
  std::vector<std::string> reads = observations_.reads_after();
  if (reads.empty()) return sh(script, input, timeout_ms);
  static std::atomic<uint64_t> serial{0};
  const std::string marker =
      "@@paictl-after-" + std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "-" +
      std::to_string(serial++);
  // The step in a subshell (its `exit` or `set -e` ends only it), its stdin the
  // session's; the reads only after it succeeded.
  std::string whole = "(\n" + script +
                      "\n)\nrc=$?\n[ \"$rc\" = 0 ] || exit \"$rc\"\nprintf '\\n%s\\n' '" + marker +
                      " step-end'\n" + combined_observation_script(reads, marker);
  remote::ExecResult r = sh(whole, input, timeout_ms);
  if (!r.ok() || r.exit_status != 0) return r;
  const std::string end = "\n" + marker + " step-end\n";
  size_t e = r.out.find(end);
  if (e == std::string::npos) return r;
  std::vector<remote::ExecResult> parts;
  if (split_combined_output(r.out.substr(e + end.size()), marker, reads.size(), parts)) {
    std::vector<std::pair<std::string, remote::ExecResult>> got;
    for (size_t k = 0; k < reads.size(); ++k) got.emplace_back(reads[k], std::move(parts[k]));
    observations_.read_after(std::move(got));
  }
  r.out.resize(e);
  return r;
}

util::Error command_failure(const std::string& what, const remote::ExecResult& r) {
  if (!r.ok()) return {what + ": " + r.error, r.hint, util::Error::Kind::Remote};
  std::string err(util::trim(r.err));
  // The last few lines say why; the log has the rest.
  std::vector<std::string> lines;
  for (auto l : util::split(err, '\n'))
    if (!util::trim(l).empty()) lines.emplace_back(util::trim(l));
  if (lines.size() > 3) lines.erase(lines.begin(), lines.end() - 3);
  std::string msg = what + " failed (exit " + std::to_string(r.exit_status) + ")";
  if (!lines.empty()) msg += ": " + util::join(lines, " / ");
  return {msg, "the host's log under .paictl/logs/ has the whole output",
          util::Error::Kind::Remote};
}

util::Result<void> run_step(HostRun& h, const std::string& what, const std::string& script,
                            const std::string& input, int timeout_ms) {
  auto r = h.sh("set -e\n" + script, input, timeout_ms);
  if (!r.ok() || r.exit_status != 0) return command_failure(what, r);
  return {};
}

util::Result<void> run_last_step(HostRun& h, const std::string& what, const std::string& script,
                                 const std::string& input, int timeout_ms) {
  auto r = h.sh_then_read("set -e\n" + script, input, timeout_ms);
  if (!r.ok() || r.exit_status != 0) return command_failure(what, r);
  return {};
}

}  // namespace pai::deploy
