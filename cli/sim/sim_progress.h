#pragma once
// paictl simulate's progress and report files: one status line that updates in
// place on a terminal, a progress line every few seconds on stderr with -v
// otherwise, and the report directory written with what each file holds.

#include <chrono>
#include <cstddef>
#include <string>

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

// Writes metrics.json, report.html and (with jobs_csv) jobs.csv to dir, then
// says on stderr (unless quiet) which files were written and their sizes.
// false after printing the error.
bool write_simulation_report(const pai::sim::ReportContext& ctx, const std::string& dir,
                             bool jobs_csv, bool quiet);

}  // namespace paictl
