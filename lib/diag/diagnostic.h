#pragma once
// A finding about some input: a config file line, a host, a job file.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pai::diag {

enum class Severity : uint8_t { Error, Warning, Info };
std::string_view to_string(Severity s);

// Another place that belongs to a finding: where the same root cause shows, or
// what the fix affects. Text output prints it as a `note:` line, SARIF as
// relatedLocations.
struct RelatedLocation {
  std::string file;     // empty: the finding's own file
  uint32_t line = 0;    // 1-based; 0 = whole file
  uint32_t column = 0;  // 1-based; 0 = whole line
  std::string message;  // what this place is, e.g. "node worker-1 is affected"
  friend bool operator==(const RelatedLocation&, const RelatedLocation&) = default;
};

struct Diagnostic {
  std::string code;  // stable, e.g. "L003"
  Severity severity = Severity::Error;
  std::string file;      // as the user named it; empty when the finding has no file
  uint32_t line = 0;     // 1-based; 0 = whole file
  uint32_t column = 0;   // 1-based; 0 = whole line
  std::string message;   // one sentence, no trailing period
  std::string hint;      // how to fix it; may be empty
  std::string location;  // logical location (a host, a VC) for reports; may be empty
  std::vector<RelatedLocation> related;  // other places with the same root cause; may be empty
};

// A rule in a catalogue: what a code means, for SARIF rule metadata and docs.
struct Rule {
  std::string_view code;
  std::string_view name;     // kebab-case, e.g. "duplicate-hostname"
  Severity severity;         // default severity
  std::string_view summary;  // one line
};

struct Summary {
  size_t errors = 0;
  size_t warnings = 0;
  size_t infos = 0;
  size_t files = 0;
};

// Collects diagnostics in the order they were found; sort() makes the order
// independent of how they were found.
class List {
 public:
  void add(Diagnostic d) { items_.push_back(std::move(d)); }
  void add(std::string code, Severity sev, std::string file, uint32_t line, uint32_t column,
           std::string message, std::string hint = {}) {
    items_.push_back({std::move(code),
                      sev,
                      std::move(file),
                      line,
                      column,
                      std::move(message),
                      std::move(hint),
                      {},
                      {}});
  }
  void append(const List& other) {
    items_.insert(items_.end(), other.items_.begin(), other.items_.end());
  }

  const std::vector<Diagnostic>& items() const { return items_; }
  std::vector<Diagnostic>& items() { return items_; }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  size_t count(Severity s) const;
  bool has_errors() const { return count(Severity::Error) > 0; }

  // Orders by file (in `file_order`, unknown files after, by name), line, column,
  // code, message; removes exact duplicates.
  void sort(const std::vector<std::string>& file_order = {});

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace pai::diag
