// paictl job tag add|remove JOB TAG...

#include <cstdio>

#include <CLI/CLI.hpp>

#include "api/client.h"
#include "app.h"
#include "cluster/registry.h"
#include "cmd_job_common.h"
#include "exit_codes.h"
#include "output.h"

namespace paictl {

namespace {

struct TagOptions {
  std::string job;
  std::vector<std::string> tags;
  jobcli::RemoteOptions remote;
};

int run(const TagOptions& o, bool add, const Globals& g) {
  for (const auto& t : o.tags)
    if (t.empty() || t.find(',') != std::string::npos) {
      print_error("tag \"" + t + "\" must be non-empty and without ','");
      return kExitUsage;
    }
  auto target = jobcli::open_job(o.job, o.remote, g);
  if (!target) return kExitUsage;
  const auto& [conn, user, name, id] = *target;
  for (const auto& t : o.tags) {
    auto r = add ? conn.api->add_tag(user, name, t) : conn.api->remove_tag(user, name, t);
    if (!r.ok())
      return jobcli::report_api_error(conn.cluster->name, (add ? "tagging " : "untagging ") + id,
                                      *r.error);
    if (!g.quiet) std::printf("%s: %s tag %s\n", id.c_str(), add ? "added" : "removed", t.c_str());
  }
  return kExitOk;
}

void add_job_tag(CLI::App& cmd, Globals& g, bool add) {
  auto o = std::make_shared<TagOptions>();
  cmd.add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  cmd.add_option("TAG", o->tags, "Tags (no ',')")->required()->expected(1, -1);
  jobcli::add_remote_flags(&cmd, o->remote);
  cmd.footer(
      "Only the job's owner or an administrator may change its tags. 'paictl job list' shows "
      "them with -o json.");
  cmd.callback([o, add, &g]() { g.exit_code = run(*o, add, g); });
}

}  // namespace

void build_job_tag_add(CLI::App& cmd, Globals& g) {
  add_job_tag(cmd, g, true);
}
void build_job_tag_remove(CLI::App& cmd, Globals& g) {
  add_job_tag(cmd, g, false);
}

}  // namespace paictl
