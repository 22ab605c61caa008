#include "sim/sweep_job.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <utility>

#include "job/emit.h"
#include "job/job_file.h"
#include "job/validate.h"
#include "sim/sweep.h"
#include "util/fs.h"
#include "util/json.h"

namespace pai::sim {

namespace {

using nlohmann::json;

std::string sweep_job_sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string sweep_job_yaml(const SweepJobSettings& o, const std::string& name,
                           const std::string& run, int shards) {
  using pai::job::js_yaml_string;
  std::string command = sweep_job_sh_quote(o.paictl) + " -q simulate sweep " +
                        sweep_job_sh_quote(o.spec) + " --run " + run +
                        " --shard \"$PAI_TASK_INDEX/" + std::to_string(shards) + "\"";
  std::string y;
  y += "protocolVersion: 2\n";
  y += "name: " + name + "\n";
  y += "type: job\n";
  y += "jobRetryCount: 0\n";
  y += "prerequisites:\n";
  y += "  - type: dockerimage\n    name: paictl-image\n    uri: " + js_yaml_string(o.image) + "\n";
  y += "taskRoles:\n";
  y += std::string("  ") + kSweepJobRole + ":\n";
  y += "    instances: " + std::to_string(shards) + "\n";
  y += "    completion:\n      minFailedInstances: -1\n";
  y += "    dockerImage: paictl-image\n";
  y += "    resourcePerInstance:\n      cpu: " + std::to_string(o.cpu) +
       "\n      memoryMB: " + std::to_string(o.memory_mb) + "\n      gpu: 0\n";
  y += "    commands:\n      - " + js_yaml_string(command) + "\n";
  y += "defaults:\n  virtualCluster: " + js_yaml_string(o.vc.empty() ? "default" : o.vc) + "\n";
  return y;
}

bool sweep_job_ended(const std::string& state) {
  return state == "SUCCEEDED" || state == "FAILED" || state == "STOPPED";
}

void sweep_job_emit(const std::function<void(const SweepJobEvent&)>& on_event, SweepJobEvent e) {
  if (on_event) on_event(e);
}

// Waits for the job to end, then reads every task's stdout and hands over the
// results of `wanted` points (key -> index) to `accept` (with the key).
std::optional<SweepJobError> sweep_job_gather(
    const SweepJobDeps& deps, const util::Clock& clock, double poll_s, const std::string& name,
    const std::map<std::string, size_t>& wanted,
    const std::function<void(const std::string&, size_t, const json&)>& accept,
    const std::function<void(const SweepJobEvent&)>& on_event) {
  const std::string& user = deps.user;
  const std::string id = api::job_id(user, name);
  std::string last;
  api::Json detail;
  for (;;) {
    auto d = deps.api.get_job(user, name);
    if (!d.ok()) {
      SweepJobError e;
      e.kind = SweepJobError::Kind::Remote;
      e.doing = "reading job " + id;
      e.job_id = id;
      e.api = d.error();
      return e;
    }
    detail = *d;
    std::string state = detail["jobStatus"].value("state", std::string("UNKNOWN"));
    if (state != last) {
      SweepJobEvent ev;
      ev.kind = SweepJobEvent::Kind::State;
      ev.job_id = id;
      ev.state = state;
      sweep_job_emit(on_event, ev);
    }
    last = state;
    if (sweep_job_ended(state)) break;
    clock.sleep(poll_s);
  }
  const int job_attempt = detail["jobStatus"].value("attemptId", 0);
  const auto& roles = detail.contains("taskRoles") ? detail["taskRoles"] : api::Json::object();
  if (!roles.contains(kSweepJobRole)) {
    SweepJobError e;
    e.kind = SweepJobError::Kind::NotSweep;
    e.job_id = id;
    e.message = id + " has no task role \"" + kSweepJobRole + "\": it is not a sweep job";
    return e;
  }
  auto log_failed = [&](const std::string& doing, const api::Error& err) {
    SweepJobEvent ev;
    ev.kind = SweepJobEvent::Kind::LogFailed;
    ev.job_id = id;
    ev.doing = doing;
    ev.api = err;
    sweep_job_emit(on_event, ev);
  };
  size_t got = 0;
  for (const auto& t : roles[kSweepJobRole].value("taskStatuses", api::Json::array())) {
    const int index = t.value("taskIndex", 0), attempt = t.value("attemptId", 0);
    auto loc =
        deps.api.task_log_locations(user, name, job_attempt, kSweepJobRole, index, attempt, false);
    if (!loc.ok()) {
      log_failed("finding the log of " + id + " task " + std::to_string(index), loc.error());
      continue;
    }
    std::string uri;
    for (const auto& l : loc->value("locations", api::Json::array()))
      if (l.value("name", std::string()) == "stdout") uri = l.value("uri", std::string());
    if (uri.empty()) continue;
    auto text = deps.api.fetch_log(uri);
    if (!text.ok()) {
      log_failed("reading the log of " + id + " task " + std::to_string(index), text.error());
      continue;
    }
    for (auto& [key, result] : decode_results(*text)) {
      auto w = wanted.find(key);
      if (w == wanted.end()) continue;
      accept(key, w->second, result);
      ++got;
    }
  }
  SweepJobEvent ev;
  ev.kind = SweepJobEvent::Kind::Gathered;
  ev.job_id = id;
  ev.got = got;
  ev.points = wanted.size();
  sweep_job_emit(on_event, ev);
  return std::nullopt;
}

}  // namespace

SweepJobDocument sweep_job_document(const SweepJobSettings& settings,
                                    const std::vector<SweepJobPoint>& points, size_t earlier_jobs) {
  std::vector<std::pair<size_t, std::string>> list;
  for (const auto& p : points) list.push_back({p.index, p.key});
  std::sort(list.begin(), list.end());
  SweepJobDocument doc;
  std::string run, keys_text;
  for (const auto& [i, k] : list) {
    run += (run.empty() ? "" : ",") + std::to_string(i) + ":" + k;
    keys_text += k;
    doc.keys.push_back(k);
  }
  doc.shards = static_cast<int>(std::min<size_t>(
      list.size(), settings.shards > 0 ? static_cast<size_t>(settings.shards) : 8));
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(
                    fnv1a(keys_text + settings.spec + "#" + std::to_string(earlier_jobs))));
  doc.name = std::string("paictl-sweep-") + std::string(hash, 12);
  doc.yaml = sweep_job_yaml(settings, doc.name, run, doc.shards);
  return doc;
}

std::string sweep_job_records_path(const std::string& out) {
  return out + "/cluster-jobs.json";
}

util::Result<nlohmann::json> read_sweep_job_records(const std::string& out) {
  const std::string path = sweep_job_records_path(out);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return json::array();
  auto text = util::read_file(path);
  if (!text.ok()) return util::Error{"cannot read " + path + ": " + text.error().message, ""};
  json j = util::parse_json_or_discarded(*text);
  if (!j.is_array()) return util::Error{path + " is not a JSON array", ""};
  return j;
}

util::Result<void> write_sweep_job_records(const std::string& out, const nlohmann::json& records) {
  const std::string path = sweep_job_records_path(out);
  if (auto e = util::write_file_atomic(path, records.dump(1) + "\n"); !e.ok())
    return util::Error{"cannot write " + path + ": " + e.error().message, ""};
  return {};
}

SweepJobOutcome run_sweep_job(const SweepJobRequest& request, const SweepJobDeps& deps,
                              const SweepJobAccept& accept,
                              const std::function<void(const SweepJobEvent&)>& on_event) {
  const util::Clock clock = deps.clock.sleep ? deps.clock : util::Clock::real();
  const std::string& user = deps.user;
  SweepJobOutcome outcome;

  std::map<std::string, size_t> todo;
  for (const auto& p : request.points) todo[p.key] = p.index;

  // Jobs an earlier run submitted for points still missing: gather them first.
  // Records that cannot be read are as none.
  auto read = read_sweep_job_records(request.out);
  json records = read.ok() ? *read : json::array();
  for (const auto& r : records) {
    if (r.value("cluster", "") != request.cluster || r.value("user", "") != user) continue;
    std::map<std::string, size_t> wanted;
    for (const auto& k : r.value("keys", json::array()))
      if (k.is_string() && todo.count(k.get<std::string>()))
        wanted[k.get<std::string>()] = todo[k.get<std::string>()];
    if (wanted.empty()) continue;
    const std::string name = r.value("job", "");
    auto exists = deps.api.job_exists(user, name);
    if (!exists.ok() || !*exists) continue;
    SweepJobEvent ev;
    ev.kind = SweepJobEvent::Kind::Resuming;
    ev.job_id = api::job_id(user, name);
    ev.points = wanted.size();
    sweep_job_emit(on_event, ev);
    std::vector<std::string> back;
    auto failure = sweep_job_gather(
        deps, clock, request.poll_s, name, wanted,
        [&](const std::string& key, size_t index, const json& res) {
          back.push_back(key);
          accept(index, res);
        },
        on_event);
    if (failure) {
      outcome.failure = std::move(failure);
      return outcome;
    }
    outcome.job_id = api::job_id(user, name);
    for (const auto& k : back) todo.erase(k);
  }
  if (todo.empty()) return outcome;

  // One job for the rest.
  std::vector<SweepJobPoint> rest;
  for (const auto& [k, i] : todo) rest.push_back({i, k});
  const SweepJobDocument doc = sweep_job_document(request.settings, rest, records.size());
  // The job is checked as `job validate` would before anything is sent.
  job::JobFile f = job::JobFile::parse(doc.yaml, doc.name + ".yaml");
  diag::List findings;
  job::validate(f, findings);
  if (findings.has_errors()) {
    SweepJobError e;
    e.kind = SweepJobError::Kind::Checks;
    e.message = "the sweep's job does not pass the job checks:";
    e.findings = std::move(findings);
    outcome.failure = std::move(e);
    return outcome;
  }
  if (doc.yaml.size() > 100 * 1024) {
    SweepJobError e;
    e.kind = SweepJobError::Kind::TooLarge;
    e.message = "the sweep's job is " + std::to_string(doc.yaml.size()) +
                " bytes, more than OpenPAI takes (100 KiB): sweep fewer points at once";
    outcome.failure = std::move(e);
    return outcome;
  }
  json keys = json::array();
  for (const auto& k : doc.keys) keys.push_back(k);
  records.push_back(json{{"cluster", request.cluster},
                         {"user", user},
                         {"job", doc.name},
                         {"shards", doc.shards},
                         {"keys", keys}});
  if (auto w = write_sweep_job_records(request.out, records); !w.ok()) {
    SweepJobError e;
    e.kind = SweepJobError::Kind::Record;
    e.message = w.error().message;
    outcome.failure = std::move(e);
    return outcome;
  }
  const std::string id = api::job_id(user, doc.name);
  auto r = deps.api.submit_job(doc.yaml);
  SweepJobEvent ev;
  ev.job_id = id;
  if (!r.ok()) {
    if (r.error().status != 409) {
      SweepJobError e;
      e.kind = SweepJobError::Kind::Remote;
      e.doing = "submitting " + id;
      e.job_id = id;
      e.api = r.error();
      outcome.failure = std::move(e);
      return outcome;
    }
    ev.kind = SweepJobEvent::Kind::Exists;
  } else {
    ev.kind = SweepJobEvent::Kind::Submitted;
    ev.vc = request.settings.vc.empty() ? "default" : request.settings.vc;
    ev.points = doc.keys.size();
    ev.shards = doc.shards;
  }
  sweep_job_emit(on_event, ev);
  outcome.job_id = id;
  outcome.failure = sweep_job_gather(
      deps, clock, request.poll_s, doc.name, todo,
      [&](const std::string&, size_t index, const json& res) { accept(index, res); }, on_event);
  return outcome;
}

}  // namespace pai::sim
