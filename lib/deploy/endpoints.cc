// The last phase of install: the OpenPAI gateway's GET /api/v2/info and HiveD's
// GET /v1/inspect/clusterstatus answer, asked from this machine (where the
// operator's paictl will ask them), and HiveD shows every node its config
// names healthy.

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <regex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "deploy/onprem.h"
#include "deploy/openpai.h"
#include "http/client.h"
#include "util/strings.h"

namespace pai::deploy {

namespace {

std::string describe(const http::Result& r) {
  if (!r.ok())
    return "did not answer (" +
           (r.message.empty() ? std::string(http::to_string(r.error)) : r.message) + ")";
  std::string body(util::trim(r.response.body));
  if (body.size() > 120) body = body.substr(0, 120) + "...";
  return "answered " + std::to_string(r.response.status) + (body.empty() ? "" : ": " + body);
}

http::Result get(http::Client& client, const std::string& url) {
  http::Request req;
  req.url = url;
  req.headers.push_back({"Accept", "application/json"});
  return client.send(req);
}

// Node-level cells of HiveD's physical cluster: node name (the address's last
// segment, as OpenPAI's REST server reads it) -> healthiness.
void node_cells(const nlohmann::json& cells, std::map<std::string, std::string>& out) {
  if (!cells.is_array()) return;
  for (const auto& c : cells) {
    if (!c.is_object()) continue;
    if (c.value("isNodeLevel", false)) {
      std::string addr = c.value("cellAddress", "");
      out[addr.substr(addr.rfind('/') + 1)] = c.value("cellHealthiness", "");
    }
    if (c.contains("cellChildren")) node_cells(c["cellChildren"], out);
  }
}

}  // namespace

std::vector<std::string> hived_config_nodes(const OpenPaiSettings& o,
                                            const std::vector<std::string>& hosts) {
  std::set<std::string> named;
  static const std::regex addr(R"(cellAddress:\s*["']?([A-Za-z0-9._-]+))");
  for (std::sregex_iterator it(o.hived_config.begin(), o.hived_config.end(), addr), end; it != end;
       ++it)
    named.insert((*it)[1].str());
  std::vector<std::string> out;
  for (const auto& h : hosts)
    if (named.count(h)) out.push_back(h);
  return out;
}

EndpointReport check_endpoints(http::Client& client, const OpenPaiSettings& o,
                               const std::string& master_address,
                               const std::vector<std::string>& hived_nodes) {
  EndpointReport rep;
  std::string gateway =
      "http://" + master_address + (o.pylon_port == 80 ? "" : ":" + std::to_string(o.pylon_port));
  // The REST server behind the gateway's /rest-server route, else at its root
  // (as paictl cluster add probes it).
  for (const std::string& url : {gateway + "/rest-server/api/v2/info", gateway + "/api/v2/info"}) {
    http::Result r = get(client, url);
    auto j = r.ok() && r.response.status == 200
                 ? nlohmann::json::parse(r.response.body, nullptr, false)
                 : nlohmann::json();
    if (j.is_object() && j.contains("version") && j["version"].is_string()) {
      rep.answers.push_back("GET " + url + " answered 200 (" + j.value("name", "") + " " +
                            j["version"].get<std::string>() + ")");
      rep.gateway_ok = true;
      break;
    }
    rep.answers.push_back("GET " + url + " " + describe(r) +
                          (r.ok() && r.response.status == 200 ? " (no version: not OpenPAI)" : ""));
    rep.problems.push_back("the gateway's " + url + " " + describe(r));
    if (!r.ok()) break;  // nothing listens: the other path cannot answer either
  }
  if (rep.gateway_ok) rep.problems.clear();

  bool hived = o.hived_enabled && !o.hived_config.empty();
  if (!hived) return rep;
  std::string url =
      "http://" + master_address + ":" + std::to_string(o.hived_port) + "/v1/inspect/clusterstatus";
  http::Result r = get(client, url);
  auto j = r.ok() && r.response.status == 200
               ? nlohmann::json::parse(r.response.body, nullptr, false)
               : nlohmann::json();
  if (!j.is_object() || !j.contains("physicalCluster") || !j["physicalCluster"].is_array()) {
    rep.answers.push_back("GET " + url + " " + describe(r));
    rep.problems.push_back("HiveD's inspect API " + url + " " + describe(r) +
                           (r.ok() && r.response.status == 200 ? " (no physicalCluster)" : ""));
    return rep;
  }
  std::map<std::string, std::string> cells;
  node_cells(j["physicalCluster"], cells);
  size_t healthy = 0;
  std::vector<std::string> bad;
  for (const auto& n : hived_nodes) {
    auto it = cells.find(n);
    if (it == cells.end())
      bad.push_back(n + " missing");
    else if (it->second != "Healthy")
      bad.push_back(n + " " + (it->second.empty() ? std::string("without a health") : it->second));
    else
      ++healthy;
  }
  rep.answers.push_back("GET " + url + " answered 200 (" + std::to_string(cells.size()) +
                        " node cells, " + std::to_string(healthy) + " of " +
                        std::to_string(hived_nodes.size()) + " planned nodes healthy)");
  if (!bad.empty())
    rep.problems.push_back("HiveD's inspect API " + url + " shows " + util::join(bad, ", "));
  else
    rep.hived_ok = true;
  return rep;
}

namespace {

class EndpointsPhase : public Phase, public ReadsAhead {
 public:
  explicit EndpointsPhase(const InstallSettings& s)
      : Phase("endpoints",
              {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = true}),
        s_(s) {}

  // The probe of the gateway and HiveD, as a call that holds nothing of the
  // run (it may run on a thread of its own).
  static std::function<EndpointReport()> prober(const InstallSettings& s, HostRun& h) {
    std::vector<std::string> names;
    for (auto* host : h.run().hosts) names.push_back(host->spec().name);
    return [openpai = s.openpai, address = h.spec().address, names = std::move(names)] {
      http::Options o;
      o.connect_timeout_s = 3;
      o.timeout_s = 10;
      o.retry.max_attempts = 1;
      http::CurlClient client(o);
      return check_endpoints(client, openpai, address, hived_config_nodes(openpai, names));
    };
  }
  EndpointReport probe(HostRun& h) const { return prober(s_, h)(); }

  // Asked from this machine, the endpoints need nothing the hosts' sessions
  // read: in a dry run (a plan), when the engine collects the phases' reads
  // for its one session per host, the probe starts on a thread of its own and
  // observe() takes its answer, so that it overlaps the hosts' sessions
  // instead of following them. A run that applies probes when it observes:
  // the phases before may have changed what answers.
  void observation_reads(HostRun& h, std::vector<ObservationRead>&) override {
    if (!s_.openpai.enabled || !h.run().dry_run || pending_.valid()) return;
    pending_ = std::async(std::launch::async, prober(s_, h));
  }

  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    if (!s_.openpai.enabled) return {};
    const bool ahead = pending_.valid() && h.run().dry_run;
    EndpointReport r = ahead ? pending_.get() : probe(h);
    // A plan's probe its own observe() never took is not this run's answer.
    if (pending_.valid()) pending_ = {};
    for (const auto& a : r.answers) h.log("endpoints: " + a);
    for (const auto& p : r.problems) needs.push_back("wait for an answer (now " + p + ")");
    return {};
  }

  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(s_.wait_s);
    EndpointReport r;
    int pause_ms = 100;  // then 0.2 s, 0.4 s, every 0.5 s
    while (true) {
      r = probe(h);
      if (r.problems.empty()) return {};
      if (std::chrono::steady_clock::now() >= end) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      pause_ms = std::min(pause_ms * 2, 500);
    }
    for (const auto& a : r.answers) h.log("endpoints: " + a);
    return util::Error{
        "after " + std::to_string(s_.wait_s) + " s: " + util::join(r.answers, "; "),
        "the workloads rolled out, so look at what answered: pylon's and the REST server's pods "
        "(kubectl -n " +
            s_.openpai.ns + " logs deploy/pylon, deploy/rest-server) or HiveD's (statefulset/" +
            "hivedscheduler-hs) and the nodes it shows Bad; a re-run checks again"};
  }

 private:
  const InstallSettings& s_;
  std::future<EndpointReport> pending_;  // a probe started by observation_reads
};

}  // namespace

std::unique_ptr<Phase> make_endpoints_phase(const InstallSettings& s) {
  return std::make_unique<EndpointsPhase>(s);
}

}  // namespace pai::deploy
