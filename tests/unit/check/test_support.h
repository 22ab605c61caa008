#pragma once
// Shared by the check tests: a host outcome built from a real fact-script run
// on an sshd test host (data/gpu-ok.out), which each test then changes.

#include <string>

#include "check/runner.h"
#include "facts/fact_script.h"
#include "util/fs.h"

namespace pai::check::testing {

inline std::string captured_output() {
  auto r = util::read_file(std::string(PAI_SOURCE_DIR) + "/tests/unit/check/data/gpu-ok.out");
  return *r;
}

inline config::MachineSku gpu_sku(int count = 4) {
  config::MachineSku s;
  s.name = "gpu-machine";
  s.mem_bytes = 60.0 * (1ull << 30);
  s.vcore = 1;
  config::ComputingDevice d;
  d.type = "nvidia.com/gpu";
  d.model = "V100";
  d.count = count;
  s.device = d;
  return s;
}

// A reachable worker whose facts come from the captured run.
inline HostOutcome good_host(const std::string& name = "gpu-ok",
                             const std::string& ip = "127.0.2.3") {
  HostOutcome h;
  h.plan.name = name;
  h.plan.address = ip;
  h.plan.hostip = ip;
  h.plan.worker = true;
  h.plan.from_layout = true;
  h.plan.sku = gpu_sku();
  h.plan.target.endpoint.user = "root";
  h.reached = true;
  h.exec.exit_status = 0;
  h.exec.auth_method = "publickey (/k)";
  h.facts.name = name;
  facts::parse_fact_output(captured_output(), 0, h.facts);
  h.facts.hostname = name;  // the captured host calls itself gpu-ok
  h.facts.machine_id = "machine-" + name;
  h.facts.ssh_server_address = ip;
  // The capture also resolved a name that must fail (gone.invalid); a good host resolves all.
  std::erase_if(h.facts.dns, [](const facts::DnsFacts& d) { return !d.resolved; });
  return h;
}

inline const CheckResult* find(const std::vector<CheckResult>& rs, const std::string& host,
                               const std::string& check) {
  for (const auto& r : rs)
    if (r.host == host && r.check == check) return &r;
  return nullptr;
}

inline Status status_of(const std::vector<CheckResult>& rs, const std::string& host,
                        const std::string& check) {
  const CheckResult* r = find(rs, host, check);
  return r ? r->status : Status::Skip;
}

inline EvalOptions eval_options() {
  EvalOptions o;
  o.min_disk_free_bytes = int64_t{1} << 30;
  o.docker_data_root = "/var/lib/docker";
  return o;
}

}  // namespace pai::check::testing
