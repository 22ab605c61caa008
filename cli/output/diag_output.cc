#include "output/diag_output.h"

#include <cstdio>

#include "diag/report.h"
#include "exit_codes.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/version.h"
#include "util/yaml_emit.h"

namespace paictl {

std::string nth_line(const std::string& s, uint32_t line) {
  size_t pos = 0;
  for (uint32_t l = 1; l < line; ++l) {
    pos = s.find('\n', pos);
    if (pos == std::string::npos) return {};
    ++pos;
  }
  size_t end = s.find('\n', pos);
  std::string text = s.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  if (!text.empty() && text.back() == '\r') text.pop_back();
  if (text.size() > 200) {
    text.resize(200);
    text += "...";
  }
  return text;
}

std::vector<pai::diag::Diagnostic> shown_findings(const pai::diag::List& list, const Globals& g) {
  using pai::diag::Severity;
  std::vector<pai::diag::Diagnostic> shown;
  for (const auto& d : list.items())
    if ((d.severity != Severity::Info || g.verbose) && (!g.quiet || d.severity == Severity::Error))
      shown.push_back(d);
  return shown;
}

void print_findings_stderr(const pai::diag::List& list, const Globals& g) {
  std::vector<pai::diag::Diagnostic> shown = shown_findings(list, g);
  if (shown.empty()) return;
  pai::diag::TextOptions topt;
  topt.color = use_color(g.no_color, 2);
  topt.show_summary = false;
  std::string text = pai::diag::write_text(shown, 1, topt);
  std::fwrite(text.data(), 1, text.size(), stderr);
}

int report_diagnostics(const pai::diag::List& list, const std::vector<std::string>& files,
                       bool input_error, const DiagReport& r, const Globals& g) {
  using pai::diag::Severity;
  const auto& all = list.items();
  if (!r.print) {
    // The command prints its own document (certs check -o json).
  } else if (is_structured(r.output)) {
    print_document(document("diagnostics", Json(pai::diag::write_json(all, files.size()))),
                   r.output);
  } else {
    std::vector<pai::diag::Diagnostic> shown = shown_findings(list, g);
    pai::diag::TextOptions topt;
    topt.color = use_color(g.no_color);
    topt.show_summary = !g.quiet;
    topt.source_line = r.source_line;
    std::string text = pai::diag::write_text(shown, files.size(), topt);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }

  int rc = kExitOk;
  if (!r.junit.empty()) {
    auto err =
        write_report_file(r.junit, pai::diag::write_junit(all, files, r.suite, r.fail_on_warn));
    if (!err.ok()) {
      print_error("cannot write the JUnit report: " + err.error().message);
      rc = kExitUsage;
    }
  }
  if (!r.sarif.empty()) {
    static const std::vector<pai::diag::Rule> no_rules;
    auto err = write_report_file(
        r.sarif, pai::diag::dump_json(pai::diag::write_sarif(all, r.rules ? *r.rules : no_rules,
                                                             pai::kVersion, r.help_base_uri)) +
                     "\n");
    if (!err.ok()) {
      print_error("cannot write the SARIF report: " + err.error().message);
      rc = kExitUsage;
    }
  }
  if (rc != kExitOk) return rc;
  if (input_error) return kExitUsage;
  if (list.has_errors()) return kExitFindings;
  if (r.fail_on_warn && list.count(Severity::Warning) > 0) return kExitFindings;
  return kExitOk;
}

}  // namespace paictl
