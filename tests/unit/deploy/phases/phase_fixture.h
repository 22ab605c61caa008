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
