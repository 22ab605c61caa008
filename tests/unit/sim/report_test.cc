// Reports: the JSON summary's fields, the per-job CSV, and an HTML page that is
// self-contained (inline SVG, no scripts, no external resources).

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "scheduler/helpers.h"
#include "sim/engine.h"
#include "sim/generate.h"
#include "sim/report.h"
#include "sim/trace.h"

namespace pai::sim {
namespace {

struct Fixture {
  std::shared_ptr<config::HivedModel> model =
      scheduler::test::model_from_yaml(scheduler::test::kTwoSkuConfig);
  Trace trace;
  std::unique_ptr<Simulator> sim;
  std::vector<PolicyRun> runs;
  Fixture() {
    TraceError e;
    EXPECT_TRUE(
        read_native_csv("job_id,submit_time,duration,vc,members,priority\n"
                        "a,0,3600,b,1x4,100\nb,60,600,c,1x2,100\nc,120,60,zz,1x1,100\nd,200,60,b,"
                        "\"2x8\",100\n<x>,300,60,a,1x1,-1\n",
                        "r.csv", {}, trace, e))
        << e.message;
    sim = std::make_unique<Simulator>(*model, trace, SimOptions{});
    auto prepared = sim->prepare();
    EXPECT_TRUE(prepared.ok()) << (prepared.ok() ? "" : prepared.error().message);
    for (const char* p : {"hived", "quota"}) {
      runs.emplace_back();
      auto ran = sim->run(p, runs.back());
      EXPECT_TRUE(ran.ok()) << (ran.ok() ? "" : ran.error().message);
    }
  }
};

TEST(Report, SummaryJsonHasTheDocumentedShape) {
  Fixture f;
  ReportContext c{f.trace, *f.sim, f.runs, "cluster/", "test"};
  nlohmann::json j = summary_json(c);
  ASSERT_EQ(j["policies"].size(), 2u);
  const auto& p = j["policies"][0];
  EXPECT_EQ(p["policy"], "hived");
  EXPECT_EQ(p["jobs"], 5);
  EXPECT_EQ(p["unschedulable"], 1);  // 2x8 pods do not fit 4-GPU nodes; zz is mapped automatically
  for (const char* k : {"overall", "vcs", "gpu_utilization", "preemptions", "fragmentation",
                        "makespan_s", "lost_gpu_hours", "sharing_anomaly", "unschedulable_reasons"})
    EXPECT_TRUE(p.contains(k)) << k;
  for (const char* k : {"mean", "p50", "p95", "p99", "max"}) {
    EXPECT_TRUE(p["overall"]["queue_delay_s"].contains(k)) << k;
    EXPECT_TRUE(p["vcs"]["b"]["jct_s"].contains(k)) << k;
  }
  EXPECT_EQ(p["vcs"]["b"]["jobs"], 2);
  EXPECT_EQ(j["trace"]["jobs"], 5);
  EXPECT_EQ(j["cluster"]["leaf_cells"]["V100"], 24);
  EXPECT_FALSE(j["vc_map"]["zz"].is_null());
  nlohmann::json m = metrics_json(c);
  EXPECT_TRUE(m["timeseries"]["hived"]["used_gpus"].is_array());
  EXPECT_GT(m["timeseries"]["quota"]["bin_s"].get<double>(), 0);
}

TEST(Report, JobsCsvHasOneRowPerJobAndPolicy) {
  Fixture f;
  ReportContext c{f.trace, *f.sim, f.runs, "cluster/", "test"};
  std::string csv = jobs_csv(c);
  size_t lines = static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n'));
  EXPECT_EQ(lines, 1 + 2 * f.trace.jobs.size());
  EXPECT_EQ(csv.rfind("policy,job_id,vc,", 0), 0u);
  EXPECT_NE(csv.find("unschedulable,does not fit"), std::string::npos);
}

TEST(Report, HtmlIsSelfContained) {
  Fixture f;
  ReportContext c{f.trace, *f.sim, f.runs, "cluster/<dir>", "test"};
  std::string html = html_report(c);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_GE(static_cast<size_t>(std::count(html.begin(), html.end(), '<') > 0), 1u);
  size_t svgs = 0;
  for (size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++svgs;
  EXPECT_GE(svgs, 3u + f.sim->cluster().vcs.size());  // CDFs (all + per VC) and time series
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://www.w3.org/2000/svg\" width"),
            html.find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("<dir>"), std::string::npos);  // escaped
  EXPECT_NE(html.find("cluster/&lt;dir&gt;"), std::string::npos);
  EXPECT_NE(html.find("<polyline"), std::string::npos);
}

size_t report_count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t p = text.find(part); p != std::string::npos; p = text.find(part, p + 1)) ++n;
  return n;
}

TEST(Report, ThousandsSeparators) {
  EXPECT_EQ(with_thousands(0), "0");
  EXPECT_EQ(with_thousands(999), "999");
  EXPECT_EQ(with_thousands(1000), "1,000");
  EXPECT_EQ(with_thousands(1234567), "1,234,567");
  EXPECT_EQ(with_thousands(-1234.56, 1), "-1,234.6");
  EXPECT_EQ(with_thousands(1046.04, 1), "1,046.0");
  EXPECT_EQ(with_thousands(-0.01, 1), "0.0");
}

std::string report_read(const std::string& rel) {
  std::ifstream f(std::string(PAI_SOURCE_DIR) + "/" + rel);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(Report, HtmlOpensWithTheFindingAndHighlightsTheBestValues) {
  // The sharing anomaly: quota makes a production job wait, HiveD does not.
  auto model = scheduler::test::model_from_yaml(
      report_read("examples/clusters/heterogeneous/hivedscheduler.yaml"));
  Trace trace;
  TraceError e;
  ASSERT_TRUE(read_native_csv(report_read("examples/traces/sharing-anomaly.csv"),
                              "sharing-anomaly.csv", {}, trace, e))
      << e.message;
  Simulator sim(*model, trace, {});
  ASSERT_TRUE(sim.prepare().ok());
  std::vector<PolicyRun> runs(2);
  ASSERT_TRUE(sim.run("hived", runs[0]).ok());
  ASSERT_TRUE(sim.run("quota", runs[1]).ok());
  ReportContext c{trace, sim, runs, "heterogeneous/", "test"};
  std::string line = headline(c);
  EXPECT_EQ(line,
            "HiveD cut the mean queueing delay by 100 % against quota sharing (59.0m to 0s); "
            "sharing-anomaly jobs: 0 against 1.");
  std::string html = html_report(c);
  size_t h1 = html.find("<h1>"), finding = html.find("<p class=\"finding\">" + line + "</p>");
  ASSERT_NE(finding, std::string::npos);
  EXPECT_LT(h1, finding);
  EXPECT_LT(finding, html.find("<h2>"));  // before every section
  // "jobs" is the same for both policies: not highlighted; the delays, lower
  // under hived, are highlighted in its column.
  EXPECT_NE(html.find("<td class=\"l\">jobs</td><td>10</td><td>10</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"l\">queueing delay max</td><td class=\"best\">0s</td><td>"),
            std::string::npos);
  EXPECT_NE(
      html.find("<td class=\"l\">sharing-anomaly jobs</td><td class=\"best\">0</td><td>1</td>"),
      std::string::npos);

  // One policy: the sentence says what it did, and nothing is highlighted.
  std::vector<PolicyRun> one(runs.begin(), runs.begin() + 1);
  ReportContext c1{trace, sim, one, "heterogeneous/", "test"};
  EXPECT_EQ(headline(c1).rfind("HiveD started 10 jobs with a mean queueing delay of 0s", 0), 0u)
      << headline(c1);
  EXPECT_EQ(report_count(html_report(c1), "<td class=\"best\">"), 0u);

  // A trace with opportunistic jobs: the sentence is about the guaranteed ones.
  Fixture f;
  ReportContext cf{f.trace, *f.sim, f.runs, "cluster/", "test"};
  EXPECT_NE(headline(cf).find(" with a guarantee "), std::string::npos) << headline(cf);
}

TEST(Report, AMuchLongerRunDoesNotSqueezeTheTimeSeries) {
  Fixture f;
  std::vector<PolicyRun> runs = f.runs;
  runs[1].end = runs[0].end * 20;  // quota "drains" for twenty times as long
  ReportContext c{f.trace, *f.sim, runs, "cluster/", "test"};
  std::string html = html_report(c);
  EXPECT_NE(html.find("<p class=\"note clip\">The charts stop at "), std::string::npos);
  EXPECT_NE(html.find("quota until " + human_duration(runs[1].end)), std::string::npos);
  ReportContext same{f.trace, *f.sim, f.runs, "cluster/", "test"};
  if (f.runs[1].end <= 1.5 * f.runs[0].end && f.runs[0].end <= 1.5 * f.runs[1].end) {
    EXPECT_EQ(html_report(same).find("note clip"), std::string::npos);
  }
}

TEST(Report, FewerLargerCdfPanels) {
  auto model = scheduler::test::model_from_yaml(philly_cluster_config(1, 9));
  ASSERT_NE(model, nullptr);
  GenerateOptions g;
  g.jobs = 400;
  g.seed = 4;
  Trace t = generate_trace(g, cluster_template(*model));
  Simulator sim(*model, t, {});
  ASSERT_TRUE(sim.prepare().ok());
  std::vector<PolicyRun> runs(1);
  ASSERT_TRUE(sim.run("hived", runs[0]).ok());
  ReportContext c{t, sim, runs, "philly/", "test"};
  std::string html = html_report(c);
  size_t cdf = html.find("<h2>Queueing delay CDF</h2>"), over = html.find("<h2>Over time</h2>");
  ASSERT_NE(cdf, std::string::npos);
  std::string section = html.substr(cdf, over - cdf);
  EXPECT_EQ(report_count(section, "<svg"), 5u);  // all jobs, and the four largest VCs
  EXPECT_NE(section.find("width=\"1000\" height=\"400\""), std::string::npos);
  EXPECT_NE(section.find("The 4 virtual clusters with the most jobs are drawn; the delays of the "
                         "other "),
            std::string::npos)
      << section.substr(section.size() > 400 ? section.size() - 400 : 0);
  EXPECT_NE(html.find(" jobs)</text>"), std::string::npos);  // a panel names its VC's job count
}

TEST(Report, HumanDurations) {
  EXPECT_EQ(human_duration(0), "0s");
  EXPECT_EQ(human_duration(45), "45s");
  EXPECT_EQ(human_duration(90), "1.5m");
  EXPECT_EQ(human_duration(5400), "1.5h");
  EXPECT_EQ(human_duration(86400 * 2.5), "2.5d");
}

}  // namespace
}  // namespace pai::sim
