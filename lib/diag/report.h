#pragma once
// Report writers for diagnostics: compiler-style text, JSON, JUnit XML, SARIF 2.1.0.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "diag/diagnostic.h"

namespace pai::diag {

struct TextOptions {
  bool color = false;
  // Returns the text of a source line (without newline) for a caret snippet, or
  // nullptr/empty when unknown. May be empty.
  std::function<std::string(const std::string& file, uint32_t line)> source_line;
  bool show_summary = true;
};

Summary summarize(const std::vector<Diagnostic>& diags, size_t files);

std::string write_text(const std::vector<Diagnostic>& diags, size_t files, const TextOptions& opts);

// {"diagnostics":[{file,line,column,severity,code,message,hint}],"summary":{errors,warnings,files}}
nlohmann::json write_json(const std::vector<Diagnostic>& diags, size_t files);

// One <testsuite> per file; a <testcase> per diagnostic (errors are <failure>,
// warnings <failure> only when fail_on_warn, else <system-out>); a passing
// <testcase> for a file without findings.
std::string write_junit(const std::vector<Diagnostic>& diags, const std::vector<std::string>& files,
                        std::string_view suite_name, bool fail_on_warn);

// SARIF 2.1.0: one run, tool.driver.rules from `rules` (only the codes used),
// results with physicalLocation.region.startLine/startColumn, and the logical
// location when a diagnostic has one.
nlohmann::json write_sarif(const std::vector<Diagnostic>& diags, const std::vector<Rule>& rules,
                           std::string_view tool_version, std::string_view help_base_uri);

std::string xml_escape(std::string_view s);

// Serialises JSON for output. Invalid UTF-8 copied from user files (a binary
// file, a Latin-1 comment) is replaced with U+FFFD instead of throwing.
std::string dump_json(const nlohmann::json& j, int indent = 2);

}  // namespace pai::diag
