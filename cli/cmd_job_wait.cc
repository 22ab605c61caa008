// paictl job wait JOB

#include <CLI/CLI.hpp>

#include "app.h"
#include "cluster/registry.h"
#include "cmd_job_common.h"
#include "exit_codes.h"

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

void add_job_wait(CLI::App& parent, Globals& g) {
  auto o = std::make_shared<WaitCmdOptions>();
  CLI::App* cmd =
      parent.add_subcommand("wait", "Wait for a job to end; the exit code follows its outcome");
  cmd->add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  jobcli::add_remote_flags(cmd, o->remote);
  jobcli::add_wait_flags(cmd, o->wait);
  cmd->add_option("-o,--output", o->wait.output, "Output format of the final state")
      ->check(CLI::IsMember({"table", "json", "yaml"}))
      ->capture_default_str();
  cmd->footer(
      "State changes are shown on stderr when it is a terminal (or with -v).\n\n"
      "EXIT STATUS:\n"
      "  0 SUCCEEDED, 1 FAILED or STOPPED, 2 bad usage or unknown job, 3 the cluster failed,\n"
      "  4 still running when --timeout expired\n\n"
      "EXAMPLES:\n"
      "  paictl job wait pytorch_mnist\n"
      "  paictl job wait alice~run-42 --timeout 3600 && echo done\n"
      "  paictl job wait run-42 --interval 30 -o json\n");
  cmd->callback([o, &g]() { g.exit_code = run(*o, g); });
}

}  // namespace

static Registrar registrar({{"job", "wait"},
                            "Wait for a job to end (exit code: 0 succeeded, 1 failed)",
                            47,
                            add_job_wait});

}  // namespace paictl
