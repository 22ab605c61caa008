#pragma once
// paictl simulate's progress and report files: one status line that updates in
// place on a terminal, a progress line every few seconds on stderr with -v
// otherwise, and the report directory written with what each file holds.

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace pai::sim {
struct ReportContext;
}

namespace paictl {

class SimProgress {
 public:
  // tty: rewrite one line on stderr; lines: print a line every `every` (and at
  // each policy's start and end) instead. Neither: silent.
  SimProgress(bool tty, bool lines, std::chrono::milliseconds every = std::chrono::seconds(10));
  void begin(const std::string& policy, size_t index, size_t policies, size_t jobs);
  void update(size_t arrived, size_t total);
  void end();
  void clear();  // before an error message or the result

 private:
  using Clock = std::chrono::steady_clock;
  bool tty_, lines_;
  std::chrono::milliseconds every_;
  std::string policy_;
  size_t index_ = 0, policies_ = 0;
  Clock::time_point started_, last_;
  bool shown_ = false;
};

// What --report-jobs accepts.
inline constexpr const char* kReportJobsValues[] = {"csv", "none"};

// A report's files: each name and what makes its content (made when written,
// one at a time, so that large files are not held together).
using ReportFiles = std::vector<std::pair<std::string, std::function<std::string()>>>;

// The directory a report goes to, before any work is done: "" when it can be
// written (it exists as a writable directory, or can be made), else why not.
std::string report_dir_problem(const std::string& dir);

// Writes the files into dir (made if missing), each atomically (a reader sees
// the old file or the new one); when one cannot be written, the files this
// call added are removed again. Then says on stderr (unless quiet)
// "report: DIR/FIRST (each file and its size)". false after printing the error.
bool write_report_files(const std::string& dir, const ReportFiles& files, bool quiet);

// Writes metrics.json, report.html and (with jobs_csv) jobs.csv to dir, then
// says on stderr (unless quiet) which files were written and their sizes.
// false after printing the error.
bool write_simulation_report(const pai::sim::ReportContext& ctx, const std::string& dir,
                             bool jobs_csv, bool quiet);

}  // namespace paictl
