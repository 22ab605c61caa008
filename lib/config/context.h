#pragma once
// Shared machinery for the config loaders: diagnostics with positions, YAML
// positions mapped to the file the user edits (the HiveD config embedded in
// services-configuration.yaml reports lines of the outer file), and schema
// helpers that check types and keys without stopping at the first problem.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.h"
#include "yaml/yaml.h"

namespace pai::config {

using yaml::Mark;
using yaml::Node;

class Context {
 public:
  using MarkMapper = std::function<Mark(Mark)>;

  Context(std::string file, diag::List& out, MarkMapper mapper = {})
      : file_(std::move(file)), out_(out), mapper_(std::move(mapper)) {}

  const std::string& file() const { return file_; }
  diag::List& out() { return out_; }
  Mark map(Mark m) const { return mapper_ ? mapper_(m) : m; }
  Mark at(const Node* n) const { return n ? map(n->mark()) : Mark{}; }
  // Where a mapping key is written (better than the value for "unknown key").
  Mark key_at(const Node* map, std::string_view key) const;

  void report(std::string code, diag::Severity sev, Mark m, std::string message,
              std::string hint = {});
  void error(std::string code, Mark m, std::string message, std::string hint = {}) {
    report(std::move(code), diag::Severity::Error, m, std::move(message), std::move(hint));
  }
  void warning(std::string code, Mark m, std::string message, std::string hint = {}) {
    report(std::move(code), diag::Severity::Warning, m, std::move(message), std::move(hint));
  }
  void info(std::string code, Mark m, std::string message, std::string hint = {}) {
    report(std::move(code), diag::Severity::Info, m, std::move(message), std::move(hint));
  }

  // --- schema helpers: each reports F005 (wrong type) and returns nullopt/false ---
  // `what` names the value in messages, e.g. "machine-list[2].hostip".
  bool is_mapping(const Node* n, std::string_view what);
  bool is_sequence(const Node* n, std::string_view what);
  // A scalar read as text. Plain numbers and booleans are refused when
  // `strict` (PyYAML would load them as int/bool, failing OpenPAI's `str` schema).
  std::optional<std::string> string_value(const Node* n, std::string_view what,
                                          bool strict = false);
  std::optional<int64_t> int_value(const Node* n, std::string_view what);
  std::optional<double> number_value(const Node* n, std::string_view what);
  std::optional<bool> bool_value(const Node* n, std::string_view what);

  // Reports F007 when `key` is missing from `map` and returns nullptr.
  const Node* required(const Node* map, std::string_view key, std::string_view where);
  // Reports F006 (warning) for each key of `map` not in `known`, with a did-you-mean.
  void unknown_keys(const Node* map, const std::vector<std::string>& known, std::string_view where);

 private:
  std::string file_;
  diag::List& out_;
  MarkMapper mapper_;
};

// Reports the YAML reader's findings (syntax error, duplicate keys) and returns
// the single document of `stream`, or nullptr. Empty files and several
// documents are diagnosed here too.
const Node* single_document(const yaml::Stream& stream, Context& ctx, std::string_view kind);

// PyYAML (YAML 1.1, used by OpenPAI's scripts) reads these plain scalars as booleans.
bool is_yaml11_bool(const Node* n);

}  // namespace pai::config
