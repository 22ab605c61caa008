#pragma once
// How every checking command (check config, check job, job validate) reports its
// diagnostics: text or JSON on stdout, optional JUnit and SARIF files, and the
// exit code that follows from the findings.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "app.h"
#include "diag/diagnostic.h"

namespace paictl {

// Line `line` (1-based) of `text`, without its newline, cut at 200 bytes; "" past the end.
std::string nth_line(const std::string& text, uint32_t line);

// The findings a user sees: info only with -v, errors only with -q.
std::vector<pai::diag::Diagnostic> shown_findings(const pai::diag::List& list, const Globals& g);

// Prints the shown findings of one file's check on stderr (no summary line), as
// commands do whose stdout is something else (a rendered job, a submission).
void print_findings_stderr(const pai::diag::List& list, const Globals& g);

struct DiagReport {
  std::string output = "text";  // text | json
  bool print = true;            // false: only the report files and the exit code
  std::string junit;            // FILE, "-" or ""
  std::string sarif;            // FILE, "-" or ""
  bool fail_on_warn = false;
  std::string suite;  // JUnit suite name, e.g. "paictl check config"
  const std::vector<pai::diag::Rule>* rules = nullptr;  // for SARIF
  std::string help_base_uri;                            // SARIF rules' helpUri base
  // The source line shown under a text diagnostic ("" to show none).
  std::function<std::string(const std::string& file, uint32_t line)> source_line;
};

// Prints `list` (info findings only with -v, errors only with -q), writes the
// report files and returns the exit code: 2 when a report cannot be written or
// `input_error`, 1 for errors (or warnings with fail_on_warn), else 0.
int report_diagnostics(const pai::diag::List& list, const std::vector<std::string>& files,
                       bool input_error, const DiagReport& r, const Globals& g);

}  // namespace paictl
