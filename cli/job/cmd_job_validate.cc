// paictl job validate FILE...

#include "app.h"
#include "check/job_check.h"
#include "command.h"
#include "flags.h"

namespace paictl {

namespace {

void add_job_validate(Flags& parent, Globals& g) {
  auto o = std::make_shared<jobcli::CheckOptions>();
  Flags* cmd = &parent;
  jobcli::add_check_flags(cmd, *o, g);
  cmd->footer(
      "Works offline. Same checks as 'paictl check job'; docs/jobs.md explains every code.\n\n"
      "EXIT STATUS:\n"
      "  0 no errors, 1 errors found (or warnings with --fail-on-warn), 2 bad usage or unreadable "
      "file\n\n");
  define_command(*cmd, g, o, {.run = [](const auto& o, Globals& g) {
    return jobcli::run_check(o, g, "paictl job validate");
  }});
}

}  // namespace

void build_job_validate(Flags& cmd, Globals& g) {
  add_job_validate(cmd, g);
}

}  // namespace paictl
