#include "sim/forecast_input.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "api/client.h"
#include "hived/fit.h"
#include "hived/inspect.h"
#include "job/hived_request.h"
#include "job/job_file.h"

namespace pai::sim {

namespace {

std::optional<double> forecast_number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string forecast_string(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Submission time in epoch seconds: submissionTime, else createdTime (ms).
std::optional<double> forecast_submitted(const nlohmann::json& j) {
  auto s = forecast_number(j, "submissionTime");
  if (!s) s = forecast_number(j, "createdTime");
  if (s) return *s / 1000;
  return std::nullopt;
}

}  // namespace

ForecastState forecast_state(const hived::LiveState& live, const config::HivedModel* model,
                             const std::map<std::string, double>& expected_ends,
                             std::vector<ForecastWaiting> waiting, double now_s) {
  ForecastState st;
  for (auto& g : hived::live_groups(live, model)) {
    ForecastRunning r;
    auto it = expected_ends.find(g.name);
    if (it == expected_ends.end()) it = expected_ends.find(job::job_of_group(g.name));
    if (it != expected_ends.end()) r.ends_in_s = it->second - now_s;
    r.group = std::move(g);
    st.running.push_back(std::move(r));
  }
  st.bad_nodes = hived::bad_nodes(live);
  st.waiting = std::move(waiting);
  return st;
}

JobListFacts job_list_facts(const nlohmann::json& jobs, std::optional<double> duration_s,
                            double now_s) {
  JobListFacts f;
  if (!jobs.is_array()) return f;
  std::map<std::string, std::vector<double>> runs;
  for (const auto& j : jobs) {
    if (!j.is_object()) continue;
    auto launched = forecast_number(j, "launchedTime"),
         completed = forecast_number(j, "completedTime");
    if (forecast_string(j, "state") != "RUNNING" && launched && completed &&
        *completed >= *launched)
      runs[forecast_string(j, "username")].push_back((*completed - *launched) / 1000);
  }
  for (auto& [user, v] : runs) {
    std::sort(v.begin(), v.end());
    f.user_median_s[user] = v[v.size() / 2];
  }
  std::vector<std::pair<double, std::string>> waiting;
  for (const auto& j : jobs) {
    if (!j.is_object()) continue;
    const std::string state = forecast_string(j, "state"), user = forecast_string(j, "username");
    const std::string id = api::job_id(user, forecast_string(j, "name"));
    if (auto s = forecast_submitted(j)) f.submitted_s[id] = *s;
    if (state == "WAITING")
      waiting.push_back({f.submitted_s.count(id) ? f.submitted_s[id] : now_s, id});
    if (state != "RUNNING") continue;
    auto launched = forecast_number(j, "launchedTime");
    if (!launched) continue;
    std::optional<double> d = duration_s;
    if (!d)
      if (auto it = f.user_median_s.find(user); it != f.user_median_s.end()) d = it->second;
    if (d) f.expected_ends[id] = *launched / 1000 + *d;
  }
  std::stable_sort(waiting.begin(), waiting.end());
  for (auto& [t, id] : waiting) f.waiting_jobs.push_back(std::move(id));
  return f;
}

Trace replay_trace(const nlohmann::json& jobs, double window_s, double now_s, int32_t priority) {
  Trace t;
  t.format = "csv";
  t.files.push_back("the job list");
  const JobListFacts facts = job_list_facts(jobs, std::nullopt, now_s);
  if (!jobs.is_array()) return t;
  for (const auto& j : jobs) {
    if (!j.is_object()) continue;
    auto submitted = forecast_submitted(j);
    if (!submitted || *submitted < now_s - window_s || *submitted > now_s) continue;
    t.records++;
    const std::string user = forecast_string(j, "username"),
                      vc = forecast_string(j, "virtualCluster");
    auto gpus = forecast_number(j, "totalGpuNumber"), tasks = forecast_number(j, "totalTaskNumber");
    if (vc.empty() || !gpus || *gpus < 1) {
      t.skip("no virtual cluster or no GPUs", "the job list", 0, 0);
      continue;
    }
    auto launched = forecast_number(j, "launchedTime"),
         completed = forecast_number(j, "completedTime");
    double duration = -1;
    if (launched && completed && *completed >= *launched)
      duration = (*completed - *launched) / 1000;
    else if (auto it = facts.user_median_s.find(user); it != facts.user_median_s.end())
      duration = it->second;
    if (duration < 0) {
      t.skip("run time not known (not finished, no finished job of its user)", "the job list", 0,
             0);
      continue;
    }
    const int32_t g = static_cast<int32_t>(*gpus);
    int32_t pods = tasks && *tasks >= 1 ? static_cast<int32_t>(*tasks) : 1;
    if (g % pods != 0) pods = 1;
    TraceJob tj;
    tj.submit = *submitted - (now_s - window_s);
    tj.duration = duration;
    tj.vc = t.intern_vc(vc);
    tj.priority = static_cast<int16_t>(priority);
    t.add(tj, api::job_id(user, forecast_string(j, "name")), {{pods, g / pods}});
  }
  std::stable_sort(t.jobs.begin(), t.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
  return t;
}

util::Result<ForecastLiveInput> read_forecast_input(hived::Client& hived, api::Client* rest,
                                                    double now_s, std::optional<double> duration_s,
                                                    double default_duration_s) {
  ForecastLiveInput in;
  auto live = hived::read_live(hived);
  if (!live.ok()) return util::Error{live.error().summary(), {}};
  in.live = std::move(*live);
  for (const auto& w : in.live.warnings) in.warnings.push_back(w);
  auto model = hived::model_of(in.live.status);
  if (!model.ok())
    return util::Error{"HiveD's status gives no config: " + model.error().message,
                       "give the config HiveD runs"};
  in.model = std::move(*model);
  JobListFacts facts;
  std::vector<ForecastWaiting> waiting;
  if (rest) {
    api::JobFilter f;
    f.limit = 5000;
    auto jobs = rest->list_jobs(f);
    if (!jobs.ok()) return util::Error{"reading the job list: " + jobs.error().message, {}};
    in.jobs = std::move(*jobs);
    facts = job_list_facts(in.jobs, duration_s, now_s);
    std::set<std::string> leaf_types;
    for (const auto& l : in.live.leaves) leaf_types.insert(l.leaf_type);
    for (const auto& id : facts.waiting_jobs) {
      const auto tilde = id.find('~');
      const std::string user = id.substr(0, tilde), name = id.substr(tilde + 1);
      auto text = rest->job_config(user, name);
      if (!text.ok()) {
        in.warnings.push_back("waiting job " + id +
                              " left out: its config: " + text.error().message);
        continue;
      }
      auto file = job::JobFile::parse(*text, id);
      job::JobRequest jr = job::request_of(file);
      auto skus = rest->sku_types(jr.priority_class == "oppo" ? std::string() : jr.virtual_cluster);
      if (!skus.ok()) {
        in.warnings.push_back("waiting job " + id +
                              " left out: its SKU types: " + skus.error().message);
        continue;
      }
      auto reqs = job::hived_requests(jr, user, *skus, leaf_types);
      if (!reqs.ok()) {
        in.warnings.push_back("waiting job " + id + " left out: " + reqs.error().message);
        continue;
      }
      double d = duration_s.value_or(default_duration_s);
      if (!duration_s)
        if (auto it = facts.user_median_s.find(user); it != facts.user_median_s.end())
          d = it->second;
      const double since = facts.submitted_s.count(id) ? facts.submitted_s[id] : now_s;
      for (auto& r : reqs->groups)
        waiting.push_back({r.affinity_group, r, std::max(0.0, now_s - since), d});
    }
  }
  in.state =
      forecast_state(in.live, in.model.get(), facts.expected_ends, std::move(waiting), now_s);
  return in;
}

}  // namespace pai::sim
