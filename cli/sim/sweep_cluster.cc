#include "sim/sweep_cluster.h"
#include "flags.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include "api/client.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "job/emit.h"
#include "job/job_file.h"
#include "job/validate.h"
#include "output/output.h"
#include "sim/sweep.h"
#include "util/fs.h"
#include "util/strings.h"

namespace paictl {

namespace {

using nlohmann::json;
constexpr const char* kRole = "shard";

std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string job_yaml(const SweepClusterOptions& o, const std::string& name, const std::string& run,
                     int shards) {
  using pai::job::js_yaml_string;
  std::string command = sh_quote(o.paictl) + " -q simulate sweep " + sh_quote(o.spec) + " --run " +
                        run + " --shard \"$PAI_TASK_INDEX/" + std::to_string(shards) + "\"";
  std::string y;
  y += "protocolVersion: 2\n";
  y += "name: " + name + "\n";
  y += "type: job\n";
  y += "jobRetryCount: 0\n";
  y += "prerequisites:\n";
  y += "  - type: dockerimage\n    name: paictl-image\n    uri: " + js_yaml_string(o.image) + "\n";
  y += "taskRoles:\n";
  y += std::string("  ") + kRole + ":\n";
  y += "    instances: " + std::to_string(shards) + "\n";
  y += "    completion:\n      minFailedInstances: -1\n";
  y += "    dockerImage: paictl-image\n";
  y += "    resourcePerInstance:\n      cpu: " + std::to_string(o.cpu) +
       "\n      memoryMB: " + std::to_string(o.memory_mb) + "\n      gpu: 0\n";
  y += "    commands:\n      - " + js_yaml_string(command) + "\n";
  y += "defaults:\n  virtualCluster: " + js_yaml_string(o.vc.empty() ? "default" : o.vc) + "\n";
  return y;
}

std::string records_path(const SweepClusterOptions& o) {
  return o.out + "/cluster-jobs.json";
}

json read_records(const SweepClusterOptions& o) {
  auto text = pai::util::read_file(records_path(o));
  if (!text.ok()) return json::array();
  json j = json::parse(*text, nullptr, false);
  return j.is_array() ? j : json::array();
}

bool ended(const std::string& state) {
  return state == "SUCCEEDED" || state == "FAILED" || state == "STOPPED";
}

// Waits for the job to end, then reads every task's stdout and hands over the
// results of `wanted` points. Returns an exit code.
int gather(const jobcli::Connection& c, const SweepClusterOptions& o, const std::string& user,
           const std::string& name, const std::map<std::string, size_t>& wanted, const Globals& g,
           const std::function<void(size_t, const json&)>& accept) {
  const std::string id = pai::api::job_id(user, name);
  std::string last;
  pai::api::Json detail;
  for (;;) {
    auto d = c.api->get_job(user, name);
    if (!d.ok()) return jobcli::report_api_error(c.cluster->name, "reading job " + id, d.error());
    detail = *d;
    std::string state = detail["jobStatus"].value("state", std::string("UNKNOWN"));
    if (state != last && !g.quiet)
      std::fprintf(stderr, "%s on %s: %s\n", id.c_str(), c.cluster->name.c_str(), state.c_str());
    last = state;
    if (ended(state)) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(o.poll));
  }
  const int job_attempt = detail["jobStatus"].value("attemptId", 0);
  const auto& roles = detail.contains("taskRoles") ? detail["taskRoles"] : pai::api::Json::object();
  if (!roles.contains(kRole)) {
    print_error(id + " has no task role \"" + kRole + "\": it is not a sweep job");
    return kExitRemote;
  }
  size_t got = 0;
  for (const auto& t : roles[kRole].value("taskStatuses", pai::api::Json::array())) {
    const int index = t.value("taskIndex", 0), attempt = t.value("attemptId", 0);
    auto loc = c.api->task_log_locations(user, name, job_attempt, kRole, index, attempt, false);
    if (!loc.ok()) {
      jobcli::report_api_error(c.cluster->name,
                               "finding the log of " + id + " task " + std::to_string(index),
                               loc.error());
      continue;
    }
    std::string uri;
    for (const auto& l : loc->value("locations", pai::api::Json::array()))
      if (l.value("name", std::string()) == "stdout") uri = l.value("uri", std::string());
    if (uri.empty()) continue;
    auto text = c.api->fetch_log(uri);
    if (!text.ok()) {
      jobcli::report_api_error(c.cluster->name,
                               "reading the log of " + id + " task " + std::to_string(index),
                               text.error());
      continue;
    }
    for (auto& [key, result] : pai::sim::decode_results(*text)) {
      auto w = wanted.find(key);
      if (w == wanted.end()) continue;
      accept(w->second, result);
      ++got;
    }
  }
  if (!g.quiet)
    std::fprintf(stderr, "%s: %zu of %zu results gathered from the tasks' logs\n", id.c_str(), got,
                 wanted.size());
  return kExitOk;
}

}  // namespace

void add_sweep_cluster_options(Flags& cmd, SweepClusterOptions& o) {
  const char* group = "On a cluster (--cluster)";
  cmd.add_option("--shards", o.shards, "Tasks of the job (default: one per point, at most 8)")
      ->type_name("N")
      ->group(group);
  cmd.add_option("--image", o.image, "Docker image of the tasks; it must hold paictl")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--paictl", o.paictl, "The paictl command inside the tasks' containers")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--task-cpu", o.cpu, "CPUs per task")->capture_default_str()->group(group);
  cmd.add_option("--task-memory-mb", o.memory_mb, "Memory per task, MB")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--poll", o.poll, "Seconds between looks at the job's state")
      ->capture_default_str()
      ->group(group);
}

int run_sweep_on_cluster(const SweepClusterOptions& o, const std::vector<SweepClusterPoint>& points,
                         const Globals& g, const std::function<void(size_t, const json&)>& accept,
                         std::string& job_id) {
  if (o.shards < 0 || o.cpu < 1 || o.memory_mb < 1 || !(o.poll > 0)) {
    print_error("--shards, --task-cpu, --task-memory-mb and --poll must be positive");
    return kExitUsage;
  }
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  jobcli::RemoteOptions ro;
  ro.cluster = o.cluster;
  ro.timeout = o.timeout;
  auto conn = jobcli::connect_named(*reg, o.cluster, ro, g);
  if (!conn) return kExitUsage;
  const std::string user = conn->cluster->user;

  std::map<std::string, size_t> todo;
  for (const auto& p : points) todo[p.key] = p.index;

  // Jobs an earlier run submitted for points still missing: gather them first.
  json records = read_records(o);
  for (const auto& r : records) {
    if (r.value("cluster", "") != o.cluster || r.value("user", "") != user) continue;
    std::map<std::string, size_t> wanted;
    for (const auto& k : r.value("keys", json::array()))
      if (k.is_string() && todo.count(k.get<std::string>()))
        wanted[k.get<std::string>()] = todo[k.get<std::string>()];
    if (wanted.empty()) continue;
    const std::string name = r.value("job", "");
    auto exists = conn->api->job_exists(user, name);
    if (!exists.ok() || !*exists) continue;
    if (!g.quiet)
      std::fprintf(stderr, "%s~%s was submitted for %zu of the missing points: gathering it\n",
                   user.c_str(), name.c_str(), wanted.size());
    std::map<std::string, size_t> back;
    int rc = gather(*conn, o, user, name, wanted, g, [&](size_t index, const json& res) {
      for (const auto& [k, i] : wanted)
        if (i == index) back[k] = i;
      accept(index, res);
    });
    if (rc != kExitOk) return rc;
    job_id = pai::api::job_id(user, name);
    for (const auto& [k, i] : back) todo.erase(k);
  }
  if (todo.empty()) return kExitOk;

  // One job for the rest, named after its points and the jobs before it (points
  // an ended job gave no result for go into a new job).
  std::vector<std::pair<size_t, std::string>> list;
  for (const auto& [k, i] : todo) list.push_back({i, k});
  std::sort(list.begin(), list.end());
  std::string run, keys_text;
  json keys = json::array();
  for (const auto& [i, k] : list) {
    run += (run.empty() ? "" : ",") + std::to_string(i) + ":" + k;
    keys_text += k;
    keys.push_back(k);
  }
  const int shards = static_cast<int>(std::min<size_t>(list.size(), o.shards > 0 ? o.shards : 8));
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(
                    pai::sim::fnv1a(keys_text + o.spec + "#" + std::to_string(records.size()))));
  const std::string name = std::string("paictl-sweep-") + std::string(hash, 12);
  const std::string yaml = job_yaml(o, name, run, shards);
  // The job is checked as `job validate` would before anything is sent.
  pai::job::JobFile f = pai::job::JobFile::parse(yaml, name + ".yaml");
  pai::diag::List findings;
  pai::job::validate(f, findings);
  if (findings.has_errors()) {
    print_error("the sweep's job does not pass the job checks:");
    for (const auto& d : findings.items())
      if (d.severity == pai::diag::Severity::Error)
        std::fprintf(stderr, "  %s: %s\n", d.code.c_str(), d.message.c_str());
    return kExitUsage;
  }
  if (yaml.size() > 100 * 1024) {
    print_error("the sweep's job is " + std::to_string(yaml.size()) +
                " bytes, more than OpenPAI takes (100 KiB): sweep fewer points at once");
    return kExitUsage;
  }
  records.push_back(json{
      {"cluster", o.cluster}, {"user", user}, {"job", name}, {"shards", shards}, {"keys", keys}});
  if (auto e = pai::util::write_file_atomic(records_path(o), records.dump(1) + "\n"); !e.ok()) {
    print_error("cannot write " + records_path(o) + ": " + e.error().message);
    return kExitUsage;
  }
  const std::string id = pai::api::job_id(user, name);
  auto r = conn->api->submit_job(yaml);
  if (!r.ok()) {
    if (r.error().status == 409) {
      if (!g.quiet) std::fprintf(stderr, "%s exists already: gathering it\n", id.c_str());
    } else {
      return jobcli::report_api_error(conn->cluster->name, "submitting " + id, r.error());
    }
  } else if (!g.quiet) {
    std::fprintf(stderr, "%s submitted to %s (VC %s): %zu points in %d tasks\n", id.c_str(),
                 conn->cluster->name.c_str(), o.vc.empty() ? "default" : o.vc.c_str(), list.size(),
                 shards);
  }
  job_id = id;
  return gather(*conn, o, user, name, todo, g, accept);
}

}  // namespace paictl
