#pragma once
// What a GPU host's facts say about its GPUs' health: the one judgement that
// `check hosts` (checks GPUEcc, GPURetiredPages, GPUXid) and `paictl hived
// health` (quarantine candidates) both report, each finding with its code
// (lib/diag/codes_cluster.cc, N010-N014).

#include <cstdint>
#include <string>
#include <vector>

#include "facts/host_facts.h"

namespace pai::facts {

// OpenPAI's alert on retired pages (NvidiaRetiredPage) fires above 60 a GPU;
// NVIDIA's guidance is to replace a GPU whose retirement table fills up.
inline constexpr int64_t kRetiredPagesLimit = 60;

struct GpuFinding {
  std::string code;  // "N010"
  // gpusDropped, eccUncorrectable, retiredPages, xid, driverMismatch
  std::string kind;
  std::string message;  // one line
  std::string hint;
};

// ECC, retired pages and remapped rows (nvidia.health), and the hardware XIDs
// of the kernel log (nvidia.xids): N011 eccUncorrectable (a volatile
// uncorrectable error, or a row remapping failure), N012 retiredPages (a
// pending retirement or remapping, or more than kRetiredPagesLimit retired
// pages on a GPU), N013 xid. One finding per kind, naming the GPUs.
std::vector<GpuFinding> gpu_health_findings(const HostFacts& f);

// N010 gpusDropped: nvidia-smi lists fewer GPUs than `expected` (or fails).
std::vector<GpuFinding> gpu_count_findings(const HostFacts& f, int64_t expected);

// N014 driverMismatch: the driver nvidia-smi reports is not `expected` ("":
// nothing to compare with). A version "535" matches "535.104.05".
std::vector<GpuFinding> gpu_driver_findings(const HostFacts& f, const std::string& expected);

}  // namespace pai::facts
