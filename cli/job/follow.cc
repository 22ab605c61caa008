// Waiting for a job and the follow and watch loops: polling, Ctrl-C, durations
// and times.

#include "job/follow.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <thread>

#include "api/client.h"
#include "cluster/registry.h"
#include "exit_codes.h"
#include "job/clone.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/printable.h"
#include "util/strings.h"
#include "util/time.h"

namespace paictl::jobcli {

std::string format_duration_ms(double ms) {
  if (ms < 0 || std::isnan(ms)) return "-";
  long s = static_cast<long>(ms / 1000);
  if (s < 60) return std::to_string(s) + "s";
  long m = s / 60;
  if (m < 60) return std::to_string(m) + "m" + (s % 60 ? " " + std::to_string(s % 60) + "s" : "");
  long h = m / 60;
  if (h < 48) return std::to_string(h) + "h" + (m % 60 ? " " + std::to_string(m % 60) + "m" : "");
  return std::to_string(h / 24) + "d" + (h % 24 ? " " + std::to_string(h % 24) + "h" : "");
}

std::string format_time_ms(const Json& v) {
  if (!v.is_number()) return "-";
  return pai::util::format_local(static_cast<std::time_t>(v.get<double>() / 1000),
                                 "%Y-%m-%d %H:%M:%S");
}

void add_wait_flags(Flags* cmd, WaitOptions& o, const char* prefix) {
  std::string p = prefix;
  cmd->add_option("--" + p + "interval", o.interval, "Seconds between two looks at the job")
      ->check(Range(0.05, 3600.0))
      ->capture_default_str();
  cmd->add_option("--" + p + "timeout", o.timeout,
                  "Give up after this many seconds (exit 4); 0 waits forever")
      ->check(NonNegativeNumber)
      ->capture_default_str();
}

int wait_for_job(const Connection& c, const std::string& user, const std::string& name,
                 const WaitOptions& o, const Globals& g) {
  const std::string id = pai::api::job_id(user, name);
  auto start = std::chrono::steady_clock::now();
  std::string last;
  bool progress = (is_tty(2) || g.verbose) && !g.quiet;
  while (true) {
    auto r = c.api->get_job(user, name);
    if (!r.ok()) return report_api_error(c.cluster->name, "reading job " + id, r.error());
    const Json status = r->contains("jobStatus") ? Json((*r)["jobStatus"]) : Json::object();
    std::string state = pai::util::printable(status.value("state", std::string("UNKNOWN")));
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (state != last && progress)
      std::fprintf(stderr, "paictl: %s: %s%s (after %s)\n", id.c_str(),
                   last.empty() ? "" : (last + " -> ").c_str(), state.c_str(),
                   format_duration_ms(elapsed * 1000).c_str());
    last = state;
    if (state == "SUCCEEDED" || state == "FAILED" || state == "STOPPED") {
      Json exit = status.contains("appExitCode") ? Json(status["appExitCode"]) : Json(nullptr);
      if (o.output == "table") {
        if (!g.quiet) {
          std::string line = id + " " + state;
          if (exit.is_number()) line += " (exit code " + exit.dump() + ")";
          std::printf("%s\n", line.c_str());
        }
      } else {
        print_document(document("jobState", Json{{"cluster", c.cluster->name},
                                                 {"job", id},
                                                 {"state", state},
                                                 {"exitCode", exit}}),
                       o.output);
      }
      return state == "SUCCEEDED" ? kExitOk : kExitFindings;
    }
    if (o.timeout > 0 && elapsed + o.interval > o.timeout) {
      print_error(id + " is still " + state + " after " + format_duration_ms(o.timeout * 1000) +
                  " (--timeout)");
      return kExitWaitTimeout;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
  }
}

// --- follow and watch loops ---------------------------------------------------------

namespace {
std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) {
  if (g_interrupted.exchange(true)) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
}
}  // namespace

void catch_interrupt() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
}

bool interrupted() {
  return g_interrupted.load();
}

bool pause_for(double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!interrupted()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= end) return true;
    std::chrono::steady_clock::duration left =
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(end - now);
    std::chrono::steady_clock::duration step =
        std::min(left, std::chrono::steady_clock::duration(std::chrono::milliseconds(50)));
    std::this_thread::sleep_for(step);
  }
  return false;
}

std::optional<double> parse_duration_ms(const std::string& s) {
  std::string t(pai::util::trim(s));
  if (t.empty()) return std::nullopt;
  double unit = 1000;
  char last = t.back();
  if (last == 's' || last == 'm' || last == 'h' || last == 'd' || last == 'w') {
    unit = last == 's'   ? 1000
           : last == 'm' ? 60e3
           : last == 'h' ? 3600e3
           : last == 'd' ? 86400e3
                         : 7 * 86400e3;
    t.pop_back();
  }
  if (t.empty() || t.size() > 12) return std::nullopt;
  double v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v * unit;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool is_final_state(const std::string& state) {
  return pai::job::job_state_final(state);
}

}  // namespace paictl::jobcli
