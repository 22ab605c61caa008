#include "check/report.h"

#include <gtest/gtest.h>

#include "test_support.h"

using namespace pai::check;

namespace {
std::vector<CheckResult> sample() {
  return {{"gpu-1", "Reachable", Status::Pass, "logged in", "", false},
          {"gpu-1", "Swap", Status::Fail, "swap is on (/swap.img)", "swapoff -a", false},
          {"gpu-1", "DockerVersion", Status::Warn, "Docker 18.09.7 <& old", "upgrade", false},
          {"gpu-2", "Reachable", Status::Fail, "connection to gpu-2:22 refused", "is sshd running?",
           false},
          {"gpu-2", "Swap", Status::Skip, "host not reachable", "", false},
          {"gpu-3", "Reachable", Status::Pass, "logged in", "", false},
          {"gpu-3", "Port-6443", Status::Warn, "port 6443 in use", "stop it", true}};
}
}  // namespace

TEST(Report, TextGroupsByHostThenATable) {
  ReportContext ctx;
  std::string t = write_text_report(sample(), ctx, {});
  size_t g1 = t.find("gpu-1\n"), g2 = t.find("gpu-2\n"), table = t.find("HOST");
  ASSERT_NE(g1, std::string::npos);
  ASSERT_NE(table, std::string::npos);
  EXPECT_LT(g1, g2);
  EXPECT_LT(g2, table);
  EXPECT_NE(t.find("FAIL  Swap"), std::string::npos);
  EXPECT_NE(t.find("hint: swapoff -a"), std::string::npos);
  EXPECT_EQ(t.find("logged in"), std::string::npos);  // passes are only shown with -v
  EXPECT_NE(t.find("(error ignored)"), std::string::npos);
  EXPECT_NE(t.find("unreachable"), std::string::npos);
  EXPECT_NE(t.find("3 hosts: 0 ok, 1 with warnings, 1 with errors, 1 unreachable"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("\x1b["), std::string::npos);  // no colour unless asked
  TextReportOptions v;
  v.verbose = true;
  v.color = true;
  std::string tv = write_text_report(sample(), ctx, v);
  EXPECT_NE(tv.find("logged in"), std::string::npos);
  EXPECT_NE(tv.find("\x1b["), std::string::npos);
  TextReportOptions q;
  q.quiet = true;
  std::string tq = write_text_report(sample(), ctx, q);
  EXPECT_EQ(tq.find("WARN"), std::string::npos);
  EXPECT_EQ(tq.find("HOST"), std::string::npos);
  EXPECT_EQ(tq.find("gpu-3"), std::string::npos);  // nothing failed there
}

TEST(Report, Json) {
  ReportContext ctx;
  nlohmann::json j = write_json_report(sample(), ctx);
  ASSERT_EQ(j["results"].size(), 7u);
  EXPECT_EQ(j["results"][1]["status"], "fail");
  EXPECT_EQ(j["results"][1]["hint"], "swapoff -a");
  EXPECT_TRUE(j["results"][6]["demoted"].get<bool>());
  EXPECT_EQ(j["summary"]["unreachable"], 1);
  EXPECT_EQ(j["summary"]["fail"], 2);
  EXPECT_EQ(j["summary"]["exit_code"], 3);
}

TEST(Report, JunitHasASuitePerHost) {
  ReportContext ctx;
  std::string x = write_junit_report(sample(), ctx);
  EXPECT_NE(
      x.find("<testsuite name=\"gpu-1\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"0\">"),
      std::string::npos)
      << x;
  EXPECT_NE(
      x.find("<testsuite name=\"gpu-2\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"1\">"),
      std::string::npos);
  EXPECT_NE(x.find("&lt;&amp; old"), std::string::npos);  // escaped
  ctx.fail_on_warn = true;
  std::string xw = write_junit_report(sample(), ctx);
  EXPECT_NE(xw.find("<testsuite name=\"gpu-1\" tests=\"3\" failures=\"2\""), std::string::npos);
}

TEST(Report, SarifUsesTheHostAsLogicalLocationAndTheLayoutLine) {
  ReportContext ctx;
  ctx.layout_file = "cluster/layout.yaml";
  ctx.layout_lines = {{"gpu-1", 12}};
  nlohmann::json s = write_sarif_report(sample(), ctx, "0.1.0");
  EXPECT_EQ(s["version"], "2.1.0");
  auto& results = s["runs"][0]["results"];
  ASSERT_EQ(results.size(), 4u);  // failures and warnings only
  EXPECT_EQ(results[0]["ruleId"], "Swap");
  EXPECT_EQ(results[0]["level"], "error");
  EXPECT_EQ(results[0]["locations"][0]["logicalLocations"][0]["name"], "gpu-1");
  EXPECT_EQ(results[0]["locations"][0]["physicalLocation"]["region"]["startLine"], 12);
  bool port_rule = false;
  for (const auto& r : s["runs"][0]["tool"]["driver"]["rules"]) port_rule |= r["id"] == "Port-6443";
  EXPECT_TRUE(port_rule);
}

TEST(Report, TheSameFindingOnSeveralHostsIsPrintedOnce) {
  std::vector<CheckResult> rs = {
      {"a", "NTP", Status::Warn, "cannot tell", "install chrony", false},
      {"b", "NTP", Status::Warn, "cannot tell", "install chrony", false},
      {"c", "NTP", Status::Warn, "cannot tell", "install chrony", false},
      {"b", "Swap", Status::Fail, "swap is on", "swapoff -a", false},
      {"c", "Swap", Status::Fail, "swap is on", "swapoff -a", false},
      {"c", "GPUCount", Status::Fail, "2 GPUs", "fix it", false},
  };
  ReportContext ctx;
  std::string t = write_text_report(rs, ctx, {});
  EXPECT_NE(t.find("On all 3 hosts\n"), std::string::npos) << t;
  EXPECT_NE(t.find("On 2 hosts: b, c\n"), std::string::npos) << t;
  size_t first = t.find("cannot tell");
  EXPECT_EQ(t.find("cannot tell", first + 1), std::string::npos) << t;  // once
  EXPECT_NE(t.find("\nc\n  FAIL  GPUCount"), std::string::npos)
      << t;                                            // what is c's own stays under c
  EXPECT_EQ(t.find("\na\n"), std::string::npos) << t;  // a has nothing of its own
  TextReportOptions v;
  v.verbose = true;
  std::string tv = write_text_report(rs, ctx, v);
  EXPECT_EQ(tv.find("On all"), std::string::npos);  // -v prints every host whole
  std::vector<CheckResult> two(rs.begin(), rs.begin() + 2);
  std::string t2 = write_text_report(two, ctx, {});
  EXPECT_NE(t2.find("On both hosts\n"), std::string::npos) << t2;
}
