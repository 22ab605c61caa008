// paictl job wait JOB

#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "job/follow.h"
#include "job/job_target.h"
#include "output/printer.h"

namespace paictl {

namespace {

struct WaitCmdOptions {
  std::string job;
  jobcli::RemoteOptions remote;
  jobcli::WaitOptions wait;
};

int run(const WaitCmdOptions& o, const Globals& g) {
  auto t = jobcli::open_job(o.job, o.remote, g);
  if (!t) return kExitUsage;
  return jobcli::wait_for_job(t->conn, t->user, t->name, o.wait, g);
}

void add_job_wait(Flags& parent, Globals& g) {
  auto o = std::make_shared<WaitCmdOptions>();
  Flags* cmd = &parent;
  cmd->add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  jobcli::add_remote_flags(cmd, o->remote);
  jobcli::add_wait_flags(cmd, o->wait);
  add_output_option(*cmd, o->wait.output, g);
  cmd->footer(
      "State changes are shown on stderr when it is a terminal (or with -v).\n\n"
      "EXIT STATUS:\n"
      "  0 SUCCEEDED, 1 FAILED or STOPPED, 2 bad usage or unknown job, 3 the cluster failed,\n"
      "  4 still running when --timeout expired\n\n");
  define_command(*cmd, g, o, {.run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace

void build_job_wait(Flags& cmd, Globals& g) {
  add_job_wait(cmd, g);
}

}  // namespace paictl
