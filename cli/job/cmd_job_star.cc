// paictl job star|unstar JOB...: favourite jobs, kept in the cluster registry.
//
// OpenPAI has no favourites (microsoft/pai#2749 is open), so the starred jobs
// of a cluster are stored with that cluster's entry in the registry
// (`starred: [USER~NAME, ...]`), written like every registry change: under the
// file's lock, atomically, at mode 0600.

#include <algorithm>
#include <cstdio>

#include "api/client.h"
#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "diag/diagnostic.h"
#include "exit_codes.h"
#include "flags.h"
#include "job/job_target.h"
#include "output/output.h"

namespace paictl {

namespace {

struct StarOptions {
  std::vector<std::string> jobs;
  jobcli::RemoteOptions remote;
};

int run(const StarOptions& o, bool star, const Globals& g) {
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  auto conn = jobcli::connect(*reg, o.remote, g);
  if (!conn) return kExitUsage;
  std::vector<std::string> ids;
  for (const auto& j : o.jobs) {
    auto p = jobcli::parse_job_id(j, *conn);
    if (!p) return kExitUsage;
    // A star is for a job that exists; an unstar works for jobs that are gone too.
    if (star) {
      auto e = conn->api->job_exists(p->first, p->second);
      if (!e.ok())
        return jobcli::report_api_error(
            conn->cluster->name, "reading job " + pai::api::job_id(p->first, p->second), e.error());
      if (!*e) {
        print_error(conn->cluster->name + ": no job " + pai::api::job_id(p->first, p->second) +
                    " (check the name with 'paictl job list')");
        return kExitUsage;
      }
    }
    ids.push_back(pai::api::job_id(p->first, p->second));
  }
  const std::string cluster = conn->cluster->name;
  std::vector<std::string> changed;
  pai::diag::List diags;
  auto err = pai::cluster::update_file(
      reg->file_for(cluster),
      [&](pai::cluster::Config& c) -> pai::util::Result<void> {
        auto* cl = c.find(cluster);
        if (!cl) return pai::util::Error{"cluster " + cluster + " is no longer registered", {}};
        for (const auto& id : ids) {
          auto it = std::find(cl->starred.begin(), cl->starred.end(), id);
          if (star && it == cl->starred.end()) {
            cl->starred.push_back(id);
            changed.push_back(id);
          } else if (!star && it != cl->starred.end()) {
            cl->starred.erase(it);
            changed.push_back(id);
          }
        }
        return {};
      },
      diags);
  if (!err.ok()) {
    print_error(err.error().message);
    return kExitUsage;
  }
  if (!g.quiet)
    for (const auto& id : ids) {
      bool did = std::find(changed.begin(), changed.end(), id) != changed.end();
      std::printf("%s: %s\n", id.c_str(),
                  star ? (did ? "starred" : "was already starred")
                       : (did ? "unstarred" : "was not starred"));
    }
  return kExitOk;
}

void add_job_star(Flags& cmd, Globals& g, bool star) {
  auto o = std::make_shared<StarOptions>();
  cmd.add_option("JOB", o->jobs, "USER~NAME, or NAME for your own job")
      ->required()
      ->expected(1, -1);
  jobcli::add_remote_flags(&cmd, o->remote);
  cmd.footer(
      "Starred jobs are kept per cluster in the cluster registry (OpenPAI has no favourites); "
      "'paictl job list --starred' lists them.\n\n"
      "EXIT STATUS:\n"
      "  0 ok, 2 unknown job or bad usage, 3 the cluster failed\n\n");
  define_command(cmd, g, o, {.run = [star](const auto& o, Globals& g) { return run(o, star, g); }});
}

}  // namespace

void build_job_star(Flags& cmd, Globals& g) {
  add_job_star(cmd, g, true);
}
void build_job_unstar(Flags& cmd, Globals& g) {
  add_job_star(cmd, g, false);
}

}  // namespace paictl
