#pragma once
// HostFacts: what one host is, as gathered by the fact script (fact_script.h)
// in one SSH round trip, parsed on the client. It is the one facts model:
// `check hosts` checks it, `facts collect` writes it as the paictl.facts/v1
// JSON document (docs/facts.md), and `plan` reads that document back with
// read_facts_json, the one reader of it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diag/diagnostic.h"
#include "facts/parsers.h"
#include "util/result.h"

namespace pai::facts {

inline constexpr const char* kFactsSchema = "paictl.facts/v1";

struct OsFacts {
  std::string id;           // "ubuntu"
  std::string id_like;      // "debian"
  std::string version_id;   // "22.04"
  std::string pretty_name;  // "Ubuntu 22.04.4 LTS"
};

struct CpuFacts {
  int logical = 0;
  int sockets = 0;
  int cores_per_socket = 0;
  int threads_per_core = 0;
  int numa_nodes = 0;
  std::string model;
  std::string architecture;
};

struct MemoryFacts {
  int64_t total_bytes = 0;
  int64_t available_bytes = 0;
};

struct SwapDevice {
  std::string name;
  std::string type;
  int64_t size_bytes = 0;
};

struct SwapFacts {
  int64_t total_bytes = 0;          // from /proc/meminfo SwapTotal
  std::vector<SwapDevice> devices;  // from /proc/swaps
};

struct DiskFacts {
  std::string path;     // what was asked: "/" or the Docker data root
  std::string checked;  // the path measured: the nearest existing ancestor of `path`
  std::string mount_point;
  int64_t total_bytes = 0;
  int64_t available_bytes = 0;
};

struct Listener {
  std::string address;  // "0.0.0.0", "::", "127.0.0.1"
  int port = 0;
  bool v6 = false;
};

struct InterfaceAddress {
  std::string interface;
  std::string address;
  int prefix = 0;
  bool v6 = false;
};

struct PathFacts {
  std::string path;
  bool exists = false;
  bool directory = false;
  bool readable = true;             // false: exists, but the login user may not list it
  int entries = 0;                  // directory entries (files: 0)
  std::vector<std::string> sample;  // up to 5 entry names
};

struct DockerFacts {
  bool client_present = false;
  bool daemon_reachable = false;
  std::string error;  // why `docker info` failed, first line
  std::string server_version;
  std::string default_runtime;
  std::map<std::string, std::string> runtimes;  // name -> path
  int containers_running = 0;
  std::string root_dir;
  std::string cgroup_driver;
};

struct DaemonJsonFacts {
  bool present = false;
  bool valid = true;
  std::string error;
  std::string default_runtime;                  // "" when not set (Docker's default: runc)
  std::map<std::string, std::string> runtimes;  // name -> path
  std::string data_root;
  // Not kept raw: daemon.json may hold proxy URLs with credentials.
};

struct RuntimeBinary {
  std::string runtime;   // the runtime's name ("nvidia")
  std::string path;      // as configured ("nvidia-container-runtime")
  std::string resolved;  // where it is on the host; "" = not found
};

struct GpuFacts {
  int index = -1;
  std::string name;
  int64_t memory_mib = 0;
  std::string bus_id;
  std::string uuid;
};

struct NvidiaFacts {
  bool smi_present = false;
  int smi_exit = -1;      // exit status of the GPU query; -1 = not run
  std::string smi_error;  // first line of its output when it failed
  std::string driver_version;
  std::string topo_matrix;  // raw `nvidia-smi topo -m`
  int pci_gpus = -1;        // NVIDIA display/3D controllers on the PCI bus; -1 = unknown
  bool container_runtime_present = false;
  std::string container_runtime_version;
  std::vector<std::string> toolkit_binaries;  // nvidia-ctk, nvidia-container-cli, ... found on PATH
  // nvidia-smi -q -d ECC,PAGE_RETIREMENT (run when the GPU query worked):
  // each GPU's ECC counters, retired pages and remapped rows.
  bool health_read = false;
  std::vector<GpuHealth> health;
  // XID lines of the kernel log (the last 50), and where they were read:
  // "dmesg", "journalctl", or "" when neither could be read.
  std::string kernel_log;
  std::vector<XidEvent> xids;
};

struct DnsFacts {
  std::string name;
  bool resolved = false;
};

struct ClockFacts {
  double epoch = 0;        // the host's clock (seconds since 1970) when the script started
  double skew_s = 0;       // host clock minus this machine's, when the first byte came back
  bool ntp_known = false;  // some NTP client answered
  bool ntp_synchronized = false;
  std::string ntp_source;  // "timedatectl", "chronyc", "ntpq"
};

struct HostFacts {
  // Who and where.
  std::string name;                // as the cluster files (or --hosts) name it
  std::string address;             // the address paictl connected to
  std::vector<std::string> roles;  // "master", "worker" (from layout.yaml)
  std::string machine_type;        // the SKU name from layout.yaml
  std::string rack;                // not collected: a facts file may name it for the planner
  std::string collected_at;        // UTC, ISO 8601
  std::string privilege;           // "root", "sudo", "sudo-password", "user"
  std::string ssh_server_address;  // the address the SSH connection arrived on (SSH_CONNECTION)

  // What the host says about itself.
  std::string hostname;
  std::string machine_id;
  std::vector<std::string>
      ip_addresses;  // the SSH address first, then the interfaces' (no loopback)
  std::vector<InterfaceAddress> interfaces;
  OsFacts os;
  std::string kernel;
  int cgroup_version = 0;  // 1, 2; 0 = unknown
  std::vector<std::string> cgroup_controllers;
  CpuFacts cpu;
  MemoryFacts memory;
  SwapFacts swap;
  std::vector<DiskFacts> disks;
  std::vector<Listener> listening;
  ClockFacts clock;
  DockerFacts docker;
  DaemonJsonFacts daemon_json;
  std::vector<RuntimeBinary> runtime_binaries;
  bool containerd_present = false;
  std::string containerd_version;
  // `systemctl is-active containerd` said active.
  bool containerd_active = false;
  // From `containerd config dump`: its default runtime ("" = containerd's own,
  // runc) and whether the CRI plugin (what the kubelet talks to) is enabled.
  std::string containerd_default_runtime;
  bool containerd_cri = true;
  NvidiaFacts nvidia;
  std::vector<GpuFacts> gpus;
  std::vector<PathFacts> paths;                 // Kubernetes/etcd/CNI leftovers, install markers
  std::vector<std::string> processes;           // interesting process names running
  std::map<std::string, std::string> binaries;  // name -> path ("" = not on PATH)
  std::map<std::string, bool> kernel_modules;   // br_netfilter, overlay
  int ip_forward = -1;                          // -1 = unknown
  int bridge_nf_call_iptables = -1;
  std::vector<DnsFacts> dns;
  bool hostname_resolves = false;
  std::string lscpu;    // raw `lscpu`
  std::string meminfo;  // raw /proc/meminfo

  // How the collection went.
  bool complete = false;              // the script ran to its end
  std::string stuck_in;               // when not complete: the step it was in
  std::vector<std::string> sections;  // steps that reported, in order
  std::vector<std::string> notes;     // what could not be parsed

  bool has(const std::string& section) const;
  const PathFacts* path(const std::string& p) const;
  bool running(const std::string& process) const;
  bool is_gpu_host() const;  // nvidia-smi, NVIDIA PCI devices or GPUs were seen
};

nlohmann::json to_json(const HostFacts& f);

// Reads a paictl.facts/v1 document that is already JSON (what to_json writes).
// Unknown keys are ignored and values of the wrong type or out of range keep
// their defaults; a wrong or missing schema or a missing hostname is an error.
util::Result<HostFacts> from_json(const nlohmann::json& j);

// The one reader of a facts file's text (`paictl plan` reads facts directories
// with it). Never throws. Text that is not JSON (numbers too large for a
// double included) is a P005 error at its line and column; so are a document
// that is not an object, another schema, no "name" or "hostname", a "gpus"
// that is not a list and a GPU without a valid index (that GPU is left out).
// A document without "schema" is read as paictl.facts/v1, with a warning.
std::optional<HostFacts> read_facts_json(const std::string& path, std::string_view text,
                                         diag::List& out);

}  // namespace pai::facts
