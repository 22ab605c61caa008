// lscpu: "Key: value" lines (util-linux < 2.37 prints them flat, newer
// versions indent them under sections), or the JSON of lscpu -J.

#include <nlohmann/json.hpp>

#include "facts/parsers.h"
#include "facts/text_lines.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::facts {

using detail::report;
using diag::Severity;

int CpuInfo::numa_of_cpu(int cpu) const {
  for (size_t n = 0; n < numa_cpus.size(); ++n)
    for (int c : numa_cpus[n])
      if (c == cpu) return static_cast<int>(n);
  return -1;
}

namespace {

constexpr int kMaxNumaNodes = 4096;

struct Entry {
  std::string key;  // without the colon, trimmed
  std::string value;
  uint32_t line = 0;
  uint32_t value_column = 0;
};

void apply(const Entry& e, CpuInfo& c, diag::List& d, std::string_view source) {
  auto as_int = [&](int& out, int max) {
    if (e.value == "-" || e.value.empty()) return;  // not known on this platform (ARM prints "-")
    auto v = util::parse_int(e.value);
    if (!v || *v < 0 || *v > max) {
      report(d, source, "T133", Severity::Error, e.line, e.value_column,
             e.key + " is \"" + detail::excerpt(e.value) + "\", expected a number",
             "capture the output of lscpu");
      return;
    }
    out = static_cast<int>(*v);
  };
  const std::string& k = e.key;
  if (k == "Architecture")
    c.architecture = e.value;
  else if (k == "Vendor ID")
    c.vendor = e.value;
  else if (k == "Model name") {
    if (c.model_name.empty()) c.model_name = e.value;  // ARM big.LITTLE prints several
  } else if (k == "CPU(s)")
    as_int(c.logical, 1 << 20);
  else if (k == "Socket(s)")
    as_int(c.sockets, 4096);
  else if (k == "Core(s) per socket")
    as_int(c.cores_per_socket, 1 << 20);
  else if (k == "Thread(s) per core")
    as_int(c.threads_per_core, 1024);
  else if (k == "NUMA node(s)")
    as_int(c.numa_nodes, kMaxNumaNodes);
  else if (k == "On-line CPU(s) list")
    c.online = e.value;
  else if (k.rfind("NUMA node", 0) == 0 && k.size() > 16 && k.substr(k.size() - 7) == " CPU(s)") {
    std::string_view num = std::string_view(k).substr(9, k.size() - 9 - 7);
    auto n = util::parse_int(num);
    if (!n || *n < 0 || *n >= kMaxNumaNodes) {
      report(d, source, "T133", Severity::Warning, e.line, 1,
             "\"" + detail::excerpt(k) + "\" names no NUMA node number");
      return;
    }
    std::vector<int> cpus;
    if (!e.value.empty() && !parse_cpu_list(e.value, cpus)) {
      report(
          d, source, "T133", Severity::Warning, e.line, e.value_column,
          k + " is \"" + detail::excerpt(e.value) + "\", expected a CPU list such as 0-19,40-59");
      return;
    }
    if (c.numa_cpus.size() <= static_cast<size_t>(*n))
      c.numa_cpus.resize(static_cast<size_t>(*n) + 1);
    c.numa_cpus[static_cast<size_t>(*n)] = std::move(cpus);
  }
}

void walk_json(const nlohmann::json& items, std::vector<Entry>& out, int depth) {
  if (!items.is_array() || depth > 8) return;
  for (const auto& it : items) {
    if (!it.is_object()) continue;
    Entry e;
    auto f = it.find("field");
    auto v = it.find("data");
    if (f != it.end() && f->is_string()) {
      const std::string raw = f->get<std::string>();
      std::string key(util::trim(raw));
      if (!key.empty() && key.back() == ':') key.pop_back();
      e.key = std::move(key);
    }
    if (v != it.end() && v->is_string()) {
      const std::string raw = v->get<std::string>();
      e.value = std::string(util::trim(raw));
    }
    if (!e.key.empty()) out.push_back(std::move(e));
    if (auto ch = it.find("children"); ch != it.end()) walk_json(*ch, out, depth + 1);
  }
}

}  // namespace

Parsed<CpuInfo> parse_lscpu(std::string_view text, std::string_view source) {
  Parsed<CpuInfo> r;
  diag::List& d = r.diagnostics;
  std::vector<Entry> entries;
  std::string_view trimmed = util::trim(text);
  if (!trimmed.empty() && trimmed.front() == '{') {
    auto parsed = util::parse_json(text);
    if (!parsed) {
      const util::JsonError& err = parsed.error();
      report(d, source, "T131", Severity::Error, err.line, err.column,
             "lscpu -J output is not valid JSON: " + err.message,
             "capture it again with lscpu -J, or use the text output of lscpu");
      return r;
    }
    const nlohmann::json& j = *parsed;
    auto it = j.is_object() ? j.find("lscpu") : j.end();
    if (!j.is_object() || it == j.end() || !it->is_array()) {
      report(d, source, "T131", Severity::Error, 1, 1, "lscpu -J output has no \"lscpu\" list",
             "capture it with lscpu -J");
      return r;
    }
    walk_json(*it, entries, 0);
  } else {
    for (const auto& line : detail::split_lines(text)) {
      std::string_view t = line.text;
      if (util::trim(t).empty()) continue;
      size_t colon = t.find(':');
      if (colon == std::string_view::npos) {
        size_t lead = t.find_first_not_of(" \t");
        report(
            d, source, "T131", Severity::Warning, line.number, static_cast<uint32_t>(lead + 1),
            "line \"" + detail::excerpt(util::trim(t)) + "\" is not \"key: value\"; it is ignored",
            "capture the output of lscpu (not lscpu -e or lscpu -p)");
        continue;
      }
      Entry e;
      e.key = std::string(util::trim(t.substr(0, colon)));
      std::string_view rest = t.substr(colon + 1);
      size_t lead = rest.find_first_not_of(" \t");
      e.value = std::string(util::trim(rest));
      e.line = line.number;
      e.value_column =
          static_cast<uint32_t>(colon + 2 + (lead == std::string_view::npos ? 0 : lead));
      entries.push_back(std::move(e));
    }
  }
  for (const auto& e : entries) apply(e, r.value, d, source);

  CpuInfo& c = r.value;
  if (c.logical == 0) {
    report(d, source, "T132", Severity::Error, entries.empty() ? 0 : 1, 0,
           "lscpu output has no CPU(s) line",
           entries.empty() ? "the text is empty or not lscpu output; capture it with lscpu"
                           : "capture the full output of lscpu");
  }
  if (c.numa_nodes > 0 && !c.numa_cpus.empty() &&
      static_cast<int>(c.numa_cpus.size()) != c.numa_nodes)
    report(d, source, "T133", Severity::Warning, 0, 0,
           "lscpu says NUMA node(s): " + std::to_string(c.numa_nodes) + " but lists CPUs of " +
               std::to_string(c.numa_cpus.size()) + " nodes");
  if (c.numa_nodes == 0 && !c.numa_cpus.empty())
    c.numa_nodes = static_cast<int>(c.numa_cpus.size());
  return r;
}

}  // namespace pai::facts
