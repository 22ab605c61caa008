#pragma once
// Hosts of one run over the shared scripted transport (tests/support), for the
// unit tests of the install phases and of the observation cache: a test makes
// its hosts, tells the transport what they answer, and calls a phase's
// observe/apply (or the engine's helpers) on them as the engine would.

#include <deque>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "deploy/engine.h"
#include "deploy/onprem.h"
#include "deploy/openpai.h"
#include "deploy/phase.h"
#include "support/scripted_transport.h"
#include "util/clock.h"

namespace pai::deploy::phase_test {

inline HostSpec master_spec(const std::string& name = "master") {
  HostSpec h;
  h.name = name;
  h.address = "10.0.0.1";
  h.master = true;
  h.target.endpoint.name = name;
  h.target.endpoint.user = "root";
  return h;
}

inline HostSpec worker_spec(const std::string& name, int gpus = 0,
                            const std::string& address = "10.0.0.2") {
  HostSpec h;
  h.name = name;
  h.address = address;
  h.worker = true;
  h.sku = gpus > 0 ? "gpu-node" : "cpu-node";
  h.gpus = gpus;
  h.gpu_type = gpus > 0 ? "nvidia.com/gpu" : "";
  h.target.endpoint.name = name;
  h.target.endpoint.user = "root";
  return h;
}

// A clock that never sleeps: each sleep moves it on.
struct FakeClock {
  double t = 1000;
  std::vector<double> sleeps;
  util::Clock clock() {
    util::Clock c;
    c.now = [this] { return t; };
    c.sleep = [this](double s) {
      sleeps.push_back(s);
      t += s;
    };
    return c;
  }
};

// The hosts of one run, each with its kept connection over `transport`.
struct ScriptedHosts {
  testing::ScriptedTransport transport;
  Masker masker;
  RunContext run;
  std::deque<HostSpec> specs;  // HostRun keeps a reference: stable addresses
  std::vector<std::unique_ptr<HostRun>> hosts;

  ScriptedHosts() { run.masker = &masker; }
  HostRun& add(HostSpec spec) {
    specs.push_back(std::move(spec));
    hosts.push_back(std::make_unique<HostRun>(specs.back(), run));
    hosts.back()->connection = transport.connect(specs.back().target);
    run.hosts.push_back(hosts.back().get());
    return *hosts.back();
  }
  HostRun& host(const std::string& name) {
    for (auto& h : hosts)
      if (h->spec().name == name) return *h;
    return *hosts.front();
  }
};

// The phase of this name among `phases` (null when there is none).
inline Phase* find_phase(const PhaseList& phases, const std::string& name) {
  for (const auto& p : phases)
    if (p->name() == name) return p.get();
  return nullptr;
}

// Install's settings for the phase tests: the repository's templates, short waits.
inline InstallSettings install_settings() {
  InstallSettings s;
  s.templates_dir = std::string(PAI_SOURCE_DIR) + "/templates";
  s.wait_s = 5;
  return s;
}

// The phase of this name among `phases` (the test fails at its first use when
// there is none).
inline Phase& named(const PhaseList& phases, const std::string& name) {
  Phase* p = find_phase(phases, name);
  if (!p) throw std::runtime_error("no phase " + name);
  return *p;
}

// The API server's answer to an API read (api_json_read_script) of one list:
// `list_kind` ("NodeList", "DaemonSetList") holding `items` (their kind is
// filled in as kubectl would).
inline std::string api_answer(const std::string& list_kind,
                              const std::vector<nlohmann::json>& items,
                              const std::string& api_version = "v1") {
  nlohmann::json list = {{"kind", list_kind}, {"apiVersion", api_version}, {"items", items}};
  return list.dump() + "\n@@paictl-api 200\n";
}

// A Node as the API server lists it.
inline nlohmann::json node(const std::string& name, bool ready = true,
                           const std::map<std::string, std::string>& labels = {}, int gpus = 0) {
  nlohmann::json n = {{"metadata", {{"name", name}, {"labels", labels}}},
                      {"status",
                       {{"conditions", {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}},
                        {"allocatable", nlohmann::json::object()}}}};
  if (gpus > 0) n["status"]["allocatable"]["nvidia.com/gpu"] = std::to_string(gpus);
  return n;
}

// The value of the first `key: value` line of `text` after `after` ("" when none).
inline std::string yaml_value(const std::string& text, const std::string& key,
                              const std::string& after = {}) {
  size_t from = after.empty() ? 0 : text.find(after);
  if (from == std::string::npos) return {};
  size_t at = text.find(key + ": ", from);
  if (at == std::string::npos) return {};
  at += key.size() + 2;
  std::string v = text.substr(at, text.find('\n', at) - at);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) v = v.substr(1, v.size() - 2);
  return v;
}

// The StatefulSets and Deployments of an applied manifest ("statefulset/NAME")
// with the hash paictl gave each (paictl.io/config-hash).
inline std::map<std::string, std::string> workload_hashes(const std::string& manifest) {
  std::map<std::string, std::string> out;
  size_t pos = 0;
  while (pos < manifest.size()) {
    size_t next = manifest.find("\n---", pos + 1);
    std::string doc = manifest.substr(pos, next == std::string::npos ? next : next - pos);
    pos = next == std::string::npos ? manifest.size() : next + 4;
    std::string kind = yaml_value(doc, "kind");
    if (kind != "StatefulSet" && kind != "Deployment") continue;
    std::string lower = kind == "StatefulSet" ? "statefulset/" : "deployment/";
    out[lower + yaml_value(doc, "  name")] = yaml_value(doc, "paictl.io/config-hash");
  }
  return out;
}

// A StatefulSet or Deployment ("statefulset/NAME") of namespace `ns` as the API
// server lists it: with paictl's hash, rolled out or not.
inline nlohmann::json workload(const std::string& kind_name, const std::string& ns,
                               const std::string& hash, bool rolled_out = true) {
  std::string name = kind_name.substr(kind_name.find('/') + 1);
  nlohmann::json w = {
      {"metadata",
       {{"name", name}, {"namespace", ns}, {"annotations", {{"paictl.io/config-hash", hash}}}}},
      {"spec", {{"replicas", 1}}},
      {"status", nlohmann::json::object()}};
  int n = rolled_out ? 1 : 0;
  if (kind_name.rfind("statefulset/", 0) == 0) {
    w["status"]["readyReplicas"] = n;
  } else {
    w["status"]["updatedReplicas"] = n;
    w["status"]["replicas"] = 1;
    w["status"]["availableReplicas"] = n;
  }
  return w;
}

// The cluster objects' read (an API read) answering these workloads.
inline std::string workloads_answer(const std::map<std::string, std::string>& hashes,
                                    const std::string& ns, bool rolled_out = true) {
  std::vector<nlohmann::json> sets, deployments;
  for (const auto& [kind_name, hash] : hashes)
    (kind_name.rfind("statefulset/", 0) == 0 ? sets : deployments)
        .push_back(workload(kind_name, ns, hash, rolled_out));
  return api_answer("StatefulSetList", sets, "apps/v1") +
         api_answer("DeploymentList", deployments, "apps/v1");
}

// `kubectl get daemonsets,statefulsets,deployments -o json`'s answer: these
// workloads, rolled out or not.
inline std::string kubectl_workloads(const std::map<std::string, std::string>& hashes,
                                     const std::string& ns, bool rolled_out = true) {
  nlohmann::json list = {{"kind", "List"}, {"items", nlohmann::json::array()}};
  for (const auto& [kind_name, hash] : hashes) {
    nlohmann::json w = workload(kind_name, ns, hash, rolled_out);
    w["kind"] = kind_name.rfind("statefulset/", 0) == 0 ? "StatefulSet" : "Deployment";
    list["items"].push_back(std::move(w));
  }
  return list.dump();
}

// The input of the last command on `host` whose script holds `pattern`.
inline std::string input_of(const testing::ScriptedTransport& t, const std::string& host,
                            const std::string& pattern) {
  std::string out;
  for (const auto& c : t.calls_to(host))
    if (c.script.find(pattern) != std::string::npos) out = c.input;
  return out;
}

// A DaemonSet as the API server lists it, with paictl's hash.
inline nlohmann::json daemonset(const std::string& ns, const std::string& name,
                                const std::string& hash, bool rolled_out = true) {
  return {{"metadata",
           {{"name", name},
            {"namespace", ns},
            {"generation", 1},
            {"annotations", {{"paictl.io/config-hash", hash}}}}},
          {"status",
           {{"observedGeneration", 1},
            {"desiredNumberScheduled", 2},
            {"updatedNumberScheduled", rolled_out ? 2 : 1},
            {"numberAvailable", rolled_out ? 2 : 1}}}};
}

inline std::string kubectl_daemonsets(const std::vector<nlohmann::json>& items) {
  nlohmann::json list = {{"kind", "List"}, {"items", items}};
  for (auto& i : list["items"]) i["kind"] = "DaemonSet";
  return list.dump();
}

// What observe() says is missing, or the error.
struct Observed {
  util::Result<void> status;
  std::vector<std::string> needs;
};
inline Observed observe(Phase& p, HostRun& h) {
  Observed o;
  o.status = p.observe(h, o.needs);
  return o;
}

// Whether one of `needs` holds `text`.
inline bool needs_has(const std::vector<std::string>& needs, const std::string& text) {
  for (const auto& n : needs)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace pai::deploy::phase_test
