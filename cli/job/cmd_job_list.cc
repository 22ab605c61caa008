// paictl job list [--cluster NAME | --all-clusters] [--state S] [--user U] [--tag T]...
//                 [--no-tag T]... [--since D] [--order F] [--limit N] [--offset N] [--all]
//                 [--starred] [--watch]

#include <cstdio>
#include <ctime>
#include <future>
#include <map>

#include "api/client.h"
#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "job/cmd_job_list.h"
#include "job/follow.h"
#include "output/json_convert.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/printable.h"
#include "util/strings.h"

namespace paictl {

namespace {

// --order names: paictl's short ones and the server's fields.
const std::vector<std::pair<std::string, std::string>> kOrderFields = {
    {"submitted", "submissionTime"},
    {"submissionTime", "submissionTime"},
    {"name", "name"},
    {"state", "state"},
    {"completed", "completedTime"},
    {"completedTime", "completedTime"},
    {"gpus", "totalGpuNumber"},
    {"totalGpuNumber", "totalGpuNumber"},
    {"retries", "retries"},
    {"vc", "virtualCluster"},
    {"virtualCluster", "virtualCluster"},
    {"user", "username"},
    {"username", "username"}};

template <class J>
double number(const J& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].template get<double>()
                                                                : -1;
}

std::string tags_of(const jobcli::Json& j) {
  std::vector<std::string> tags;
  if (j.contains("tags") && j["tags"].is_array())
    for (const auto& t : j["tags"])
      if (t.is_string()) tags.push_back(t.get<std::string>());
  return tags.empty() ? "-" : pai::util::join(tags, ",");
}

template <class J>
bool has_tag(const J& j, const std::string& tag) {
  if (!j.contains("tags") || !j["tags"].is_array()) return false;
  for (const auto& t : j["tags"])
    if (t.is_string() && t.template get<std::string>() == tag) return true;
  return false;
}

// The filters the server applies, applied here to starred jobs (read one by one).
template <class J>
bool matches(const JobListOptions& o, const std::string& states, const J& j) {
  if (!states.empty()) {
    bool ok = false;
    for (auto s : pai::util::split(states, ','))
      ok |= j.value("state", std::string()) == std::string(s);
    if (!ok) return false;
  }
  if (!o.vc.empty() && j.value("virtualCluster", std::string()) != o.vc) return false;
  if (!o.tags.empty()) {
    bool any = false;
    for (const auto& t : o.tags) any |= has_tag(j, t);
    if (!any) return false;
  }
  for (const auto& t : o.no_tags)
    if (has_tag(j, t)) return false;
  return true;
}

// Each job as its output document, made on the cluster's own thread.
struct ClusterListing {
  std::vector<jobcli::Json> jobs;
  long total = -1;    // the server's count of matching jobs (before --since)
  bool more = false;  // pages were left (without --all)
  std::optional<pai::api::Error> error;
  std::vector<std::string> gone;  // starred jobs the server no longer has
};

ClusterListing list_cluster(const JobListOptions& o, const jobcli::Connection& c,
                            const pai::api::JobFilter& base, const std::string& states) {
  ClusterListing out;
  auto recent = [&](const auto& j) {
    return o.since_ms < 0 || number(j, "submissionTime") >= o.since_ms;
  };
  if (o.starred) {
    for (const auto& id : c.cluster->starred) {
      size_t t = id.find('~');
      if (t == std::string::npos) continue;
      auto d = c.api->get_job(id.substr(0, t), id.substr(t + 1));
      if (!d.ok()) {
        if (d.error().code == "NoJobError") {
          out.gone.push_back(id);
          continue;
        }
        out.error = d.error();
        return out;
      }
      pai::api::Json s = d->contains("jobStatus") && (*d)["jobStatus"].is_object()
                             ? (*d)["jobStatus"]
                             : pai::api::Json::object();
      s["name"] = d->value("name", id.substr(t + 1));
      if (!s.contains("username")) s["username"] = id.substr(0, t);
      s["tags"] = d->contains("tags") ? (*d)["tags"] : pai::api::Json::array();
      if (matches(o, states, s) && recent(s)) out.jobs.push_back(to_ordered(s));
    }
    std::stable_sort(out.jobs.begin(), out.jobs.end(), [](const auto& a, const auto& b) {
      return number(a, "submissionTime") > number(b, "submissionTime");
    });
    out.total = static_cast<long>(out.jobs.size());
    return out;
  }
  pai::api::JobFilter f = base;
  f.offset = o.offset;
  f.limit = o.limit;
  f.with_total_count = true;
  bool newest_first = o.server_order == "submissionTime,DESC";
  for (int pages = 0; pages < 10000; ++pages) {
    auto r = c.api->list_jobs_page(f);
    if (!r.ok()) {
      out.error = r.error();
      return out;
    }
    out.total = r->total;
    size_t n = r->items.size();
    bool older = false;
    out.jobs.reserve(out.jobs.size() + n);
    for (const auto& j : r->items) {
      if (recent(j))
        out.jobs.push_back(to_ordered(j));
      else
        older = true;
    }
    bool last_page = static_cast<int>(n) < f.limit ||
                     (r->total >= 0 && f.offset + static_cast<long>(n) >= r->total) || n == 0;
    // Newest first: once a page reaches past --since, the next pages are older still.
    if (older && newest_first) last_page = true;
    if (!o.all_pages) {
      out.more = !last_page;
      break;
    }
    if (last_page) break;
    f.offset += static_cast<int>(n);
  }
  return out;
}

const char* kStates[] = {"WAITING",   "RUNNING", "STOPPING", "STOPPED",
                         "SUCCEEDED", "FAILED",  "UNKNOWN"};

// The jobs of every cluster, asked at the same time, in cluster order. Failing
// clusters are reported and set `rc`.
std::vector<std::pair<std::string, jobcli::Json>> fetch(
    const JobListOptions& o, const std::vector<jobcli::Connection>& conns,
    const std::string& states, int& rc) {
  std::vector<std::future<ClusterListing>> futures;
  for (const auto& c : conns) {
    pai::api::JobFilter f;
    f.username = o.all_users ? "" : (o.user.empty() ? c.cluster->user : o.user);
    f.state = states;
    f.vc = o.vc;
    f.keyword = o.keyword;
    f.tags_contain = pai::util::join(o.tags, ",");
    f.tags_not_contain = pai::util::join(o.no_tags, ",");
    if (!o.order.empty()) f.order = o.server_order;
    futures.push_back(std::async(std::launch::async,
                                 [&o, c, f, states]() { return list_cluster(o, c, f, states); }));
  }
  std::vector<std::pair<std::string, jobcli::Json>> jobs;
  for (size_t i = 0; i < conns.size(); ++i) {
    auto r = futures[i].get();
    const std::string& name = conns[i].cluster->name;
    if (r.error) {
      jobcli::report_api_error(name, "listing jobs", *r.error);
      rc = kExitRemote;
      continue;
    }
    for (const auto& id : r.gone)
      print_warning(name + ": starred job " + id + " no longer exists ('paictl job unstar " + id +
                    " --cluster " + name + "')");
    if (r.more && !o.watch)
      std::fprintf(stderr, "paictl: %s: %zu of %s jobs shown; --all lists every page\n",
                   name.c_str(), r.jobs.size(),
                   r.total >= 0 ? std::to_string(r.total).c_str() : "more");
    for (auto& j : r.jobs) jobs.emplace_back(name, std::move(j));
  }
  return jobs;
}

Table list_table(const JobListOptions& o,
                 const std::vector<std::pair<std::string, jobcli::Json>>& jobs) {
  Table t;
  if (o.all_clusters) t.columns.push_back({"CLUSTER"});
  for (const char* h :
       {"JOB", "STATE", "VC", "GPUS", "TASKS", "RETRIES", "AGE", "DURATION", "TAGS"})
    t.columns.push_back({h});
  t.columns.push_back({"SUBMITTED", true});
  t.columns.push_back({"SUBSTATE", true});
  t.columns.push_back({"COMPLETED", true});
  t.columns.push_back({"EXIT", true});
  for (const auto& [cluster, j] : jobs) {
    {
      std::vector<std::string> row;
      if (o.all_clusters) row.push_back(cluster);
      row.push_back(j.value("username", std::string("?")) + "~" +
                    j.value("name", std::string("?")));
      row.push_back(j.value("state", std::string("?")));
      row.push_back(j.value("virtualCluster", std::string("-")));
      row.push_back(j.contains("totalGpuNumber") ? j["totalGpuNumber"].dump() : "-");
      row.push_back(j.contains("totalTaskNumber") ? j["totalTaskNumber"].dump() : "-");
      row.push_back(j.contains("retries") ? j["retries"].dump() : "-");
      double submitted = number(j, "submissionTime");
      row.push_back(submitted < 0 ? "-" : jobcli::format_duration_ms(jobcli::now_ms() - submitted));
      double start = j.contains("launchedTime") && j["launchedTime"].is_number()
                         ? j["launchedTime"].get<double>()
                     : j.contains("createdTime") && j["createdTime"].is_number()
                         ? j["createdTime"].get<double>()
                         : -1;
      double end = j.contains("completedTime") && j["completedTime"].is_number()
                       ? j["completedTime"].get<double>()
                       : static_cast<double>(std::time(nullptr)) * 1000;
      row.push_back(start < 0 ? "-" : jobcli::format_duration_ms(end - start));
      row.push_back(tags_of(j));
      row.push_back(jobcli::format_time_ms(j.contains("submissionTime") ? j["submissionTime"]
                                                                        : jobcli::Json(nullptr)));
      row.push_back(j.value("subState", std::string("-")));
      row.push_back(jobcli::format_time_ms(j.contains("completedTime") ? j["completedTime"]
                                                                       : jobcli::Json(nullptr)));
      row.push_back(
          j.contains("appExitCode") && !j["appExitCode"].is_null() ? j["appExitCode"].dump() : "-");
      t.add(row);
    }
  }
  return t;
}

std::string job_key(const std::string& cluster, const jobcli::Json& j, bool with_cluster,
                    const char* sep = "  ") {
  return (with_cluster ? cluster + sep : std::string()) + j.value("username", std::string("?")) +
         "~" + j.value("name", std::string("?"));
}

int watch(const JobListOptions& o, const std::vector<jobcli::Connection>& conns,
          const std::string& states) {
  jobcli::catch_interrupt();
  bool tty = is_tty(1);
  std::map<std::string, std::string> last;
  bool first = true;
  while (true) {
    int rc = kExitOk;
    auto jobs = fetch(o, conns, states, rc);
    if (tty) {
      std::string text = render_table(list_table(o, jobs), o.output == "wide");
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

// --state's states, upper-cased and comma-joined; `bad` gets the unknown ones.
std::string parse_states(const std::string& state, std::vector<std::string>* bad) {
  std::string states;
  for (auto s : pai::util::split(state, ',')) {
    std::string up;
    for (char c : pai::util::trim(s)) up += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    if (up.empty()) continue;
    bool ok = false;
    for (const char* k : kStates) ok |= up == k;
    if (!ok) {
      if (bad) bad->emplace_back(s);
      continue;
    }
    states += (states.empty() ? "" : ",") + up;
  }
  return states;
}

// --order FIELD[,asc|desc] as the server's "field,DIR"; "" when it is not one,
// with `guess` the closest field.
std::string parse_order(const std::string& order, std::string* guess) {
  auto parts = pai::util::split(order, ',');
  std::string field(pai::util::trim(parts[0])),
      dir = parts.size() > 1 ? std::string(pai::util::trim(parts[1])) : "";
  std::string server;
  std::vector<std::string> names;
  for (const auto& [k, v] : kOrderFields) {
    if (k == field) server = v;
    names.push_back(k);
  }
  for (char& ch : dir) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
  if (server.empty() || parts.size() > 2 || (!dir.empty() && dir != "ASC" && dir != "DESC")) {
    if (guess) *guess = pai::util::did_you_mean(field, names);
    return "";
  }
  if (dir.empty())
    dir = server == "name" || server == "username" || server == "virtualCluster" ? "ASC" : "DESC";
  return server + "," + dir;
}

}  // namespace

void validate_job_list(const JobListOptions& o, Usage& u) {
  std::vector<std::string> bad;
  parse_states(o.state, &bad);
  for (const auto& s : bad)
    u.error("unknown state \"" + s + "\"",
            "states are WAITING, RUNNING, STOPPING, STOPPED, SUCCEEDED, FAILED, UNKNOWN");
  u.error_if(o.all_clusters && !o.remote.cluster.empty(),
             "give --cluster or --all-clusters, not both");
  for (const auto& t : o.tags)
    u.error_if(t.empty() || t.find(',') != std::string::npos,
               "--tag \"" + t + "\": a tag is non-empty and has no ','", "give --tag once per tag");
  for (const auto& t : o.no_tags)
    u.error_if(t.empty() || t.find(',') != std::string::npos,
               "--no-tag \"" + t + "\": a tag is non-empty and has no ','",
               "give --no-tag once per tag");
  if (!o.since.empty())
    u.error_if(!jobcli::parse_duration_ms(o.since),
               "--since \"" + o.since + "\" is not a duration (e.g. 90s, 30m, 6h, 2d, 1w)");
  if (!o.order.empty()) {
    std::string guess;
    if (parse_order(o.order, &guess).empty())
      u.error("--order \"" + o.order + "\" is not FIELD[,asc|desc]" +
                  (guess.empty() ? "" : " (did you mean \"" + guess + "\"?)"),
              "FIELD is one of submitted, name, state, completed, gpus, retries, vc, user");
  }
  u.error_if(o.watch && is_structured(o.output),
             "--watch prints a table (redrawn on a terminal, one line per change otherwise); "
             "not with -o json/yaml");
}

namespace {

int run(const JobListOptions& o, const Globals& g) {
  std::string states = parse_states(o.state, nullptr);
  JobListOptions opt = o;
  if (!o.since.empty()) opt.since_ms = jobcli::now_ms() - *jobcli::parse_duration_ms(o.since);
  opt.server_order =
      o.order.empty() ? std::string("submissionTime,DESC") : parse_order(o.order, nullptr);
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
  if (o.watch) return watch(opt, conns, states);
  int rc = kExitOk;
  auto jobs = fetch(opt, conns, states, rc);
  if (o.output == "name") {
    for (const auto& [cluster, j] : jobs)
      std::printf("%s\n", pai::util::printable(job_key(cluster, j, o.all_clusters, "/")).c_str());
    return rc;
  }
  if (!is_structured(o.output)) {
    Table t = list_table(opt, jobs);
    if (t.rows.empty()) {
      if (rc == kExitOk) std::fprintf(stderr, "No jobs.\n");
    } else {
      print_table(t, o.output == "wide");
    }
    return rc;
  }
  jobcli::Json all = jobcli::Json::array();
  all.get_ref<jobcli::Json::array_t&>().reserve(jobs.size());
  for (auto& [cluster, j] : jobs) {
    j["cluster"] = cluster;
    all.push_back(std::move(j));
  }
  print_document(list_document("jobList", std::move(all)), o.output);
  return rc;
}

void add_job_list(Flags& parent, Globals& g) {
  auto o = std::make_shared<JobListOptions>();
  Flags* cmd = &parent;
  jobcli::add_remote_flags(cmd, o->remote);
  cmd->add_flag("--all-clusters", o->all_clusters,
                "Ask every registered cluster (at the same time)");
  cmd->add_option("--state", o->state,
                  "Only jobs in these states (comma list, e.g. RUNNING,WAITING)");
  cmd->add_option("--user", o->user, "Only jobs of this user (default: your user on each cluster)");
  cmd->add_flag("--all-users", o->all_users, "Jobs of every user");
  cmd->add_option("--vc", o->vc, "Only jobs in this virtual cluster");
  cmd->add_option("--keyword", o->keyword, "Only jobs whose name, user or VC contains this text");
  cmd->add_option("--tag", o->tags,
                  "Only jobs with this tag (repeat: with any of them; the server's tagsContain)")
      ->type_name("TAG");
  cmd->add_option("--no-tag", o->no_tags,
                  "Only jobs without this tag (repeat: with none of them; tagsNotContain)")
      ->type_name("TAG");
  cmd->add_option("--since", o->since,
                  "Only jobs submitted in the last DURATION (90s, 30m, 6h, 2d, 1w)")
      ->type_name("DURATION");
  cmd->add_option("--order", o->order,
                  "Sort by FIELD[,asc|desc]: submitted (default, newest first), name, state, "
                  "completed, gpus, retries, vc, user")
      ->type_name("FIELD[,DIR]");
  cmd->add_option("--limit", o->limit, "Page size: at most this many jobs per cluster and request")
      ->check(Range(1, 50000))
      ->capture_default_str();
  cmd->add_option("--offset", o->offset, "Skip this many jobs (of each cluster) first")
      ->check(NonNegativeNumber);
  cmd->add_flag("--all", o->all_pages, "Every page, not only the first --limit jobs");
  cmd->add_flag("--starred", o->starred,
                "Only the jobs starred with 'paictl job star' (kept in the registry per cluster)");
  cmd->add_flag("-w,--watch", o->watch,
                "Look again every --interval: redrawn on a terminal, one line per change "
                "otherwise; Ctrl-C stops");
  cmd->add_option("--interval", o->interval, "With --watch: seconds between two looks")
      ->check(Range(0.05, 3600.0))
      ->capture_default_str();
  add_output_option(*cmd, o->output, g, /*wide=*/true, {"USER~NAME"});
  cmd->footer(
      "EXIT STATUS:\n"
      "  0 ok, 2 bad usage, 3 a cluster failed (the others are still listed)\n\n");
  define_command(*cmd, g, o, {.validate = validate_job_list, .run = [](const auto& o, Globals& g) {
                                return run(o, g);
                              }});
}

}  // namespace

void build_job_list(Flags& cmd, Globals& g) {
  add_job_list(cmd, g);
}

}  // namespace paictl
