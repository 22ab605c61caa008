// Reports: the JSON summary's fields, the per-job CSV, and an HTML page that is
// self-contained (inline SVG, no scripts, no external resources).

#include <gtest/gtest.h>

#include <algorithm>

#include "scheduler/helpers.h"
#include "sim/engine.h"
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

TEST(Report, HumanDurations) {
  EXPECT_EQ(human_duration(0), "0s");
  EXPECT_EQ(human_duration(45), "45s");
  EXPECT_EQ(human_duration(90), "1.5m");
  EXPECT_EQ(human_duration(5400), "1.5h");
  EXPECT_EQ(human_duration(86400 * 2.5), "2.5d");
}

}  // namespace
}  // namespace pai::sim
