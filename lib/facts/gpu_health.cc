// nvidia-smi -q -d ECC,PAGE_RETIREMENT and the kernel log's XID lines.
//
// Pre-Ampere (Volta, driver 418-535):
//   GPU 00000000:3B:00.0
//       ECC Mode
//           Current                         : Enabled
//       ECC Errors
//           Volatile
//               Single Bit
//                   Device Memory           : 0
//                   Total                   : 0
//               Double Bit
//                   Total                   : 0
//       Retired Pages
//           Single Bit ECC                  : 0
//           Double Bit ECC                  : 0
//           Pending Page Blacklist          : No
// Ampere and later: Volatile/Aggregate hold SRAM and DRAM Correctable and
// Uncorrectable (newer drivers split SRAM Uncorrectable into Parity and
// SEC-DED), Retired Pages are N/A and Remapped Rows say what happened.

#include <algorithm>
#include <cctype>

#include "facts/parsers.h"
#include "facts/text_lines.h"
#include "util/strings.h"

namespace pai::facts {

using detail::report;
using diag::Severity;

int64_t GpuHealth::retired_pages() const {
  return std::max<int64_t>(0, retired_single_bit) + std::max<int64_t>(0, retired_double_bit);
}

namespace {

size_t gpu_health_indent(std::string_view l) {
  size_t i = 0;
  while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) ++i;
  return i;
}

// Adds `v` to a counter that may still be -1 (unknown).
void gpu_health_add(int64_t& dst, int64_t v) {
  dst = dst < 0 ? v : dst + v;
}

}  // namespace

Parsed<GpuHealthReport> parse_gpu_health(std::string_view text, std::string_view source) {
  Parsed<GpuHealthReport> r;
  // The open sections: (indent, name).
  std::vector<std::pair<size_t, std::string>> stack;
  GpuHealth* gpu = nullptr;
  for (const auto& tl : detail::split_lines(text)) {
    std::string_view l = tl.text;
    std::string_view t = util::trim(l);
    if (t.empty()) continue;
    size_t ind = gpu_health_indent(l);
    while (!stack.empty() && stack.back().first >= ind) stack.pop_back();
    size_t colon = t.find(" : ");
    if (colon == std::string_view::npos && !t.empty() && t.back() == ':') colon = t.size() - 1;
    if (colon == std::string_view::npos) {
      // A section name, or the GPU's line.
      if (t.rfind("GPU ", 0) == 0 && ind == 0) {
        std::string bus(util::trim(t.substr(4)));
        r.value.gpus.push_back({});
        gpu = &r.value.gpus.back();
        gpu->bus_id = bus;
        gpu->line = tl.number;
        stack.clear();
        if (bus.find(':') == std::string::npos)
          report(r.diagnostics, source, "T151", Severity::Error, tl.number, 1,
                 "GPU line \"" + detail::excerpt(t) + "\" names no PCI bus id",
                 "expected GPU 00000000:3B:00.0, as nvidia-smi -q prints it");
        continue;
      }
      stack.emplace_back(ind, std::string(t));
      continue;
    }
    std::string key(util::trim(t.substr(0, colon)));
    std::string_view value = colon + 1 < t.size() ? util::trim(t.substr(colon + 2)) : "";
    if (!gpu) {
      if (key == "Driver Version") r.value.driver_version = std::string(value);
      continue;
    }
    if (value.empty()) {  // "Remapped Rows :" with children on some drivers
      stack.emplace_back(ind, key);
      continue;
    }
    std::string path;
    for (const auto& [i, n] : stack) path += n + "/";
    path += key;
    bool na = value == "N/A" || value == "[N/A]" || value == "[Not Supported]" ||
              value == "Unknown Error" || value == "[Unknown Error]";
    bool yes = value == "Yes";
    auto number = [&]() -> int64_t {
      if (na) return -1;
      auto n = util::parse_int(value);
      if (!n || *n < 0) {
        report(
            r.diagnostics, source, "T151", Severity::Error, tl.number,
            static_cast<uint32_t>(ind + colon + 4),
            key + " of GPU " + gpu->bus_id + " is \"" + detail::excerpt(value) + "\", not a count",
            "nvidia-smi prints a count or N/A");
        return -1;
      }
      return *n;
    };
    if (path == "ECC Mode/Current") {
      gpu->ecc_mode = na ? "" : std::string(value);
    } else if (path.rfind("ECC Errors/Volatile/", 0) == 0 ||
               path.rfind("ECC Errors/Aggregate/", 0) == 0) {
      bool vol = path.rfind("ECC Errors/Volatile/", 0) == 0;
      std::string rest = path.substr(vol ? 20 : 21);
      // Pre-Ampere: Double Bit/Total; Ampere: SRAM/DRAM Uncorrectable (...).
      bool unc =
          rest == "Double Bit/Total" ||
          ((rest.rfind("SRAM Uncorrectable", 0) == 0 || rest.rfind("DRAM Uncorrectable", 0) == 0) &&
           rest.find('/') == std::string::npos);
      bool cor = rest == "Single Bit/Total" ||
                 ((rest == "SRAM Correctable" || rest == "DRAM Correctable"));
      if (unc || cor) {
        int64_t n = number();
        if (n >= 0) {
          if (unc)
            gpu_health_add(vol ? gpu->volatile_uncorrectable : gpu->aggregate_uncorrectable, n);
          if (cor && vol) gpu_health_add(gpu->volatile_correctable, n);
        }
      }
    } else if (path == "Retired Pages/Single Bit ECC" ||
               path == "Retired Pages/Single Bit ECC/Retired Count") {
      gpu->retired_single_bit = number();
    } else if (path == "Retired Pages/Double Bit ECC" ||
               path == "Retired Pages/Double Bit ECC/Retired Count") {
      gpu->retired_double_bit = number();
    } else if (path == "Retired Pages/Pending Page Blacklist" ||
               path == "Retired Pages/Pending Page Blacklists" || path == "Retired Pages/Pending") {
      gpu->retirement_pending = yes;
    } else if (path == "Remapped Rows/Uncorrectable Error") {
      gpu->remapped_uncorrectable = number();
    } else if (path == "Remapped Rows/Pending") {
      gpu->remap_pending = yes;
    } else if (path == "Remapped Rows/Remapping Failure Occurred") {
      gpu->remap_failed = yes;
    }
  }
  return r;
}

bool xid_is_hardware(int code) {
  switch (code) {
    case 48:
    case 61:
    case 62:
    case 63:
    case 64:
    case 74:
    case 79:
    case 92:
    case 94:
    case 95:
    case 119:
    case 120:
    case 140:
      return true;
    default:
      return false;
  }
}

std::vector<XidEvent> parse_xid_events(std::string_view text) {
  std::vector<XidEvent> out;
  for (const auto& tl : detail::split_lines(text)) {
    std::string_view l = tl.text;
    size_t x = l.find("NVRM: Xid");
    if (x == std::string_view::npos) continue;
    XidEvent e;
    e.line = tl.number;
    e.when = std::string(util::trim(l.substr(0, x)));
    // dmesg: "[12345.678] NVRM: ..."; journalctl: "Jun 07 19:32:16 host kernel: NVRM: ..."
    if (auto k = e.when.find(" kernel:"); k != std::string::npos) {
      size_t sp = e.when.rfind(' ', k - 1);
      e.when = e.when.substr(0, sp == std::string::npos ? k : sp);
    }
    std::string_view rest = l.substr(x + 9);
    // "(PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus."
    if (auto p = rest.find("(PCI:"); p != std::string_view::npos) {
      size_t close = rest.find(')', p);
      if (close == std::string_view::npos) continue;
      e.bus_id = std::string(rest.substr(p + 5, close - p - 5));
      rest = rest.substr(close + 1);
    }
    rest = util::trim(rest);
    if (!rest.empty() && rest.front() == ':') rest = util::trim(rest.substr(1));
    size_t d = 0;
    while (d < rest.size() && std::isdigit(static_cast<unsigned char>(rest[d]))) ++d;
    if (d == 0 || d > 6) continue;
    e.code = static_cast<int>(*util::parse_int(rest.substr(0, d)));
    rest = rest.substr(d);
    if (!rest.empty() && rest.front() == ',') rest = rest.substr(1);
    std::string msg(util::trim(rest));
    if (msg.size() > 200) msg = msg.substr(0, 200);
    e.text = msg;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace pai::facts
