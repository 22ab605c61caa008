// paictl hived why GROUP: why a group runs where it does, or why it waits
// (lib/hived/why.h). A waiting job's request comes from its config on the
// registered cluster, as OpenPAI's rest-server asks HiveD for it.

#include <chrono>
#include <cstdio>
#include <optional>
#include <set>

#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "hived/cmd_hived_common.h"
#include "hived/fit.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "hived/why.h"
#include "job/cell_verdict.h"
#include "job/hived_request.h"
#include "job/job_file.h"
#include "job/job_target.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/printable.h"

namespace paictl {

namespace {

using namespace hivedcli;

struct WhyOptions {
  HivedOptions h;
  std::string group;
  std::string config;
  std::string vc;
  int32_t priority = 0;
  int32_t pods = 1;
  int32_t gpus = 0;
  std::string leaf_type;
  std::string pinned;
};

// "running": where and at which priority.
// `all`: HiveD's groups, to name the victims of a preemption in progress.
int explain_running(const WhyOptions& o, const pai::hived::AffinityGroup& gr,
                    const std::vector<pai::hived::AffinityGroup>& all) {
  auto answer = pai::hived::explain_running(gr, all);
  if (is_structured(o.h.output)) {
    print_document(document("hivedWhy", pai::hived::to_json(answer)), o.h.output);
  } else {
    std::string text = pai::hived::to_text(answer, o.h.output == "wide");
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return kExitOk;
}

// Whether a group name names an OpenPAI job: "alice~train", "alice~train/default",
// or, with a registered cluster, "train" for one of your own jobs.
bool names_job(const std::string& group, bool have_cluster) {
  if (group.find('~') != std::string::npos) return true;
  return have_cluster && group.find('/') == std::string::npos;
}

// The requests of a job from its config on the registered cluster, as the
// rest-server would make them. nullopt after printing why (rc set).
std::optional<std::vector<pai::scheduler::GroupRequest>> job_requests(
    const jobcli::Connection& c, const std::string& job_id, const pai::hived::LiveState& live,
    std::string& source, int& rc) {
  auto parsed = jobcli::parse_job_id(job_id, c);
  if (!parsed) {
    rc = kExitUsage;
    return std::nullopt;
  }
  const auto& [user, name] = *parsed;
  std::string full = pai::api::job_id(user, name);
  auto job = c.api->get_job(user, name);
  if (!job.ok()) {
    if (job.error().status == 404) {
      print_error("HiveD has no group of job " + full + ", and " + c.cluster->name +
                  " has no such job");
      rc = kExitUsage;
    } else {
      rc = jobcli::report_api_error(c.cluster->name, "reading job " + full, job.error());
    }
    return std::nullopt;
  }
  std::string state;
  if (job->contains("jobStatus") && (*job)["jobStatus"].is_object())
    state = (*job)["jobStatus"].value("state", std::string());
  if (state == "SUCCEEDED" || state == "FAILED" || state == "STOPPED") {
    std::printf("%s has finished (%s) on %s: HiveD holds nothing for it\n", full.c_str(),
                pai::util::printable(state).c_str(), c.cluster->name.c_str());
    rc = kExitOk;
    return std::nullopt;
  }
  auto text = c.api->job_config(user, name);
  if (!text.ok()) {
    rc = jobcli::report_api_error(c.cluster->name, "reading the config of " + full, text.error());
    return std::nullopt;
  }
  auto file = pai::job::JobFile::parse(*text, full + "'s config on " + c.cluster->name);
  pai::job::JobRequest jr = pai::job::request_of(file);
  if (jr.name.empty()) jr.name = name;
  // An opportunistic job is measured in every SKU type, a guaranteed one in its VC's.
  bool oppo = jr.priority_class == "oppo";
  auto skus = c.api->sku_types(oppo ? std::string() : jr.virtual_cluster);
  if (!skus.ok()) {
    rc = jobcli::report_api_error(c.cluster->name, "reading the SKU types", skus.error());
    return std::nullopt;
  }
  std::set<std::string> leaf_types;
  for (const auto& l : live.leaves) leaf_types.insert(l.leaf_type);
  auto reqs = pai::job::hived_requests(jr, user, *skus, leaf_types);
  if (!reqs.ok()) {
    print_error(full + " cannot be asked of HiveD: " + reqs.error().message);
    rc = kExitUsage;
    return std::nullopt;
  }
  source = "the config of job " + full + " on " + c.cluster->name + " (" +
           (state.empty() ? std::string("state unknown") : pai::util::printable(state)) + ")" +
           (reqs->per_pod ? "; not gang-scheduled: one pod of each task role is judged" : "");
  return reqs->groups;
}

// A job's groups are USER~JOB/<group>: the ones HiveD holds explained, when
// it holds any.
std::optional<int> explain_held(const WhyOptions& o, const pai::hived::LiveState& live,
                                const std::string& job_id) {
  std::vector<const pai::hived::AffinityGroup*> held;
  for (const auto& gr : live.groups)
    if (pai::job::job_of_group(gr.name) == job_id) held.push_back(&gr);
  if (held.empty()) return std::nullopt;
  if (held.size() == 1) return explain_running(o, *held.front(), live.groups);
  if (is_structured(o.h.output)) {
    std::string names;
    for (const auto* gr : held) names += (names.empty() ? "" : ", ") + gr->name;
    print_error("job " + o.group + " has " + std::to_string(held.size()) +
                " affinity groups in HiveD: " + names);
    std::fprintf(stderr, "  hint: ask for one of them: paictl hived why %s\n",
                 held.front()->name.c_str());
    return kExitUsage;
  }
  for (const auto* gr : held) explain_running(o, *gr, live.groups);
  return kExitOk;
}

// The waiting group's requests: from the flags, or from the job's config on
// the registered cluster (only the group asked for, when it names one).
Step<std::vector<pai::scheduler::GroupRequest>> waiting_requests(
    const WhyOptions& o, const HivedConnection& h, const pai::hived::LiveState& live,
    const std::string& job_id, bool by_flags, std::string& source) {
  std::vector<pai::scheduler::GroupRequest> reqs;
  if (by_flags) {
    pai::scheduler::GroupRequest req;
    req.affinity_group = o.group;
    req.virtual_cluster = o.vc;
    req.priority = o.priority;
    req.leaf_cell_type = o.leaf_type;
    req.pinned_cell_id = o.pinned;
    req.members.push_back({o.pods, o.gpus});
    reqs.push_back(std::move(req));
    source = "the command line";
    return reqs;
  }
  int rc = kExitOk;
  auto r = job_requests(*h.rest, job_id, live, source, rc);
  if (!r) return ExitNow{rc};
  for (auto& req : *r)
    if (o.group.find('/') == std::string::npos || req.affinity_group == o.group)
      reqs.push_back(std::move(req));
  if (reqs.empty()) {
    print_error("job " + job_id + " has no affinity group " + o.group);
    return ExitNow{kExitUsage};
  }
  return reqs;
}

// The config HiveD runs: --config, else the one its cluster status implies
// (which does not show which virtual cells are pinned).
Step<std::shared_ptr<pai::config::HivedModel>> why_model(const WhyOptions& o, const Globals& g,
                                                         const HivedConnection& h,
                                                         const pai::hived::LiveState& live) {
  if (!o.config.empty()) {
    auto model = load_model(o.config, g);
    if (!model) return ExitNow{kExitUsage};
    return model;
  }
  auto built = pai::hived::model_of(live.status);
  if (!built) {
    print_error("HiveD at " + h.where + ": " + built.error().message);
    std::fprintf(stderr, "  hint: give the config HiveD runs with --config DIR\n");
    return ExitNow{kExitRemote};
  }
  return std::move(built).value();
}

int run_why(const WhyOptions& o, const Globals& g) {
  auto h = connect_hived(o.h, g);
  if (!h) return kExitUsage;
  auto one = h->client->affinity_group(o.group);
  if (one.ok()) {
    // A preemption in progress: the other groups name its victims (or preemptors).
    std::vector<pai::hived::AffinityGroup> all;
    if (one->state == "Preempting" || one->state == "BeingPreempted") {
      auto groups = h->client->affinity_groups();
      if (!groups.ok()) return report(*h, "reading the affinity groups", groups.error());
      all = std::move(*groups);
    }
    return explain_running(o, *one, all);
  }
  const auto& e = one.error();
  bool unknown = e.kind == pai::hived::Error::Kind::Http && e.status == 400 &&
                 e.message.find("does not exist") != std::string::npos;
  if (!unknown) return report(*h, "reading affinity group " + o.group, e);
  bool by_flags = !o.vc.empty() || o.gpus > 0;
  if (by_flags && (o.vc.empty() || o.gpus <= 0)) {
    print_error("a waiting group's request needs both --vc and --gpus");
    return kExitUsage;
  }
  const bool job = names_job(o.group, h->rest.has_value());
  if (!by_flags && !(job && h->rest)) {
    print_error("HiveD has no affinity group " + o.group +
                " (it is neither allocated nor preempting: it waits, or it does not exist)");
    std::fprintf(stderr,
                 "  hint: name an OpenPAI job as USER~JOB with --cluster, or give the group's "
                 "request: --vc VC --priority P --pods N --gpus G [--leaf-type SKU] [--config "
                 "DIR]\n");
    return kExitUsage;
  }
  int rc = kExitOk;
  auto live = read_live(*h, rc);
  if (!live) return rc;

  std::string job_id;
  if (job) {
    job_id = pai::job::job_of_group(o.group);
    if (h->rest) {
      auto p = jobcli::parse_job_id(job_id, *h->rest);
      if (!p) return kExitUsage;
      job_id = pai::api::job_id(p->first, p->second);
    }
    if (o.group.find('/') == std::string::npos)
      if (auto done = explain_held(o, *live, job_id)) return *done;
  }
  std::string source;
  auto reqs = waiting_requests(o, *h, *live, job_id, by_flags, source);
  if (!reqs) return reqs.error().code;
  auto model = why_model(o, g, *h, *live);
  if (!model) return model.error().code;
  const bool structured = is_structured(o.h.output);
  if (structured && reqs->size() > 1) {
    std::string names;
    for (const auto& r : *reqs) names += (names.empty() ? "" : ", ") + r.affinity_group;
    print_error("job " + o.group + " asks HiveD for " + std::to_string(reqs->size()) +
                " affinity groups: " + names);
    std::fprintf(stderr, "  hint: ask for one of them: paictl hived why %s\n",
                 reqs->front().affinity_group.c_str());
    return kExitUsage;
  }
  // wouldFit: the running jobs' expected ends from the cluster's job list
  // (each user's median run time), when a cluster is registered.
  pai::hived::ExpectedEnds ends;
  ends.now_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (h->rest) {
    auto by_job = pai::job::expected_ends(*h->rest->api, std::nullopt);
    for (const auto& gr : live->groups)
      if (auto it = by_job.find(pai::job::job_of_group(gr.name)); it != by_job.end())
        ends.by_group[gr.name] = it->second;
  }
  for (const auto& req : *reqs) {
    std::string name = by_flags ? o.group : req.affinity_group;
    if (!structured && !by_flags)
      std::printf("%s: the request from %s\n", name.c_str(), source.c_str());
    auto answer = pai::hived::judge_waiting(name, req, source, **model, *live, ends);
    if (!answer) {
      print_error("the HiveD config " + (o.config.empty() ? h->where : o.config) +
                  " cannot be scheduled on: " + answer.error().message);
      return kExitUsage;
    }
    if (structured) {
      print_document(document("hivedWhy", pai::hived::to_json(*answer)), o.h.output);
    } else {
      std::string text = pai::hived::to_text(*answer, o.h.output == "wide");
      std::fwrite(text.data(), 1, text.size(), stdout);
    }
  }
  return kExitOk;
}

}  // namespace

void build_hived_why(Flags& cmd, Globals& g) {
  auto o = std::make_shared<WhyOptions>();
  cmd.add_option("GROUP", o->group, "The affinity group (OpenPAI names it after the job)")
      ->required();
  add_hived_flags(&cmd, o->h, g);
  cmd.add_option("--config", o->config,
                 "The HiveD config HiveD runs (cluster directory or file), for a waiting group")
      ->type_name("PATH");
  cmd.add_option("--vc", o->vc, "A waiting group's virtual cluster")->type_name("VC");
  cmd.add_option("--priority", o->priority, "A waiting group's priority (-1 opportunistic)")
      ->check(Range(-1, 1000));
  cmd.add_option("--pods", o->pods, "A waiting group's pods")->check(Range(1, 100000));
  cmd.add_option("--gpus", o->gpus, "GPUs (leaf cells) per pod")->check(Range(1, 100000));
  cmd.add_option("--leaf-type", o->leaf_type, "The SKU (leafCellType) it asks for")
      ->type_name("SKU");
  cmd.add_option("--pinned", o->pinned, "The pinnedCellId it asks for")->type_name("ID");
  cmd.footer(
      "A running group: where it is, at which priority, and whether it was lazily preempted.\n"
      "An OpenPAI job (USER~JOB, or JOB for one of yours) is found by its groups, which are\n"
      "named USER~JOB/<group> (USER~JOB/default for a gang).\n"
      "A waiting group is not in HiveD's inspect API: its request is run through paictl's HiveD\n"
      "algorithm on the live state (the running groups rebuilt from their placements, bad nodes\n"
      "marked), and the reason is given in cells. The request of a waiting job comes from its\n"
      "config on the registered cluster, as OpenPAI's rest-server asks HiveD for it; another\n"
      "group's from --vc, --gpus and the other request flags. The config is --config, else the\n"
      "one HiveD's cluster status implies (it tells an idle pinned cell, which HiveD keeps\n"
      "bound, but not one in use: give --config when the VC has pinned cells).\n"
      "-o wide also gives a running group's leaf cells per virtual cell and its pods, and a\n"
      "waiting group's request and what it was judged on.\n\n"
      "EXIT STATUS:\n  0 explained, 2 bad usage or unknown group without a request, 3 HiveD "
      "could not be read\n");
  define_command(cmd, g, o,
                 {.validate = [](const WhyOptions& o, Usage& u) { validate_hived_flags(o.h, u); },
                  .run =
                      [](const auto& o, Globals& g) {
                        int rc = run_why(o, g);
                        print_timing(g);
                        return rc;
                      }});
}

}  // namespace paictl
