#include "install/install_out.h"

#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "deploy/journal.h"

namespace paictl {

namespace {

using SteadyClock = std::chrono::steady_clock;

struct InstallWriter {
  std::mutex mu;
  std::condition_variable wake;
  bool status = false;       // draw the status line
  bool shown = false;        // it is on the terminal now
  bool ticking = false;      // the status thread runs
  std::string journal_path;  // "" = none
  bool signals_taken = false;
  // (host, phase) -> (doing, since)
  std::map<std::pair<std::string, std::string>, std::pair<std::string, SteadyClock::time_point>>
      running;
};

InstallWriter& install_writer() {
  static InstallWriter* w = new InstallWriter();  // lives until exit (threads use it)
  return *w;
}

// Under the lock: the status line off the terminal.
void install_out_clear_locked(InstallWriter& w) {
  if (!w.shown) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  w.shown = false;
}

size_t install_out_width() {
  winsize ws{};
  if (::ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20) return ws.ws_col;
  return 80;
}

std::vector<RunningStep> install_out_steps_locked(InstallWriter& w) {
  std::vector<RunningStep> out;
  auto now = SteadyClock::now();
  for (const auto& [key, v] : w.running)
    out.push_back(
        {key.first, key.second, v.first, std::chrono::duration<double>(now - v.second).count()});
  return out;
}

void install_out_tick() {
  InstallWriter& w = install_writer();
  std::unique_lock lock(w.mu);
  while (true) {
    w.wake.wait_for(lock, std::chrono::seconds(1));
    auto steps = install_out_steps_locked(w);
    bool slow = false;
    for (const auto& s : steps) slow |= s.seconds >= 2;
    if (!slow) {
      install_out_clear_locked(w);
      continue;
    }
    std::string line = status_text(steps, install_out_width() - 1);
    std::fflush(stdout);
    std::fputs(("\r\x1b[K" + line).c_str(), stderr);
    std::fflush(stderr);
    w.shown = true;
  }
}

const char* install_out_signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

void install_out_watch_signals(sigset_t set) {
  int sig = 0;
  if (::sigwait(&set, &sig) != 0) return;
  InstallWriter& w = install_writer();
  std::vector<std::pair<std::string, std::string>> steps;
  {
    std::lock_guard lock(w.mu);
    install_out_clear_locked(w);
    std::fflush(stdout);
    std::string names;
    for (const auto& [key, v] : w.running) {
      steps.push_back(key);
      names += (names.empty() ? "" : ", ") + key.first + " " + key.second;
    }
    std::fprintf(stderr, "\npaictl: interrupted (%s); a re-run resumes%s%s\n",
                 install_out_signal_name(sig),
                 names.empty() ? "" : "; stopped during: ", names.c_str());
    std::fflush(stderr);
    pai::deploy::journal_interruption(w.journal_path, install_out_signal_name(sig), steps);
  }
  // The SSH sessions close with the process: commands still running on the
  // hosts lose their session (docs/install.md, "Interrupting install").
  std::_Exit(128 + sig);
}

void install_out_vwrite(FILE* f, const char* fmt, va_list ap) {
  char small[1024];
  va_list copy;
  va_copy(copy, ap);
  int n = std::vsnprintf(small, sizeof small, fmt, copy);
  va_end(copy);
  std::string text;
  if (n < 0) return;
  if (static_cast<size_t>(n) < sizeof small) {
    text.assign(small, static_cast<size_t>(n));
  } else {
    text.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(text.data(), text.size(), fmt, ap);
    text.resize(static_cast<size_t>(n));
  }
  InstallWriter& w = install_writer();
  std::lock_guard lock(w.mu);
  install_out_clear_locked(w);
  if (f == stderr) std::fflush(stdout);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fflush(f);
}

}  // namespace

void install_output_start(const std::string& cluster_dir, bool status) {
  InstallWriter& w = install_writer();
  // Whole lines reach a pipe in the order they were written, also when
  // something prints without this writer.
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  std::string dir = cluster_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  {
    std::lock_guard lock(w.mu);
    w.journal_path = dir.empty() ? std::string() : dir + "/.paictl/install.journal";
    w.status = status;
  }
  if (!w.signals_taken) {
    w.signals_taken = true;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    // Blocked here, before any other thread starts: every thread inherits it,
    // and only the watcher takes them.
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread(install_out_watch_signals, set).detach();
  }
  if (status && !w.ticking) {
    w.ticking = true;
    std::thread(install_out_tick).detach();
  }
}

void out_printf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  install_out_vwrite(stdout, fmt, ap);
  va_end(ap);
}

void err_printf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  install_out_vwrite(stderr, fmt, ap);
  va_end(ap);
}

void status_step(const std::string& host, const std::string& phase, const char* doing) {
  InstallWriter& w = install_writer();
  std::lock_guard lock(w.mu);
  auto& slot = w.running[{host, phase}];
  if (slot.first != doing) slot = {doing, SteadyClock::now()};
}

void status_step_done(const std::string& host, const std::string& phase) {
  InstallWriter& w = install_writer();
  std::lock_guard lock(w.mu);
  w.running.erase({host, phase});
}

void status_clear() {
  InstallWriter& w = install_writer();
  std::lock_guard lock(w.mu);
  w.running.clear();
  install_out_clear_locked(w);
}

std::string status_text(const std::vector<RunningStep>& steps, size_t width) {
  std::vector<RunningStep> sorted = steps;
  // The longest running first: those are the ones that may hang.
  std::stable_sort(sorted.begin(), sorted.end(), [](const RunningStep& a, const RunningStep& b) {
    return a.seconds > b.seconds;
  });
  const size_t n = sorted.size();
  std::string line = std::to_string(n) + " running:";
  for (size_t i = 0; i < n; ++i) {
    const RunningStep& s = sorted[i];
    std::string item = " " + s.host + " " + s.phase + (s.doing.empty() ? "" : " " + s.doing) + " " +
                       std::to_string(static_cast<long long>(s.seconds)) + "s" +
                       (i + 1 < n ? "," : "");
    std::string rest = i + 1 < n ? " +" + std::to_string(n - i - 1) + " more" : "";
    if (i > 0 && line.size() + item.size() + rest.size() > width) {
      line += " +" + std::to_string(n - i) + " more";
      break;
    }
    line += item;
  }
  if (line.size() > width) line = line.substr(0, width);
  return line;
}

}  // namespace paictl
