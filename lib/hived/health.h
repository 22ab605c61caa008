#pragma once
// Quarantine candidates from the hosts' facts (`paictl hived health`): the
// GPU workers of layout.yaml whose facts (facts collect, or read over SSH)
// show a GPU lost (fewer than the SKU's), uncorrectable ECC errors, retired
// or remapped memory pending or beyond the limit, hardware XID errors in the
// kernel log, or a driver that is not the SKU's (facts/gpu_findings.h).
// Pure: no I/O.

#include <map>
#include <string>
#include <vector>

#include "config/layout.h"
#include "facts/gpu_findings.h"
#include "facts/host_facts.h"

namespace pai::hived {

struct HealthOptions {
  // The driver each SKU's hosts must run, by SKU name; a SKU not named here
  // takes the driver most of its hosts' facts report (ties: the newest), so
  // one host left behind by an upgrade stands out.
  std::map<std::string, std::string> drivers;
};

struct HealthCandidate {
  std::string node;
  std::string sku;
  std::vector<facts::GpuFinding> findings;
};

struct HealthReport {
  std::vector<HealthCandidate> candidates;     // in layout order
  int64_t gpu_hosts = 0;                       // GPU workers of layout.yaml
  int64_t checked = 0;                         // of which with facts
  std::vector<std::string> without_facts;      // GPU workers with no facts
  std::map<std::string, std::string> drivers;  // SKU -> the driver compared with
  // Candidates per finding kind.
  std::map<std::string, int64_t> kinds;
};

// The facts of a directory: `paictl facts collect --out DIR` files (*.json,
// paictl.facts/v1), and host directories as `paictl plan --facts` reads them
// (DIR/<hostname>/gpus.csv: nvidia-smi --query-gpu CSV, with driver_version
// when it was asked; nvidia-smi-q.txt: nvidia-smi -q -d ECC,PAGE_RETIREMENT;
// dmesg.txt: the kernel log). Keyed by the host's name. Problems go to `out`
// (a file that is not JSON: P005 at its line and column); `files` counts what
// was read.
std::map<std::string, facts::HostFacts> read_health_facts(const std::string& dir, diag::List& out,
                                                          size_t* files = nullptr);

HealthReport health_candidates(const config::Layout& layout,
                               const std::map<std::string, facts::HostFacts>& facts,
                               const HealthOptions& options = {});

}  // namespace pai::hived
