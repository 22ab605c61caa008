#include "diag/diagnostic.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace pai::diag {

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::Error:
      return "error";
    case Severity::Warning:
      return "warning";
    case Severity::Info:
      return "info";
  }
  return "error";
}

size_t List::count(Severity s) const {
  return static_cast<size_t>(std::count_if(items_.begin(), items_.end(),
                                           [s](const Diagnostic& d) { return d.severity == s; }));
}

void List::sort(const std::vector<std::string>& file_order) {
  std::unordered_map<std::string, size_t> rank;
  for (size_t i = 0; i < file_order.size(); ++i) rank.emplace(file_order[i], i);
  auto rank_of = [&](const Diagnostic& d) {
    auto it = rank.find(d.file);
    return it == rank.end() ? file_order.size() : it->second;
  };
  std::stable_sort(items_.begin(), items_.end(), [&](const Diagnostic& a, const Diagnostic& b) {
    size_t ra = rank_of(a), rb = rank_of(b);
    return std::tie(ra, a.file, a.line, a.column, a.code, a.message, a.location) <
           std::tie(rb, b.file, b.line, b.column, b.code, b.message, b.location);
  });
  items_.erase(std::unique(items_.begin(), items_.end(),
                           [](const Diagnostic& a, const Diagnostic& b) {
                             return a.code == b.code && a.file == b.file && a.line == b.line &&
                                    a.column == b.column && a.message == b.message &&
                                    a.location == b.location;
                           }),
               items_.end());
}

}  // namespace pai::diag
