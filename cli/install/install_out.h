#pragma once
// The one writer of install, reset, node add|remove and config push|pull|diff
// while they run. Plans and results go to stdout, events to stderr, each call
// written whole and flushed in order under one lock (stdout is made line
// buffered), so that `2>&1 | tee log` reads the plan, then one line per event,
// then the recap, never one inside another. On a terminal (stderr) a status
// line names the steps still running and for how long; it is cleared before
// anything else is written and drawn again a second later.
//
// SIGINT and SIGTERM are taken by a thread of the writer (they are blocked in
// every other thread): it prints "interrupted; a re-run resumes" with the steps
// that were running, appends an "interrupted" record to the cluster's journal,
// and exits (130 or 143). The process's SSH sessions close with it (see
// docs/install.md, "Interrupting install").

#include <cstdio>
#include <string>
#include <vector>

namespace paictl {

// Starts the writer for a command on `cluster_dir` (its journal is
// CLUSTER_DIR/.paictl/install.journal); `status`: draw the status line
// (stderr is a terminal, neither --quiet nor -o json|yaml).
void install_output_start(const std::string& cluster_dir, bool status);

// printf to stdout / stderr through the writer.
void out_printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void err_printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// A step (a phase on a host) began (`doing`: "observing", "applying") or ended.
void status_step(const std::string& host, const std::string& phase, const char* doing);
void status_step_done(const std::string& host, const std::string& phase);
// No step runs any more (a run ended).
void status_clear();

// The status line's text for these running steps (host, phase, doing, seconds)
// at `width` columns; for tests.
struct RunningStep {
  std::string host, phase, doing;
  double seconds = 0;
};
std::string status_text(const std::vector<RunningStep>& steps, size_t width);

}  // namespace paictl
