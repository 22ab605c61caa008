// paictl check job FILE...

#include "app.h"
#include "check/job_check.h"
#include "command.h"
#include "flags.h"

namespace paictl {

namespace {

void add_check_job(Flags& parent, Globals& g) {
  auto o = std::make_shared<jobcli::CheckOptions>();
  Flags* cmd = &parent;
  jobcli::add_check_flags(cmd, *o, g);
  cmd->footer(
      "Same checks as 'paictl job validate'. Every code is explained in docs/jobs.md.\n\n"
      "EXIT STATUS:\n"
      "  0 no errors, 1 errors found (or warnings with --fail-on-warn), 2 bad usage or unreadable "
      "file\n\n");
  define_command(*cmd, g, o, {.run = [](const auto& o, Globals& g) {
    return jobcli::run_check(o, g, "paictl check job");
  }});
}

}  // namespace

void build_check_job(Flags& cmd, Globals& g) {
  add_check_job(cmd, g);
}

}  // namespace paictl
