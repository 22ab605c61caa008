// paictl check job FILE...

#include <CLI/CLI.hpp>

#include "app.h"
#include "cmd_job_common.h"

namespace paictl {

namespace {

void add_check_job(CLI::App& parent, Globals& g) {
  auto o = std::make_shared<jobcli::CheckOptions>();
  CLI::App* cmd = parent.add_subcommand("job",
                                        "Validate OpenPAI job protocol v2 files as the rest-server "
                                        "does, plus known pitfalls, with file:line:col");
  jobcli::add_check_flags(cmd, *o);
  cmd->footer(
      "Same checks as 'paictl job validate'. Every code is explained in docs/jobs.md.\n\n"
      "EXIT STATUS:\n"
      "  0 no errors, 1 errors found (or warnings with --fail-on-warn), 2 bad usage or unreadable "
      "file\n\n"
      "EXAMPLES:\n"
      "  paictl check job examples/jobs/pytorch-mnist.yaml\n"
      "  paictl check job -o json jobs/*.yaml\n"
      "  paictl check job --sarif jobs.sarif --fail-on-warn jobs/*.yaml\n");
  cmd->callback([o, &g]() { g.exit_code = jobcli::run_check(*o, g, "paictl check job"); });
}

}  // namespace

static Registrar registrar(
    {{"check", "job"},
     "Validate job protocol v2 files as the OpenPAI rest-server does, plus known pitfalls",
     12,
     add_check_job});

}  // namespace paictl
