// paictl job submit FILE [--cluster NAME|auto] [--vc VC] [--name N] [--param k=v] [--dry-run]
// [--wait]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <future>
#include <map>
#include <set>

#include "api/client.h"
#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "flags.h"
#include "hived/cmd_hived_common.h"
#include "hived/fit.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "http/client.h"
#include "job/emit.h"
#include "job/follow.h"
#include "job/hived_request.h"
#include "job/job_usage.h"
#include "job/placement.h"
#include "job/validate.h"
#include "output/diag_output.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/strings.h"
#include "util/time.h"

namespace paictl {

namespace {

struct SubmitOptions {
  std::string file;
  jobcli::RemoteOptions remote;
  std::vector<std::string> params;
  std::string name;
  std::string vc;
  bool export_params = false;
  bool dry_run = false;
  bool wait = false;
  jobcli::WaitOptions wait_opts;
  std::string output = "table";
  std::string expected_duration;  // --expected-duration
  bool explain = false;
};

std::string n0(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(v - std::round(v)) < 1e-9 ? "%.0f" : "%.1f", v);
  return buf;
}

// --- --cluster auto on HiveD's cells ---------------------------------------------------

// When the running jobs of a cluster are expected to end: each running job's
// launch plus its expected duration: --expected-duration when given, else the
// median run time (launch to completion) of the same user's finished jobs in
// the cluster's job list. Keyed by the job (USER~NAME); its affinity groups
// are USER~NAME/<group>.
std::map<std::string, double> expected_ends(const jobcli::Connection& c,
                                            std::optional<double> duration_s) {
  std::map<std::string, double> out;
  pai::api::JobFilter f;
  f.state = duration_s ? "RUNNING" : "RUNNING,SUCCEEDED,FAILED,STOPPED";
  f.limit = 5000;
  auto r = c.api->list_jobs(f);
  if (!r.ok() || !r->is_array()) return out;
  auto num = [](const pai::api::Json& j, const char* k) -> std::optional<double> {
    auto it = j.find(k);
    if (it == j.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
  };
  auto str = [](const pai::api::Json& j, const char* k) {
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::map<std::string, std::vector<double>> runs;  // user -> run times (s)
  for (const auto& j : *r) {
    if (!j.is_object()) continue;
    std::string state = str(j, "state");
    auto launched = num(j, "launchedTime"), completed = num(j, "completedTime");
    if (state != "RUNNING" && launched && completed && *completed >= *launched)
      runs[str(j, "username")].push_back((*completed - *launched) / 1000);
  }
  for (auto& [user, v] : runs) std::sort(v.begin(), v.end());
  for (const auto& j : *r) {
    if (!j.is_object() || str(j, "state") != "RUNNING") continue;
    auto launched = num(j, "launchedTime");
    if (!launched) continue;
    std::string user = str(j, "username");
    std::optional<double> d = duration_s;
    if (!d)
      if (auto it = runs.find(user); it != runs.end() && !it->second.empty())
        d = it->second[it->second.size() / 2];
    if (d) out[pai::api::job_id(user, str(j, "name"))] = *launched / 1000 + *d;
  }
  return out;
}

// When one cluster's answers (HiveD's two and its job list) had all arrived,
// and the wall and CPU time of its thread from then to its verdict (-v).
struct VerdictTiming {
  std::chrono::steady_clock::time_point arrived{};
  double after_ms = -1, after_cpu_ms = -1;
  size_t bytes = 0;
};

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// HiveD's verdict for the job on one cluster's live state, or why there is none.
pai::job::CellVerdict cell_verdict(const jobcli::Connection& c, const pai::job::JobRequest& job,
                                   const pai::job::ClusterFacts& facts,
                                   std::optional<double> duration_s, double timeout_s,
                                   VerdictTiming& timing) {
  pai::job::CellVerdict v;
  for (const auto& tr : job.task_roles)
    if (!tr.pinned_cell.empty()) {
      v.why_unknown = "task role " + tr.name +
                      " asks for a pinned cell, which HiveD's inspect API does not show";
      return v;
    }
  if (!facts.skus || facts.error) {
    v.why_unknown = "the VC's SKU types are not known";
    return v;
  }
  pai::http::Options hopt;
  hopt.timeout_s = timeout_s;
  hopt.connect_timeout_s = std::min(5.0, timeout_s);
  hopt.retry.max_attempts = 1;  // a cluster without HiveD answers at once
  hopt.max_response_bytes = 1u << 30;
  hopt.tls.ca_file = c.cluster->ca_file;
  hopt.tls.insecure = c.cluster->insecure;
  pai::http::CurlClient http(hopt);
  std::string token = pai::cluster::read_token(*c.cluster).value_or(std::string());
  std::string base =
      !c.cluster->hived.empty() ? c.cluster->hived : pai::hived::base_behind_pylon(c.cluster->uri);
  pai::hived::Client client(http, base, token, pai::http::host_of(c.cluster->uri));
  auto st = client.get("/v1/inspect/clusterstatus");
  if (!st.ok()) {
    v.why_unknown = "no HiveD inspect API at " + pai::http::redact_url(base) + " (" +
                    st.error().summary() + ")";
    return v;
  }
  auto gr = client.get("/v1/inspect/affinitygroups/");
  if (!gr.ok()) {
    v.why_unknown = "HiveD's affinity groups could not be read (" + gr.error().summary() + ")";
    return v;
  }
  // The running jobs' expected ends come from the cluster's job list, the last answer.
  auto ends = expected_ends(c, duration_s);
  timing.arrived = std::chrono::steady_clock::now();
  timing.bytes = st->size() + gr->size();
  const double cpu0 = thread_cpu_ms();
  struct Done {
    VerdictTiming& t;
    double cpu0;
    ~Done() {
      t.after_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t.arrived)
              .count();
      t.after_cpu_ms = thread_cpu_ms() - cpu0;
    }
  } done{timing, cpu0};
  auto ps = pai::hived::parse_cluster_status(*st);
  auto pg = pai::hived::parse_affinity_groups(*gr);
  if (!ps.ok() || !pg.ok()) {
    v.why_unknown = "HiveD's answer is not what its inspect API gives: " +
                    (ps.ok() ? pg.error().message : ps.error().message);
    return v;
  }
  auto live = pai::hived::index_live(std::move(ps).value(), std::move(pg).value());

  // The job as the rest-server asks HiveD for it (lib/job/hived_request.h).
  std::set<std::string> leaf_types;
  for (const auto& l : live.leaves) leaf_types.insert(l.leaf_type);
  auto groups = pai::job::hived_requests(job, facts.user, *facts.skus, leaf_types);
  if (!groups.ok()) {
    v.why_unknown = groups.error().message;
    return v;
  }
  if (groups->groups.size() != 1 || groups->per_pod) {
    v.why_unknown = "the job is " +
                    std::string(groups->per_pod ? "not gang-scheduled (each pod is its own group)"
                                                : "several affinity groups") +
                    "; HiveD's verdict is judged for one gang only";
    return v;
  }
  const pai::scheduler::GroupRequest& req = groups->groups.front();
  // The running groups' expected ends: a job's groups are USER~JOB/<group>.
  std::map<std::string, double> group_ends;
  for (const auto& gr : live.groups)
    if (auto it = ends.find(pai::job::job_of_group(gr.name)); it != ends.end())
      group_ends[gr.name] = it->second;

  double now_s = jobcli::now_ms() / 1000;
  auto fit = pai::hived::fit(live, req, group_ends, now_s);
  if (!fit) {
    v.why_unknown = fit.error().message;
    return v;
  }
  v.known = true;
  v.verdict = std::string(pai::hived::to_string(fit->kind));
  v.reason = fit->reason;
  v.start_s = fit->start_s;
  v.estimate = fit->estimate;
  return v;
}

std::string utc_time(double s) {
  return pai::util::rfc3339_utc(static_cast<std::time_t>(s));
}

jobcli::Json evaluation_json(const pai::job::Evaluation& e) {
  jobcli::Json checks = jobcli::Json::array();
  for (const auto& c : e.checks)
    checks.push_back({{"check", c.name}, {"ok", c.ok}, {"detail", c.detail}});
  return {
      {"cluster", e.cluster},
      {"rank", e.rank ? jobcli::Json(e.rank) : jobcli::Json(nullptr)},
      {"decision", e.eligible ? "kept" : "dropped"},
      {"fitsNow", e.fits_now},
      {"free", {{"gpu", e.free.gpu}, {"cpu", e.free.cpu}, {"memoryMB", e.free.memory_mb}}},
      {"preference", e.preference >= 0 ? jobcli::Json(e.preference + 1) : jobcli::Json(nullptr)},
      {"reason", e.reason},
      {"hived",
       e.cells ? jobcli::Json{{"known", e.cells->known},
                              {"verdict", e.cells->known ? jobcli::Json(e.cells->verdict)
                                                         : jobcli::Json(nullptr)},
                              {"reason", e.cells->known ? e.cells->reason : e.cells->why_unknown},
                              {"estimatedStart", e.cells->start_s
                                                     ? jobcli::Json(utc_time(*e.cells->start_s))
                                                     : jobcli::Json(nullptr)},
                              {"estimate", e.cells->estimate}}
               : jobcli::Json(nullptr)},
      {"checks", checks}};
}

std::string decision_table(const std::vector<pai::job::Evaluation>& evs, const std::string& vc) {
  Table t({{"RANK"},
           {"CLUSTER"},
           {"VC"},
           {"DECISION"},
           {"FREE GPU"},
           {"FREE CPU"},
           {"FREE MEM GiB"},
           {"PREF"},
           {"CELLS"},
           {"START"},
           {"REASON"}});
  for (const auto& e : evs) {
    std::string cells = "-", start = "-";
    if (e.cells && e.cells->known) {
      cells = e.cells->verdict;
      start = e.cells->start_s ? (e.fits_now ? std::string("now") : utc_time(*e.cells->start_s))
                               : "unknown";
    } else if (e.eligible) {
      cells = "no HiveD";
      start = e.fits_now ? "now" : "unknown";
    }
    t.add({e.rank ? std::to_string(e.rank) : "-", e.cluster, vc, e.eligible ? "kept" : "dropped",
           e.checks.size() > 1 ? n0(e.free.gpu) : "-", e.checks.size() > 1 ? n0(e.free.cpu) : "-",
           e.checks.size() > 1 ? n0(e.free.memory_mb / 1024) : "-",
           e.preference >= 0 ? std::to_string(e.preference + 1) : "-", cells, start, e.reason});
  }
  return render_table(t);
}

std::string checks_table(const pai::job::Evaluation& e) {
  Table t({{"CHECK"}, {"RESULT"}, {"DETAIL"}});
  for (const auto& c : e.checks) t.add({c.name, c.ok ? "ok" : "FAILED", c.detail});
  return render_table(t);
}

// Every usage error before the file is read or a cluster asked: --param, --name,
// --wait with --dry-run, --expected-duration.
void validate_job_submit(const SubmitOptions& o, Usage& u) {
  jobcli::validate_overrides(o.params, o.name, u);
  u.error_if(o.wait && o.dry_run, "--wait and --dry-run exclude each other",
             "--dry-run sends nothing, so there is no job to wait for");
  if (!o.expected_duration.empty()) {
    auto ms = jobcli::parse_duration_ms(o.expected_duration);
    u.error_if(!ms || *ms <= 0, "--expected-duration " + o.expected_duration +
                                    ": not a duration (90s, 30m, 6h, 2d, 1w)");
  }
}

int run(const SubmitOptions& o, const Globals& g) {
  auto ov = jobcli::make_overrides(o.params, o.name, o.vc);
  if (!ov) return kExitUsage;
  ov->export_params = o.export_params;

  // 1. The file, checked as the server would.
  pai::job::JobFile f = pai::job::JobFile::load(o.file);
  if (!f.read_error.empty()) {
    print_error("cannot read " + o.file + ": " + f.read_error);
    return kExitUsage;
  }
  {
    pai::diag::List diags;
    pai::job::ValidateOptions vo;
    vo.overrides = *ov;
    pai::job::validate(f, diags, vo);
    diags.sort({f.path});
    print_findings_stderr(diags, g);
    if (diags.has_errors()) {
      print_error(o.file + " has errors; the server would refuse it. Nothing was sent.");
      return kExitUsage;
    }
  }
  const std::string body = pai::job::submission_body(f, *ov);
  if (body.size() > pai::job::kMaxBodyBytes) {
    print_error("the job is " + std::to_string(body.size()) +
                " bytes; the server accepts at most " + std::to_string(pai::job::kMaxBodyBytes));
    return kExitUsage;
  }
  pai::job::JobRequest req = pai::job::request_of(f, *ov);

  // 2. The clusters to consider.
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  const bool automatic = o.remote.cluster == "auto";
  std::vector<jobcli::Connection> conns;
  std::vector<pai::job::ClusterFacts> facts;
  if (automatic) {
    if (reg->clusters().empty()) {
      print_error("--cluster auto: no cluster is registered");
      return kExitUsage;
    }
    for (const auto& c : reg->clusters()) {
      auto conn = jobcli::connect_named(*reg, c.name, o.remote, g);
      if (!conn) {
        pai::job::ClusterFacts bad;
        bad.cluster = c.name;
        pai::api::Error e;
        e.kind = pai::api::Error::Kind::Transport;
        e.message = "cannot use its credentials";
        bad.error = e;
        facts.push_back(bad);
        continue;
      }
      conns.push_back(*conn);
    }
  } else {
    auto conn = jobcli::connect(*reg, o.remote, g);
    if (!conn) return kExitUsage;
    conns.push_back(*conn);
  }

  std::optional<double> duration_s;
  if (!o.expected_duration.empty())
    duration_s = *jobcli::parse_duration_ms(o.expected_duration) / 1000;

  // 3. What each cluster says, asked at the same time; with auto, each
  // cluster's HiveD too (its cells and running groups).
  std::vector<std::future<pai::job::ClusterFacts>> futures;
  const double timeout = o.remote.timeout;
  const auto asked = std::chrono::steady_clock::now();
  std::vector<VerdictTiming> timings(conns.size());
  for (size_t i = 0; i < conns.size(); ++i)
    futures.push_back(std::async(std::launch::async, [c = conns[i], &req, automatic, duration_s,
                                                      timeout, &t = timings[i]]() {
      auto f = pai::job::gather_facts(*c.api, c.cluster->name, c.cluster->user, req);
      if (automatic && !f.error) f.cells = cell_verdict(c, req, f, duration_s, timeout, t);
      return f;
    }));
  for (auto& fu : futures) facts.push_back(fu.get());
  // -v: how long the verdicts took after the answers arrived. The clusters work
  // at the same time, so the figure that counts is from the last cluster's
  // answers to the last verdict; each cluster's own share is listed too.
  auto report_timing = [&, reported = false]() mutable {
    if (!g.verbose || !automatic || reported) return;
    reported = true;
    auto last = std::chrono::steady_clock::time_point{};
    double cpu = 0, slowest = 0;
    size_t n = 0, bytes = 0;
    for (const auto& t : timings) {
      if (t.after_ms < 0) continue;
      ++n;
      bytes += t.bytes;
      last = std::max(last, t.arrived);
      cpu += t.after_cpu_ms;
      slowest = std::max(slowest, t.after_ms);
    }
    if (n == 0) return;
    auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    std::fprintf(stderr,
                 "paictl: auto: HiveD answers of %zu clusters (%zu bytes) and their job lists in "
                 "%.1f ms; the decision %.1f ms after the last arrived; per cluster at most %.1f "
                 "ms after its own, %.1f ms of CPU in all\n",
                 n, bytes, ms(last - asked), ms(std::chrono::steady_clock::now() - last), slowest,
                 cpu);
  };
  if (!automatic && facts[0].error)
    return jobcli::report_api_error(facts[0].cluster, "checking the job against the cluster",
                                    *facts[0].error);
  std::vector<pai::job::Evaluation> evs = pai::job::rank_clusters(req, facts, reg->preference());
  const pai::job::Evaluation* chosen =
      !evs.empty() && evs.front().eligible ? &evs.front() : nullptr;
  const jobcli::Connection* target = nullptr;
  if (chosen)
    for (const auto& c : conns)
      if (c.cluster->name == chosen->cluster) target = &c;

  std::string request_line = "job needs " + n0(static_cast<double>(req.total_gpu())) + " GPU, " +
                             n0(static_cast<double>(req.total_cpu())) + " CPU, " +
                             n0(static_cast<double>(req.total_memory_mb()) / 1024) + " GiB in VC " +
                             req.virtual_cluster;

  // 4. --dry-run: the decision and the request, secrets masked; nothing is sent.
  if (o.dry_run) {
    std::string masked = pai::job::emit_job(f, *ov, /*mask_secrets=*/true);
    if (!is_structured(o.output)) {
      std::string out = request_line + "\n\n";
      out += automatic ? decision_table(evs, req.virtual_cluster) : checks_table(evs.front());
      out += "\n";
      if (target) {
        out += "would submit " + pai::api::job_id(target->cluster->user, req.name) + " to " +
               target->cluster->name + ": POST " + target->api->base() +
               "/api/v2/jobs (Content-Type: text/yaml, " + std::to_string(body.size()) +
               " bytes)\n";
        out += "--- body (secrets masked) ---\n" + masked;
        if (!masked.empty() && masked.back() != '\n') out += "\n";
      } else {
        out += "no cluster can take this job\n";
      }
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
      report_timing();
    } else {
      jobcli::Json j = jobcli::Json::object();
      j["request"] = {{"gpu", req.total_gpu()},
                      {"cpu", req.total_cpu()},
                      {"memoryMB", req.total_memory_mb()},
                      {"virtualCluster", req.virtual_cluster}};
      jobcli::Json d = jobcli::Json::array();
      for (const auto& e : evs) d.push_back(evaluation_json(e));
      j["decision"] = d;
      j["target"] = target ? jobcli::Json(target->cluster->name) : jobcli::Json(nullptr);
      if (target)
        j["http"] = {{"method", "POST"},
                     {"url", target->api->base() + "/api/v2/jobs"},
                     {"contentType", "text/yaml"},
                     {"bytes", body.size()},
                     {"body", masked}};
      j["dryRun"] = true;
      print_document(document("jobSubmission", j), o.output);
      std::fflush(stdout);
      report_timing();
    }
    return target ? kExitOk : kExitUsage;
  }

  if (!target) {
    std::string out =
        request_line + "\n\n" +
        (automatic ? decision_table(evs, req.virtual_cluster) : checks_table(evs.front()));
    std::fwrite(out.data(), 1, out.size(), stderr);
    print_error(
        automatic
            ? "no registered cluster can take this job (see the reasons above); nothing was sent"
            : evs.front().cluster + " cannot take this job: " + evs.front().reason +
                  "; nothing was sent");
    return kExitUsage;
  }
  if (automatic && !g.quiet)
    std::fprintf(stderr, "paictl: --cluster auto chose %s: %s\n", target->cluster->name.c_str(),
                 chosen->reason.c_str());
  if ((g.verbose || o.explain) && automatic) {
    std::string t = decision_table(evs, req.virtual_cluster);
    std::fwrite(t.data(), 1, t.size(), stderr);
  }
  report_timing();

  // 5. Send.
  auto r = target->api->submit_job(body);
  const std::string id = pai::api::job_id(target->cluster->user, req.name);
  if (!r.ok())
    return jobcli::report_api_error(target->cluster->name, "submitting " + id, r.error());
  if (!is_structured(o.output)) {
    if (!g.quiet)
      std::printf("%s submitted to %s (VC %s)\n", id.c_str(), target->cluster->name.c_str(),
                  req.virtual_cluster.c_str());
  } else if (!o.wait) {
    print_document(document("jobSubmission", Json{{"dryRun", false},
                                                  {"cluster", target->cluster->name},
                                                  {"job", id},
                                                  {"user", target->cluster->user},
                                                  {"name", req.name},
                                                  {"virtualCluster", req.virtual_cluster},
                                                  {"message", *r}}),
                   o.output);
  }
  if (!o.wait) return kExitOk;
  jobcli::WaitOptions w = o.wait_opts;
  w.output = o.output;
  return jobcli::wait_for_job(*target, target->cluster->user, req.name, w, g);
}

void add_job_submit(Flags& parent, Globals& g) {
  auto o = std::make_shared<SubmitOptions>();
  Flags* cmd = &parent;
  cmd->add_option("FILE", o->file, "Job protocol v2 file ('-' reads stdin)")->required();
  jobcli::add_remote_flags(cmd, o->remote, /*allow_auto=*/true);
  cmd->add_option("--vc", o->vc, "Virtual cluster (replaces defaults.virtualCluster)");
  cmd->add_option("--name", o->name, "Job name (replaces name:)");
  cmd->add_option("--param", o->params, "Set parameter NAME (repeatable; quote to force a string)")
      ->type_name("NAME=VALUE");
  cmd->add_flag("--export-params", o->export_params,
                "Start each task role's commands with 'export NAME=value' for every parameter");
  cmd->add_flag("--dry-run", o->dry_run,
                "Check and show what would be sent (secrets masked); send nothing");
  cmd->add_flag("--wait", o->wait, "Wait for the job to end; the exit code follows its outcome");
  jobcli::add_wait_flags(cmd, o->wait_opts, "wait-");
  cmd->add_option("--expected-duration", o->expected_duration,
                  "With --cluster auto: how long running jobs run, to estimate when HiveD frees "
                  "their cells (default: each user's median run time of finished jobs)")
      ->type_name("DURATION");
  cmd->add_flag("--explain", o->explain,
                "With --cluster auto: print the ranking with each cluster's reasons (on stderr)");
  add_output_option(*cmd, o->output, g);
  cmd->footer(
      "Before sending, paictl validates the file and asks the cluster: the VC exists and you may "
      "use it, the\n"
      "SKU types exist and the resources fit them, the storages exist, the name is free. With "
      "--cluster auto\n"
      "it asks every registered cluster at once, keeps those that can run the job, and ranks them: "
      "enough\n"
      "free resources now first, then 'paictl cluster prefer' order, then headroom. The file is "
      "sent as it\n"
      "is unless --name, --vc, --param or --export-params change it.\n\n"
      "EXIT STATUS:\n"
      "  0 submitted (with --wait: the job succeeded), 1 with --wait: the job failed or was "
      "stopped,\n"
      "  2 invalid job, or no cluster can take it, 3 a cluster failed, 4 --wait-timeout "
      "expired\n\n");
  define_command(*cmd, g, o,
                 {.validate = validate_job_submit,
                  .run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace

void build_job_submit(Flags& cmd, Globals& g) {
  add_job_submit(cmd, g);
}

}  // namespace paictl
