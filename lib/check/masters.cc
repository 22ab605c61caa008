#include "check/masters.h"

#include <algorithm>
#include <map>

#include "remote/executor.h"
#include "util/strings.h"

namespace pai::check {

namespace {

// The peer name of the endpoint's probe.
constexpr const char* kMastersEndpointPeer = "the control-plane endpoint";

}  // namespace

std::vector<Probe> master_probes(const SiteHost& from, const std::vector<SiteHost>& all,
                                 const std::string& endpoint) {
  std::vector<Probe> out;
  if (size_t colon = endpoint.rfind(':'); colon != std::string::npos) {
    auto port = util::parse_int(endpoint.substr(colon + 1));
    if (port && *port > 0 && *port < 65536)
      out.push_back({kMastersEndpointPeer, endpoint.substr(0, colon), static_cast<int>(*port),
                     "the API servers behind it"});
  }
  if (!from.master) return out;
  for (const auto& h : all) {
    if (!h.master || h.name == from.name) continue;
    out.push_back({h.name, h.address, 2379, "etcd's clients"});
    out.push_back({h.name, h.address, 2380, "etcd's peers"});
    out.push_back({h.name, h.address, 6443, "the API server"});
    out.push_back({h.name, h.address, 10250, "the kubelet"});
  }
  return out;
}

std::vector<CheckResult> master_results(const std::string& host, const std::vector<Probe>& probes,
                                        const remote::ExecResult& r) {
  // cross_site_results says what each TCP probe found; the endpoint's rule
  // differs (something must listen there) and so do the names and hints.
  std::vector<CheckResult> out = cross_site_results(host, probes, r);
  std::map<std::string, std::string> state;  // "ADDR PORT" -> open|refused|blocked|unknown
  for (auto line : util::split(r.out, '\n')) {
    auto w = util::split(util::trim(line), ' ');
    if (w.size() >= 4 && w[0] == "tcp") state[std::string(w[2]) + " " + std::string(w[3])] = w[1];
  }
  for (size_t i = 0; i < out.size() && i < probes.size(); ++i) {
    const Probe& p = probes[i];
    CheckResult& c = out[i];
    const bool endpoint = p.peer == kMastersEndpointPeer;
    c.check = endpoint ? "ControlPlaneEndpoint" : "MasterPort";
    if (c.status == Status::Skip) continue;
    const std::string where = p.address + ":" + std::to_string(p.port);
    const std::string s = state[p.address + " " + std::to_string(p.port)];
    if (endpoint) {
      if (s == "open") {
        c.status = Status::Pass;
        c.message = "the control-plane endpoint " + where + " accepts connections";
        c.hint.clear();
      } else {
        c.status = Status::Fail;
        c.message = "the control-plane endpoint " + where +
                    (s == "refused" ? " refuses connections: nothing listens there"
                                    : " does not answer (no route, a firewall, or no such host)");
        c.hint =
            "start the load balancer in front of the masters' port 6443 (TCP, a health check "
            "on each master) at kube_control_plane_endpoint, or let kube-vip hold an address "
            "instead (kube_vip: {address, interface} in config.yaml)";
      }
    } else if (c.status == Status::Fail) {
      c.message = "cannot reach " + p.peer + " (" + where + ", " + p.what +
                  "): the connection times out or has no route";
      c.hint = "open TCP " + std::to_string(p.port) +
               " between the masters: etcd (2379-2380), the API server (6443) and the kubelet "
               "(10250) of a highly available control plane talk to each other";
    }
  }
  return out;
}

std::vector<CheckResult> control_plane_checks(const config::CheckOutcome& loaded,
                                              const std::vector<HostOutcome>& hosts,
                                              const HostExec& exec, size_t parallel) {
  std::vector<CheckResult> out;
  if (loaded.clusters.empty() || !loaded.clusters[0].config || !loaded.clusters[0].layout)
    return out;
  const auto& cfg = *loaded.clusters[0].config;
  size_t masters = 0;
  for (const auto& m : loaded.clusters[0].layout->machines) masters += m.master ? 1 : 0;
  if (masters < 2) return out;
  // kube-vip's address answers only once kube-vip runs: not probed before.
  const std::string endpoint = cfg.kube_control_plane_endpoint;
  std::vector<SiteHost> all;
  for (const auto& oc : hosts) {
    const auto& h = oc.plan;
    all.push_back({h.name, h.hostip.empty() ? h.address : h.hostip, "", h.master});
  }
  std::vector<std::vector<CheckResult>> got(hosts.size());
  remote::ExecutorOptions eo;
  eo.parallel = std::max<size_t>(1, parallel);
  remote::run_parallel(hosts.size(), eo, [&](size_t i) {
    if (!hosts[i].reached) return;
    auto probes = master_probes(all[i], all, endpoint);
    if (probes.empty()) return;
    got[i] = master_results(hosts[i].plan.name, probes,
                            exec(i, cross_site_script(probes, 0, 1, 0), 60000));
  });
  for (auto& v : got) out.insert(out.end(), v.begin(), v.end());
  return out;
}

}  // namespace pai::check
