// paictl simulate sweep SPEC [-j N] [--out DIR] [-o table|json|yaml]
//
// Runs every point of a sweep spec (lib/sim/sweep.h) that has no stored result
// yet, each in a child `paictl simulate sweep SPEC --run I:KEY` process, up to
// -j at a time; stores each result under DIR/points/KEY.json as it arrives, then
// prints one table and writes DIR/sweep.json and DIR/report.html.

#include <cstdio>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app.h"
#include "command.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "flags.h"
#include "output/output.h"
#include "output/printer.h"
#include "sim/report.h"
#include "sim/sweep.h"
#include "sim/sweep_cluster.h"
#include "sim/sweep_pool.h"
#include "sim/sweep_store.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/process.h"
#include "util/strings.h"
#include "util/version.h"

namespace paictl {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct SweepOptions {
  std::string spec;
  int jobs = 0;
  std::string out;
  std::string output = "table";
  std::string run;    // the worker's points: I:KEY,...
  std::string shard;  // the worker runs only its share of them: K/N
  std::string cluster;
  std::string vc;
  SweepClusterOptions remote;
};

std::string default_out(const std::string& spec) {
  fs::path p(spec);
  return (p.parent_path() / (p.stem().string() + ".sweep")).string();
}

bool print_spec_errors(const pai::diag::List& d, const Globals& g) {
  if (!d.has_errors()) return false;
  pai::diag::TextOptions topt;
  topt.color = use_color(g.no_color, 2);
  topt.show_summary = true;
  std::string text = pai::diag::write_text(d.items(), 1, topt);
  std::fwrite(text.data(), 1, text.size(), stderr);
  return true;
}

// The worker: runs the points named by --run and prints each result delimited.
int run_worker(const SweepOptions& o, const pai::sim::SweepSpec& spec,
               std::vector<pai::sim::SweepPoint>& all) {
  std::vector<pai::sim::SweepPoint> mine;
  for (const auto& item : pai::util::split(o.run, ',')) {
    auto colon = item.find(':');
    size_t index = 0;
    bool ok = colon != std::string::npos;
    if (ok) {
      try {
        index = std::stoul(std::string(item.substr(0, colon)));
      } catch (...) {
        ok = false;
      }
    }
    if (!ok || index >= all.size()) {
      print_error("--run takes INDEX:KEY,... of the spec's points, not \"" + std::string(item) +
                  "\"");
      return kExitUsage;
    }
    pai::sim::SweepPoint p = all[index];
    p.key = std::string(item.substr(colon + 1));
    mine.push_back(p);
  }
  if (!o.shard.empty()) {
    unsigned long k = 0, n = 0;
    char extra = 0;
    if (std::sscanf(o.shard.c_str(), "%lu/%lu%c", &k, &n, &extra) != 2 || n == 0 || k >= n) {
      print_error("--shard takes K/N with 0 <= K < N, not \"" + o.shard + "\"");
      return kExitUsage;
    }
    std::vector<pai::sim::SweepPoint> share;
    for (size_t i = k; i < mine.size(); i += n) share.push_back(mine[i]);
    mine = std::move(share);
  }
  std::vector<pai::sim::SweepPoint> keyed = mine;
  if (auto k = pai::sim::key_sweep_points(spec, pai::kVersion, keyed); !k) {
    print_error(k.error().message);
    return kExitUsage;
  }
  int rc = kExitOk;
  for (size_t i = 0; i < mine.size(); ++i) {
    json result;
    if (keyed[i].key != mine[i].key) {
      result = json{{"error", "the spec or its files changed since the sweep started (point " +
                                  std::to_string(mine[i].index) + " is now " + keyed[i].key + ")"}};
      rc = kExitUsage;
    } else if (auto ran = pai::sim::run_sweep_point(spec, mine[i]); !ran) {
      result = json{{"error", ran.error().message}};
      rc = kExitUsage;
    } else {
      result = std::move(ran).value();
    }
    std::string text = pai::sim::encode_result(mine[i].key, result);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  return rc;
}

std::string axes_text(const json& a) {
  std::string s = a["policy"].get<std::string>() + " " + a["config"].get<std::string>() + " " +
                  a["trace"].get<std::string>();
  if (a["window"] != "all") s += " window=" + a["window"].get<std::string>();
  if (a["load"].get<double>() != 1) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " load=%g", a["load"].get<double>());
    s += buf;
  }
  if (!a["seed"].is_null()) s += " seed=" + std::to_string(a["seed"].get<uint64_t>());
  if (a.value("suggested_fraction", 1.0) != 1) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " suggested=%g", a["suggested_fraction"].get<double>());
    s += buf;
  }
  if (a.contains("suggested_seed") && !a["suggested_seed"].is_null())
    s += " suggested-seed=" + std::to_string(a["suggested_seed"].get<uint64_t>());
  return s;
}

std::string fmt_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void print_sweep_table(const json& items) {
  Table t({{"CONFIG"},
           {"TRACE"},
           {"WINDOW"},
           {"LOAD", false, true},
           {"SEED", false, true},
           {"SUGGESTED", false, true},
           {"SUG SEED", false, true},
           {"POLICY"},
           {"JOBS", false, true},
           {"FINISHED", false, true},
           {"UNSCHED", false, true},
           {"DELAY P50", false, true},
           {"DELAY P95", false, true},
           {"JCT P50", false, true},
           {"GPU UTIL", false, true},
           {"PREEMPT", false, true},
           {"ANOMALY", false, true},
           {"STATUS"}});
  for (const json& it : items) {
    std::vector<std::string> row{
        it["config"],
        it["trace"],
        it["window"],
        fmt_g(it["load"].get<double>()),
        it["seed"].is_null() ? "-" : std::to_string(it["seed"].get<uint64_t>()),
        fmt_g(it["suggested_fraction"].get<double>()),
        it["suggested_seed"].is_null() ? "-" : std::to_string(it["suggested_seed"].get<uint64_t>()),
        it["policy"]};
    if (it.contains("result")) {
      const json& r = it["result"]["result"];
      const json& ov = r["overall"];
      char util[32];
      std::snprintf(util, sizeof util, "%.1f%%", 100 * r["gpu_utilization"].get<double>());
      for (std::string v :
           {std::to_string(r["jobs"].get<int64_t>()), std::to_string(r["finished"].get<int64_t>()),
            std::to_string(r["unschedulable"].get<int64_t>()),
            pai::sim::human_duration(ov["queue_delay_s"]["p50"].get<double>()),
            pai::sim::human_duration(ov["queue_delay_s"]["p95"].get<double>()),
            pai::sim::human_duration(ov["jct_s"]["p50"].get<double>()), std::string(util),
            std::to_string(r["preemptions"].get<int64_t>()),
            std::to_string(r["sharing_anomaly"]["jobs"].get<int64_t>())})
        row.push_back(v);
    } else {
      for (int i = 0; i < 9; ++i) row.push_back("-");
    }
    row.push_back(it["status"]);
    t.add(row);
  }
  print_table(t);
}

// The pending points on this machine: the workers are this program itself,
// `paictl simulate sweep SPEC --run I:KEY`, -j at a time.
void run_local(const SweepOptions& o, const std::string& abs_spec,
               const pai::sim::SweepStore& store,
               const std::function<void(const pai::sim::SweepTaskResult&)>& accept) {
  pai::sim::SweepPoolOptions pool;
  pool.parallel =
      o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  pool.worker_name = "paictl";
  pool.worker = [&](const pai::sim::SweepTask& t) {
    pai::util::ProcessRequest r;
    r.program = "/proc/self/exe";
    r.argv = {"paictl",
              "-q",
              "simulate",
              "sweep",
              abs_spec,
              "--run",
              std::to_string(t.index) + ":" + t.key};
    r.capture_err = false;  // a worker's errors reach the terminal as they happen
    return r;
  };
  std::vector<pai::sim::SweepTask> tasks;
  for (size_t i : store.pending()) tasks.push_back({i, store.points()[i].key});
  pai::sim::run_sweep_pool(tasks, pool, pai::util::ProcessRunner::real(), accept);
}

int run_sweep(const SweepOptions& o, const Globals& g) {
  pai::diag::List diags;
  pai::sim::SweepSpec spec;
  std::error_code ec;
  // Children and tasks read the spec by its absolute path, whatever their directory.
  std::string abs_spec = fs::absolute(o.spec, ec).lexically_normal().string();
  bool ok = pai::sim::load_sweep_spec(o.spec, spec, diags);
  if (print_spec_errors(diags, g) || !ok) return kExitUsage;
  std::vector<pai::sim::SweepPoint> points = pai::sim::sweep_points(spec);
  if (!o.run.empty()) return run_worker(o, spec, points);

  if (auto k = pai::sim::key_sweep_points(spec, pai::kVersion, points); !k) {
    print_error(k.error().message);
    return kExitUsage;
  }
  auto opened = pai::sim::SweepStore::open(spec, points, o.out);
  if (!opened) {
    print_error(opened.error().message);
    return kExitUsage;
  }
  pai::sim::SweepStore& store = opened.value();
  const std::vector<size_t>& pending = store.pending();
  if (!g.quiet)
    std::fprintf(stderr, "%zu points: %zu stored in %s (not run again), %zu to run\n",
                 points.size(), store.stored(), store.dir().c_str(), pending.size());

  std::mutex mu;
  size_t done = 0;
  // Stores one arrived result, with a progress line.
  auto accept = [&](size_t index, const json& r, double seconds, const std::string& where) {
    std::lock_guard<std::mutex> lock(mu);
    auto a = store.accept(index, r, seconds);
    ++done;
    if (!a.ok) {
      if (r.contains("error"))
        std::fprintf(stderr, "[%zu/%zu] %s: failed: %s\n", done, pending.size(),
                     axes_text(a.axes).c_str(), a.error.c_str());
      return;
    }
    if (g.quiet) return;
    if (where.empty())
      std::fprintf(stderr, "[%zu/%zu] %s: done in %.1fs\n", done, pending.size(),
                   axes_text(a.axes).c_str(), seconds);
    else
      std::fprintf(stderr, "[%zu/%zu] %s: done%s\n", done, pending.size(),
                   axes_text(a.axes).c_str(), where.c_str());
  };

  int rc = kExitOk;
  std::string job_id;
  if (!o.cluster.empty()) {
    std::vector<SweepClusterPoint> todo;
    for (size_t i : pending) todo.push_back({i, points[i].key});
    auto remote = o.remote;
    remote.cluster = o.cluster;
    remote.vc = o.vc;
    remote.spec = abs_spec;
    remote.out = o.out;
    if (!todo.empty())
      rc = run_sweep_on_cluster(
          remote, todo, g,
          [&](size_t index, const json& r) { accept(index, r, 0, " (on " + o.cluster + ")"); },
          job_id);
    store.fail_pending("no result came back from the cluster");
  } else {
    run_local(o, abs_spec, store, [&](const pai::sim::SweepTaskResult& r) {
      accept(r.task.index, r.result, r.seconds, "");
    });
  }

  // The document.
  json body = store.document(pai::kVersion, o.spec);
  if (!o.cluster.empty()) {
    body["cluster"] = o.cluster;
    if (!job_id.empty()) body["job"] = job_id;
  }
  Json doc = document("simulationSweep", Json::parse(body.dump()));
  auto e =
      pai::util::write_file_atomic(pai::util::join_path(o.out, "sweep.json"), doc.dump(1) + "\n");
  if (e.ok())
    e = pai::util::write_file_atomic(pai::util::join_path(o.out, "report.html"),
                                     pai::sim::sweep_html_report(body));
  if (!e.ok()) {
    print_error("cannot write the sweep's report to " + o.out + ": " + e.error().message);
    return kExitUsage;
  }
  if (is_structured(o.output))
    print_document(doc, o.output);
  else
    print_sweep_table(body["items"]);
  if (!g.quiet)
    std::fprintf(stderr, "%zu ran, %zu stored, %zu failed; report: %s (sweep.json)\n", store.ran(),
                 store.stored(), store.failed(),
                 pai::util::join_path(o.out, "report.html").c_str());
  if (store.failed() && rc == kExitOk) rc = kExitUsage;
  return rc;
}

}  // namespace

void build_simulate_sweep(Flags& cmd, Globals& g) {
  auto o = std::make_shared<SweepOptions>();
  cmd.add_option("SPEC", o->spec, "The sweep spec (YAML; docs/simulate.md#sweeps)")
      ->required()
      ->type_name("FILE");
  cmd.add_option("-j,--jobs", o->jobs, "Points run at once (default: the number of CPUs)")
      ->type_name("N");
  cmd.add_option("--out", o->out,
                 "Where results are stored (points/KEY.json, sweep.json, report.html); default: "
                 "SPEC's name with .sweep beside it")
      ->type_name("DIR");
  add_output_option(cmd, o->output, g);
  cmd.add_option("--cluster", o->cluster,
                 "Run the points as one job on this registered OpenPAI cluster (paictl cluster "
                 "add), one task per shard")
      ->type_name("NAME");
  cmd.add_option("--vc", o->vc, "The job's virtual cluster (with --cluster; default: default)")
      ->type_name("VC");
  add_sweep_cluster_options(cmd, o->remote);
  cmd.add_option("--shard", o->shard, "With --run: only this share of the points (internal)")
      ->group("");
  cmd.add_option("--run", o->run, "Run these points here and print their results (internal)")
      ->group("");
  cmd.footer(
      "EXIT STATUS:\n"
      "  0 every point has a result, 2 a bad spec or a point that cannot run, 3 the cluster "
      "failed");
  define_command(cmd, g, o,
                 {.complete =
                      [](SweepOptions& o, const Globals&) {
                        if (o.out.empty()) o.out = default_out(o.spec);
                      },
                  .validate =
                      [](const auto& o, Usage& u) {
                        u.error_if(!o.cluster.empty() && o.jobs > 0,
                                   "-j is for local sweeps; on a cluster the job has one task per "
                                   "shard (--shards)");
                        u.error_if(!o.vc.empty() && o.cluster.empty(), "--vc goes with --cluster");
                      },
                  .run = [](const auto& o, Globals& g) { return run_sweep(o, g); }});
}

}  // namespace paictl
