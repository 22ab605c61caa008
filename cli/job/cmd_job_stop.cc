// paictl job stop JOB...

#include <cstdio>

#include "api/client.h"
#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "job/follow.h"
#include "job/job_target.h"
#include "output/output.h"
#include "util/printable.h"

namespace paictl {

namespace {

struct StopOptions {
  std::vector<std::string> jobs;
  jobcli::RemoteOptions remote;
  bool wait = false;
  jobcli::WaitOptions wait_opts;
};

int run(const StopOptions& o, const Globals& g) {
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  auto conn = jobcli::connect(*reg, o.remote, g);
  if (!conn) return kExitUsage;
  int rc = kExitOk;
  for (const auto& id : o.jobs) {
    auto parsed = jobcli::parse_job_id(id, *conn);
    if (!parsed) return kExitUsage;
    std::string full = pai::api::job_id(parsed->first, parsed->second);
    // The server accepts STOP for a job that has ended and changes nothing:
    // say so instead of claiming a stop was requested.
    auto job = conn->api->get_job(parsed->first, parsed->second);
    if (!job.ok()) {
      int e = jobcli::report_api_error(conn->cluster->name, "reading job " + full, job.error());
      rc = rc == kExitOk ? e : rc;
      continue;
    }
    std::string state;
    if (job->contains("jobStatus") && (*job)["jobStatus"].is_object())
      state = (*job)["jobStatus"].value("state", std::string());
    if (state == "SUCCEEDED" || state == "FAILED" || state == "STOPPED") {
      if (!g.quiet)
        std::printf("%s: had already finished (%s) on %s; nothing to stop\n", full.c_str(),
                    pai::util::printable(state).c_str(), conn->cluster->name.c_str());
      continue;
    }
    auto r = conn->api->set_execution_type(parsed->first, parsed->second, "STOP");
    if (!r.ok()) {
      int e = jobcli::report_api_error(conn->cluster->name, "stopping " + full, r.error());
      rc = rc == kExitOk ? e : rc;
      continue;
    }
    if (!g.quiet)
      std::printf("%s: stop requested on %s\n", full.c_str(), conn->cluster->name.c_str());
    if (o.wait) {
      int w = jobcli::wait_for_job(*conn, parsed->first, parsed->second, o.wait_opts, g);
      // A stopped job is what was asked for.
      if (w != kExitOk && w != kExitFindings) rc = w;
    }
  }
  return rc;
}

void add_job_stop(Flags& parent, Globals& g) {
  auto o = std::make_shared<StopOptions>();
  Flags* cmd = &parent;
  cmd->add_option("JOB", o->jobs, "USER~NAME, or NAME for your own job")
      ->required()
      ->expected(1, -1);
  jobcli::add_remote_flags(cmd, o->remote);
  cmd->add_flag("--wait", o->wait, "Wait until the job has ended");
  jobcli::add_wait_flags(cmd, o->wait_opts, "wait-");
  cmd->footer(
      "Only the job's owner or an administrator may stop it.\n\n"
      "EXIT STATUS:\n"
      "  0 stop requested (or the job had already finished), 2 unknown job or not allowed, 3 the "
      "cluster failed\n\n");
  define_command(*cmd, g, o, {.run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace

void build_job_stop(Flags& cmd, Globals& g) {
  add_job_stop(cmd, g);
}

}  // namespace paictl
