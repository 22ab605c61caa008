// The install engine's results and the host lock; the run itself is
// EngineRun's (engine_run.cc).
#include "deploy/engine.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "util/strings.h"

namespace pai::deploy {

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
  if (!error.empty()) return false;
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
  nlohmann::json out = {{"run", run_id},
                        {"dry_run", dry_run},
                        {"ok", ok()},
                        {"changed", changed()},
                        {"interrupted", inter},
                        {"hosts", hs},
                        {"ms", static_cast<int64_t>(ms)}};
  if (!error.empty()) out["error"] = error;
  if (!hint.empty()) out["hint"] = hint;
  return out;
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

// ------------------------------------------------------------------ the lock's holder

namespace {

std::string lock_holder_hostname() {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

// The holder line of a host lock: "LOCALHOST PID RUNID START".
bool holder_is_dead_here(const std::string& holder) {
  auto parts = util::split(holder, ' ');
  if (parts.size() < 2 || std::string(parts[0]) != lock_holder_hostname()) return false;
  auto pid = util::parse_int(std::string(parts[1]));
  if (!pid || *pid <= 0) return false;
  return ::kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH;
}

}  // namespace pai::deploy
