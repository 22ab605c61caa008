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

}  // namespace pai::deploy
