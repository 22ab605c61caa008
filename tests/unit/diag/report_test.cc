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
  Diagnostic d{"Swap", Severity::Error, "", 0, 0, "swap is on", "swapoff -a", "worker-3", {}};
  nlohmann::json s = write_sarif({d}, {}, "1", "");
  const auto& loc = s["runs"][0]["results"][0]["locations"][0];
  EXPECT_EQ(loc["logicalLocations"][0]["name"], "worker-3");
  EXPECT_FALSE(loc.contains("physicalLocation"));
}

}  // namespace
}  // namespace pai::diag

namespace pai::diag {
namespace {

Diagnostic with_related() {
  Diagnostic d;
  d.code = "X003";
  d.file = "hived.yaml";
  d.line = 5;
  d.column = 12;
  d.message = "skuTypes.V100.cpu gives each node 72 CPUs";
  d.hint = "lower cpu per leaf";
  d.related.push_back({"layout.yaml", 3, 3, "machine SKU \"dgx\" has 64 vcores"});
  d.related.push_back({"", 18, 7, "node \"w1\" is affected"});
  return d;
}

TEST(Report, RelatedLocationsAreNotesInText) {
  std::string text = write_text({with_related()}, 2, {});
  EXPECT_NE(text.find("hived.yaml:5:12: error[X003]: skuTypes.V100.cpu"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\nlayout.yaml:3:3: note: machine SKU \"dgx\" has 64 vcores\n"),
            std::string::npos)
      << text;
  // A related location without a file is in the finding's own file.
  EXPECT_NE(text.find("\nhived.yaml:18:7: note: node \"w1\" is affected\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("1 error, 0 warnings"), std::string::npos) << text;
}

TEST(Report, RelatedLocationsInJsonSarifAndJunit) {
  nlohmann::json j = write_json({with_related()}, 2);
  const auto& rel = j["diagnostics"][0]["related"];
  ASSERT_EQ(rel.size(), 2u);
  EXPECT_EQ(rel[0]["file"], "layout.yaml");
  EXPECT_EQ(rel[1]["file"], "hived.yaml");
  EXPECT_EQ(rel[1]["line"], 18);
  EXPECT_EQ(rel[1]["message"], "node \"w1\" is affected");
  EXPECT_FALSE(write_json(sample(), 2)["diagnostics"][0].contains("related"));

  nlohmann::json s = write_sarif({with_related()}, {}, "1.0", "");
  const auto& srel = s["runs"][0]["results"][0]["relatedLocations"];
  ASSERT_EQ(srel.size(), 2u);
  EXPECT_EQ(srel[1]["id"], 1);
  EXPECT_EQ(srel[1]["physicalLocation"]["artifactLocation"]["uri"], "hived.yaml");
  EXPECT_EQ(srel[1]["physicalLocation"]["region"]["startLine"], 18);
  EXPECT_EQ(srel[0]["message"]["text"], "machine SKU \"dgx\" has 64 vcores");

  std::string junit = write_junit({with_related()}, {"hived.yaml"}, "check", false);
  EXPECT_NE(junit.find("note: hived.yaml:18:7: node &quot;w1&quot; is affected"), std::string::npos)
      << junit;
}

TEST(Report, ControlCharactersFromInputAreEscapedInText) {
  Diagnostic d;
  d.code = "F006";
  d.severity = Severity::Warning;
  d.file = "config.yaml";
  d.line = 1;
  d.column = 12;
  d.message = "unknown key \"\x1b]0;owned\x07\x1b[2J\"";
  d.hint = "did you mean \"user\x1b[31m\"?";
  d.location = "host\r1";
  TextOptions opt;
  opt.source_line = [](const std::string&, uint32_t) {
    return std::string("\x1b[1mkey\x1b[0m: x");
  };
  std::string text = write_text({d}, 1, opt);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_NE(text.find("unknown key \"\\x1b]0;owned\\x07\\x1b[2J\""), std::string::npos) << text;
  EXPECT_NE(text.find("[host\\x0d1]"), std::string::npos) << text;
  // The caret stays under the column it points at in the escaped excerpt.
  EXPECT_NE(text.find(" 1 | \\x1b[1mkey\\x1b[0m: x\n   | " + std::string(17, ' ') + "^"),
            std::string::npos)
      << text;
  // Colour, when asked for, still comes from paictl itself.
  opt.color = true;
  EXPECT_NE(write_text({d}, 1, opt).find("\x1b[1;33m"), std::string::npos);
}

}  // namespace
}  // namespace pai::diag
