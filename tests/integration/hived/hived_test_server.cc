// A HiveD inspect API test server: real HTTP on loopback, state made by
// lib/scheduler itself. It reads a scenario (a HiveD config and a stream of
// steps: schedule a group, release one, a node goes bad or comes back), replays
// it through the HiveD policy, and serves the result with HiveD's exact shapes:
//
//   GET /v1/inspect/clusterstatus[/physicalcluster|/virtualclusters/[VC]]
//   GET /v1/inspect/affinitygroups/[NAME]
//   errors: the status and a bare JSON string, as HiveD writes them
//
// and, for tests, a control API:
//   PUT  /__control/config   body: a HiveD config. The "restart" HiveD does on a
//                            config change: the running groups are restored on
//                            the new config (scheduler::restore_hived_groups).
//                            400 with the config's errors when it is invalid.
//   GET  /__control/requests the requests seen, one "METHOD PATH" per line
//   GET  /__control/waiting  the groups that wait, with the scheduler's reason
//   PUT  /__control/pods     body: {"config": HiveD config text, "bad": [node...],
//                            "bound": [group...], "pending": [request...]}. The
//                            state made again from a cluster's pods (the testbed's
//                            HiveD double, tests/integration/testbed/pai_doubles.py):
//                            a new policy on the config, the bad nodes, the bound
//                            groups restored from their pods' bind info
//                            (scheduler::restore_hived_groups, as HiveD does when
//                            it starts), then each pending group scheduled (no
//                            preemption). Answers {"placed": {group: {"chain",
//                            "pods": [{"node", "leafCellNumber", "leafCellIndices",
//                            "preassignedCellTypes"}]}}, "waiting": {group: reason}};
//                            400 with the errors of an invalid config.
//                            bound: {"name", "vc", "priority", "chain", "lazy",
//                            "pods": [{"node", "leafCellIndices", "preassignedCellTypes"}]};
//                            request: {"group", "vc", "priority", "leafType",
//                            "pinned", "lazy", "pods": [[N, leaf cells]...]}
//   POST /__control/stop     stops the server
//
// and a real restart, as HiveD's pod restarts: on SIGHUP the server reads
// CONFIG-FILE again (what a push wrote), is down for "restartMs" (503 on every
// inspect path), then comes up on the new config with the running groups
// restored and every node bad for "unhealthyMs" (HiveD starts with all nodes
// bad until Kubernetes reports them). A config with errors keeps it down.
//
// Usage: hived_test_server SCENARIO.json PORT-FILE [CONFIG-FILE]
// Scenario: {"config": "file next to the scenario",
//            "steps": [{"schedule": {"group", "vc", "priority", "pods": [[N, GPUs]...],
//                                    "leafType", "pinned", "lazy", "preempt": true|false,
//                                    "deleteVictims": true|false,
//                                    "orOpportunistic": true|false}},
//                      {"release": "group"}, {"bad": "node"}, {"healthy": "node"}]}

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/cluster_files.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"

namespace {

using nlohmann::json;
using namespace pai;

struct State {
  std::shared_ptr<config::HivedModel> model;
  std::unique_ptr<scheduler::Policy> policy;
  std::map<std::string, hived::LazyPreemptionStatus> lazy;
  std::vector<std::pair<std::string, std::string>> waiting;  // group, reason
  std::vector<std::string> requests;
  std::vector<std::string> bad;
  int config_pushes = 0;
  // The restart on SIGHUP.
  std::string config_file;
  int restart_ms = 200, unhealthy_ms = 300;
  std::chrono::steady_clock::time_point down_until{}, healthy_at{};
  std::string down_reason;  // set while the new config does not load
};

volatile sig_atomic_t g_hup = 0;
void on_hup(int) {
  g_hup = 1;
}

// Every cell bad: HiveD right after its start, before the nodes are reported.
void mark_bad(hived::PhysicalCellStatus& c) {
  c.cell_healthiness = "Bad";
  for (auto& k : c.children) mark_bad(k);
}
void mark_bad(hived::VirtualCellStatus& c) {
  if (c.physical_cell) c.cell_healthiness = "Bad";
  for (auto& k : c.children) mark_bad(k);
}
void mark_bad(hived::ClusterStatus& s) {
  for (auto& c : s.physical_cluster) mark_bad(c);
  for (auto& [vc, cells] : s.virtual_clusters)
    for (auto& c : cells) mark_bad(c);
}

std::shared_ptr<config::HivedModel> load_model(const std::string& name, const std::string& text,
                                               std::string& error) {
  (void)name;
  config::CheckOutcome out = config::check_sources({{"hivedscheduler.yaml", text}});
  if (out.diagnostics.has_errors() || out.input_error) {
    for (const auto& d : out.diagnostics.items())
      if (d.severity == diag::Severity::Error)
        error += d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " +
                 d.message + "\n";
    if (error.empty()) error = "not a HiveD config";
    return nullptr;
  }
  for (const auto& c : out.clusters)
    if (c.model) return c.model;
  error = "no HiveD config";
  return nullptr;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void run_step(State& st, const json& step) {
  if (step.contains("schedule")) {
    const json& s = step["schedule"];
    scheduler::GroupRequest r;
    r.affinity_group = s.at("group").get<std::string>();
    r.virtual_cluster = s.at("vc").get<std::string>();
    r.priority = s.value("priority", 0);
    r.leaf_cell_type = s.value("leafType", std::string());
    r.pinned_cell_id = s.value("pinned", std::string());
    r.lazy_preemption_enable = s.value("lazy", false);
    for (const auto& m : s.at("pods"))
      r.members.push_back({m.at(0).get<int32_t>(), m.at(1).get<int32_t>()});
    bool preempt = s.value("preempt", true);
    auto res = st.policy->schedule(r, preempt);
    for (const auto& d : res.downgraded)
      st.lazy[d.group] = {r.affinity_group, "2024-05-01T12:00:00Z"};
    if (res.outcome == scheduler::Outcome::Preempting && s.value("deleteVictims", true)) {
      for (const auto& v : res.victims) st.policy->release(v.group);
      res = st.policy->schedule(r, preempt);
    }
    if ((res.outcome == scheduler::Outcome::Waiting ||
         res.outcome == scheduler::Outcome::Rejected) &&
        s.value("orOpportunistic", false) && r.priority >= 0) {
      // Benchmarks fill a cluster: what does not fit in its VC runs opportunistically.
      r.priority = -1;
      res = st.policy->schedule(r, false);
    }
    if (res.outcome == scheduler::Outcome::Waiting || res.outcome == scheduler::Outcome::Rejected)
      st.waiting.push_back({r.affinity_group, res.reason});
  } else if (step.contains("release")) {
    st.policy->release(step["release"].get<std::string>());
  } else if (step.contains("bad") || step.contains("healthy")) {
    bool healthy = step.contains("healthy");
    std::string node = step[healthy ? "healthy" : "bad"].get<std::string>();
    st.policy->set_node_health(st.policy->cluster().find_node(node), healthy);
    if (!healthy) st.bad.push_back(node);
  }
}

struct Answer {
  int status = 200;
  std::string body;
  std::string type = "application/json";
};

Answer error(int status, const std::string& message) {
  return {status, json(message).dump()};
}

Answer push_config(State& st, const std::string& body) {
  std::string err;
  auto model = load_model("hivedscheduler.yaml", body, err);
  if (!model) return error(400, err);
  auto made = scheduler::make_hived_policy(*model);
  if (!made.ok()) return error(400, "Illegal initial VC assignment: " + made.error().message);
  auto policy = std::move(*made);
  // What HiveD does on a config change: it exits, starts on the new config,
  // learns the nodes (the bad ones stay bad), then the running pods.
  auto snap = scheduler::snapshot_hived(*st.policy);
  auto live = hived::index_live(hived::cluster_status_of(*st.model, *snap),
                                hived::affinity_groups_of(*st.model, *snap, st.lazy));
  auto groups = hived::live_groups(live, st.model.get());
  for (const auto& n : st.bad) policy->set_node_health(policy->cluster().find_node(n), false);
  auto restored = scheduler::restore_hived_groups(*policy, groups);
  std::map<std::string, hived::LazyPreemptionStatus> lazy;
  for (const auto& r : *restored)
    if (r.outcome == scheduler::RestoreOutcome::LazyPreempted ||
        (r.outcome == scheduler::RestoreOutcome::Opportunistic && st.lazy.count(r.name)))
      lazy[r.name] = st.lazy.count(r.name)
                         ? st.lazy[r.name]
                         : hived::LazyPreemptionStatus{r.name, "2024-05-01T12:00:00Z"};
  st.model = model;
  st.policy = std::move(policy);
  st.lazy = lazy;
  st.config_pushes++;
  json out = json::array();
  for (const auto& r : *restored)
    out.push_back({{"group", r.name},
                   {"outcome", std::string(scheduler::to_string(r.outcome))},
                   {"reason", r.reason}});
  return {200, out.dump()};
}

// The state of a cluster's pods (PUT /__control/pods): see the top of the file.
Answer sync_pods(State& st, const std::string& body) {
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return error(400, "not a JSON object");
  std::string err;
  auto model = load_model("hivedscheduler.yaml", doc.value("config", std::string()), err);
  if (!model) return error(400, err);
  auto made = scheduler::make_hived_policy(*model);
  if (!made.ok()) return error(400, "Illegal initial VC assignment: " + made.error().message);
  auto policy = std::move(*made);
  std::vector<std::string> bad;
  for (const auto& n : doc.value("bad", json::array())) {
    int32_t node = policy->cluster().find_node(n.get<std::string>());
    if (node < 0) continue;
    policy->set_node_health(node, false);
    bad.push_back(n.get<std::string>());
  }
  std::vector<scheduler::LiveGroup> groups;
  for (const auto& g : doc.value("bound", json::array())) {
    scheduler::LiveGroup lg;
    lg.name = g.at("name").get<std::string>();
    lg.vc = g.at("vc").get<std::string>();
    lg.priority = g.value("priority", 0);
    lg.chain = g.value("chain", std::string());
    lg.lazy_preemption_enable = g.value("lazy", false);
    for (const auto& p : g.at("pods"))
      lg.pods.push_back({p.at("node").get<std::string>(),
                         p.value("leafCellIndices", std::vector<int32_t>()),
                         p.value("preassignedCellTypes", std::vector<std::string>())});
    groups.push_back(std::move(lg));
  }
  auto restored = scheduler::restore_hived_groups(*policy, groups);
  std::map<std::string, hived::LazyPreemptionStatus> lazy;
  for (const auto& r : *restored)
    if (r.outcome == scheduler::RestoreOutcome::LazyPreempted)
      lazy[r.name] = hived::LazyPreemptionStatus{r.name, "2024-05-01T12:00:00Z"};
  json placed = json::object(), waiting = json::object();
  st.waiting.clear();
  for (const auto& s : doc.value("pending", json::array())) {
    scheduler::GroupRequest r;
    r.affinity_group = s.at("group").get<std::string>();
    r.virtual_cluster = s.at("vc").get<std::string>();
    r.priority = s.value("priority", 0);
    r.leaf_cell_type = s.value("leafType", std::string());
    r.pinned_cell_id = s.value("pinned", std::string());
    r.lazy_preemption_enable = s.value("lazy", false);
    for (const auto& m : s.at("pods"))
      r.members.push_back({m.at(0).get<int32_t>(), m.at(1).get<int32_t>()});
    auto res = policy->schedule(r, false);
    if (res.outcome != scheduler::Outcome::Bound) {
      waiting[r.affinity_group] = res.reason;
      st.waiting.push_back({r.affinity_group, res.reason});
      continue;
    }
    json pods = json::array();
    for (const auto& p : res.pods)
      pods.push_back({{"node", policy->cluster().nodes[static_cast<size_t>(p.node)].name},
                      {"leafCellNumber", p.leaf_cell_number},
                      {"leafCellIndices", p.physical_leaf_cell_indices},
                      {"preassignedCellTypes", p.preassigned_cell_types}});
    placed[r.affinity_group] = {{"chain", res.cell_chain}, {"pods", pods}};
  }
  st.model = model;
  st.policy = std::move(policy);
  st.lazy = lazy;
  st.bad = bad;
  return {200, json{{"placed", placed}, {"waiting", waiting}}.dump()};
}

Answer route(State& st, const std::string& method, std::string path, const std::string& body) {
  if (size_t q = path.find('?'); q != std::string::npos) path = path.substr(0, q);
  std::string decoded;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size()) {
      decoded += static_cast<char>(std::stoi(path.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      decoded += path[i];
    }
  }
  path = decoded;
  if (path.rfind("/__control/", 0) != 0) st.requests.push_back(method + " " + path);
  if (path == "/__control/config" && method == "PUT") return push_config(st, body);
  if (path == "/__control/pods" && method == "PUT") {
    try {
      return sync_pods(st, body);
    } catch (const std::exception& e) {
      return error(400, std::string("bad request: ") + e.what());
    }
  }
  if (path == "/__control/requests") {
    std::string out;
    for (const auto& r : st.requests) out += r + "\n";
    return {200, out, "text/plain"};
  }
  if (path == "/__control/waiting") {
    json out = json::array();
    for (const auto& [g, r] : st.waiting) out.push_back({{"group", g}, {"reason", r}});
    return {200, out.dump()};
  }
  const std::string inspect = "/v1/inspect";
  bool inspect_path = path.rfind(inspect, 0) == 0;
  if (inspect_path && method != "GET") return error(400, "NotImplemented: " + method + ": " + path);
  auto now = std::chrono::steady_clock::now();
  if (inspect_path && (!st.down_reason.empty() || now < st.down_until))
    return error(503, "HiveD is restarting" +
                          (st.down_reason.empty() ? std::string() : ": " + st.down_reason));
  auto snap = scheduler::snapshot_hived(*st.policy);
  auto status = [&] {
    auto s = hived::cluster_status_of(*st.model, *snap);
    if (now < st.healthy_at) mark_bad(s);
    return s;
  };
  if (path == "/v1/inspect/clusterstatus") return {200, hived::to_json(status()).dump()};
  if (path == "/v1/inspect/clusterstatus/physicalcluster")
    return {200, hived::to_json(status().physical_cluster).dump()};
  const std::string vcs = "/v1/inspect/clusterstatus/virtualclusters/";
  if (path.rfind(vcs, 0) == 0) {
    auto all = status().virtual_clusters;
    std::string vc = path.substr(vcs.size());
    if (vc.empty()) return {200, hived::to_json(all).dump()};
    auto it = all.find(vc);
    if (it == all.end()) return error(400, "VC " + vc + " not found");
    hived::Json a = hived::Json::array();
    for (const auto& c : it->second) a.push_back(hived::to_json(c));
    return {200, a.dump()};
  }
  const std::string ags = "/v1/inspect/affinitygroups/";
  if (path.rfind(ags, 0) == 0) {
    auto groups = hived::affinity_groups_of(*st.model, *snap, st.lazy);
    std::string name = path.substr(ags.size());
    if (name.empty()) return {200, hived::to_json(groups).dump()};
    for (const auto& g : groups)
      if (g.name == name) return {200, hived::to_json(g).dump()};
    return error(
        400, "Affinity group " + name + " does not exist since it is not allocated or preempting");
  }
  if (path == "/") return {200, R"({"paths":["/","/v1/inspect/affinitygroups/"]})"};
  return error(404, "Path not found: " + path);
}

bool read_request(int fd, std::string& method, std::string& path, std::string& body) {
  std::string buf;
  char tmp[65536];
  size_t header_end = std::string::npos;
  while ((header_end = buf.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::read(fd, tmp, sizeof tmp);
    if (n <= 0) return false;
    buf.append(tmp, static_cast<size_t>(n));
    if (buf.size() > (1u << 20)) return false;
  }
  std::istringstream head(buf.substr(0, header_end));
  std::string version;
  head >> method >> path >> version;
  size_t length = 0;
  std::string line;
  std::getline(head, line);
  while (std::getline(head, line)) {
    std::string lower;
    for (char c : line) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.rfind("content-length:", 0) == 0) length = std::stoul(line.substr(15));
  }
  body = buf.substr(header_end + 4);
  while (body.size() < length) {
    ssize_t n = ::read(fd, tmp, sizeof tmp);
    if (n <= 0) return false;
    body.append(tmp, static_cast<size_t>(n));
  }
  return true;
}

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: hived_test_server SCENARIO.json PORT-FILE [CONFIG-FILE]\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  std::string scenario_path = argv[1];
  json scenario = json::parse(read_file(scenario_path));
  std::string dir = scenario_path.substr(0, scenario_path.rfind('/') + 1);
  State st;
  std::string err;
  std::string cfg_path = dir + scenario.at("config").get<std::string>();
  st.config_file = argc == 4 ? argv[3] : cfg_path;
  st.restart_ms = scenario.value("restartMs", 200);
  st.unhealthy_ms = scenario.value("unhealthyMs", 300);
  {
    struct sigaction sa {};
    sa.sa_handler = on_hup;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGHUP, &sa, nullptr);
  }
  st.model = load_model(cfg_path, read_file(cfg_path), err);
  if (!st.model) {
    std::fprintf(stderr, "%s", err.c_str());
    return 2;
  }
  auto made = scheduler::make_hived_policy(*st.model);
  if (!made.ok()) {
    std::fprintf(stderr, "%s\n", made.error().message.c_str());
    return 2;
  }
  st.policy = std::move(*made);
  for (const auto& step : scenario.value("steps", json::array())) run_step(st, step);
  std::string inv = st.policy->check_invariants();
  if (!inv.empty()) std::fprintf(stderr, "warning: scheduler invariants: %s\n", inv.c_str());

  int ls = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(ls, 64) != 0) {
    std::perror("bind");
    return 1;
  }
  socklen_t len = sizeof addr;
  getsockname(ls, reinterpret_cast<sockaddr*>(&addr), &len);
  {
    std::string tmp = std::string(argv[2]) + ".tmp";
    std::ofstream(tmp) << ntohs(addr.sin_port) << "\n";
    std::rename(tmp.c_str(), argv[2]);
  }
  for (;;) {
    if (g_hup) {
      g_hup = 0;
      // The pod restarts: down for restart_ms, then up on the file's config.
      Answer a = push_config(st, read_file(st.config_file));
      auto now = std::chrono::steady_clock::now();
      st.down_until = now + std::chrono::milliseconds(st.restart_ms);
      st.healthy_at = st.down_until + std::chrono::milliseconds(st.unhealthy_ms);
      st.down_reason = a.status == 200 ? "" : json::parse(a.body).get<std::string>();
      std::fprintf(stderr, "restart on %s: %s\n", st.config_file.c_str(), a.body.c_str());
    }
    pollfd pfd{ls, POLLIN, 0};
    if (::poll(&pfd, 1, 50) <= 0) continue;
    int fd = ::accept(ls, nullptr, nullptr);
    if (fd < 0) continue;
    std::string method, path, body;
    if (read_request(fd, method, path, body)) {
      bool stop = path == "/__control/stop";
      Answer a = stop ? Answer{200, "\"stopping\""} : route(st, method, path, body);
      std::string head = "HTTP/1.1 " + std::to_string(a.status) + " X\r\nContent-Type: " + a.type +
                         "\r\nContent-Length: " + std::to_string(a.body.size()) +
                         "\r\nConnection: close\r\n\r\n";
      write_all(fd, head + a.body);
      ::close(fd);
      if (stop) break;
    } else {
      ::close(fd);
    }
  }
  ::close(ls);
  return 0;
}
