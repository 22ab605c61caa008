// nvidia-smi topo -m
//
//         GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID
// GPU0     X      NV12    PIX     0-23,48-71      0               N/A
// GPU1    NV12     X      SYS     24-47,72-95     1               N/A
// NIC0    PIX     SYS      X
//
// Legend: ...
// NIC Legend:
//   NIC0: mlx5_0
//
// Old drivers print SOC for SYS, name NIC columns by their driver (mlx5_0) and
// print only the CPU Affinity column. Columns are separated by tabs or spaces.

#include <algorithm>
#include <unordered_map>

#include "facts/parsers.h"
#include "facts/text_lines.h"
#include "util/strings.h"

namespace pai::facts {

using detail::report;
using detail::Token;
using diag::Severity;

std::string_view to_string(LinkKind k) {
  switch (k) {
    case LinkKind::Self:
      return "X";
    case LinkKind::NVLink:
      return "NV";
    case LinkKind::PIX:
      return "PIX";
    case LinkKind::PSB:
      return "PSB";
    case LinkKind::PXB:
      return "PXB";
    case LinkKind::PHB:
      return "PHB";
    case LinkKind::Node:
      return "NODE";
    case LinkKind::Sys:
      return "SYS";
    case LinkKind::Unknown:
      return "?";
  }
  return "?";
}

int link_rank(LinkKind k) {
  switch (k) {
    case LinkKind::Self:
      return 0;
    case LinkKind::NVLink:
      return 1;
    case LinkKind::PIX:
    case LinkKind::PSB:
      return 2;
    case LinkKind::PXB:
      return 3;
    case LinkKind::PHB:
      return 4;
    case LinkKind::Node:
      return 5;
    case LinkKind::Sys:
      return 6;
    case LinkKind::Unknown:
      return 7;
  }
  return 7;
}

std::vector<size_t> TopoMatrix::gpu_positions() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].kind == TopoDevice::Kind::Gpu) out.push_back(i);
  return out;
}

size_t TopoMatrix::gpu_count() const {
  size_t n = 0;
  for (const auto& d : devices) n += d.kind == TopoDevice::Kind::Gpu;
  return n;
}

int TopoMatrix::find(std::string_view label) const {
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].label == label) return static_cast<int>(i);
  return -1;
}

bool parse_cpu_list(std::string_view s, std::vector<int>& out, int max_cpu) {
  out.clear();
  s = util::trim(s);
  if (s.empty()) return false;
  size_t total = 0;
  for (std::string_view part : util::split(s, ',')) {
    part = util::trim(part);
    if (part.empty()) return false;
    size_t dash = part.find('-');
    auto lo = util::parse_int(dash == std::string_view::npos ? part : part.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : util::parse_int(part.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi > max_cpu) return false;
    total += static_cast<size_t>(*hi - *lo + 1);
    if (total > static_cast<size_t>(max_cpu) + 1) return false;
    for (int64_t c = *lo; c <= *hi; ++c) out.push_back(static_cast<int>(c));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return true;
}

namespace {

// The largest machines list 16 GPUs and a few dozen NICs; the bound keeps the
// n x n link matrix of a damaged header small (256 devices: 65,536 links).
constexpr size_t kMaxDevices = 256;

bool label_with_index(std::string_view t, std::string_view prefix, int& index) {
  if (t.size() <= prefix.size() || t.substr(0, prefix.size()) != prefix ||
      t.size() > prefix.size() + 6)
    return false;
  std::string_view digits = t.substr(prefix.size());
  for (char c : digits)
    if (c < '0' || c > '9') return false;
  auto v = util::parse_int(digits);
  if (!v) return false;
  index = static_cast<int>(*v);
  return true;
}

bool is_link_token(std::string_view t) {
  static const char* kCodes[] = {"X", "PIX", "PSB", "PXB", "PHB", "NODE", "SYS", "SOC"};
  for (const char* c : kCodes)
    if (t == c) return true;
  int n = 0;
  return label_with_index(t, "NV", n);
}

// Device labels are identifiers: GPU0, NIC1, mlx5_0, hfi1_0, bnxt_re0.
bool looks_like_label(std::string_view t) {
  if (t.empty() || t.size() > 64) return false;
  if (!((t[0] >= 'A' && t[0] <= 'Z') || (t[0] >= 'a' && t[0] <= 'z'))) return false;
  for (char c : t)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-' || c == '.' || c == ':'))
      return false;
  return !is_link_token(t);
}

Link parse_link(std::string_view t, bool& ok) {
  Link l;
  l.text = std::string(t);
  ok = true;
  int n = 0;
  if (t == "X")
    l.kind = LinkKind::Self;
  else if (t == "PIX")
    l.kind = LinkKind::PIX;
  else if (t == "PSB")
    l.kind = LinkKind::PSB;
  else if (t == "PXB")
    l.kind = LinkKind::PXB;
  else if (t == "PHB")
    l.kind = LinkKind::PHB;
  else if (t == "NODE")
    l.kind = LinkKind::Node;
  else if (t == "SYS" || t == "SOC")
    l.kind = LinkKind::Sys;
  else if (label_with_index(t, "NV", n) && n > 0) {
    l.kind = LinkKind::NVLink;
    l.nvlinks = n;
  } else {
    ok = false;
  }
  return l;
}

enum class AffinityColumn : uint8_t { Cpu, Numa, GpuNuma, Unknown };

const char* kKnownLinks = "X, NV<n>, PIX, PSB, PXB, PHB, NODE, SYS (or SOC from old drivers)";

}  // namespace

Parsed<TopoMatrix> parse_topo_matrix(std::string_view text, std::string_view source) {
  Parsed<TopoMatrix> r;
  TopoMatrix& m = r.value;
  diag::List& d = r.diagnostics;
  const auto lines = detail::split_lines(text);

  // The header: the first line that starts with a GPU label and has no "X".
  size_t header = lines.size();
  std::string first_text;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto toks = detail::tokenize(lines[i].text);
    if (toks.empty()) continue;
    if (first_text.empty()) first_text = detail::excerpt(util::trim(lines[i].text));
    int idx = 0;
    if (!label_with_index(toks[0].text, "GPU", idx)) continue;
    bool has_x = false;
    for (const auto& t : toks) has_x |= t.text == "X";
    if (has_x) continue;
    header = i;
    break;
  }
  if (header == lines.size()) {
    report(
        d, source, "T101", Severity::Error, lines.empty() ? 0 : 1, 0,
        first_text.empty() ? "the topology matrix is empty"
                           : "no topology matrix found: no header line starting with GPU0",
        first_text.empty()
            ? "capture it with: nvidia-smi topo -m > topo.txt"
            : "the text starts with \"" + first_text +
                  "\"; capture the output of nvidia-smi topo -m (a driver error message is not a "
                  "matrix)");
    return r;
  }

  // Header: device labels, then the affinity columns.
  const auto htoks = detail::tokenize(lines[header].text);
  const uint32_t hline = lines[header].number;
  std::vector<AffinityColumn> affinity;
  size_t k = 0;
  std::unordered_map<std::string, size_t> position;
  for (; k < htoks.size(); ++k) {
    std::string_view t = htoks[k].text;
    std::string_view next = k + 1 < htoks.size() ? htoks[k + 1].text : std::string_view();
    if ((t == "CPU" && next == "Affinity") || (t == "NUMA" && next == "Affinity") ||
        (t == "GPU" && next == "NUMA"))
      break;
    if (!looks_like_label(t)) {
      report(d, source, "T102", Severity::Error, hline, htoks[k].column,
             "unexpected header entry \"" + detail::excerpt(t) + "\" in the topology matrix",
             "the header lists device labels (GPU0, NIC0, mlx5_0) and then CPU Affinity, NUMA "
             "Affinity, GPU NUMA ID");
      continue;
    }
    if (m.devices.size() >= kMaxDevices) {
      report(d, source, "T102", Severity::Error, hline, htoks[k].column,
             "the topology matrix has more than " + std::to_string(kMaxDevices) + " devices",
             "no machine has that many GPUs and NICs: is the header line damaged?");
      return r;
    }
    TopoDevice dev;
    dev.label = std::string(t);
    int idx = 0;
    if (label_with_index(t, "GPU", idx)) {
      dev.kind = TopoDevice::Kind::Gpu;
      dev.index = idx;
    } else if (label_with_index(t, "NIC", idx)) {
      dev.kind = TopoDevice::Kind::Nic;
      dev.index = idx;
    } else {
      dev.kind = TopoDevice::Kind::Nic;
      dev.nic_name = dev.label;
      m.old_driver = true;
    }
    if (!position.emplace(dev.label, m.devices.size()).second) {
      report(d, source, "T102", Severity::Error, hline, htoks[k].column,
             "device \"" + dev.label + "\" appears twice in the header",
             "each column is one device");
      continue;
    }
    m.devices.push_back(std::move(dev));
  }
  while (k < htoks.size()) {
    std::string_view t = htoks[k].text;
    std::string_view n1 = k + 1 < htoks.size() ? htoks[k + 1].text : std::string_view();
    std::string_view n2 = k + 2 < htoks.size() ? htoks[k + 2].text : std::string_view();
    if (t == "CPU" && n1 == "Affinity") {
      affinity.push_back(AffinityColumn::Cpu);
      m.has_cpu_affinity = true;
      k += 2;
    } else if (t == "NUMA" && n1 == "Affinity") {
      affinity.push_back(AffinityColumn::Numa);
      m.has_numa_affinity = true;
      k += 2;
    } else if (t == "GPU" && n1 == "NUMA" && n2 == "ID") {
      affinity.push_back(AffinityColumn::GpuNuma);
      m.has_gpu_numa_id = true;
      k += 3;
    } else {
      report(
          d, source, "T107", Severity::Warning, hline, htoks[k].column,
          "unknown topology matrix column \"" + detail::excerpt(t) + "\"; its values are ignored",
          "known columns after the devices: CPU Affinity, NUMA Affinity, GPU NUMA ID");
      affinity.push_back(AffinityColumn::Unknown);
      ++k;
    }
  }
  const size_t n = m.devices.size();
  if (m.gpu_count() == 0) {
    report(d, source, "T101", Severity::Error, hline, 1, "the topology matrix header lists no GPU",
           "capture it with: nvidia-smi topo -m");
    return r;
  }
  m.links.assign(n, std::vector<Link>(n));
  std::vector<uint8_t> has_row(n, 0);

  // Rows, until a blank line or the legend.
  size_t i = header + 1;
  bool any_row = false;
  for (; i < lines.size(); ++i) {
    const auto toks = detail::tokenize(lines[i].text);
    const uint32_t ln = lines[i].number;
    if (toks.empty()) {
      if (any_row) break;
      continue;
    }
    if (toks[0].text == "Legend:" ||
        (toks[0].text == "NIC" && toks.size() > 1 && toks[1].text == "Legend:"))
      break;
    auto pit = position.find(std::string(toks[0].text));
    if (pit == position.end()) {
      report(d, source, "T104", Severity::Error, ln, toks[0].column,
             "row \"" + detail::excerpt(toks[0].text) + "\" is not a device of the header",
             "every row starts with one of the header's device labels");
      continue;
    }
    const size_t row = pit->second;
    if (has_row[row]) {
      report(d, source, "T104", Severity::Error, ln, toks[0].column,
             "device \"" + m.devices[row].label + "\" has two rows (the first is line " +
                 std::to_string(m.devices[row].line) + ")");
      continue;
    }
    any_row = true;
    has_row[row] = 1;
    TopoDevice& dev = m.devices[row];
    dev.line = ln;
    size_t have = toks.size() - 1;
    if (have < n) {
      uint32_t col = static_cast<uint32_t>(toks.back().column + toks.back().text.size());
      report(d, source, "T103", Severity::Error, ln, col,
             "row " + dev.label + " has " + std::to_string(have) + " entries, but the header has " +
                 std::to_string(n) + " devices",
             "a row holds one link per device (" + std::string(kKnownLinks) +
                 "); the file may be cut short");
    }
    for (size_t c = 0; c < n && c + 1 < toks.size(); ++c) {
      bool ok = false;
      Link l = parse_link(toks[c + 1].text, ok);
      if (!ok) {
        report(d, source, "T105", Severity::Error, ln, toks[c + 1].column,
               "unknown link \"" + detail::excerpt(toks[c + 1].text) + "\" between " + dev.label +
                   " and " + m.devices[c].label,
               std::string("known links: ") + kKnownLinks);
        l.kind = LinkKind::Unknown;
      }
      if (l.text == "SOC") m.old_driver = true;
      bool diagonal = c == row;
      if (ok && diagonal != (l.kind == LinkKind::Self))
        report(d, source, "T108", Severity::Warning, ln, toks[c + 1].column,
               diagonal
                   ? "the link of " + dev.label + " to itself is \"" + l.text + "\", expected X"
                   : "X (self) between two different devices, " + dev.label + " and " +
                         m.devices[c].label,
               "the diagonal of the matrix is X and only the diagonal");
      m.links[row][c] = std::move(l);
    }
    // Affinity values.
    size_t v = n + 1;
    for (size_t a = 0; a < affinity.size() && v < toks.size(); ++a, ++v) {
      std::string_view val = toks[v].text;
      bool na = val == "N/A";
      switch (affinity[a]) {
        case AffinityColumn::Cpu:
          if (!na) {
            dev.cpu_affinity = std::string(val);
            if (!parse_cpu_list(val, dev.cpus))
              report(d, source, "T106", Severity::Warning, ln, toks[v].column,
                     "CPU Affinity \"" + detail::excerpt(val) + "\" of " + dev.label +
                         " is not a CPU list",
                     "expected a list such as 0-23,48-71");
          }
          break;
        case AffinityColumn::Numa:
        case AffinityColumn::GpuNuma: {
          if (na) break;
          // NUMA Affinity may be a list on some systems ("0-1"); its first node is kept.
          std::vector<int> nodes;
          if (!parse_cpu_list(val, nodes, 4095) || nodes.empty()) {
            report(
                d, source, "T106", Severity::Warning, ln, toks[v].column,
                std::string(affinity[a] == AffinityColumn::Numa ? "NUMA Affinity" : "GPU NUMA ID") +
                    " \"" + detail::excerpt(val) + "\" of " + dev.label +
                    " is not a NUMA node number",
                "expected a number or N/A");
            break;
          }
          (affinity[a] == AffinityColumn::Numa ? dev.numa_affinity : dev.gpu_numa_id) =
              nodes.front();
          break;
        }
        case AffinityColumn::Unknown:
          break;
      }
    }
    if (toks.size() > n + 1 + affinity.size())
      report(d, source, "T103", Severity::Warning, ln, toks[n + 1 + affinity.size()].column,
             "row " + dev.label +
                 " has more values than the header has columns; the extra ones are ignored");
    else if (dev.kind == TopoDevice::Kind::Gpu && !affinity.empty() &&
             toks.size() < n + 1 + affinity.size() && have >= n)
      report(d, source, "T103", Severity::Warning, ln,
             static_cast<uint32_t>(toks.back().column + toks.back().text.size()),
             "row " + dev.label + " has fewer affinity values than the header has columns");
  }

  // Devices without a row: take the links from their columns.
  for (size_t a = 0; a < n; ++a) {
    if (has_row[a]) continue;
    bool gpu = m.devices[a].kind == TopoDevice::Kind::Gpu;
    report(d, source, "T110", gpu ? Severity::Error : Severity::Warning, hline, 0,
           "device " + m.devices[a].label + " is in the header but has no row",
           "the matrix may be cut short; capture the whole output of nvidia-smi topo -m");
    for (size_t b = 0; b < n; ++b) {
      if (b == a) {
        m.links[a][b].kind = LinkKind::Self;
        m.links[a][b].text = "X";
      } else if (has_row[b]) {
        m.links[a][b] = m.links[b][a];
      }
    }
  }
  // A matrix is symmetric; say so once per pair when it is not.
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n; ++b) {
      if (!has_row[a] || !has_row[b]) continue;
      const Link& x = m.links[a][b];
      const Link& y = m.links[b][a];
      if (x.kind == LinkKind::Unknown || y.kind == LinkKind::Unknown) continue;
      if (x.kind != y.kind || x.nvlinks != y.nvlinks)
        report(d, source, "T109", Severity::Warning, m.devices[b].line, 0,
               m.devices[a].label + "-" + m.devices[b].label + " is " + x.text + " but " +
                   m.devices[b].label + "-" + m.devices[a].label + " is " + y.text,
               "the matrix should be symmetric; the closer link is used");
    }

  // NIC legend.
  for (; i < lines.size(); ++i) {
    const auto toks = detail::tokenize(lines[i].text);
    if (toks.size() >= 2 && toks[0].text == "NIC" && toks[1].text == "Legend:") {
      m.has_nic_legend = true;
      for (++i; i < lines.size(); ++i) {
        const auto lt = detail::tokenize(lines[i].text);
        if (lt.empty()) {
          continue;
        }
        std::string_view label = lt[0].text;
        if (label.empty() || label.back() != ':') break;
        label.remove_suffix(1);
        int pos = m.find(label);
        if (pos < 0) {
          report(d, source, "T111", Severity::Warning, lines[i].number, lt[0].column,
                 "the NIC legend names \"" + detail::excerpt(label) +
                     "\", which is not a column of the matrix");
          continue;
        }
        if (lt.size() < 2) {
          report(d, source, "T111", Severity::Warning, lines[i].number, lt[0].column,
                 "the NIC legend gives no name for " + std::string(label));
          continue;
        }
        m.devices[static_cast<size_t>(pos)].nic_name = std::string(lt[1].text);
      }
      // Every NICn column should be named: a legend cut short hides which adapter is which.
      std::string unnamed;
      for (const auto& dev : m.devices)
        if (dev.kind == TopoDevice::Kind::Nic && dev.index >= 0 && dev.nic_name.empty())
          unnamed += (unnamed.empty() ? "" : ", ") + dev.label;
      if (!unnamed.empty())
        report(d, source, "T111", Severity::Warning, hline, 0,
               "the NIC legend gives no name for " + unnamed,
               "the legend lists every NIC column (NIC0: mlx5_0); capture the whole output of "
               "nvidia-smi topo -m");
      break;
    }
  }
  return r;
}

}  // namespace pai::facts
