// paictl simulate: the progress of a run and the report files (sim_progress.h).

#include "sim/sim_progress.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "diag/report.h"
#include "output/output.h"
#include "sim/report.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/printable.h"
#include "util/strings.h"

namespace paictl {

namespace {

std::string sim_progress_seconds(std::chrono::steady_clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", std::chrono::duration<double>(d).count());
  return buf;
}

}  // namespace

SimProgress::SimProgress(bool tty, bool lines, std::chrono::milliseconds every)
    : tty_(tty), lines_(lines && !tty), every_(every) {}

void SimProgress::begin(const std::string& policy, size_t index, size_t policies, size_t jobs) {
  policy_ = pai::util::printable(policy);
  index_ = index;
  policies_ = policies;
  started_ = last_ = Clock::now();
  if (tty_) {
    std::fprintf(stderr, "\x1b[2Ksimulating %s (%zu/%zu): 0%% of %zu jobs\r", policy_.c_str(),
                 index_, policies_, jobs);
    shown_ = true;
  } else if (lines_) {
    std::fprintf(stderr, "simulating %s (%zu/%zu): %zu jobs\n", policy_.c_str(), index_, policies_,
                 jobs);
  }
  std::fflush(stderr);
}

void SimProgress::update(size_t arrived, size_t total) {
  if (!tty_ && !lines_) return;
  auto now = Clock::now();
  // A terminal line is redrawn at most 10 times a second; a log line every `every_`.
  auto gap = tty_ ? std::chrono::milliseconds(100) : every_;
  if (now - last_ < gap || arrived >= total) return;
  last_ = now;
  int pct =
      total ? static_cast<int>(100.0 * static_cast<double>(arrived) / static_cast<double>(total))
            : 100;
  if (tty_)
    std::fprintf(stderr, "\x1b[2Ksimulating %s (%zu/%zu): %d%% of %zu jobs, %s\r", policy_.c_str(),
                 index_, policies_, pct, total, sim_progress_seconds(now - started_).c_str());
  else
    std::fprintf(stderr, "  %s: %d%% (%zu of %zu jobs arrived), %s\n", policy_.c_str(), pct,
                 arrived, total, sim_progress_seconds(now - started_).c_str());
  std::fflush(stderr);
}

void SimProgress::end() {
  if (lines_)
    std::fprintf(stderr, "simulated %s in %s\n", policy_.c_str(),
                 sim_progress_seconds(Clock::now() - started_).c_str());
}

void SimProgress::clear() {
  if (tty_ && shown_) std::fprintf(stderr, "\x1b[2K");
  shown_ = false;
}

std::string report_dir_problem(const std::string& dir) {
  if (dir.empty()) return "no directory given";
  if (pai::util::path_entry_exists(dir) && !pai::util::is_directory(dir))
    return dir + " is not a directory";
  // The nearest directory that exists must let us write (into it, or make ours there).
  std::string probe = dir;
  while (!pai::util::is_directory(probe)) {
    const auto slash = probe.find_last_of('/');
    if (slash == std::string::npos) {
      probe = ".";
      break;
    }
    probe = slash == 0 ? "/" : probe.substr(0, slash);
    if (pai::util::path_entry_exists(probe) && !pai::util::is_directory(probe))
      return probe + " is not a directory";
  }
  if (::access(probe.c_str(), W_OK | X_OK) != 0)
    return (probe == dir ? dir : probe + " (where " + dir + " would be made)") +
           " is not writable: " + std::strerror(errno);
  return "";
}

bool write_report_files(const std::string& dir, const ReportFiles& files, bool quiet) {
  auto made = pai::util::make_directories(dir);
  std::string e = made.ok() ? std::string() : made.error().message;
  std::vector<std::pair<std::string, size_t>> written;
  std::vector<std::string> added;  // files that were not there before
  for (const auto& [name, content_of] : files) {
    if (!e.empty()) break;
    const std::string path = pai::util::join_path(dir, name);
    const bool existed = pai::util::path_entry_exists(path);
    const std::string content = content_of();
    auto w = pai::util::write_file_atomic(path, content);
    if (!w.ok()) {
      e = name + ": " + w.error().message;
    } else {
      written.emplace_back(name, content.size());
      if (!existed) added.push_back(path);
    }
  }
  if (!e.empty()) {
    for (const auto& path : added) std::remove(path.c_str());
    print_error("cannot write the report to " + dir + ": " + e);
    return false;
  }
  if (quiet || files.empty()) return true;
  std::string list;
  for (const auto& [name, size] : written)
    list += (list.empty() ? "" : ", ") + name + " " +
            pai::util::format_bytes(static_cast<double>(size)) + "B";
  std::fprintf(stderr, "report: %s (%s)\n",
               pai::util::printable(pai::util::join_path(dir, files.front().first)).c_str(),
               list.c_str());
  return true;
}

bool write_simulation_report(const pai::sim::ReportContext& ctx, const std::string& dir,
                             bool jobs_csv, bool quiet) {
  ReportFiles files = {{"report.html", [&] { return pai::sim::html_report(ctx); }},
                       {"metrics.json", [&] {
                          return pai::diag::dump_json(pai::sim::metrics_json(ctx), 1) + "\n";
                        }}};
  if (jobs_csv) files.push_back({"jobs.csv", [&] { return pai::sim::jobs_csv(ctx); }});
  if (!write_report_files(dir, files, quiet)) return false;
  if (!quiet && !jobs_csv) std::fprintf(stderr, "  jobs.csv not written (--report-jobs none)\n");
  return true;
}

}  // namespace paictl
