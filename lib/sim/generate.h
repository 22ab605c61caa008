#pragma once
// Seeded, Philly-like synthetic traces and Philly-shaped clusters.
//
// Jobs follow the shape reported for Microsoft's Philly cluster (Jeon et al.,
// ATC '19): mostly 1-GPU jobs with a heavy tail up to 128 GPUs, log-normal run
// times, and diurnal arrivals. The cluster mirrors Philly's machine list: 552
// nodes = 321 x 2-GPU (12 GB, "P100") + 231 x 8-GPU (24 GB, "P40"), shared by
// 15 virtual clusters of Zipf-like sizes. Everything derives from one seed and
// a portable generator (splitmix64), so a seed gives the same trace anywhere.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/trace.h"

namespace pai::config {
struct HivedModel;
}

namespace pai::sim {

// What the generator needs to know about the target cluster.
struct ClusterTemplate {
  // The VC's guaranteed GPUs in one chain, and the largest pod a cell there holds.
  struct Pool {
    int64_t gpus = 0;
    int32_t pod_gpus = 1;
  };
  struct Vc {
    std::string name;
    int64_t gpus = 0;  // guaranteed GPUs (leaf cells of GPU types), all chains
    std::vector<Pool> pools;
  };
  std::vector<Vc> vcs;
  int64_t gpus = 0;
};

struct GenerateOptions {
  uint64_t seed = 1;
  int64_t jobs = 1000;
  double load = 0.7;  // offered GPU load relative to the guaranteed GPUs
  double days = 0;    // arrival span; 0 derives it from the load
  int32_t max_gpus = 128;
  double opportunistic = 0;   // share of jobs submitted at priority -1
  int32_t priority = 100;     // priority of the other jobs
  double start = 1506816000;  // 2017-10-01 00:00:00 UTC, as in Philly's time frame
};

Trace generate_trace(const GenerateOptions& opt, const ClusterTemplate& cluster);

// The HiveD config (hivedscheduler.yaml) of a Philly-shaped cluster, `scale`
// times Philly's size, split into `vcs` virtual clusters.
std::string philly_cluster_config(int32_t scale, int32_t vcs);
// The template of that cluster without building its config.
ClusterTemplate philly_cluster_template(int32_t scale, int32_t vcs);
// The template of a checked cluster model (GPU leaf types only when skuTypes say which are GPUs).
ClusterTemplate cluster_template(const config::HivedModel& model);

// The portable generator used everywhere in the simulator.
struct SplitMix64 {
  uint64_t state;
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() {
    return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
  }                 // [0, 1)
  double normal();  // Box-Muller, portable
  double exponential(double mean);
};

}  // namespace pai::sim
