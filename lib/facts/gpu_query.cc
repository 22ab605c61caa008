// nvidia-smi --query-gpu=index,name,memory.total,pci.bus_id,uuid --format=csv[,noheader][,nounits]
//
// index, name, memory.total [MiB], pci.bus_id, uuid
// 0, Tesla V100-SXM2-32GB, 32510 MiB, 00000000:06:00.0, GPU-6f6f3d0b-2bd4-b4a4-4d53-1d2e1a0c8f51

#include <algorithm>
#include <unordered_map>

#include "facts/parsers.h"
#include "facts/text_lines.h"
#include "util/strings.h"

namespace pai::facts {

using detail::report;
using diag::Severity;

namespace {

enum class Field : uint8_t { Index, Name, Memory, BusId, Uuid, Other };

Field field_of(std::string_view header) {
  // "memory.total [MiB]" -> "memory.total"
  size_t br = header.find('[');
  if (br != std::string_view::npos) header = util::trim(header.substr(0, br));
  std::string h = util::to_lower(header);
  if (h == "index") return Field::Index;
  if (h == "name" || h == "gpu_name") return Field::Name;
  if (h == "memory.total") return Field::Memory;
  if (h == "pci.bus_id" || h == "gpu_bus_id") return Field::BusId;
  if (h == "uuid" || h == "gpu_uuid") return Field::Uuid;
  return Field::Other;
}

struct Cell {
  std::string_view text;
  uint32_t column;
};

std::vector<Cell> split_csv(std::string_view line) {
  std::vector<Cell> out;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    std::string_view raw = line.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    size_t lead = 0;
    while (lead < raw.size() && (raw[lead] == ' ' || raw[lead] == '\t')) ++lead;
    out.push_back({util::trim(raw), static_cast<uint32_t>(start + lead + 1)});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

bool is_not_available(std::string_view v) {
  return v == "[N/A]" || v == "N/A" || v == "[Not Supported]" || v == "[Unknown Error]" ||
         v == "[GPU is lost]";
}

// "00000000:06:00.0" or "0000:06:00.0": domain:bus:device.function in hex.
bool looks_like_bus_id(std::string_view v) {
  auto parts = util::split(v, ':');
  if (parts.size() != 3) return false;
  auto hex = [](std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
        return false;
    return true;
  };
  size_t dot = parts[2].find('.');
  return hex(parts[0]) && hex(parts[1]) && dot != std::string_view::npos &&
         hex(parts[2].substr(0, dot)) && hex(parts[2].substr(dot + 1));
}

}  // namespace

Parsed<std::vector<GpuInfo>> parse_gpu_query(std::string_view text, std::string_view source) {
  Parsed<std::vector<GpuInfo>> r;
  diag::List& d = r.diagnostics;
  const auto lines = detail::split_lines(text);
  std::vector<Field> columns = {Field::Index, Field::Name, Field::Memory, Field::BusId,
                                Field::Uuid};
  bool header_seen = false;
  bool any_line = false;
  std::unordered_map<int, uint32_t> seen;

  for (const auto& line : lines) {
    std::string_view t = util::trim(line.text);
    if (t.empty()) continue;
    auto cells = split_csv(line.text);
    if (!any_line) {
      any_line = true;
      if (t.find("No devices were found") != std::string_view::npos) {
        report(d, source, "T128", Severity::Info, line.number, 1,
               "nvidia-smi found no GPU on this host");
        return r;
      }
      // A header when the first field is not a number.
      std::string_view first = cells[0].text;
      if (!util::parse_int(first)) {
        bool known = false;
        std::vector<Field> hdr;
        for (const auto& c : cells) {
          hdr.push_back(field_of(c.text));
          known |= hdr.back() != Field::Other;
        }
        if (!known) {
          report(d, source, "T121", Severity::Error, line.number, 1,
                 "this is not nvidia-smi --query-gpu CSV output: \"" + detail::excerpt(t) + "\"",
                 "capture it with: nvidia-smi --query-gpu=index,name,memory.total,pci.bus_id,uuid "
                 "--format=csv");
          return r;
        }
        columns = std::move(hdr);
        header_seen = true;
        if (std::find(columns.begin(), columns.end(), Field::Index) == columns.end())
          report(d, source, "T122", Severity::Error, line.number, 1,
                 "the GPU list has no index column",
                 "query index first: --query-gpu=index,name,memory.total,pci.bus_id,uuid");
        continue;
      }
    }
    if (cells.size() != columns.size()) {
      report(
          d, source, "T123", Severity::Error, line.number, 1,
          "GPU line has " + std::to_string(cells.size()) + " fields, expected " +
              std::to_string(columns.size()),
          header_seen
              ? "every line has the header's fields, separated by commas"
              : "without a header the fields must be index, name, memory.total, pci.bus_id, uuid");
      continue;
    }
    GpuInfo g;
    g.line = line.number;
    bool bad = false;
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string_view v = cells[c].text;
      uint32_t col = cells[c].column;
      switch (columns[c]) {
        case Field::Index: {
          auto idx = util::parse_int(v);
          if (!idx || *idx < 0 || *idx > 65535) {
            report(d, source, "T124", Severity::Error, line.number, col,
                   "GPU index \"" + detail::excerpt(v) + "\" is not a number",
                   "the index is 0, 1, 2, ...");
            bad = true;
          } else {
            g.index = static_cast<int>(*idx);
          }
          break;
        }
        case Field::Name:
          g.name = std::string(v);
          break;
        case Field::Memory: {
          if (is_not_available(v)) {
            report(d, source, "T125", Severity::Warning, line.number, col,
                   "memory.total of GPU line is " + std::string(v),
                   "the GPU's memory size is unknown");
            break;
          }
          std::string_view num = v;
          double scale = 1;
          for (auto [unit, f] : std::initializer_list<std::pair<std::string_view, double>>{
                   {"MiB", 1}, {"GiB", 1024}, {"KiB", 1.0 / 1024}, {"MB", 1}}) {
            if (num.size() > unit.size() && num.substr(num.size() - unit.size()) == unit) {
              num = util::trim(num.substr(0, num.size() - unit.size()));
              scale = f;
              break;
            }
          }
          auto mem = util::parse_double(num);
          if (!mem || *mem < 0 || *mem * scale > 1e9) {
            report(d, source, "T125", Severity::Error, line.number, col,
                   "memory.total \"" + detail::excerpt(v) + "\" is not a size",
                   "expected e.g. 32510 MiB");
            bad = true;
          } else {
            g.memory_mib = static_cast<int64_t>(*mem * scale + 0.5);
          }
          break;
        }
        case Field::BusId:
          g.bus_id = std::string(v);
          if (!is_not_available(v) && !looks_like_bus_id(v))
            report(d, source, "T126", Severity::Warning, line.number, col,
                   "pci.bus_id \"" + detail::excerpt(v) + "\" is not a PCI address",
                   "expected e.g. 00000000:06:00.0");
          break;
        case Field::Uuid:
          g.uuid = std::string(v);
          if (!is_not_available(v) && v.substr(0, 4) != "GPU-" && v.substr(0, 4) != "MIG-")
            report(d, source, "T126", Severity::Warning, line.number, col,
                   "uuid \"" + detail::excerpt(v) + "\" does not start with GPU-",
                   "expected e.g. GPU-6f6f3d0b-...");
          break;
        case Field::Other:
          break;
      }
    }
    if (bad || g.index < 0) continue;
    auto [it, fresh] = seen.emplace(g.index, line.number);
    if (!fresh) {
      report(d, source, "T127", Severity::Error, line.number, cells[0].column,
             "GPU index " + std::to_string(g.index) + " is listed twice (first at line " +
                 std::to_string(it->second) + ")");
      continue;
    }
    r.value.push_back(std::move(g));
  }
  if (!any_line)
    report(d, source, "T121", Severity::Error, 0, 0, "the GPU list is empty",
           "capture it with: nvidia-smi --query-gpu=index,name,memory.total,pci.bus_id,uuid "
           "--format=csv");
  std::sort(r.value.begin(), r.value.end(),
            [](const GpuInfo& a, const GpuInfo& b) { return a.index < b.index; });
  return r;
}

}  // namespace pai::facts
