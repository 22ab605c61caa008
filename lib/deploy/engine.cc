#include "deploy/engine.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "remote/executor.h"
#include "util/strings.h"
#include "util/time.h"

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
    if (h->spec().master) return h;
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

namespace {
constexpr const char* kKubectlReadGuard =
    "[ -f /etc/kubernetes/admin.conf ] || { echo '{}'; exit 0; }\n";
}  // namespace

bool is_cluster_read(const std::string& script) {
  return script.starts_with(kKubectlReadGuard);
}

std::string kubectl_json_read_script(const std::string& args) {
  return std::string(kKubectlReadGuard) + kKubectl + " " + args +
         " --request-timeout=20s 2>/dev/null || echo '{}'";
}

namespace {
constexpr const char* kApiReadMark = "# paictl API read; else kubectl ";
constexpr const char* kApiStatus = "@@paictl-api ";
constexpr const char* kApiUnavailable = "@@paictl-api-unavailable";
}  // namespace

std::string api_access_script() {
  // admin.conf's first server, CA and client certificate, read with built-ins;
  // pai_api=1 where they and curl and base64 are there.
  return "pai_s=; pai_a=; pai_c=; pai_k=; pai_api=\n"
         "while IFS= read -r l || [ -n \"$l\" ]; do\n"
         "  l=${l#\"${l%%[![:space:]]*}\"}\n"
         "  case $l in\n"
         "    server:*) [ -n \"$pai_s\" ] || pai_s=${l#server:} ;;\n"
         "    certificate-authority-data:*) [ -n \"$pai_a\" ] || pai_a=${l#*:} ;;\n"
         "    client-certificate-data:*) [ -n \"$pai_c\" ] || pai_c=${l#*:} ;;\n"
         "    client-key-data:*) [ -n \"$pai_k\" ] || pai_k=${l#*:} ;;\n"
         "  esac\n"
         "done < /etc/kubernetes/admin.conf\n"
         "pai_s=${pai_s# }; pai_s=${pai_s%/}; pai_a=${pai_a# }; pai_c=${pai_c# }; pai_k=${pai_k# "
         "}\n"
         "[ -n \"$pai_s\" ] && [ -n \"$pai_a\" ] && [ -n \"$pai_c\" ] && [ -n \"$pai_k\" ] &&\n"
         "  command -v curl >/dev/null 2>&1 && command -v base64 >/dev/null 2>&1 && pai_api=1\n";
}

std::string api_curl(const std::string& args) {
  // Each credential decoded onto its own pipe (a here-document) that curl opens
  // as /dev/fd/N: never in argv or a file. One connection for every URL, so the
  // pipes are read once.
  return "curl -sS --max-time 20 --cacert /dev/fd/3 --cert /dev/fd/4 --key /dev/fd/5 " + args +
         " 3<<PAI_A 4<<PAI_C 5<<PAI_K\n"
         "$(printf '%s' \"$pai_a\" | base64 -d)\n"
         "PAI_A\n"
         "$(printf '%s' \"$pai_c\" | base64 -d)\n"
         "PAI_C\n"
         "$(printf '%s' \"$pai_k\" | base64 -d)\n"
         "PAI_K\n";
}

std::string api_json_read_script(const std::vector<std::string>& paths,
                                 const std::string& kubectl_args) {
  std::string urls;
  for (const auto& p : paths) urls += " \"$pai_s\"" + util::shell_quote(p);
  return std::string(kKubectlReadGuard) + kApiReadMark + kubectl_args + "\n" + api_access_script() +
         "[ -n \"$pai_api\" ] || { echo '" + kApiUnavailable +
         "'; exit 0; }\n"
         "{\n" +
         api_curl("-w '\\n" + std::string(kApiStatus) + "%{http_code}\\n'" + urls) + "} || echo '" +
         kApiUnavailable + "'\n";
}

std::string api_read_fallback(const std::string& script) {
  const std::string head = std::string(kKubectlReadGuard) + kApiReadMark;
  if (!script.starts_with(head)) return {};
  size_t nl = script.find('\n', head.size());
  return script.substr(head.size(), nl == std::string::npos ? std::string::npos : nl - head.size());
}

bool api_read_as_list(const std::string& output, std::string& out) {
  std::string_view o = util::trim(output);
  if (o == "{}") {  // no admin.conf yet: no cluster, as the kubectl read says
    out = "{}";
    return true;
  }
  if (o.find(kApiUnavailable) != std::string_view::npos) return false;
  nlohmann::json items = nlohmann::json::array();
  size_t pos = 0, answers = 0;
  const std::string status = std::string("\n") + kApiStatus;
  std::string_view all(output);
  while (pos < all.size()) {
    size_t at = all.find(status, pos);
    if (at == std::string_view::npos) {
      if (!util::trim(all.substr(pos)).empty()) return false;  // a cut answer
      break;
    }
    std::string_view body = all.substr(pos, at - pos);
    size_t code_at = at + status.size();
    size_t eol = all.find('\n', code_at);
    std::string_view code =
        all.substr(code_at, eol == std::string_view::npos ? std::string_view::npos : eol - code_at);
    pos = eol == std::string_view::npos ? all.size() : eol + 1;
    ++answers;
    if (code == "404") continue;  // not there: left out, as --ignore-not-found
    if (code != "200") return false;
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (!j.is_object()) return false;
    std::string kind = j.value("kind", "");
    if (kind.size() > 4 && kind.ends_with("List") && j.contains("items") && j["items"].is_array()) {
      // The API server's lists leave their items' kind out; kubectl fills it in.
      std::string item_kind = kind.substr(0, kind.size() - 4);
      std::string api_version = j.value("apiVersion", "");
      for (auto& i : j["items"]) {
        if (!i.is_object()) continue;
        if (!i.contains("kind")) i["kind"] = item_kind;
        if (!i.contains("apiVersion") && !api_version.empty()) i["apiVersion"] = api_version;
        items.push_back(std::move(i));
      }
    } else if (!kind.empty()) {
      items.push_back(std::move(j));
    } else {
      return false;
    }
  }
  if (answers == 0) return false;
  nlohmann::json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
  out = list.dump();
  return true;
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

Phase::~Phase() = default;
ReadsAhead::~ReadsAhead() = default;
CleansUp::~CleansUp() = default;

bool Phase::runs_on(const HostSpec& host) const {
  switch (traits_.hosts) {
    case PhaseTraits::Hosts::All:
      return true;
    case PhaseTraits::Hosts::Master:
      return host.master;
    case PhaseTraits::Hosts::AllButMaster:
      return !host.master;
  }
  return true;
}

bool phase_runs(const Phase& p, const HostSpec& h) {
  return p.runs_on(h) && (h.selected || p.traits().cluster_scope);
}

util::Result<void> verify_applied(Phase& phase, HostRun& host) {
  std::vector<std::string> needs;
  util::Result<void> s = phase.observe(host, needs);
  if (!s.ok()) return s;
  if (!needs.empty())
    return util::Error{"still missing after applying: " + util::join(needs, "; "), ""};
  return s;
}

// ------------------------------------------------------------------ results

std::string_view to_string(Event::Kind k) {
  switch (k) {
    case Event::Kind::HostConnected:
      return "connected";
    case Event::Kind::HostLocked:
      return "locked";
    case Event::Kind::PhaseStart:
      return "start";
    case Event::Kind::PhaseUpToDate:
      return "up-to-date";
    case Event::Kind::PhaseNeeds:
      return "needs";
    case Event::Kind::PhaseApplied:
      return "applied";
    case Event::Kind::PhaseFailed:
      return "failed";
    case Event::Kind::PhaseSkipped:
      return "skipped";
    case Event::Kind::CleanupStart:
      return "cleanup";
    case Event::Kind::CleanupDone:
      return "cleaned";
    case Event::Kind::Interrupted:
      return "interrupted";
    case Event::Kind::Note:
      return "note";
  }
  return "note";
}

std::string_view to_string(PhaseResult::State s) {
  switch (s) {
    case PhaseResult::State::UpToDate:
      return "up-to-date";
    case PhaseResult::State::Planned:
      return "planned";
    case PhaseResult::State::Changed:
      return "changed";
    case PhaseResult::State::Failed:
      return "failed";
    case PhaseResult::State::Skipped:
      return "skipped";
    case PhaseResult::State::NotApplicable:
      return "not-applicable";
  }
  return "skipped";
}

bool HostResult::failed() const {
  if (!error.empty()) return true;
  for (const auto& p : phases)
    if (p.state == PhaseResult::State::Failed) return true;
  return false;
}

bool HostResult::changed() const {
  for (const auto& p : phases)
    if (p.state == PhaseResult::State::Changed || p.state == PhaseResult::State::Planned)
      return true;
  return false;
}

bool RunResult::ok() const {
  for (const auto& h : hosts)
    if (h.failed()) return false;
  return true;
}

bool RunResult::changed() const {
  for (const auto& h : hosts)
    if (h.changed()) return true;
  return false;
}

nlohmann::json RunResult::to_json() const {
  nlohmann::json hs = nlohmann::json::array();
  for (const auto& h : hosts) {
    nlohmann::json ps = nlohmann::json::array();
    for (const auto& p : h.phases) {
      nlohmann::json pj = {{"phase", p.phase}, {"state", to_string(p.state)}, {"needs", p.needs}};
      if (!p.error.empty()) pj["error"] = p.error;
      if (!p.hint.empty()) pj["hint"] = p.hint;
      if (p.cleaned) pj["cleaned_up"] = true;
      if (p.ms > 0) pj["ms"] = static_cast<int64_t>(p.ms);
      ps.push_back(std::move(pj));
    }
    nlohmann::json hj = {{"host", h.host},
                         {"reached", h.reached},
                         {"changed", h.changed()},
                         {"failed", h.failed()},
                         {"phases", std::move(ps)}};
    if (!h.error.empty()) hj["error"] = h.error;
    if (!h.hint.empty()) hj["hint"] = h.hint;
    hs.push_back(std::move(hj));
  }
  nlohmann::json inter = nlohmann::json::array();
  for (const auto& e : interrupted)
    inter.push_back({{"host", e.host}, {"phase", e.phase}, {"message", e.message}});
  return {{"run", run_id},
          {"dry_run", dry_run},
          {"ok", ok()},
          {"changed", changed()},
          {"interrupted", inter},
          {"hosts", hs},
          {"ms", static_cast<int64_t>(ms)}};
}

// ------------------------------------------------------------------ host lock

namespace {
constexpr const char* kLockPaths =
    "L=/run/lock/paictl-install; [ -d /run/lock ] || L=/tmp/paictl-install.lock\n";
}

std::string host_lock_script(const std::string& holder, int stale_s, const std::string& takeover) {
  // O_EXCL through the shell's noclobber; the content names the holder; a lock
  // whose file was not touched for stale_s seconds is stale.
  std::string s = kLockPaths;
  s += "ME=" + util::shell_quote(holder) + "\n";
  s += "TAKE=" + util::shell_quote(takeover) + "\n";
  s += "STALE=" + std::to_string(stale_s) + "\n";
  s += R"(for attempt in 1 2; do
  if ( set -C; printf '%s\n' "$ME" > "$L" ) 2>/dev/null; then echo acquired; exit 0; fi
  cur=$(cat "$L" 2>/dev/null)
  if [ "$cur" = "$ME" ]; then touch "$L"; echo acquired; exit 0; fi
  age=$(( $(date +%s) - $(stat -c %Y "$L" 2>/dev/null || date +%s) ))
  if [ -n "$TAKE" ] && [ "$cur" = "$TAKE" ]; then rm -f "$L"; continue; fi
  if [ "$age" -gt "$STALE" ]; then rm -f "$L"; continue; fi
  printf 'held %s\n%s\n' "$age" "$cur"; exit 0
done
echo "held 0"; echo "$cur"
)";
  return s;
}

std::string host_unlock_script(const std::string& holder) {
  std::string s = kLockPaths;
  s += "ME=" + util::shell_quote(holder) + "\n";
  s += "[ \"$(cat \"$L\" 2>/dev/null)\" = \"$ME\" ] && rm -f \"$L\"; true\n";
  return s;
}

// ------------------------------------------------------------------ engine

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::string local_hostname() {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  return host;
}

struct HostLog {
  std::mutex mu;
  int fd = -1;
  ~HostLog() {
    if (fd >= 0) ::close(fd);
  }
};

// The holder line of a host lock: "LOCALHOST PID RUNID START".
}  // namespace

bool holder_is_dead_here(const std::string& holder) {
  auto parts = util::split(holder, ' ');
  if (parts.size() < 2 || std::string(parts[0]) != local_hostname()) return false;
  auto pid = util::parse_int(std::string(parts[1]));
  if (!pid || *pid <= 0) return false;
  return ::kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH;
}

RunResult Engine::run(const std::vector<HostSpec>& hosts, const PhaseList& phases) {
  auto t_run = Clock::now();
  RunResult res;
  res.dry_run = opts_.dry_run;
  res.run_id = opts_.run_id;
  if (res.run_id.empty()) res.run_id = util::now_rfc3339_ms() + "-" + std::to_string(::getpid());
  Masker own_masker;
  Masker* masker = opts_.masker ? opts_.masker : &own_masker;

  std::mutex event_mu;
  auto emit = [&](Event e) {
    e.message = masker->mask(std::move(e.message));
    e.hint = masker->mask(std::move(e.hint));
    for (auto& n : e.needs) n = masker->mask(std::move(n));
    std::lock_guard lock(event_mu);
    if (opts_.on_event) opts_.on_event(e);
  };

  if (!opts_.journal_path.empty()) {
    for (const auto& step : interrupted_steps(read_journal(opts_.journal_path))) {
      Event e;
      e.kind = Event::Kind::Interrupted;
      e.host = step.value("host", "");
      e.phase = step.value("phase", "");
      e.message = "run " + step.value("run", "") + " stopped during this step (started " +
                  step.value("time", "") + "); its state is observed again";
      res.interrupted.push_back(e);
      emit(e);
    }
  }
  Journal journal;
  if (!opts_.dry_run) {
    if (auto opened = journal.open(opts_.journal_path); !opened)
      emit({Event::Kind::Note, "", "", "journal: " + opened.error().message, "", {}, 0});
    journal.append({{"event", "run-start"}, {"run", res.run_id}, {"hosts", hosts.size()}});
  }

  RunContext ctx;
  ctx.masker = masker;
  ctx.dry_run = opts_.dry_run;
  std::vector<std::unique_ptr<HostRun>> runs;
  std::vector<std::unique_ptr<HostLog>> logs;
  res.hosts.resize(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) {
    runs.push_back(std::make_unique<HostRun>(hosts[i], ctx));
    ctx.hosts.push_back(runs.back().get());
    res.hosts[i].host = hosts[i].name;
    for (const auto& p : phases) {
      PhaseResult pr;
      pr.phase = p->name();
      pr.state =
          p->runs_on(hosts[i]) ? PhaseResult::State::Skipped : PhaseResult::State::NotApplicable;
      res.hosts[i].phases.push_back(pr);
    }
    auto log = std::make_unique<HostLog>();
    if (!opts_.log_dir.empty()) {
      std::string path = opts_.log_dir + "/" + hosts[i].name + ".log";
      log->fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (log->fd >= 0) ::fchmod(log->fd, 0600);
    }
    HostLog* lp = log.get();
    std::string run_id = res.run_id;
    if (lp->fd >= 0)
      runs.back()->log_sink = [lp](const std::string& text) {
        std::string line = "[" + util::now_rfc3339_ms() + "] " + text + "\n";
        std::lock_guard lock(lp->mu);
        if (::write(lp->fd, line.data(), line.size()) < 0) {
        }
      };
    logs.push_back(std::move(log));
  }
  for (auto& r : runs) r->log("--- run " + res.run_id + (opts_.dry_run ? " (dry run)" : ""));

  size_t fds = 4;
  for (const auto& h : hosts) fds = std::max(fds, transport_.fds_per_exec(h.target));
  remote::ExecutorOptions eo;
  eo.parallel = opts_.parallel;
  eo.fds_per_task = fds;

  std::vector<char> failed(hosts.size(), 0), locked(hosts.size(), 0);
  const std::string holder = local_hostname() + " " + std::to_string(::getpid()) + " " + res.run_id;

  std::vector<HostRun*> host_runs;
  for (auto& r : runs) host_runs.push_back(r.get());
  const std::string marker = "@@paictl-observe-" + std::to_string(::getpid()) + "-" +
                             std::to_string(Clock::now().time_since_epoch().count());
  auto collect_reads = [&](size_t from, size_t to, const std::vector<size_t>& on) {
    return reads_of_phases(phases, from, to, host_runs, on, opts_.planned_changes);
  };
  auto read_in_one_session = [&](size_t i, const std::vector<ObservationRead>& rs) {
    return deploy::read_in_one_session(*runs[i], rs, marker,
                                       opts_.dry_run ? opts_.kept.get() : nullptr);
  };

  // A run that applies right after a plan takes the plan's reads of the phases
  // that change nothing (KeptHosts): the OS and the pre-install checks' facts
  // are not read twice in one command.
  std::vector<std::map<std::string, remote::ExecResult>> plan_reads(hosts.size());
  if (!opts_.dry_run && opts_.kept)
    for (size_t i = 0; i < hosts.size(); ++i)
      plan_reads[i] = opts_.kept->take_reads(hosts[i].name, opts_.reuse_reads_s);

  // A dry run reads every phase's observations of a host in one session (they
  // change nothing, so their order does not matter); the phases then observe
  // from what was read, here.
  std::vector<std::vector<ObservationRead>> reads(hosts.size());
  if (opts_.dry_run) {
    std::vector<size_t> all(hosts.size());
    for (size_t i = 0; i < hosts.size(); ++i) all[i] = i;
    reads = collect_reads(0, phases.size(), all);
  }

  // Stages: runs of phases between barriers; a cluster-wide phase is a stage of its own.
  auto stage_end = [&](size_t first) {
    size_t last = first + 1;
    if (!phases[first]->traits().cluster_wide)
      while (last < phases.size() && !phases[last]->traits().barrier &&
             !phases[last]->traits().cluster_wide)
        ++last;
    return last;
  };
  // The hosts of the stage at `first` among `alive`, and the end of its group:
  // the stages after it that run on the same hosts (the master's add-on phases).
  auto group_of = [&](size_t first, const std::vector<size_t>& alive) {
    auto on = [&](size_t from, size_t to) {
      std::vector<size_t> v;
      for (size_t i : alive)
        for (size_t pi = from; pi < to; ++pi)
          if (phase_runs(*phases[pi], hosts[i])) {
            v.push_back(i);
            break;
          }
      return v;
    };
    std::vector<size_t> group_hosts = on(first, stage_end(first));
    size_t group_end = stage_end(first);
    while (group_end < phases.size() && !phases[group_end]->traits().cluster_wide) {
      size_t next = stage_end(group_end);
      if (on(group_end, next) != group_hosts) break;
      group_end = next;
    }
    return std::make_pair(group_hosts, group_end);
  };

  // A run that applies reads its first group of phases that may change a host
  // (after the OS and the pre-install checks, which change nothing) in the
  // session that takes the host lock, once the lock is taken: a round trip
  // fewer per host. Nothing changes a host between the two.
  size_t lock_group = phases.size(), lock_group_end = phases.size();
  std::vector<std::vector<ObservationRead>> lock_reads(hosts.size());
  std::vector<std::vector<std::pair<std::string, remote::ExecResult>>> locked_reads(hosts.size());
  if (!opts_.dry_run && opts_.host_lock) {
    for (size_t first = 0; first < phases.size();) {
      size_t last = stage_end(first);
      bool changes = false;
      for (size_t pi = first; pi < last; ++pi) changes |= !phases[pi]->traits().read_only;
      if (changes && !phases[first]->traits().cluster_wide) {
        lock_group = first;
        break;
      }
      first = last;
    }
    if (lock_group < phases.size()) {
      std::vector<size_t> all(hosts.size());
      for (size_t i = 0; i < hosts.size(); ++i) all[i] = i;
      auto [group_hosts, end] = group_of(lock_group, all);
      lock_group_end = end;
      lock_reads = collect_reads(lock_group, lock_group_end, group_hosts);
    }
  }
  // The lock script, then, when it took the lock, the reads of `rs`.
  auto lock_then_read = [&](size_t i, const std::string& lock,
                            const std::vector<ObservationRead>& rs) {
    LockSession session = deploy::lock_then_read(*runs[i], lock, rs, marker);
    locked_reads[i] = std::move(session.reads);
    return session.lock;
  };

  // Connect (and lock) every host.
  remote::run_parallel(hosts.size(), eo, [&](size_t i) {
    HostRun& h = *runs[i];
    HostResult& hr = res.hosts[i];
    if (opts_.kept) h.connection = opts_.kept->take_connection(&transport_, hosts[i].name);
    if (!h.connection) h.connection = transport_.connect(hosts[i].target);
    remote::ExecResult r;
    if (opts_.dry_run && !reads[i].empty()) {
      // One session: every phase's observations of this host at once.
      r = read_in_one_session(i, reads[i]);
    } else if (opts_.dry_run || !opts_.host_lock) {
      r = h.sh("id -u");
    } else {
      r = lock_then_read(i, host_lock_script(holder, opts_.host_lock_stale_s), lock_reads[i]);
      if (r.ok() && r.exit_status == 0 && r.out.rfind("held", 0) == 0) {
        std::string cur = r.out.substr(r.out.find('\n') + 1);
        while (!cur.empty() && cur.back() == '\n') cur.pop_back();
        if (holder_is_dead_here(cur)) {
          emit({Event::Kind::Note,
                hosts[i].name,
                "",
                "taking over the install lock of a run that is gone (" + cur + ")",
                "",
                {},
                0});
          r = h.sh(host_lock_script(holder, opts_.host_lock_stale_s, cur));
        }
      }
    }
    if (!r.ok()) {
      hr.error = r.error;
      hr.hint = r.hint;
      failed[i] = 1;
      emit({Event::Kind::PhaseFailed, hosts[i].name, "connect", r.error, r.hint, {}, 0});
      return;
    }
    hr.reached = true;
    emit({Event::Kind::HostConnected,
          hosts[i].name,
          "connect",
          r.auth_method.empty() ? "connected" : "connected (" + r.auth_method + ")",
          "",
          {},
          0});
    if (opts_.dry_run || !opts_.host_lock) return;
    if (r.exit_status != 0 || r.out.rfind("acquired", 0) != 0) {
      std::string cur = r.out.rfind("held", 0) == 0 ? r.out.substr(r.out.find('\n') + 1) : r.out;
      while (!cur.empty() && cur.back() == '\n') cur.pop_back();
      auto parts = util::split(cur, ' ');
      std::string who = parts.size() >= 3
                            ? "pid " + std::string(parts[1]) + " on " + std::string(parts[0]) +
                                  " (run " + std::string(parts[2]) + ")"
                            : "\"" + cur + "\"";
      hr.error = "another install holds this host's lock: " + who;
      hr.hint = "wait for it to finish; a lock untouched for " +
                std::to_string(opts_.host_lock_stale_s) +
                " s is stale (/run/lock/paictl-install on the host)";
      failed[i] = 1;
      emit({Event::Kind::PhaseFailed, hosts[i].name, "lock", hr.error, hr.hint, {}, 0});
      return;
    }
    locked[i] = 1;
    emit({Event::Kind::HostLocked, hosts[i].name, "lock", "locked", "", {}, 0});
  });

  // A host that cannot be reached or locked stops the run before anything changes.
  bool stop = false;
  if (!opts_.dry_run)
    for (char f : failed) stop |= f != 0;

  // (phase, host) pairs whose apply ran in this run, in order, for the clean-up.
  std::mutex applied_mu;
  std::vector<std::pair<size_t, size_t>> applied;

  size_t read_until = 0;   // the phases before it had their observations read ahead
  size_t after_until = 0;  // the end of the phases the current stage's applies read after them

  // The observations that follow phase pi's apply on host hi, read in the same
  // session as its last step there (run_last_step): its verification's, then
  // the next phases' of this group on this host, up to its next planned change.
  auto reads_after = [&](size_t pi, size_t hi) {
    return reads_after_apply(phases, pi, after_until, *runs[hi], opts_.planned_changes);
  };

  auto run_phase = [&](size_t pi, size_t hi) -> bool {
    Phase& phase = *phases[pi];
    HostRun& h = *runs[hi];
    PhaseResult& pr = res.hosts[hi].phases[pi];
    const std::string& host = hosts[hi].name;
    auto t0 = Clock::now();
    emit({Event::Kind::PhaseStart, host, pr.phase, "", "", {}, 0});
    std::vector<std::string> needs;
    util::Result<void> s;
    {
      KeepLiveReads keep;
      s = phase.observe(h, needs);
    }
    auto fail = [&](const util::Result<void>& st) {
      pr.state = PhaseResult::State::Failed;
      pr.error = masker->mask(st.error().message);
      pr.hint = masker->mask(st.error().hint);
      pr.ms = ms_since(t0);
      h.log("phase " + pr.phase + " failed: " + st.error().message);
      emit({Event::Kind::PhaseFailed,
            host,
            pr.phase,
            st.error().message,
            st.error().hint,
            {},
            pr.ms});
      return false;
    };
    if (!s.ok()) return fail(s);
    for (auto& n : needs) n = masker->mask(n);
    pr.needs = needs;
    if (needs.empty()) {
      pr.state = PhaseResult::State::UpToDate;
      pr.ms = ms_since(t0);
      emit({Event::Kind::PhaseUpToDate, host, pr.phase, "up to date", "", {}, pr.ms});
      return true;
    }
    if (opts_.dry_run) {
      pr.state = PhaseResult::State::Planned;
      pr.ms = ms_since(t0);
      emit({Event::Kind::PhaseNeeds, host, pr.phase, "would apply", "", needs, pr.ms});
      return true;
    }
    emit({Event::Kind::PhaseNeeds, host, pr.phase, "applying", "", needs, 0});
    journal.append({{"event", "start"},
                    {"run", res.run_id},
                    {"host", host},
                    {"phase", pr.phase},
                    {"needs", needs}});
    h.log("phase " + pr.phase + ": " + util::join(needs, "; "));
    {
      std::lock_guard lock(applied_mu);
      applied.emplace_back(pi, hi);
    }
    // What this phase read is about to change: every later observation of the
    // hosts it reads (its own, the master for a join) reads them again.
    auto forget = [&] { forget_reads_changed_by(phase, h); };
    forget();
    h.observations().set_reads_after(reads_after(pi, hi));
    s = phase.apply(h, needs);
    auto read_after = h.observations().take_reads_after();
    // What others read meanwhile may predate the change: the verification reads
    // afresh (what the apply's last step read right after it, or live), and
    // keeps what it read for the phases after it.
    forget();
    for (auto& [script, r] : read_after) h.observations().keep(script, std::move(r));
    if (s.ok()) {
      KeepLiveReads keep;
      s = verify_applied(phase, h);
    }
    journal.append({{"event", "end"},
                    {"run", res.run_id},
                    {"host", host},
                    {"phase", pr.phase},
                    {"result", s.ok() ? "changed" : "failed"},
                    {"error", s.ok() ? std::string() : masker->mask(s.error().message)}});
    if (!s.ok()) return fail(s);
    pr.state = PhaseResult::State::Changed;
    pr.ms = ms_since(t0);
    emit({Event::Kind::PhaseApplied, host, pr.phase, "applied", "", needs, pr.ms});
    return true;
  };

  // Stages: runs of phases between barriers; a cluster-wide phase is a stage of its own.
  for (size_t first = 0; first < phases.size() && !stop;) {
    size_t last = stage_end(first);
    // A dry run shows the whole plan: a host whose phase failed still shows the rest.
    std::vector<size_t> alive;
    for (size_t i = 0; i < hosts.size(); ++i)
      if (!failed[i] || (opts_.dry_run && res.hosts[i].reached)) alive.push_back(i);
    if (!opts_.dry_run && !phases[first]->traits().cluster_wide && first >= read_until) {
      // A run that applies reads ahead too: the observations of this stage and
      // of the stages after it that run on the same hosts (the master's add-on
      // phases), in one session per host, instead of a session per phase and
      // one `kubectl get` of the cluster objects each. A phase that applies
      // makes its hosts' reads be read again (run_phase).
      auto [group_hosts, group_end] = group_of(first, alive);
      for (auto& r : runs) r->observations().forget();
      if (first == 0)
        for (size_t i = 0; i < hosts.size(); ++i)
          for (auto& [script, r] : plan_reads[i])
            runs[i]->observations().keep(script, std::move(r));
      auto ahead = collect_reads(first, group_end, group_hosts);
      // What the lock's session read of this group serves it (only the reads
      // this group asks for).
      if (first == lock_group && group_end <= lock_group_end)
        for (size_t i = 0; i < hosts.size(); ++i) {
          std::map<std::string, remote::ExecResult> got;
          for (auto& [script, r] : locked_reads[i]) got[script] = std::move(r);
          locked_reads[i].clear();
          std::vector<ObservationRead> left;
          for (auto& rd : ahead[i]) {
            auto it = got.find(rd.script);
            if (it != got.end())
              runs[i]->observations().keep(rd.script, std::move(it->second));
            else
              left.push_back(std::move(rd));
          }
          ahead[i] = std::move(left);
        }
      std::vector<size_t> targets;
      for (size_t i = 0; i < hosts.size(); ++i)
        if (!ahead[i].empty() && runs[i]->connection) targets.push_back(i);
      remote::run_parallel(targets.size(), eo,
                           [&](size_t k) { read_in_one_session(targets[k], ahead[targets[k]]); });
      read_until = group_end;
    }
    after_until = std::max(last, read_until);
    if (auto* wide = dynamic_cast<ClusterWidePhase*>(phases[first].get())) {
      ClusterWidePhase& phase = *wide;
      std::vector<size_t> which;
      std::vector<HostRun*> hs;
      for (size_t i : alive)
        if (phase_runs(phase, hosts[i])) {
          which.push_back(i);
          hs.push_back(runs[i].get());
          emit({Event::Kind::PhaseStart, hosts[i].name, phase.name(), "", "", {}, 0});
        }
      auto t0 = Clock::now();
      std::vector<util::Result<void>> st(hs.size());
      std::vector<std::vector<std::string>> needs(hs.size());
      if (!hs.empty()) phase.observe_all(hs, st, needs);
      std::vector<size_t> to_apply;
      for (size_t k = 0; k < which.size(); ++k) {
        size_t i = which[k];
        PhaseResult& pr = res.hosts[i].phases[first];
        pr.ms = ms_since(t0);
        if (!st[k].ok()) {
          pr.state = PhaseResult::State::Failed;
          pr.error = masker->mask(st[k].error().message);
          pr.hint = masker->mask(st[k].error().hint);
          failed[i] = 1;
          emit({Event::Kind::PhaseFailed,
                hosts[i].name,
                pr.phase,
                st[k].error().message,
                st[k].error().hint,
                {},
                pr.ms});
        } else if (needs[k].empty()) {
          pr.state = PhaseResult::State::UpToDate;
          emit({Event::Kind::PhaseUpToDate, hosts[i].name, pr.phase, "up to date", "", {}, pr.ms});
        } else if (opts_.dry_run) {
          pr.state = PhaseResult::State::Planned;
          pr.needs = needs[k];
          emit({Event::Kind::PhaseNeeds, hosts[i].name, pr.phase, "would apply", "", needs[k],
                pr.ms});
        } else {
          to_apply.push_back(i);
        }
      }
      remote::run_parallel(to_apply.size(), eo, [&](size_t k) {
        if (!run_phase(first, to_apply[k])) failed[to_apply[k]] = 1;
      });
    } else {
      remote::run_parallel(alive.size(), eo, [&](size_t k) {
        size_t i = alive[k];
        for (size_t pi = first; pi < last; ++pi) {
          if (!phase_runs(*phases[pi], hosts[i])) continue;
          if (!run_phase(pi, i)) {
            failed[i] = 1;
            if (!opts_.dry_run) return;
          }
        }
      });
    }
    // A failure stops the run at the barrier; a dry run goes on to show the whole plan.
    if (!opts_.dry_run)
      for (char f : failed) stop |= f != 0;
    first = last;
  }

  for (size_t i = 0; i < hosts.size(); ++i)
    for (auto& pr : res.hosts[i].phases)
      if (pr.state == PhaseResult::State::Skipped && (failed[i] || stop))
        emit({Event::Kind::PhaseSkipped,
              hosts[i].name,
              pr.phase,
              failed[i] ? "not run: this host failed earlier" : "not run: another host failed",
              "",
              {},
              0});

  if (stop) {
    // k0sctl's contract: every phase that applied in this run cleans up, newest first.
    for (auto it = applied.rbegin(); it != applied.rend(); ++it) {
      auto [pi, hi] = *it;
      emit({Event::Kind::CleanupStart,
            hosts[hi].name,
            phases[pi]->name(),
            "cleaning up",
            "",
            {},
            0});
      if (auto* c = dynamic_cast<CleansUp*>(phases[pi].get())) c->cleanup(*runs[hi]);
      res.hosts[hi].phases[pi].cleaned = true;
      journal.append({{"event", "cleanup"},
                      {"run", res.run_id},
                      {"host", hosts[hi].name},
                      {"phase", phases[pi]->name()}});
      emit({Event::Kind::CleanupDone, hosts[hi].name, phases[pi]->name(), "cleaned up", "", {}, 0});
    }
  }

  std::vector<size_t> to_unlock;
  for (size_t i = 0; i < hosts.size(); ++i)
    if (locked[i]) to_unlock.push_back(i);
  remote::run_parallel(to_unlock.size(), eo,
                       [&](size_t k) { runs[to_unlock[k]]->sh(host_unlock_script(holder)); });
  for (auto& r : runs) r->log("--- end of run " + res.run_id);
  res.ms = ms_since(t_run);
  journal.append({{"event", "run-end"},
                  {"run", res.run_id},
                  {"ok", res.ok()},
                  {"changed", res.changed()},
                  {"ms", static_cast<int64_t>(res.ms)}});
  // The connections stay for the next run of these options (the apply after a plan).
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (opts_.kept && runs[i]->connection)
      opts_.kept->keep_connection(&transport_, hosts[i].name, std::move(runs[i]->connection));
    runs[i]->connection.reset();
  }
  return res;
}

}  // namespace pai::deploy
