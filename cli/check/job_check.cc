// check job and job validate: the flags and the run they share.

#include "check/job_check.h"

#include "diag/report.h"
#include "exit_codes.h"
#include "job/job_usage.h"
#include "job/rules.h"
#include "job/validate.h"
#include "output/diag_output.h"
#include "output/output.h"
#include "output/printer.h"

namespace paictl::jobcli {

void add_check_flags(Flags* cmd, CheckOptions& o, Globals& g) {
  cmd->add_option("FILE", o.files, "Job protocol v2 files ('-' reads stdin)")
      ->required()
      ->expected(1, -1);
  add_output_option(*cmd, o.output, g);
  cmd->add_option("--junit", o.junit, "Also write a JUnit XML report to FILE ('-' for stdout)")
      ->type_name("FILE");
  cmd->add_option("--sarif", o.sarif, "Also write a SARIF 2.1.0 report to FILE ('-' for stdout)")
      ->type_name("FILE");
  cmd->add_flag("--fail-on-warn", o.fail_on_warn,
                "Exit 1 when there are warnings, not only errors");
  cmd->add_option("--param", o.params, "Check as if parameter NAME had VALUE (repeatable)")
      ->type_name("NAME=VALUE");
  cmd->add_option("--name", o.name, "Check as if the job were named NAME");
  cmd->add_option("--vc", o.vc, "Check as if defaults.virtualCluster were VC");
}

int run_check(const CheckOptions& o, const Globals& g, const char* suite) {
  auto ov = make_overrides(o.params, o.name, o.vc);
  if (!ov) return kExitUsage;
  size_t stdin_count = 0;
  for (const auto& f : o.files) stdin_count += f == "-";
  if (stdin_count > 1) {
    print_error("'-' (stdin) can be given only once");
    return kExitUsage;
  }
  pai::job::ValidateOptions vopt;
  vopt.overrides = *ov;
  pai::job::CheckOutcome out = pai::job::check_files(o.files, vopt);
  DiagReport r;
  r.output = o.output;
  r.junit = o.junit;
  r.sarif = o.sarif;
  r.fail_on_warn = o.fail_on_warn;
  r.suite = suite;
  r.rules = &pai::job::rules();
  r.help_base_uri = "docs/jobs.md";
  r.source_line = [&out](const std::string& file, uint32_t line) {
    // Lines that hold a secret value are never shown.
    auto hidden = out.hidden_lines.find(file);
    if (hidden != out.hidden_lines.end() && hidden->second.count(line)) return std::string();
    auto it = out.sources.find(file);
    return it == out.sources.end() ? std::string() : nth_line(it->second, line);
  };
  return report_diagnostics(out.diagnostics, out.files, out.input_error, r, g);
}

}  // namespace paictl::jobcli
