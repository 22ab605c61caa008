// paictl job tag add|remove JOB TAG...; paictl job tag list JOB

#include <cstdio>

#include "api/client.h"
#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "job/job_target.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/printable.h"

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
                                      r.error());
    if (!g.quiet) std::printf("%s: %s tag %s\n", id.c_str(), add ? "added" : "removed", t.c_str());
  }
  return kExitOk;
}

void add_job_tag(Flags& cmd, Globals& g, bool add) {
  auto o = std::make_shared<TagOptions>();
  cmd.add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  cmd.add_option("TAG", o->tags, "Tags (no ',')")->required()->expected(1, -1);
  jobcli::add_remote_flags(&cmd, o->remote);
  cmd.footer(
      "Only the job's owner or an administrator may change its tags. 'paictl job list' shows "
      "them with -o json.");
  define_command(cmd, g, o, {.run = [add](const auto& o, Globals& g) { return run(o, add, g); }});
}

struct TagListOptions {
  std::string job;
  jobcli::RemoteOptions remote;
  std::string output = "text";
};

int run_list(const TagListOptions& o, const Globals& g) {
  auto target = jobcli::open_job(o.job, o.remote, g);
  if (!target) return kExitUsage;
  const auto& [conn, user, name, id] = *target;
  auto d = conn.api->get_job(user, name);
  if (!d.ok()) return jobcli::report_api_error(conn.cluster->name, "reading job " + id, d.error());
  std::vector<std::string> tags;
  if (d->contains("tags") && (*d)["tags"].is_array())
    for (const auto& t : (*d)["tags"])
      if (t.is_string()) tags.push_back(t.get<std::string>());
  if (is_structured(o.output)) {
    print_document(
        document("jobTags", Json{{"cluster", conn.cluster->name}, {"job", id}, {"tags", tags}}),
        o.output);
    return kExitOk;
  }
  for (const auto& t : tags) std::printf("%s\n", pai::util::printable(t).c_str());
  if (tags.empty() && !g.quiet) std::fprintf(stderr, "%s has no tags.\n", id.c_str());
  return kExitOk;
}

}  // namespace

void build_job_tag_list(Flags& cmd, Globals& g) {
  auto o = std::make_shared<TagListOptions>();
  cmd.add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  jobcli::add_remote_flags(&cmd, o->remote);
  add_output_option(cmd, o->output, g, false, {"tag"});
  cmd.footer("One tag a line. 'paictl job list --tag T' finds the jobs with a tag.\n\n");
  define_command(cmd, g, o, {.run = [](const auto& o, Globals& g) { return run_list(o, g); }});
}

void build_job_tag_add(Flags& cmd, Globals& g) {
  add_job_tag(cmd, g, true);
}
void build_job_tag_remove(Flags& cmd, Globals& g) {
  add_job_tag(cmd, g, false);
}

}  // namespace paictl
