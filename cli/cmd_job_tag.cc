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

void add_job_tag(CLI::App& parent, Globals& g) {
  CLI::App* tag = parent.add_subcommand("tag", "Add or remove tags of a job");
  tag->require_subcommand(1);
  for (bool add : {true, false}) {
    auto o = std::make_shared<TagOptions>();
    CLI::App* cmd = tag->add_subcommand(add ? "add" : "remove",
                                        add ? "Add tags to a job" : "Remove tags from a job");
    cmd->add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
    cmd->add_option("TAG", o->tags, "Tags (no ',')")->required()->expected(1, -1);
    jobcli::add_remote_flags(cmd, o->remote);
    cmd->footer(
        "Only the job's owner or an administrator may change its tags. 'paictl job list' shows "
        "them with -o json.\n\n"
        "EXAMPLES:\n"
        "  paictl job tag add run-42 baseline best-lr\n"
        "  paictl job tag remove alice~run-42 best-lr --cluster lab\n");
    cmd->callback([o, add, &g]() { g.exit_code = run(*o, add, g); });
  }
  tag->footer(
      "EXAMPLES:\n"
      "  paictl job tag add run-42 baseline\n"
      "  paictl job tag remove run-42 baseline\n");
}

}  // namespace

static Registrar registrar({{"job", "tag"}, "Add or remove job tags", 48, add_job_tag});

}  // namespace paictl
