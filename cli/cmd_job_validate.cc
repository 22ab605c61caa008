// paictl job validate FILE...

#include <CLI/CLI.hpp>

#include "app.h"
#include "cmd_job_common.h"

namespace paictl {

namespace {

void add_job_validate(CLI::App& parent, Globals& g) {
  auto o = std::make_shared<jobcli::CheckOptions>();
  CLI::App* cmd = parent.add_subcommand(
      "validate",
      "Validate job protocol v2 files as the OpenPAI rest-server does, plus known pitfalls");
  jobcli::add_check_flags(cmd, *o);
  cmd->footer(
      "Works offline. Same checks as 'paictl check job'; docs/jobs.md explains every code.\n\n"
      "EXIT STATUS:\n"
      "  0 no errors, 1 errors found (or warnings with --fail-on-warn), 2 bad usage or unreadable "
      "file\n\n"
      "EXAMPLES:\n"
      "  paictl job validate examples/jobs/pytorch-mnist.yaml\n"
      "  paictl job validate --param epochs=20 --vc research job.yaml\n"
      "  paictl job validate --junit job-report.xml jobs/*.yaml\n");
  cmd->callback([o, &g]() { g.exit_code = jobcli::run_check(*o, g, "paictl job validate"); });
}

}  // namespace

static Registrar registrar(
    {{"job", "validate"},
     "Validate job files offline: the server's schema and checks, plus pitfalls",
     40,
     add_job_validate});

}  // namespace paictl
