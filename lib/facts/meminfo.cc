// /proc/meminfo: "MemTotal:       263868224 kB" (kB are KiB), some lines without a unit.

#include <limits>

#include "facts/parsers.h"
#include "facts/text_lines.h"
#include "util/strings.h"

namespace pai::facts {

using detail::report;
using diag::Severity;

Parsed<MemInfo> parse_meminfo(std::string_view text, std::string_view source) {
  Parsed<MemInfo> r;
  diag::List& d = r.diagnostics;
  MemInfo& m = r.value;
  int64_t free = -1, buffers = -1, cached = -1, available = -1, total = -1;
  uint32_t total_line = 0;
  bool any = false;
  bool total_bad = false;  // a MemTotal line whose value was already reported
  constexpr int64_t kMaxKiB = std::numeric_limits<int64_t>::max() / 1024;

  for (const auto& line : detail::split_lines(text)) {
    auto toks = detail::tokenize(line.text);
    if (toks.empty()) continue;
    any = true;
    std::string_view key = toks[0].text;
    if (key.size() < 2 || key.back() != ':') {
      report(d, source, "T141", Severity::Warning, line.number, toks[0].column,
             "line \"" + detail::excerpt(util::trim(line.text)) +
                 "\" is not \"Key: value\"; it is ignored",
             "capture the file with: cat /proc/meminfo");
      continue;
    }
    key.remove_suffix(1);
    if (toks.size() < 2 || toks.size() > 3 || (toks.size() == 3 && toks[2].text != "kB")) {
      report(d, source, "T142", Severity::Warning, line.number,
             toks.size() > 1 ? toks[1].column : toks[0].column,
             std::string(key) + " is not \"<number> kB\"; it is ignored");
      continue;
    }
    auto v = util::parse_int(toks[1].text);
    if (!v || *v < 0 || *v > kMaxKiB) {
      if (key == "MemTotal") total_bad = true;
      report(d, source, "T142", Severity::Error, line.number, toks[1].column,
             std::string(key) + " is \"" + detail::excerpt(toks[1].text) +
                 "\", expected a number of kB");
      continue;
    }
    const bool kb = toks.size() == 3;
    const int64_t bytes = kb ? *v * 1024 : *v;
    if (key == "MemTotal") {
      total = bytes;
      total_line = line.number;
    } else if (key == "MemFree")
      free = bytes;
    else if (key == "MemAvailable")
      available = bytes;
    else if (key == "Buffers")
      buffers = bytes;
    else if (key == "Cached")
      cached = bytes;
    else if (key == "HugePages_Total")
      m.hugepages_total = *v;
    else if (key == "Hugepagesize")
      m.hugepage_size_bytes = bytes;
  }
  if (total < 0) {
    if (total_bad) return r;  // reported once, at its line: it is there, but no number
    report(d, source, "T143", Severity::Error, any ? 1 : 0, 0,
           any ? "/proc/meminfo has no MemTotal line" : "/proc/meminfo is empty",
           "capture it with: cat /proc/meminfo");
    return r;
  }
  if (total == 0) report(d, source, "T143", Severity::Error, total_line, 0, "MemTotal is 0");
  m.total_bytes = total;
  m.free_bytes = free < 0 ? 0 : free;
  if (available >= 0) {
    m.available_bytes = available;
  } else if (free >= 0) {
    m.available_bytes = free + (buffers > 0 ? buffers : 0) + (cached > 0 ? cached : 0);
    m.available_estimated = true;
    report(d, source, "T144", Severity::Info, 0, 0,
           "no MemAvailable (kernel older than 3.14); estimated as MemFree + Buffers + Cached");
  }
  if (m.available_bytes > m.total_bytes)
    report(d, source, "T143", Severity::Warning, total_line, 0,
           "MemAvailable is larger than MemTotal");
  return r;
}

}  // namespace pai::facts
