#pragma once
// Renders `check hosts` results: text grouped by host with a summary table,
// JSON, JUnit XML (a testsuite per host) and SARIF 2.1.0 (logical location = host).

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/catalogue.h"
#include "check/runner.h"

namespace pai::check {

struct ReportContext {
  const std::vector<HostOutcome>* hosts = nullptr;
  std::string layout_file;                       // for SARIF physical locations
  std::map<std::string, uint32_t> layout_lines;  // host -> line in layout.yaml
  double duration_ms = 0;
  size_t parallel = 0;
  bool fail_on_warn = false;
};

struct TextReportOptions {
  bool color = false;
  bool verbose = false;  // also passing and skipped checks
  bool quiet = false;    // failures only, no table
};

std::string write_text_report(const std::vector<CheckResult>& results, const ReportContext& ctx,
                              const TextReportOptions& opts);

// {"results":[{host,check,status,message,hint[,demoted]}],"hosts":[...],"summary":{...}}
nlohmann::json write_json_report(const std::vector<CheckResult>& results, const ReportContext& ctx);

std::string write_junit_report(const std::vector<CheckResult>& results, const ReportContext& ctx);

nlohmann::json write_sarif_report(const std::vector<CheckResult>& results, const ReportContext& ctx,
                                  std::string_view tool_version);

// JSON text that never throws on invalid UTF-8 coming from a host.
std::string dump(const nlohmann::json& j, int indent = 2);

}  // namespace pai::check
