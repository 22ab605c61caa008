#pragma once
// Parsers for the hardware facts a GPU host reports:
//
//   nvidia-smi topo -m                      -> TopoMatrix
//   nvidia-smi --query-gpu=index,name,memory.total,pci.bus_id,uuid --format=csv
//                                           -> std::vector<GpuInfo>
//   lscpu  (text, or lscpu -J)              -> CpuInfo
//   /proc/meminfo                           -> MemInfo
//
// Every parser takes the text and a `source` (a file name, or "host:what")
// that is copied into each diagnostic, and returns its value with diagnostics
// carrying 1-based line and column (columns count bytes). Parsers never throw
// and never stop at the first problem: a malformed line is reported and
// skipped, and what can still be trusted is returned. `ok()` is false when an
// error was reported. Diagnostic codes T1xx are listed in docs/plan.md.
//
// Stable API: `paictl plan` and `paictl check hosts` both use it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.h"

namespace pai::facts {

template <class T>
struct Parsed {
  T value{};
  diag::List diagnostics;
  bool ok() const { return !diagnostics.has_errors(); }
};

// --- nvidia-smi topo -m --------------------------------------------------------

// How two devices are connected, closest first. The old drivers' `SOC` is Sys.
// `PSB` (a single on-board PCIe switch, e.g. the two GPUs of a K80 board) is
// as close as PIX.
enum class LinkKind : uint8_t { Self, NVLink, PIX, PSB, PXB, PHB, Node, Sys, Unknown };
std::string_view to_string(LinkKind k);

struct Link {
  LinkKind kind = LinkKind::Unknown;
  int nvlinks = 0;   // for NVLink: the number of bonded links (NV12 -> 12)
  std::string text;  // as printed: "NV12", "SOC", "PIX"
};

// Closeness of a link: Self 0, NVLink 1, PIX and PSB 2, PXB 3, PHB 4, NODE 5,
// SYS 6, Unknown 7 (the bandwidth order NV# > PIX > PXB > PHB > NODE > SYS).
int link_rank(LinkKind k);

struct TopoDevice {
  enum class Kind : uint8_t { Gpu, Nic };
  std::string label;  // the header label: "GPU0", "NIC3", "mlx5_0"
  Kind kind = Kind::Gpu;
  int index = -1;            // n of GPUn / NICn; -1 for a NIC named by its driver (mlx5_0)
  std::string nic_name;      // NICs: the name in the NIC legend, or the label (old drivers)
  std::string cpu_affinity;  // as printed ("0-23,48-71"); empty when absent or N/A
  std::vector<int> cpus;     // cpu_affinity expanded
  int numa_affinity = -1;    // -1 when absent or N/A
  int gpu_numa_id = -1;      // -1 when absent or N/A
  uint32_t line = 0;         // the device's row; 0 when it has no row
};

struct TopoMatrix {
  std::vector<TopoDevice> devices;       // in header order
  std::vector<std::vector<Link>> links;  // [row device][column device]
  bool has_cpu_affinity = false;
  bool has_numa_affinity = false;
  bool has_gpu_numa_id = false;
  bool old_driver = false;  // SOC links or driver-named NIC columns (mlx5_0) seen
  bool has_nic_legend = false;

  // Device positions of the GPUs, in header order.
  std::vector<size_t> gpu_positions() const;
  size_t gpu_count() const;
  // Position of the device with this label, or -1.
  int find(std::string_view label) const;
  const Link& link(size_t a, size_t b) const { return links[a][b]; }
};

Parsed<TopoMatrix> parse_topo_matrix(std::string_view text, std::string_view source = {});

// --- nvidia-smi --query-gpu ------------------------------------------------------

struct GpuInfo {
  int index = -1;
  std::string name;        // "Tesla V100-SXM2-32GB"
  int64_t memory_mib = 0;  // memory.total; 0 when [N/A]
  std::string bus_id;      // "00000000:06:00.0" as printed
  std::string uuid;        // "GPU-6f6f3d0b-..."
  uint32_t line = 0;
};

// Accepts --format=csv with or without the header and with or without units
// (noheader, nounits). With a header the columns may come in any order and
// unknown columns are ignored; without one the order must be
// index,name,memory.total,pci.bus_id,uuid. GPUs are returned sorted by index.
Parsed<std::vector<GpuInfo>> parse_gpu_query(std::string_view text, std::string_view source = {});

// --- nvidia-smi -q -d ECC,PAGE_RETIREMENT -------------------------------------------

// One GPU's memory health. Counters are -1 where nvidia-smi printed N/A (or
// did not print them: Ampere and later report remapped rows, not retired
// pages; GPUs without ECC report neither).
struct GpuHealth {
  std::string bus_id;                    // "00000000:3B:00.0", from the "GPU ..." line
  std::string ecc_mode;                  // "Enabled", "Disabled", "" (N/A)
  int64_t volatile_uncorrectable = -1;   // since the last driver load: Double Bit Total, or
                                         // SRAM and DRAM Uncorrectable summed
  int64_t aggregate_uncorrectable = -1;  // over the GPU's life
  int64_t volatile_correctable = -1;
  int64_t retired_single_bit = -1;      // Retired Pages: Single Bit ECC
  int64_t retired_double_bit = -1;      // Retired Pages: Double Bit ECC
  bool retirement_pending = false;      // Pending Page Blacklist (or Pending): Yes
  int64_t remapped_uncorrectable = -1;  // Remapped Rows: Uncorrectable Error
  bool remap_pending = false;           // Remapped Rows: Pending: Yes
  bool remap_failed = false;            // Remapping Failure Occurred: Yes
  uint32_t line = 0;
  // Retired pages (single and double bit), 0 where not reported.
  int64_t retired_pages() const;
};

struct GpuHealthReport {
  std::string driver_version;   // "Driver Version : 535.104.05"
  std::vector<GpuHealth> gpus;  // in the order printed
};

// Reads the `nvidia-smi -q` text of any driver since 390 (the ECC sections
// before Ampere with Single Bit/Double Bit counters per memory, and Ampere's
// SRAM/DRAM counters with remapped rows); other sections are skipped. A GPU
// line with no bus id, or a counter that is neither a number nor N/A, is an
// error (T151) at its line; the rest is still read.
Parsed<GpuHealthReport> parse_gpu_health(std::string_view text, std::string_view source = {});

// --- XID errors in the kernel log ---------------------------------------------------

// "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."
struct XidEvent {
  std::string bus_id;  // as printed: "0000:3b:00"
  int code = 0;        // 79
  std::string text;    // the rest of the line after the code, trimmed (at most 200 bytes)
  std::string when;    // the line's time stamp as printed ("[12345.678901]", "Jun 07 19:32:16")
  uint32_t line = 0;
};

// Every XID line of `dmesg` or `journalctl -k` output (other lines are
// skipped; a line that names Xid but no code is skipped too).
std::vector<XidEvent> parse_xid_events(std::string_view text);

// Whether an XID code means the GPU (or its memory, or its link) is failing
// rather than a program's fault: 48 (double bit ECC), 61, 62 (internal micro-
// controller), 63, 64 (page retirement or row remapping), 74 (NVLink), 79
// (fallen off the bus), 92 (high single bit ECC rate), 94, 95 (contained and
// uncontained ECC), 119, 120 (GSP), 140 (unrecovered ECC).
bool xid_is_hardware(int code);

// --- lscpu -------------------------------------------------------------------------

struct CpuInfo {
  std::string architecture;
  std::string vendor;
  std::string model_name;
  int logical = 0;  // CPU(s)
  int sockets = 0;  // 0 when unknown
  int cores_per_socket = 0;
  int threads_per_core = 0;
  int numa_nodes = 0;
  std::vector<std::vector<int>> numa_cpus;  // [NUMA node] -> CPUs; empty when not printed
  std::string online;                       // "0-95"
  // The NUMA node of a CPU, or -1.
  int numa_of_cpu(int cpu) const;
};

// Reads `lscpu` text (old flat and new indented layouts) or `lscpu -J` JSON.
Parsed<CpuInfo> parse_lscpu(std::string_view text, std::string_view source = {});

// --- /proc/meminfo -----------------------------------------------------------------

struct MemInfo {
  int64_t total_bytes = 0;
  int64_t available_bytes = 0;
  bool available_estimated = false;  // no MemAvailable (kernel < 3.14): MemFree + Buffers + Cached
  int64_t free_bytes = 0;
  int64_t hugepages_total = 0;
  int64_t hugepage_size_bytes = 0;
};

Parsed<MemInfo> parse_meminfo(std::string_view text, std::string_view source = {});

// --- shared helpers ----------------------------------------------------------------

// "0-23,48-71" -> {0..23, 48..71}. false when malformed or above max_cpu.
bool parse_cpu_list(std::string_view s, std::vector<int>& out, int max_cpu = 65535);

}  // namespace pai::facts
