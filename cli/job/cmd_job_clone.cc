// paictl job clone JOB [--from C] [--cluster C] [--name N] [--vc VC] [--param k=v]... [--dry-run]
// paictl job resubmit JOB [--name N] [--force] [--dry-run]
// paictl job sweep FILE --param k=v1,v2 ... [--max-parallel N] [--sweep-id ID] [--dry-run]

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "api/client.h"
#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "flags.h"
#include "job/emit.h"
#include "job/follow.h"
#include "job/job_target.h"
#include "job/job_usage.h"
#include "job/placement.h"
#include "job/sweep.h"
#include "job/validate.h"
#include "output/diag_output.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/printable.h"
#include "util/strings.h"
#include "util/time.h"

namespace paictl {

namespace {

// "20261201-120304" (UTC): a stamp for generated names.
std::string utc_stamp() {
  return pai::util::format_utc(std::time(nullptr), "%Y%m%d-%H%M%S");
}

// Validates `f` with `ov` as the server would; prints the findings. false on errors.
bool valid(const pai::job::JobFile& f, const pai::job::Overrides& ov, const Globals& g,
           const std::string& what) {
  pai::diag::List diags;
  pai::job::ValidateOptions vo;
  vo.overrides = ov;
  pai::job::validate(f, diags, vo);
  diags.sort({f.path});
  print_findings_stderr(diags, g);
  if (diags.has_errors()) {
    print_error(what + " has errors; the server would refuse it. Nothing was sent.");
    return false;
  }
  return true;
}

// Checks the job against the target cluster (VC, permission, SKU, resources,
// storages, name). Prints the failed checks; the exit code when the cluster
// cannot take it.
Step<> check_target(const jobcli::Connection& c, const pai::job::JobRequest& req, bool show) {
  auto facts = pai::job::gather_facts(*c.api, c.cluster->name, c.cluster->user, req);
  if (facts.error)
    return ExitNow{jobcli::report_api_error(c.cluster->name, "checking the job against the cluster",
                                            *facts.error)};
  auto ev = pai::job::evaluate(req, facts);
  if (!ev.eligible || show) {
    Table t({{"CHECK"}, {"RESULT"}, {"DETAIL"}});
    for (const auto& ch : ev.checks) t.add({ch.name, ch.ok ? "ok" : "FAILED", ch.detail});
    std::string out = pai::util::printable(render_table(t), true);
    std::fwrite(out.data(), 1, out.size(), ev.eligible ? stdout : stderr);
  }
  if (!ev.eligible) {
    print_error(c.cluster->name + " cannot take " + pai::api::job_id(c.cluster->user, req.name) +
                ": " + ev.reason + "; nothing was sent");
    return ExitNow{kExitUsage};
  }
  return {};
}

// The stored config of a job, parsed. The server masks `secrets:` in it, so a
// job that had secrets cannot be copied from the server.
Step<pai::job::JobFile> fetch_config(const jobcli::Connection& c, const std::string& user,
                                     const std::string& name) {
  const std::string id = pai::api::job_id(user, name);
  auto text = c.api->job_config(user, name);
  if (!text.ok())
    return ExitNow{
        jobcli::report_api_error(c.cluster->name, "reading the config of " + id, text.error())};
  pai::job::JobFile f = pai::job::JobFile::parse(*text, c.cluster->name + ":" + id + "/config");
  if (!f.root) {
    print_error(c.cluster->name + ": the config of " + id + " is not a job document");
    return ExitNow{kExitRemote};
  }
  if (const auto* s = f.get("secrets"); s && s->is_scalar()) {
    print_error(id +
                " has secrets, which the server keeps masked (\"******\") in the config it "
                "returns; they cannot be copied");
    std::fprintf(stderr,
                 "  hint: submit the original file instead: paictl job submit FILE --name NAME\n");
    return ExitNow{kExitUsage};
  }
  return f;
}

// Submits `f` with `ov` to `c` after the checks; prints "<id> submitted ...".
int submit(const jobcli::Connection& c, const pai::job::JobFile& f, const pai::job::Overrides& ov,
           bool dry_run, const std::vector<std::string>& tags, const std::string& what,
           const Globals& g, const std::string& output) {
  if (!valid(f, ov, g, what)) return kExitUsage;
  std::string body = pai::job::submission_body(f, ov);
  if (body.size() > pai::job::kMaxBodyBytes) {
    print_error("the job is " + std::to_string(body.size()) +
                " bytes; the server accepts at most " + std::to_string(pai::job::kMaxBodyBytes));
    return kExitUsage;
  }
  pai::job::JobRequest req = pai::job::request_of(f, ov);
  // The checks are shown with a text --dry-run (and on stderr when one fails).
  if (auto t = check_target(c, req, dry_run && !is_structured(output)); !t.ok())
    return t.error().code;
  const std::string id = pai::api::job_id(c.cluster->user, req.name);
  if (dry_run) {
    std::string masked = pai::job::emit_job(f, ov, /*mask_secrets=*/true);
    if (is_structured(output)) {
      print_document(document("jobSubmission", Json{{"dryRun", true},
                                                    {"cluster", c.cluster->name},
                                                    {"job", id},
                                                    {"name", req.name},
                                                    {"virtualCluster", req.virtual_cluster},
                                                    {"tags", tags},
                                                    {"body", masked}}),
                     output);
    } else {
      std::string out = "would submit " + id + " to " + c.cluster->name + " (VC " +
                        req.virtual_cluster + ")" +
                        (tags.empty() ? "" : ", tags " + pai::util::join(tags, ", ")) +
                        "\n--- body ---\n" + masked;
      if (!out.empty() && out.back() != '\n') out += "\n";
      std::fwrite(out.data(), 1, out.size(), stdout);
    }
    return kExitOk;
  }
  auto r = c.api->submit_job(body);
  if (!r.ok()) return jobcli::report_api_error(c.cluster->name, "submitting " + id, r.error());
  for (const auto& t : tags) {
    auto tr = c.api->add_tag(c.cluster->user, req.name, t);
    if (!tr.ok()) jobcli::report_api_error(c.cluster->name, "tagging " + id, tr.error());
  }
  if (is_structured(output))
    print_document(document("jobSubmission", Json{{"dryRun", false},
                                                  {"cluster", c.cluster->name},
                                                  {"job", id},
                                                  {"user", c.cluster->user},
                                                  {"name", req.name},
                                                  {"virtualCluster", req.virtual_cluster},
                                                  {"tags", tags},
                                                  {"message", *r}}),
                   output);
  else if (!g.quiet)
    std::printf("%s submitted to %s (VC %s)\n", id.c_str(), c.cluster->name.c_str(),
                req.virtual_cluster.c_str());
  return kExitOk;
}

// --- clone ---------------------------------------------------------------------------

struct CloneOptions {
  std::string job;
  std::string from;              // the job's cluster ("" = the current one)
  jobcli::RemoteOptions remote;  // --cluster: where the copy goes ("" = the job's cluster)
  std::string name;
  std::string vc;
  std::vector<std::string> params;
  bool dry_run = false;
  std::string output = "table";
};

int run_clone(const CloneOptions& o, const Globals& g) {
  auto ov = jobcli::make_overrides(o.params, o.name, o.vc);
  if (!ov) return kExitUsage;
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  jobcli::RemoteOptions src_opt = o.remote;
  src_opt.cluster = o.from;
  auto src = jobcli::connect(*reg, src_opt, g);
  if (!src) return kExitUsage;
  auto id = jobcli::parse_job_id(o.job, *src);
  if (!id) return kExitUsage;
  auto f = fetch_config(*src, id->first, id->second);
  if (!f.ok()) return f.error().code;
  std::optional<jobcli::Connection> dst = src;
  if (!o.remote.cluster.empty() && o.remote.cluster != src->cluster->name) {
    dst = jobcli::connect_named(*reg, o.remote.cluster, o.remote, g);
    if (!dst) return kExitUsage;
  }
  if (!ov->name) ov->name = pai::job::job_name_of(id->second + "-clone-" + utc_stamp());
  return submit(*dst, *f, *ov, o.dry_run, {},
                "the config of " + pai::api::job_id(id->first, id->second), g, o.output);
}

// --- resubmit ------------------------------------------------------------------------

struct ResubmitOptions {
  std::string job;
  jobcli::RemoteOptions remote;
  std::string name;
  bool force = false;
  bool dry_run = false;
  std::string output = "table";
};

int run_resubmit(const ResubmitOptions& o, const Globals& g) {
  auto ov = jobcli::make_overrides({}, o.name, "");
  if (!ov) return kExitUsage;
  auto target = jobcli::open_job(o.job, o.remote, g);
  if (!target) return kExitUsage;
  const auto& [conn, user, name, id] = *target;
  auto d = conn.api->get_job(user, name);
  if (!d.ok()) return jobcli::report_api_error(conn.cluster->name, "reading job " + id, d.error());
  std::string state = d->contains("jobStatus") && (*d)["jobStatus"].is_object()
                          ? (*d)["jobStatus"].value("state", std::string("?"))
                          : "?";
  if (state != "FAILED" && state != "STOPPED" && !o.force) {
    print_error(id + " is " + state +
                "; resubmit is for failed or stopped jobs (--force for others)");
    return kExitUsage;
  }
  auto f = fetch_config(conn, user, name);
  if (!f.ok()) return f.error().code;
  if (!ov->name) {
    // NAME-r1, NAME-r2, ...: the first free one (a resubmitted job's suffix is replaced).
    std::string base = name;
    size_t r = base.rfind("-r");
    if (r != std::string::npos && r + 2 < base.size() &&
        base.find_first_not_of("0123456789", r + 2) == std::string::npos)
      base.resize(r);
    for (int k = 1; k <= 100 && !ov->name; ++k) {
      std::string candidate = pai::job::job_name_of(base + "-r" + std::to_string(k));
      auto e = conn.api->job_exists(conn.cluster->user, candidate);
      if (!e.ok())
        return jobcli::report_api_error(conn.cluster->name, "looking for a free name", e.error());
      if (!*e) ov->name = candidate;
    }
    if (!ov->name) {
      print_error("no free name " + base + "-r1 ... -r100; give one with --name");
      return kExitUsage;
    }
  }
  return submit(conn, *f, *ov, o.dry_run, {"resubmit-of-" + name}, "the config of " + id, g,
                o.output);
}

// --- sweep ---------------------------------------------------------------------------

struct SweepOptions {
  std::string file;
  jobcli::RemoteOptions remote;
  std::vector<std::string> params;  // k=v1,v2,...
  std::string vc;
  std::string sweep_id;
  int max_parallel = 0;
  double interval = 10;
  bool dry_run = false;
  std::string output = "table";
};

using Axes = std::vector<pai::job::SweepAxis>;

// The axes, in the order given; values split at ','. Reports every bad --param
// into `u` (a --param given twice keeps its first values).
Axes sweep_axes(const std::vector<std::string>& params, Usage& u) {
  Axes axes;
  for (const auto& p : params) {
    auto po = pai::job::parse_param(p);
    if (!po.ok()) {
      u.error(po.error().message, "--param NAME=V1,V2,...");
      continue;
    }
    std::vector<std::string> values;
    for (auto v : pai::util::split(po->value, ',')) values.emplace_back(pai::util::trim(v));
    if (std::find(values.begin(), values.end(), "") != values.end()) {
      u.error("--param " + p + ": an empty value");
      continue;
    }
    bool twice = false;
    for (const auto& a : axes) twice |= a.name == po->name;
    if (twice) {
      u.error("--param " + po->name + " is given twice",
              "give its values as one comma list: --param " + po->name + "=V1,V2,...");
      continue;
    }
    axes.push_back({po->name, values});
  }
  return axes;
}

void validate_sweep(const SweepOptions& o, Usage& u) {
  Axes axes = sweep_axes(o.params, u);
  u.error_if(o.params.empty(), "a sweep needs at least one --param NAME=V1,V2,...");
  size_t total = 1;
  for (const auto& a : axes) total = std::min<size_t>(total * a.values.size(), 1001);
  u.error_if(total > 1000, "the sweep has more than 1000 jobs", "narrow the --param lists");
}

int run_sweep(const SweepOptions& o, const Globals& g) {
  Usage ignored;  // validate_sweep reported them
  Axes axes = sweep_axes(o.params, ignored);
  pai::job::JobFile f = pai::job::JobFile::load(o.file);
  if (!f.read_error.empty()) {
    print_error("cannot read " + o.file + ": " + f.read_error);
    return kExitUsage;
  }
  std::string base = f.get("name") && f.get("name")->is_scalar() ? f.get("name")->scalar() : "job";
  std::string sweep_id = o.sweep_id.empty() ? utc_stamp() : o.sweep_id;
  std::string tag = "sweep-" + pai::job::job_name_of(base + "-" + sweep_id);
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  auto conn = jobcli::connect(*reg, o.remote, g);
  if (!conn) return kExitUsage;

  // Every combination: the last --param changes fastest.
  auto swept = pai::job::sweep_jobs(base, sweep_id, axes, o.vc);
  if (!swept.ok()) {
    print_error(swept.error().message);
    return kExitUsage;
  }
  const std::vector<pai::job::SweepJob>& jobs = *swept;
  // The file and the first combination are checked before anything is sent.
  if (!valid(f, jobs[0].overrides, g, o.file)) return kExitUsage;
  pai::job::JobRequest req = pai::job::request_of(f, jobs[0].overrides);
  if (auto t = check_target(*conn, req, false); !t.ok()) return t.error().code;
  for (size_t i = 1; i < jobs.size(); ++i) {
    auto e = conn->api->job_exists(conn->cluster->user, *jobs[i].overrides.name);
    if (!e.ok())
      return jobcli::report_api_error(conn->cluster->name, "checking the names", e.error());
    if (*e) {
      print_error(conn->cluster->name + " already has a job " +
                  pai::api::job_id(conn->cluster->user, *jobs[i].overrides.name) +
                  "; pick another --sweep-id. Nothing was sent.");
      return kExitUsage;
    }
  }

  if (o.dry_run) {
    if (is_structured(o.output)) {
      jobcli::Json items = jobcli::Json::array();
      for (const auto& [label, ov] : jobs) {
        jobcli::Json params = jobcli::Json::object();
        for (const auto& p : ov.params) params[p.name] = p.value;
        items.push_back(
            {{"job", pai::api::job_id(conn->cluster->user, *ov.name)}, {"parameters", params}});
      }
      jobcli::Json doc = list_document("jobSweep", items);
      doc["cluster"] = conn->cluster->name;
      doc["tag"] = tag;
      doc["dryRun"] = true;
      print_document(doc, o.output);
    } else {
      Table t({{"JOB"}, {"PARAMETERS"}});
      for (const auto& [label, ov] : jobs) {
        std::string ps;
        for (const auto& p : ov.params) ps += (ps.empty() ? "" : " ") + p.name + "=" + p.value;
        t.add({pai::api::job_id(conn->cluster->user, *ov.name), ps});
      }
      std::string out =
          "would submit " + std::to_string(jobs.size()) + " jobs to " + conn->cluster->name +
          ", tagged " + tag +
          (o.max_parallel > 0 ? ", at most " + std::to_string(o.max_parallel) + " at a time" : "") +
          "\n\n" + render_table(t);
      out = pai::util::printable(out, true);
      std::fwrite(out.data(), 1, out.size(), stdout);
    }
    return kExitOk;
  }

  jobcli::catch_interrupt();
  std::vector<std::string> running;  // names submitted and not ended (with --max-parallel)
  jobcli::Json items = jobcli::Json::array();
  int submitted = 0;
  for (const auto& [label, ov] : jobs) {
    while (o.max_parallel > 0 && static_cast<int>(running.size()) >= o.max_parallel) {
      if (!jobcli::pause_for(o.interval)) {
        print_error("interrupted: " + std::to_string(submitted) + " of " +
                    std::to_string(jobs.size()) + " jobs submitted (tag " + tag + ")");
        return kExitUsage;
      }
      std::vector<std::string> still;
      for (const auto& n : running) {
        auto d = conn->api->get_job(conn->cluster->user, n);
        if (!d.ok())
          return jobcli::report_api_error(conn->cluster->name, "reading job " + n, d.error());
        std::string st = d->contains("jobStatus") && (*d)["jobStatus"].is_object()
                             ? (*d)["jobStatus"].value("state", std::string())
                             : std::string();
        if (!jobcli::is_final_state(st)) still.push_back(n);
      }
      running = std::move(still);
    }
    std::string body = pai::job::submission_body(f, ov);
    const std::string id = pai::api::job_id(conn->cluster->user, *ov.name);
    auto r = conn->api->submit_job(body);
    if (!r.ok()) {
      int e = jobcli::report_api_error(conn->cluster->name, "submitting " + id, r.error());
      print_error(std::to_string(submitted) + " of " + std::to_string(jobs.size()) +
                  " jobs were submitted (tag " + tag + ")");
      return e;
    }
    auto tr = conn->api->add_tag(conn->cluster->user, *ov.name, tag);
    if (!tr.ok()) jobcli::report_api_error(conn->cluster->name, "tagging " + id, tr.error());
    ++submitted;
    running.push_back(*ov.name);
    jobcli::Json params = jobcli::Json::object();
    for (const auto& p : ov.params) params[p.name] = p.value;
    items.push_back({{"job", id}, {"parameters", params}});
    if (!is_structured(o.output) && !g.quiet)
      std::printf("%s submitted (%s)\n", id.c_str(), label.c_str());
    std::fflush(stdout);
  }
  if (is_structured(o.output)) {
    jobcli::Json doc = list_document("jobSweep", items);
    doc["cluster"] = conn->cluster->name;
    doc["tag"] = tag;
    doc["dryRun"] = false;
    print_document(doc, o.output);
  } else if (!g.quiet) {
    std::printf("%d jobs tagged %s; follow them with: paictl job list --tag %s\n", submitted,
                tag.c_str(), tag.c_str());
  }
  return kExitOk;
}

}  // namespace

void build_job_clone(Flags& cmd, Globals& g) {
  auto o = std::make_shared<CloneOptions>();
  cmd.add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  cmd.add_option("--from", o->from, "The cluster the job is on (default: the current cluster)")
      ->type_name("NAME");
  jobcli::add_remote_flags(&cmd, o->remote);
  cmd.get_option("--cluster")
      ->description("Where the copy goes (default: the job's cluster); checked first");
  cmd.add_option("--name", o->name, "The copy's name (default: NAME-clone-<UTC time>)");
  cmd.add_option("--vc", o->vc, "Virtual cluster of the copy");
  cmd.add_option("--param", o->params, "Set parameter NAME in the copy (repeatable)")
      ->type_name("NAME=VALUE");
  cmd.add_flag("--dry-run", o->dry_run, "Check the target and show the copy; send nothing");
  add_output_option(cmd, o->output, g);
  cmd.footer(
      "The job's config comes from the server (GET .../config). Before sending, the target "
      "cluster is asked:\nthe VC exists and you may use it, the SKU types exist and fit, the "
      "storages exist, the name is free.\nJobs with secrets cannot be cloned: the server masks "
      "them in the stored config.\n\n"
      "EXIT STATUS:\n"
      "  0 submitted, 2 bad usage, unknown job, or the target cannot take it, 3 a cluster "
      "failed\n\n");
  define_command(cmd, g, o,
                 {.validate = [](const CloneOptions& o,
                                 Usage& u) { jobcli::validate_overrides(o.params, o.name, u); },
                  .run = [](const auto& o, Globals& g) { return run_clone(o, g); }});
}

void build_job_resubmit(Flags& cmd, Globals& g) {
  auto o = std::make_shared<ResubmitOptions>();
  cmd.add_option("JOB", o->job, "USER~NAME, or NAME for your own job")->required();
  jobcli::add_remote_flags(&cmd, o->remote);
  cmd.add_option("--name", o->name,
                 "The new job's name (default: NAME-r1, -r2, ... the first free)");
  cmd.add_flag("--force", o->force, "Resubmit a job that has not failed too");
  cmd.add_flag("--dry-run", o->dry_run, "Check and show the new job; send nothing");
  add_output_option(cmd, o->output, g);
  cmd.footer(
      "The new job gets the failed job's config from the server and the tag resubmit-of-NAME.\n\n"
      "EXIT STATUS:\n"
      "  0 submitted, 2 bad usage, unknown job, a job that did not fail, 3 the cluster "
      "failed\n\n");
  define_command(cmd, g, o,
                 {.validate = [](const ResubmitOptions& o,
                                 Usage& u) { jobcli::validate_overrides({}, o.name, u); },
                  .run = [](const auto& o, Globals& g) { return run_resubmit(o, g); }});
}

void build_job_sweep(Flags& cmd, Globals& g) {
  auto o = std::make_shared<SweepOptions>();
  cmd.add_option("FILE", o->file, "Job protocol v2 file")->required();
  jobcli::add_remote_flags(&cmd, o->remote);
  cmd.add_option("--param", o->params,
                 "A parameter and its values, comma separated (repeatable; every combination "
                 "becomes a job)")
      ->type_name("NAME=V1,V2,...")
      ->required();
  cmd.add_option("--vc", o->vc, "Virtual cluster of every job");
  cmd.add_option("--sweep-id", o->sweep_id,
                 "Part of every name and of the shared tag (default: the UTC time)");
  cmd.add_option("--max-parallel", o->max_parallel,
                 "At most N jobs of the sweep unfinished at a time (0: submit all at once)")
      ->check(NonNegativeNumber);
  cmd.add_option("--interval", o->interval,
                 "With --max-parallel: seconds between two looks at the running jobs")
      ->check(Range(0.05, 3600.0))
      ->capture_default_str();
  cmd.add_flag("--dry-run", o->dry_run, "Check and list the jobs; send nothing");
  add_output_option(cmd, o->output, g);
  cmd.footer(
      "Jobs are named NAME-ID-<param><value>... (characters a name cannot hold become '_') and "
      "tagged\nsweep-NAME-ID, so 'paictl job list --tag sweep-NAME-ID' follows them.\n\n"
      "EXIT STATUS:\n"
      "  0 every job submitted, 2 bad usage or invalid job, 3 the cluster failed\n\n");
  define_command(cmd, g, o, {.validate = validate_sweep, .run = [](const auto& o, Globals& g) {
                               return run_sweep(o, g);
                             }});
}

}  // namespace paictl
