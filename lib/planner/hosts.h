#pragma once
// The hardware facts of one host, and where they come from:
//
//   DIR/<hostname>/            topo.txt, gpus.csv, lscpu.txt, meminfo, host.yaml (any of them)
//   DIR/<hostname>.json        written by `paictl facts collect` (schema paictl.facts/v1)
//   layouts/<profile>/         a machine profile: the same files plus profile.yaml
//
// host.yaml holds what hardware cannot tell: `hostip`, optional `rack`, optional
// `roles: [master]` or `[worker]` (worker by default). A host without GPUs is a
// CPU machine. When a host has both a JSON file and a directory, the files of
// the directory override the matching parts of the JSON.

#include <optional>
#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "facts/host_facts.h"
#include "facts/parsers.h"

namespace pai::planner {

enum class HostRole : uint8_t { Worker, Master };

struct Host {
  std::string hostname;
  std::string hostip;
  std::string rack;  // empty: not known
  HostRole role = HostRole::Worker;
  std::string origin;    // the directory or JSON file the facts came from
  std::string profile;   // the machine profile, for hosts made from --profile
  std::string sku_name;  // the SKU name the profile gives, e.g. DGX-A100

  std::optional<facts::TopoMatrix> topo;
  std::vector<facts::GpuInfo> gpus;
  bool has_gpu_list = false;  // gpus came from a GPU list (not only from the matrix)
  std::optional<facts::CpuInfo> cpu;
  std::optional<facts::MemInfo> mem;
  std::string driver_version;

  size_t gpu_count() const;
  // The GPU model as reported ("Tesla V100-SXM2-32GB"), "" when unknown.
  std::string gpu_model() const;
  int64_t gpu_memory_mib() const;  // the smallest over the GPUs; 0 when unknown
};

struct FactsSet {
  std::vector<Host> hosts;  // sorted by hostname (natural order: gpu-2 before gpu-10)
  diag::List diagnostics;
  std::vector<std::string> files;  // every file read
};

// Reads a facts directory. Errors (unreadable files, bad host.yaml, facts
// that do not parse) are diagnostics; the hosts that could be read are returned.
FactsSet load_facts_dir(const std::string& dir);

// Reads one host directory (also used for profiles); `hostname` names the host.
Host load_host_dir(const std::string& dir, const std::string& hostname, diag::List& out,
                   std::vector<std::string>* files = nullptr);

// Reads the text of a host.yaml (hostip, rack, roles) into `h`; problems are
// diagnostics with the line and column in `path`.
void read_host_yaml(const std::string& path, const std::string& text, Host& h, diag::List& out);

// The planner's view of collected facts: the hardware texts parsed (their
// findings go to `out`, on `origin`), the structured fields where they are missing.
Host host_from_facts(const facts::HostFacts& f, const std::string& origin, diag::List& out);

// Reads one `paictl facts collect` JSON document (facts::read_facts_json, then host_from_facts).
std::optional<Host> load_host_json(const std::string& path, const std::string& text,
                                   diag::List& out);

// "gpu-2" < "gpu-10": digit runs compare as numbers.
bool natural_less(std::string_view a, std::string_view b);

}  // namespace pai::planner
