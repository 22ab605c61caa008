#include "facts/gpu_findings.h"

#include <map>
#include <set>

#include "util/strings.h"

namespace pai::facts {

namespace {

// "GPU 00000000:3B:00.0 (index 2)" where the GPU query names the bus id.
std::string gpu_findings_name(const HostFacts& f, const std::string& bus) {
  std::string lower = util::to_lower(bus);
  for (const auto& g : f.gpus) {
    std::string b = util::to_lower(g.bus_id);
    // The kernel log prints "0000:3b:00" (no function, a short domain).
    if (!lower.empty() && (b == lower || b.find(lower) != std::string::npos))
      return "GPU" + std::to_string(g.index) + " (" + g.bus_id + ")";
  }
  return bus.empty() ? std::string("a GPU") : bus;
}

std::string gpu_findings_list(const std::vector<std::string>& v) {
  return util::join(v, ", ");
}

}  // namespace

std::vector<GpuFinding> gpu_health_findings(const HostFacts& f) {
  std::vector<GpuFinding> out;
  std::vector<std::string> ecc, pages;
  for (const auto& h : f.nvidia.health) {
    std::string name = gpu_findings_name(f, h.bus_id);
    if (h.volatile_uncorrectable > 0)
      ecc.push_back(name + ": " + std::to_string(h.volatile_uncorrectable) +
                    " uncorrectable since the driver loaded");
    else if (h.remap_failed)
      ecc.push_back(name + ": a row remapping failed (no spare rows left)");
    if (h.retirement_pending || h.remap_pending)
      pages.push_back(name + ": " +
                      (h.retirement_pending ? "a page retirement" : "a row remapping") +
                      " pending until the GPU is reset");
    else if (h.retired_pages() > kRetiredPagesLimit)
      pages.push_back(name + ": " + std::to_string(h.retired_pages()) + " retired pages");
  }
  if (!ecc.empty())
    out.push_back(
        {"N011", "eccUncorrectable", "uncorrectable ECC errors: " + gpu_findings_list(ecc),
         "jobs on this GPU may fail or compute wrong results: quarantine the node "
         "(paictl hived quarantine), then reset or replace the GPU (nvidia-smi -q -d ECC)"});
  if (!pages.empty())
    out.push_back({"N012", "retiredPages",
                   "retired or remapped memory: " + gpu_findings_list(pages),
                   "a GPU reset (or a reboot) applies a pending retirement; more than " +
                       std::to_string(kRetiredPagesLimit) +
                       " retired pages: replace the GPU (nvidia-smi -q -d PAGE_RETIREMENT)"});
  std::map<int, std::set<std::string>> xids;  // code -> GPUs
  std::map<int, std::string> text;
  for (const auto& x : f.nvidia.xids) {
    if (!xid_is_hardware(x.code)) continue;
    xids[x.code].insert(gpu_findings_name(f, x.bus_id));
    if (!text.count(x.code)) text[x.code] = x.text;
  }
  if (!xids.empty()) {
    std::vector<std::string> parts;
    for (const auto& [code, gpus] : xids) {
      // "pid=0, name=python, GPU has fallen off the bus." -> the driver's words.
      std::string t = text[code];
      while (t.rfind("pid=", 0) == 0 || t.rfind("name=", 0) == 0) {
        auto c = t.find(", ");
        t = c == std::string::npos ? std::string() : t.substr(c + 2);
      }
      parts.push_back("Xid " + std::to_string(code) + " on " +
                      gpu_findings_list(std::vector<std::string>(gpus.begin(), gpus.end())) +
                      (t.empty() ? "" : " (" + t + ")"));
    }
    out.push_back({"N013", "xid",
                   "hardware XID errors in the kernel log (" + f.nvidia.kernel_log +
                       "): " + gpu_findings_list(parts),
                   "see NVIDIA's XID catalogue; a GPU that fell off the bus (79) or has double "
                   "bit errors (48) needs a reset or a replacement"});
  }
  return out;
}

std::vector<GpuFinding> gpu_count_findings(const HostFacts& f, int64_t expected) {
  if (expected <= 0) return {};
  int64_t found = f.nvidia.smi_exit == 0 ? static_cast<int64_t>(f.gpus.size()) : 0;
  if (found >= expected) return {};
  std::string msg = f.nvidia.smi_exit != 0 && f.nvidia.smi_present
                        ? "nvidia-smi failed (" + f.nvidia.smi_error + "): 0 of " +
                              std::to_string(expected) + " GPUs usable"
                        : "nvidia-smi lists " + std::to_string(found) + " of the SKU's " +
                              std::to_string(expected) + " GPUs";
  return {{"N010", "gpusDropped", msg,
           "a GPU fell off the bus or its driver failed: jobs placed on the missing GPUs fail; "
           "quarantine the node, then look at dmesg | grep -i xid and nvidia-smi -q"}};
}

std::vector<GpuFinding> gpu_driver_findings(const HostFacts& f, const std::string& expected) {
  const std::string& d = f.nvidia.driver_version;
  if (expected.empty() || d.empty()) return {};
  if (d == expected || d.rfind(expected + ".", 0) == 0) return {};
  return {{"N014", "driverMismatch", "driver " + d + ", the SKU's hosts run " + expected,
           "paictl node maintain CLUSTER NODE --driver " + expected +
               " (a different driver may fail jobs built for the other)"}};
}

}  // namespace pai::facts
