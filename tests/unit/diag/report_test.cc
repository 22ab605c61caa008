#include "diag/report.h"

#include <gtest/gtest.h>

#include "diag/diagnostic.h"

namespace pai::diag {
namespace {

std::vector<Diagnostic> sample() {
  List l;
  l.add("L003", Severity::Error, "b/layout.yaml", 12, 15, "duplicate hostname \"w1\"",
        "every machine needs its own");
  l.add("F006", Severity::Warning, "a/config.yaml", 3, 1, "unknown key \"usr\"",
        "did you mean \"user\"?");
  l.add("H024", Severity::Info, "b/layout.yaml", 2, 1, "capacity <unassigned> & \"x\"", "");
  l.add("L001", Severity::Error, "b/layout.yaml", 12, 3, "bad hostname", "lower case");
  l.sort({"a/config.yaml", "b/layout.yaml"});
  return l.items();
}

TEST(DiagList, SortsByFileOrderThenPositionAndRemovesDuplicates) {
  List l;
  l.add("X", Severity::Error, "z.yaml", 1, 1, "m");
  l.add("Y", Severity::Error, "a.yaml", 9, 1, "m");
  l.add("Y", Severity::Error, "a.yaml", 2, 7, "m");
  l.add("Y", Severity::Error, "a.yaml", 2, 7, "m");  // exact duplicate
  l.sort({"z.yaml", "a.yaml"});
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l.items()[0].file, "z.yaml");
  EXPECT_EQ(l.items()[1].line, 2u);
  EXPECT_EQ(l.items()[2].line, 9u);
  EXPECT_EQ(l.count(Severity::Error), 3u);
}

TEST(Report, TextIsCompilerStyleWithHintsAndSummary) {
  auto d = sample();
  TextOptions o;
  o.source_line = [](const std::string& file, uint32_t line) {
    return file == "b/layout.yaml" && line == 12 ? std::string("  - hostname: w1") : std::string();
  };
  std::string t = write_text(d, 2, o);
  EXPECT_NE(t.find("a/config.yaml:3:1: warning[F006]: unknown key \"usr\"\n"), std::string::npos)
      << t;
  EXPECT_NE(t.find("b/layout.yaml:12:15: error[L003]: duplicate hostname \"w1\"\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  hint: did you mean \"user\"?\n"), std::string::npos);
  EXPECT_NE(t.find(" 12 |   - hostname: w1\n    |               ^\n"), std::string::npos) << t;
  EXPECT_NE(t.find("2 errors, 1 warning in 2 files"), std::string::npos) << t;
  EXPECT_EQ(t.find("\x1b["), std::string::npos);  // no colour unless asked
  o.color = true;
  EXPECT_NE(write_text(d, 2, o).find("\x1b["), std::string::npos);
}

TEST(Report, JsonHasTheDocumentedShape) {
  nlohmann::json j = write_json(sample(), 2);
  ASSERT_TRUE(j["diagnostics"].is_array());
  ASSERT_EQ(j["diagnostics"].size(), 4u);
  const auto& first = j["diagnostics"][0];
  for (const char* k : {"file", "line", "column", "severity", "code", "message", "hint"})
    EXPECT_TRUE(first.contains(k)) << k;
  EXPECT_EQ(first["file"], "a/config.yaml");
  EXPECT_EQ(first["severity"], "warning");
  EXPECT_EQ(j["summary"]["errors"], 2);
  EXPECT_EQ(j["summary"]["warnings"], 1);
  EXPECT_EQ(j["summary"]["files"], 2);
}

TEST(Report, JunitOneSuitePerFileWithEscaping) {
  std::string x = write_junit(sample(), {"a/config.yaml", "b/layout.yaml", "c/clean.yaml"},
                              "paictl check config", false);
  EXPECT_NE(x.find("<testsuites name=\"paictl check config\" tests=\"5\" failures=\"2\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<testsuite name=\"b/layout.yaml\" tests=\"3\" failures=\"2\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<testcase classname=\"c/clean.yaml\" name=\"valid\"/>"), std::string::npos)
      << x;
  EXPECT_NE(x.find("capacity &lt;unassigned&gt; &amp; &quot;x&quot;"), std::string::npos) << x;
  // Warnings become failures only with --fail-on-warn.
  std::string strict = write_junit(sample(), {"a/config.yaml", "b/layout.yaml"}, "s", true);
  EXPECT_NE(strict.find("failures=\"3\""), std::string::npos) << strict;
  EXPECT_EQ(x.find("<failure type=\"F006\""), std::string::npos);
  EXPECT_NE(strict.find("<failure type=\"F006\""), std::string::npos);
}

TEST(Report, SarifIs210WithRulesAndRegions) {
  std::vector<Rule> rules = {
      {"L003", "duplicate-hostname", Severity::Error, "Two machines have the same hostname"},
      {"F006", "unknown-key", Severity::Warning, "A key that is ignored"},
      {"ZZZZ", "unused", Severity::Error, "not used"}};
  nlohmann::json s = write_sarif(sample(), rules, "1.2.3", "");
  EXPECT_EQ(s["version"], "2.1.0");
  const auto& run = s["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "paictl");
  const auto& jr = run["tool"]["driver"]["rules"];
  // Only used codes, plus entries for codes the catalogue lacks.
  std::set<std::string> ids;
  for (const auto& r : jr) ids.insert(r["id"]);
  EXPECT_TRUE(ids.count("L003") && ids.count("F006") && ids.count("L001") && ids.count("H024"));
  EXPECT_FALSE(ids.count("ZZZZ"));
  for (const auto& res : run["results"]) {
    size_t idx = res["ruleIndex"];
    ASSERT_LT(idx, jr.size());
    EXPECT_EQ(jr[idx]["id"], res["ruleId"]);
  }
  const auto& r0 = run["results"][0];
  EXPECT_EQ(r0["level"], "warning");
  EXPECT_EQ(r0["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "a/config.yaml");
  EXPECT_EQ(r0["locations"][0]["physicalLocation"]["region"]["startLine"], 3);
  EXPECT_EQ(r0["locations"][0]["physicalLocation"]["region"]["startColumn"], 1);
  EXPECT_EQ(run["results"][1]["level"], "note");
}

TEST(Report, SarifLogicalLocationForHosts) {
  Diagnostic d{"Swap", Severity::Error, "", 0, 0, "swap is on", "swapoff -a", "worker-3"};
  nlohmann::json s = write_sarif({d}, {}, "1", "");
  const auto& loc = s["runs"][0]["results"][0]["locations"][0];
  EXPECT_EQ(loc["logicalLocations"][0]["name"], "worker-3");
  EXPECT_FALSE(loc.contains("physicalLocation"));
}

}  // namespace
}  // namespace pai::diag
