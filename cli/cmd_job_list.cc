// paictl job list [--cluster NAME | --all-clusters] [--state S] [--user U]

#include <cstdio>
#include <ctime>
#include <future>
#include <map>

#include <CLI/CLI.hpp>

#include "api/client.h"
#include "app.h"
#include "cluster/registry.h"
#include "cmd_job_common.h"
#include "exit_codes.h"
#include "output.h"
#include "printer.h"
#include "util/printable.h"
#include "util/strings.h"

namespace paictl {

namespace {

struct ListOptions {
  jobcli::RemoteOptions remote;
  bool all_clusters = false;
  std::string state;
  std::string user;
  bool all_users = false;
  std::string vc;
  std::string keyword;
  int limit = 100;
  std::string output = "table";
  bool watch = false;
  double interval = 5;
};

const char* kStates[] = {"WAITING",   "RUNNING", "STOPPING", "STOPPED",
                         "SUCCEEDED", "FAILED",  "UNKNOWN"};

// The jobs of every cluster, asked at the same time, in cluster order. Failing
// clusters are reported and set `rc`.
std::vector<std::pair<std::string, pai::api::Json>> fetch(
    const ListOptions& o, const std::vector<jobcli::Connection>& conns, const std::string& states,
    int& rc) {
  std::vector<std::future<pai::api::Result<pai::api::Json>>> futures;
  for (const auto& c : conns) {
    pai::api::JobFilter f;
    f.username = o.all_users ? "" : (o.user.empty() ? c.cluster->user : o.user);
    f.state = states;
    f.vc = o.vc;
    f.keyword = o.keyword;
    f.limit = o.limit;
    futures.push_back(std::async(std::launch::async, [c, f]() { return c.api->list_jobs(f); }));
  }
  std::vector<std::pair<std::string, pai::api::Json>> jobs;
  for (size_t i = 0; i < conns.size(); ++i) {
    auto r = futures[i].get();
    if (!r.ok()) {
      jobcli::report_api_error(conns[i].cluster->name, "listing jobs", *r.error);
      rc = kExitRemote;
      continue;
    }
    if (!r->is_array()) continue;
    for (const auto& j : *r) jobs.emplace_back(conns[i].cluster->name, j);
  }
  return jobs;
}

Table list_table(const ListOptions& o,
                 const std::vector<std::pair<std::string, pai::api::Json>>& jobs,
                 jobcli::Json& all) {
  Table t;
  if (o.all_clusters) t.columns.push_back({"CLUSTER"});
  for (const char* h : {"JOB", "STATE", "VC", "GPUS", "TASKS", "RETRIES", "SUBMITTED", "DURATION"})
    t.columns.push_back({h});
  t.columns.push_back({"SUBSTATE", true});
  t.columns.push_back({"COMPLETED", true});
  t.columns.push_back({"EXIT", true});
  for (const auto& [cluster, j] : jobs) {
    {
      jobcli::Json item = jobcli::Json::parse(j.dump());
      item["cluster"] = cluster;
      all.push_back(item);
      std::vector<std::string> row;
      if (o.all_clusters) row.push_back(cluster);
      row.push_back(j.value("username", std::string("?")) + "~" +
                    j.value("name", std::string("?")));
      row.push_back(j.value("state", std::string("?")));
      row.push_back(j.value("virtualCluster", std::string("-")));
      row.push_back(j.contains("totalGpuNumber") ? j["totalGpuNumber"].dump() : "-");
      row.push_back(j.contains("totalTaskNumber") ? j["totalTaskNumber"].dump() : "-");
      row.push_back(j.contains("retries") ? j["retries"].dump() : "-");
      row.push_back(jobcli::format_time_ms(j.contains("submissionTime")
                                               ? jobcli::Json::parse(j["submissionTime"].dump())
                                               : jobcli::Json(nullptr)));
      double start = j.contains("launchedTime") && j["launchedTime"].is_number()
                         ? j["launchedTime"].get<double>()
                     : j.contains("createdTime") && j["createdTime"].is_number()
                         ? j["createdTime"].get<double>()
                         : -1;
      double end = j.contains("completedTime") && j["completedTime"].is_number()
                       ? j["completedTime"].get<double>()
                       : static_cast<double>(std::time(nullptr)) * 1000;
      row.push_back(start < 0 ? "-" : jobcli::format_duration_ms(end - start));
      row.push_back(j.value("subState", std::string("-")));
      row.push_back(jobcli::format_time_ms(j.contains("completedTime")
                                               ? jobcli::Json::parse(j["completedTime"].dump())
                                               : jobcli::Json(nullptr)));
      row.push_back(
          j.contains("appExitCode") && !j["appExitCode"].is_null() ? j["appExitCode"].dump() : "-");
      t.add(row);
    }
  }
  return t;
}

std::string job_key(const std::string& cluster, const pai::api::Json& j, bool with_cluster) {
  return (with_cluster ? cluster + "  " : std::string()) + j.value("username", std::string("?")) +
         "~" + j.value("name", std::string("?"));
}

int watch(const ListOptions& o, const std::vector<jobcli::Connection>& conns,
          const std::string& states) {
  jobcli::catch_interrupt();
  bool tty = is_tty(1);
  std::map<std::string, std::string> last;
  bool first = true;
  while (true) {
    int rc = kExitOk;
    auto jobs = fetch(o, conns, states, rc);
    if (tty) {
      jobcli::Json all = jobcli::Json::array();
      std::string text = render_table(list_table(o, jobs, all), o.output == "wide");
      text += "\n" + std::to_string(jobs.size()) + " jobs, every " +
              jobcli::format_duration_ms(o.interval * 1000) + ", " +
              jobcli::format_time_ms(jobcli::Json(jobcli::now_ms())) + "; Ctrl-C stops\n";
      text = "\033[H\033[2J" + pai::util::printable(text, true);
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else if (rc == kExitOk) {
      // One line per change: new jobs, changed states or retries, jobs gone.
      std::map<std::string, std::string> now;
      for (const auto& [cluster, j] : jobs) {
        std::string v = j.value("state", std::string("?"));
        if (j.contains("retries") && j["retries"].is_number() && j["retries"].get<int>() > 0)
          v += " (retries " + j["retries"].dump() + ")";
        now[job_key(cluster, j, o.all_clusters)] = v;
      }
      std::string t = jobcli::format_time_ms(jobcli::Json(jobcli::now_ms()));
      std::string out;
      for (const auto& [k, v] : now) {
        auto it = last.find(k);
        if (it == last.end())
          out += t + "  " + k + "  " + v + (first ? "" : " (new)") + "\n";
        else if (it->second != v)
          out += t + "  " + k + "  " + it->second + " -> " + v + "\n";
      }
      for (const auto& [k, v] : last)
        if (!now.count(k)) out += t + "  " + k + "  gone\n";
      out = pai::util::printable(out, true);
      std::fwrite(out.data(), 1, out.size(), stdout);
      last = std::move(now);
      first = false;
    }
    std::fflush(stdout);
    if (!jobcli::pause_for(o.interval)) return kExitOk;
  }
}

int run(const ListOptions& o, const Globals& g) {
  std::string states;
  for (auto s : pai::util::split(o.state, ',')) {
    std::string up;
    for (char c : pai::util::trim(s)) up += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    if (up.empty()) continue;
    bool ok = false;
    for (const char* k : kStates) ok |= up == k;
    if (!ok) {
      print_error("unknown state \"" + std::string(s) +
                  "\"; states are WAITING, RUNNING, STOPPING, STOPPED, SUCCEEDED, FAILED, UNKNOWN");
      return kExitUsage;
    }
    states += (states.empty() ? "" : ",") + up;
  }
  if (o.all_clusters && !o.remote.cluster.empty()) {
    print_error("give --cluster or --all-clusters, not both");
    return kExitUsage;
  }
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  std::vector<jobcli::Connection> conns;
  if (o.all_clusters) {
    for (const auto& c : reg->clusters()) {
      auto conn = jobcli::connect_named(*reg, c.name, o.remote, g);
      if (!conn) return kExitUsage;
      conns.push_back(*conn);
    }
    if (conns.empty()) {
      print_error("no cluster is registered");
      return kExitUsage;
    }
  } else {
    auto conn = jobcli::connect(*reg, o.remote, g);
    if (!conn) return kExitUsage;
    conns.push_back(*conn);
  }
  if (o.watch) {
    if (is_structured(o.output)) {
      print_error(
          "--watch prints a table (redrawn on a terminal, one line per change otherwise); "
          "not with -o json/yaml");
      return kExitUsage;
    }
    return watch(o, conns, states);
  }
  int rc = kExitOk;
  jobcli::Json all = jobcli::Json::array();
  Table t = list_table(o, fetch(o, conns, states, rc), all);
  if (!is_structured(o.output)) {
    if (t.rows.empty()) {
      if (rc == kExitOk) std::fprintf(stderr, "No jobs.\n");
    } else {
      print_table(t, o.output == "wide");
    }
  } else {
    print_document(list_document("jobList", all), o.output);
  }
  return rc;
}

void add_job_list(CLI::App& parent, Globals& g) {
  auto o = std::make_shared<ListOptions>();
  CLI::App* cmd = &parent;
  jobcli::add_remote_flags(cmd, o->remote);
  cmd->add_flag("--all-clusters", o->all_clusters,
                "Ask every registered cluster (at the same time)");
  cmd->add_option("--state", o->state,
                  "Only jobs in these states (comma list, e.g. RUNNING,WAITING)");
  cmd->add_option("--user", o->user, "Only jobs of this user (default: your user on each cluster)");
  cmd->add_flag("--all-users", o->all_users, "Jobs of every user");
  cmd->add_option("--vc", o->vc, "Only jobs in this virtual cluster");
  cmd->add_option("--keyword", o->keyword, "Only jobs whose name, user or VC contains this text");
  cmd->add_option("--limit", o->limit, "At most this many jobs per cluster, newest first")
      ->check(CLI::Range(1, 50000))
      ->capture_default_str();
  cmd->add_flag("-w,--watch", o->watch,
                "Look again every --interval: redrawn on a terminal, one line per change "
                "otherwise; Ctrl-C stops");
  cmd->add_option("--interval", o->interval, "With --watch: seconds between two looks")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();
  add_output_option(*cmd, o->output, g, /*wide=*/true);
  cmd->footer(
      "EXIT STATUS:\n"
      "  0 ok, 2 bad usage, 3 a cluster failed (the others are still listed)\n\n");
  cmd->callback([o, &g]() { g.exit_code = run(*o, g); });
}

}  // namespace

void build_job_list(CLI::App& cmd, Globals& g) {
  add_job_list(cmd, g);
}

}  // namespace paictl
