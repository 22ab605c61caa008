// The forecast from a live state (lib/sim/forecast.h): the engine seeded with
// running groups, a horizon, the HiveD test server's lab state played with no
// arrivals (every running group ends at its expected end, every waiting group
// starts when `hived why`'s answer implies), a trace played from a state equal
// to the same trace simulated from the start, and bad input.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "hived/live.h"
#include "hived/why.h"
#include "scheduler/helpers.h"
#include "scheduler/hived_state.h"
#include "scheduler/policy.h"
#include "sim/engine.h"
#include "sim/forecast.h"
#include "sim/forecast_input.h"
#include "sim/trace.h"

namespace pai::sim {
namespace {

using scheduler::test::model_from_yaml;

std::string forecast_read(const std::string& rel) {
  std::string path = std::string(PAI_SOURCE_DIR) + "/" + rel;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  std::string s;
  if (!f) return s;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

scheduler::GroupRequest forecast_req(const std::string& name, const std::string& vc,
                                     int32_t priority, int32_t pods, int32_t gpus,
                                     const std::string& leaf = "V100",
                                     const std::string& pinned = "", bool lazy = false) {
  scheduler::GroupRequest r;
  r.affinity_group = name;
  r.virtual_cluster = vc;
  r.priority = priority;
  r.members.push_back({pods, gpus});
  r.leaf_cell_type = pinned.empty() ? leaf : "";
  r.pinned_cell_id = pinned;
  r.lazy_preemption_enable = lazy;
  return r;
}

// The HiveD test server's lab scenario (tests/integration/hived/scenarios/lab.json)
// made the way the server makes it: v7 bad, eight groups placed, big-wait waiting.
struct Lab {
  std::shared_ptr<config::HivedModel> model;
  hived::LiveState live;
};

Lab lab_state() {
  Lab lab;
  lab.model = model_from_yaml(forecast_read("tests/integration/hived/scenarios/lab-hived.yaml"));
  auto made = scheduler::make_policy("hived", *lab.model);
  EXPECT_TRUE(made.ok());
  auto& p = **made;
  p.set_node_health(p.cluster().find_node("v7"), false);
  for (const auto& r :
       {forecast_req("train-a", "prod", 300, 2, 8), forecast_req("train-b", "prod", 300, 1, 8),
        forecast_req("infer-c", "prod", 10, 1, 4, "V100", "", true),
        forecast_req("res-1", "research", 50, 1, 8), forecast_req("urgent", "prod", 200, 1, 8),
        forecast_req("opp-1", "research", -1, 1, 4),
        forecast_req("pin-1", "prod", 100, 1, 2, "", "prod-pin"),
        forecast_req("k-1", "research", 20, 1, 4, "K80")}) {
    auto res = p.schedule(r, true);
    if (res.outcome == scheduler::Outcome::Preempting) {
      for (const auto& v : res.victims) p.release(v.group);
      res = p.schedule(r, true);
    }
    EXPECT_EQ(res.outcome, scheduler::Outcome::Bound) << r.affinity_group << ": " << res.reason;
  }
  auto snap = scheduler::snapshot_hived(p);
  EXPECT_TRUE(snap.has_value());
  lab.live = hived::index_live(hived::cluster_status_of(*lab.model, *snap),
                               hived::affinity_groups_of(*lab.model, *snap));
  return lab;
}

TEST(Forecast, LabWithoutArrivalsEndsAndStartsAsExpected) {
  Lab lab = lab_state();
  const double now = 1'800'000'000;
  std::map<std::string, double> ends = {
      {"train-a", now + 7200}, {"train-b", now + 10800}, {"infer-c", now + 3600},
      {"res-1", now + 1800},   {"urgent", now + 14400},  {"pin-1", now + 18000},
      {"k-1", now + 21600}};  // opp-1: not known, runs past the horizon
  std::vector<ForecastWaiting> waiting = {
      {"big-wait", forecast_req("big-wait", "prod", 100, 1, 8), 600, 3600},
      {"pin-wait", forecast_req("pin-wait", "prod", 100, 1, 4, "", "prod-pin"), 60, 3600},
      {"k-wait", forecast_req("k-wait", "research", 20, 1, 4, "K80"), 30, 3600}};
  ForecastRequest req;
  req.current = lab.model;
  req.state = forecast_state(lab.live, lab.model.get(), ends, waiting, now);
  req.state.source = "the lab";
  req.horizon_s = 86400;
  ASSERT_EQ(req.state.running.size(), 8u);
  ASSERT_EQ(req.state.bad_nodes, std::vector<std::string>{"v7"});
  auto r = forecast(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->configs.size(), 1u);
  const ConfigForecast& c = r->configs[0];
  // Every running group ends at its expected end; opp-1 (no end known) runs on.
  for (size_t i = 0; i < req.state.running.size(); ++i) {
    const std::string& name = req.state.running[i].group.name;
    auto it = ends.find(name);
    if (it == ends.end())
      EXPECT_EQ(c.running_end_s[i], -1) << name;
    else
      EXPECT_EQ(c.running_end_s[i], it->second - now) << name;
    EXPECT_NE(c.restored[i], scheduler::RestoreOutcome::Ignored) << name;
  }
  // Every waiting group starts when `hived why` says: at once when it fits, or
  // (it gives no time) when the first group holding the VC's cells it needs
  // ends: a group that waits for capacity needs one cell of the VC, and HiveD
  // frees a whole cell when such a holder ends.
  for (size_t i = 0; i < waiting.size(); ++i) {
    auto why =
        hived::judge_waiting(waiting[i].name, waiting[i].request, "test", *lab.model, lab.live);
    ASSERT_TRUE(why.ok()) << why.error().message;
    double expected = -1;
    ASSERT_NE(why->verdict, hived::WaitVerdict::Preempts) << waiting[i].name;
    if (why->verdict == hived::WaitVerdict::Fits) {
      expected = 0;
    } else {
      ASSERT_EQ(why->verdict, hived::WaitVerdict::Waits) << waiting[i].name << ": " << why->reason;
      ASSERT_FALSE(why->held_by.empty()) << waiting[i].name;
      for (const auto& [holder, prio] : why->held_by)
        if (auto e = ends.find(holder); e != ends.end())
          expected = expected < 0 ? e->second - now : std::min(expected, e->second - now);
    }
    EXPECT_EQ(c.waiting_start_s[i], expected)
        << waiting[i].name << " (why: " << hived::to_string(why->verdict) << ")";
  }
  // big-wait waits for train-a (2h), pin-wait fits on prod's pinned cell now, k-wait
  // waits for k-1 (6h), the holder of research's K80 cell.
  EXPECT_EQ(c.waiting_start_s[0], 7200);
  EXPECT_EQ(c.waiting_start_s[1], 0);
  EXPECT_EQ(c.waiting_start_s[2], 21600);
  EXPECT_EQ(r->running, 8);
  EXPECT_EQ(r->waiting, 3);
  // The text names the VCs and the waiting groups; the JSON has the same numbers.
  std::string text = forecast_text(*r);
  EXPECT_NE(text.find("prod"), std::string::npos) << text;
  EXPECT_NE(text.find("big-wait"), std::string::npos) << text;
  auto j = forecast_json(*r);
  EXPECT_EQ(j["configs"][0]["waitingGroups"][0]["startsInSeconds"], 7200);
}

TEST(Forecast, ProposedConfigSideBySide) {
  Lab lab = lab_state();
  const double now = 1'800'000'000;
  ForecastRequest req;
  req.current = lab.model;
  // prod shrunk to three node cells: urgent is lazily preempted at the restart.
  req.proposed = model_from_yaml(forecast_read("tests/integration/hived/scenarios/lab-moved.yaml"));
  req.state = forecast_state(lab.live, lab.model.get(), {}, {}, now);
  req.horizon_s = 3600;
  auto r = forecast(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->configs.size(), 2u);
  size_t urgent = 0;
  for (size_t i = 0; i < req.state.running.size(); ++i)
    if (req.state.running[i].group.name == "urgent") urgent = i;
  EXPECT_EQ(r->configs[0].restored[urgent], scheduler::RestoreOutcome::Kept);
  EXPECT_EQ(r->configs[1].restored[urgent], scheduler::RestoreOutcome::LazyPreempted);
  std::string text = forecast_text(*r);
  EXPECT_NE(text.find("current -> proposed"), std::string::npos) << text;
  EXPECT_NE(text.find("urgent is lazily preempted on proposed"), std::string::npos) << text;
}

// Jobs that start at 0 and run long, then jobs that arrive: simulated from the
// start, and forecast from the state the first ones make (placed as HiveD
// places them, then read back as a live state): the arrivals start, finish and
// are preempted at the same moments.
TEST(Forecast, TraceFromStateEqualsSimulateFromTheStart) {
  auto model = model_from_yaml(forecast_read("tests/integration/hived/scenarios/lab-hived.yaml"));
  Trace whole;
  TraceError e;
  const std::string head =
      "job_id,submit_time,duration,vc,members,priority,leaf_cell_type\n"
      "a,0,5000,prod,2x8,100,V100\n"
      "b,0,7000,research,1x4,100,V100\n"
      "c,0,3000,research,1x8,100,V100\n"
      "d,0,9000,research,1x4,100,V100\n"
      "e,0,4000,prod,1x2,100,V100\n";
  std::string tail;
  for (int i = 0; i < 60; ++i)
    tail += "n" + std::to_string(i) + "," + std::to_string(100 + i * 173) + "," +
            std::to_string(600 + (i * 997) % 5000) + "," + (i % 3 ? "research" : "prod") + "," +
            (i % 4 == 0   ? "1x8"
             : i % 4 == 1 ? "2x8"
                          : "1x2") +
            ",100," + (i % 7 == 0 ? "K80" : "V100") + "\n";
  ASSERT_TRUE(read_native_csv(head + tail, "whole.csv", {}, whole, e)) << e.message;
  whole.finish();
  SimOptions opt;
  opt.vc_map = "strict";
  opt.backfill = true;  // as the forecast queues (ForecastRequest::backfill)
  opt.backfill_depth = 16;
  Simulator sim(*model, whole, opt);
  ASSERT_TRUE(sim.prepare().ok());
  PolicyRun plain;
  ASSERT_TRUE(sim.run("hived", plain).ok());

  // The state after the first five started: placed the way the engine placed
  // them (its queue heads by submission, then job: a, b, c, d, e), read back
  // through HiveD's inspect shapes. One priority, so nothing is preempted: a
  // restart rebinds running groups to virtual cells of its own choosing, so a
  // preemption's victims may differ from those of the run that placed them.
  auto made = scheduler::make_policy("hived", *model);
  ASSERT_TRUE(made.ok());
  auto& p = **made;
  const char* names[] = {"a", "b", "c", "d", "e"};
  const std::vector<scheduler::GroupRequest> first = {
      forecast_req("a", "prod", 100, 2, 8), forecast_req("b", "research", 100, 1, 4),
      forecast_req("c", "research", 100, 1, 8), forecast_req("d", "research", 100, 1, 4),
      forecast_req("e", "prod", 100, 1, 2)};
  for (const auto& r : first) ASSERT_EQ(p.schedule(r, true).outcome, scheduler::Outcome::Bound);
  auto snap = scheduler::snapshot_hived(p);
  auto live = hived::index_live(hived::cluster_status_of(*model, *snap),
                                hived::affinity_groups_of(*model, *snap));
  const double now = 1e9;
  std::map<std::string, double> ends;
  for (int i = 0; i < 5; ++i) ends[names[i]] = now + whole.jobs[static_cast<size_t>(i)].duration;

  auto arrivals = std::make_shared<Trace>();
  ASSERT_TRUE(
      read_native_csv("job_id,submit_time,duration,vc,members,priority,leaf_cell_type\n" + tail,
                      "tail.csv", {}, *arrivals, e));
  // The reader moved time 0 to the first arrival (100 s after the first five
  // started): back to seconds after now.
  for (auto& j : arrivals->jobs) j.submit += 100;
  ForecastRequest req;
  req.current = model;
  req.state = forecast_state(live, model.get(), ends, {}, now);
  req.arrivals = arrivals;
  req.horizon_s = 366 * 86400.0;
  auto r = forecast(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const PolicyRun& seeded = r->configs[0].run;
  ASSERT_EQ(seeded.jobs.size(), whole.jobs.size());
  // The live state lists groups in its own order: compare by job id.
  ForecastTrace ft = forecast_trace(req.state, arrivals.get(), *model, req.horizon_s);
  std::map<std::string, size_t> at;
  for (size_t j = 0; j < ft.trace->jobs.size(); ++j)
    at[std::string(ft.trace->id(ft.trace->jobs[j]))] = j;
  for (size_t j = 0; j < whole.jobs.size(); ++j) {
    const std::string id(whole.id(whole.jobs[j]));
    ASSERT_TRUE(at.count(id)) << id;
    const JobOutcome& a = plain.jobs[j];
    const JobOutcome& b = seeded.jobs[at[id]];
    EXPECT_EQ(a.first_start, b.first_start) << id;
    EXPECT_EQ(a.finish, b.finish) << id;
    EXPECT_EQ(a.preemptions, b.preemptions) << id;
    EXPECT_EQ(a.state, b.state) << id;
  }
  EXPECT_EQ(plain.overall.preemptions, seeded.overall.preemptions);
  EXPECT_GT(plain.overall.finished, 50);
}

TEST(Forecast, ArrivalsOfAnotherClusterAreRefusedByName) {
  Lab lab = lab_state();
  auto arrivals = std::make_shared<Trace>();
  TraceError e;
  ASSERT_TRUE(
      read_native_csv("job_id,submit_time,duration,vc,gpus\n"
                      "x,0,60,prod,1\ny,10,60,vision,1\nz,20,60,speech,2\n",
                      "other.csv", {}, *arrivals, e));
  ForecastRequest req;
  req.current = lab.model;
  req.state = forecast_state(lab.live, lab.model.get(), {}, {}, 0);
  req.arrivals = arrivals;
  auto r = forecast(req);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("vision, speech"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().hint.find("prod, research"), std::string::npos) << r.error().hint;
}

TEST(Forecast, EngineStopsAtTheHorizon) {
  auto model = model_from_yaml(forecast_read("tests/integration/hived/scenarios/lab-hived.yaml"));
  Trace t;
  TraceError e;
  ASSERT_TRUE(
      read_native_csv("job_id,submit_time,duration,vc,gpus,leaf_cell_type\n"
                      "short,0,100,prod,8,V100\nlong,0,10000,prod,8,V100\n"
                      "late,5000,100,prod,8,V100\n",
                      "t.csv", {}, t, e));
  t.finish();
  SimOptions opt;
  opt.horizon = 1000;
  Simulator sim(*model, t, opt);
  ASSERT_TRUE(sim.prepare().ok());
  PolicyRun r;
  ASSERT_TRUE(sim.run("hived", r).ok());
  EXPECT_EQ(r.jobs[0].state, JobState::Finished);
  EXPECT_EQ(r.jobs[1].state, JobState::Running);
  EXPECT_EQ(r.end, 1000);
  EXPECT_EQ(r.overall.running, 1);
  // 8 GPUs for 100 s and 8 for 1000 s, all in prod.
  EXPECT_DOUBLE_EQ(r.overall.used_gpu_seconds, 8 * 100 + 8 * 1000);
  EXPECT_DOUBLE_EQ(r.vcs[static_cast<size_t>(sim.cluster().find_vc("prod"))].used_gpu_seconds,
                   8 * 1100);
}

TEST(Forecast, ReplayShiftsTheLastDaysForward) {
  const double now = 1'800'000'000;
  auto ms = [](double s) { return s * 1000; };
  nlohmann::json jobs = nlohmann::json::array({
      {{"name", "old"},
       {"username", "al"},
       {"state", "SUCCEEDED"},
       {"virtualCluster", "prod"},
       {"submissionTime", ms(now - 9 * 86400)},
       {"launchedTime", ms(now - 9 * 86400)},
       {"completedTime", ms(now - 9 * 86400 + 60)},
       {"totalGpuNumber", 8},
       {"totalTaskNumber", 1}},
      {{"name", "a"},
       {"username", "al"},
       {"state", "SUCCEEDED"},
       {"virtualCluster", "prod"},
       {"submissionTime", ms(now - 86400 + 100)},
       {"launchedTime", ms(now - 86400 + 200)},
       {"completedTime", ms(now - 86400 + 3800)},
       {"totalGpuNumber", 16},
       {"totalTaskNumber", 2}},
      {{"name", "b"},
       {"username", "bo"},
       {"state", "RUNNING"},
       {"virtualCluster", "research"},
       {"submissionTime", ms(now - 600)},
       {"launchedTime", ms(now - 500)},
       {"totalGpuNumber", 1},
       {"totalTaskNumber", 1}},
  });
  Trace t = replay_trace(jobs, 86400, now, 100);
  ASSERT_EQ(t.jobs.size(), 1u);  // old is outside the window, b's run time is unknown
  EXPECT_EQ(t.jobs[0].submit, 100);
  EXPECT_EQ(t.jobs[0].duration, 3600);
  EXPECT_EQ(t.jobs[0].pods, 2);
  EXPECT_EQ(t.jobs[0].gpus, 8);
  EXPECT_EQ(t.skipped.size(), 1u);
  JobListFacts f = job_list_facts(jobs, std::nullopt, now);
  EXPECT_EQ(f.user_median_s["al"], 3600);       // old (60 s) and a (3600 s): the upper middle
  EXPECT_FALSE(f.expected_ends.count("bo~b"));  // bo has no finished job
  f = job_list_facts(jobs, 1000.0, now);
  EXPECT_EQ(f.expected_ends["bo~b"], now - 500 + 1000);
}

// --- the series over the horizon (ConfigForecast::series) and the report -----

// The lab's running groups with ends at whole quarter hours (the steps of a
// 24 h horizon cut in 96), opp-1's end unknown.
std::map<std::string, double> forecast_lab_ends(double now) {
  return {{"train-a", now + 7200}, {"train-b", now + 10800}, {"infer-c", now + 3600},
          {"res-1", now + 1800},   {"urgent", now + 14400},  {"pin-1", now + 18000},
          {"k-1", now + 21600}};
}

int64_t forecast_group_gpus(const scheduler::LiveGroup& g) {
  int64_t n = 0;
  for (const auto& p : g.pods) n += static_cast<int64_t>(p.leaf_indices.size());
  return n;
}

const VcSeries& forecast_series_of(const ConfigForecast& c, const std::string& vc) {
  for (const auto& s : c.series)
    if (s.vc == vc) return s;
  ADD_FAILURE() << "no series of " << vc;
  static const VcSeries none;
  return none;
}

// n jobs a second apart from `from`, each of `gpus` V100s for `run` seconds.
std::string forecast_arrivals_csv(const std::string& vc, int n, double from, double run, int gpus,
                                  int priority = 100) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += vc + std::to_string(i) + "," + std::to_string(from + i) + "," + std::to_string(run) + "," +
         vc + ",1x" + std::to_string(gpus) + "," + std::to_string(priority) + ",V100\n";
  return s;
}

// Trace::finish moves time 0 to the first submission: `first` puts it back.
std::shared_ptr<Trace> forecast_arrivals(const std::string& rows, double first) {
  auto t = std::make_shared<Trace>();
  TraceError e;
  EXPECT_TRUE(
      read_native_csv("job_id,submit_time,duration,vc,members,priority,leaf_cell_type\n" + rows,
                      "arrivals.csv", {}, *t, e))
      << e.message;
  t->finish();
  for (auto& j : t->jobs) j.submit += first;
  return t;
}

TEST(ForecastSeries, LabUsesTheRunningGroupsGpusUntilEachEnds) {
  Lab lab = lab_state();
  const double now = 1'800'000'000;
  const auto ends = forecast_lab_ends(now);
  ForecastRequest req;
  req.current = lab.model;
  req.state = forecast_state(lab.live, lab.model.get(), ends, {}, now);
  req.horizon_s = 86400;
  auto r = forecast(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ConfigForecast& c = r->configs[0];
  ASSERT_EQ(c.step_s, 900);
  ASSERT_EQ(c.series.size(), c.vcs.size());
  for (const std::string vc : {"prod", "research"}) {
    const VcSeries& s = forecast_series_of(c, vc);
    ASSERT_EQ(s.used_gpus.size(), 96u) << vc;
    ASSERT_EQ(s.waiting_jobs.size(), 96u) << vc;
    double hours = 0;
    for (size_t b = 0; b < 96; ++b) {
      // Every end is a whole step: a group counts in a step fully or not at all.
      const double t = static_cast<double>(b) * 900;
      double expected = 0;
      for (const auto& g : req.state.running) {
        if (g.group.vc != vc) continue;
        auto it = ends.find(g.group.name);
        if (it == ends.end() || it->second - now > t)
          expected += static_cast<double>(forecast_group_gpus(g.group));
      }
      EXPECT_NEAR(s.used_gpus[b], expected, 1e-9) << vc << " step " << b;
      EXPECT_EQ(s.waiting_jobs[b], 0) << vc << " step " << b;
      hours += s.used_gpus[b] * 900 / 3600;
    }
    EXPECT_TRUE(s.preempted_at.empty()) << vc;
    // The area under the series is the table's GPU-hours.
    for (const auto& f : c.vcs) {
      if (f.vc == vc) {
        EXPECT_NEAR(hours, f.used_gpu_hours, 1e-6) << vc;
      }
    }
  }
  // Now: prod's train-a (16), train-b, urgent (8 each), infer-c (4), pin-1 (2);
  // research's res-1 (8), opp-1 and k-1 (4 each). At 30 min res-1 has ended.
  EXPECT_EQ(forecast_series_of(c, "prod").used_gpus[0], 38);
  EXPECT_EQ(forecast_series_of(c, "research").used_gpus[0], 16);
  EXPECT_EQ(forecast_series_of(c, "research").used_gpus[1], 16);
  EXPECT_EQ(forecast_series_of(c, "research").used_gpus[2], 8);
  // After 6 h only opp-1, whose end is not known, runs on.
  EXPECT_EQ(forecast_series_of(c, "prod").used_gpus[24], 0);
  EXPECT_EQ(forecast_series_of(c, "research").used_gpus[95], 4);
  // The series are in -o json, step by step.
  auto j = forecast_json(*r);
  ASSERT_TRUE(j["configs"][0].contains("series"));
  EXPECT_EQ(j["configs"][0]["series"]["stepSeconds"], 900);
  EXPECT_EQ(j["configs"][0]["series"]["vcs"][0]["usedGpus"].size(), 96u);
}

TEST(ForecastSeries, WaitingJobsCountUntilTheyStart) {
  Lab lab = lab_state();
  const double now = 1'800'000'000;
  // big-wait waits for train-a's end (2 h), k-wait for k-1's (6 h).
  std::vector<ForecastWaiting> waiting = {
      {"big-wait", forecast_req("big-wait", "prod", 100, 1, 8), 600, 3600},
      {"k-wait", forecast_req("k-wait", "research", 20, 1, 4, "K80"), 30, 3600}};
  ForecastRequest req;
  req.current = lab.model;
  req.state = forecast_state(lab.live, lab.model.get(), forecast_lab_ends(now), waiting, now);
  req.horizon_s = 86400;
  auto r = forecast(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ConfigForecast& c = r->configs[0];
  ASSERT_EQ(c.waiting_start_s, (std::vector<double>{7200, 21600}));
  const VcSeries& prod = forecast_series_of(c, "prod");
  const VcSeries& research = forecast_series_of(c, "research");
  for (size_t b = 0; b < 96; ++b) {
    EXPECT_EQ(prod.waiting_jobs[b], b < 8 ? 1 : 0) << "step " << b;
    EXPECT_EQ(research.waiting_jobs[b], b < 24 ? 1 : 0) << "step " << b;
  }
  // big-wait takes train-a's place for an hour: 8 of train-a's 16 GPUs again.
  EXPECT_EQ(prod.used_gpus[7], 38 - 4 - 0);  // infer-c (4) ended at 1 h
  EXPECT_EQ(prod.used_gpus[8], 38 - 4 - 16 + 8);
  EXPECT_EQ(prod.used_gpus[12], 38 - 4 - 16 - 8);  // big-wait and train-b ended at 3 h
}

TEST(ForecastSeries, GuaranteedJobsNeverUseMoreThanTheirVcsShare) {
  Lab lab = lab_state();
  const double now = 1'800'000'000;
  ForecastRequest req;
  req.current = lab.model;
  req.state = forecast_state(lab.live, lab.model.get(), forecast_lab_ends(now), {}, now);
  // Guaranteed work only: opp-1, the one opportunistic group, left out; then
  // more arrivals than either VC holds.
  auto& running = req.state.running;
  running.erase(std::remove_if(running.begin(), running.end(),
                               [](const ForecastRunning& g) { return g.group.priority < 0; }),
                running.end());
  ASSERT_EQ(running.size(), 7u);
  req.arrivals = forecast_arrivals(forecast_arrivals_csv("prod", 30, 0, 5400, 8) +
                                       forecast_arrivals_csv("research", 30, 100, 5400, 8),
                                   0);
  req.horizon_s = 86400;
  auto r = forecast(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ConfigForecast& c = r->configs[0];
  for (const auto& f : c.vcs) {
    const VcSeries& s = forecast_series_of(c, f.vc);
    double most = 0, queued = 0;
    for (size_t b = 0; b < s.used_gpus.size(); ++b) {
      EXPECT_LE(s.used_gpus[b], static_cast<double>(f.guaranteed_gpus) + 1e-9)
          << f.vc << " step " << b;
      most = std::max(most, s.used_gpus[b]);
      queued += s.waiting_jobs[b];
    }
    // The VC was full (a node cell of 8 short of its share at most, v7 being
    // bad), and jobs queued.
    EXPECT_GE(most, static_cast<double>(f.guaranteed_gpus) - 16) << f.vc;
    EXPECT_GT(queued, 0) << f.vc;
  }
}

TEST(ForecastSeries, ProposedConfigDiffersWhereProdShrinks) {
  Lab lab = lab_state();
  const double now = 1'800'000'000;
  ForecastRequest req;
  req.current = lab.model;
  req.proposed = model_from_yaml(forecast_read("tests/integration/hived/scenarios/lab-moved.yaml"));
  req.state = forecast_state(lab.live, lab.model.get(), forecast_lab_ends(now), {}, now);
  req.arrivals = forecast_arrivals(forecast_arrivals_csv("prod", 20, 3600, 7200, 8), 3600);
  req.horizon_s = 86400;
  auto r = forecast(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->configs.size(), 2u);
  const VcSeries& cur = forecast_series_of(r->configs[0], "prod");
  const VcSeries& prop = forecast_series_of(r->configs[1], "prod");
  // The same start, then prod runs fewer of its queued jobs at once on three
  // node cells than on four: more of them wait, and for longer.
  EXPECT_EQ(cur.used_gpus[0], prop.used_gpus[0]);
  double cur_wait = 0, prop_wait = 0;
  size_t differ = 0, cur_last = 0, prop_last = 0;
  for (size_t b = 0; b < 96; ++b) {
    cur_wait += cur.waiting_jobs[b];
    prop_wait += prop.waiting_jobs[b];
    if (cur.waiting_jobs[b] > 0) cur_last = b;
    if (prop.waiting_jobs[b] > 0) prop_last = b;
    differ += std::abs(cur.used_gpus[b] - prop.used_gpus[b]) > 0.5;
  }
  EXPECT_GT(differ, 4u);
  EXPECT_GT(prop_wait, cur_wait);
  EXPECT_GT(prop_last, cur_last);
}

TEST(ForecastSeries, PreemptionsAreMarkedWhenTheyHappen) {
  Lab lab = lab_state();
  const double now = 1'800'000'000;
  ForecastRequest req;
  req.current = lab.model;
  req.state = forecast_state(lab.live, lab.model.get(), forecast_lab_ends(now), {}, now);
  // At 10 min an 8-GPU job above every running group's priority: prod's four
  // node cells are taken, so one of its groups is preempted then.
  req.arrivals = forecast_arrivals("vip,600,3600,prod,1x8,1000,V100\n", 600);
  req.horizon_s = 86400;
  auto r = forecast(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ConfigForecast& c = r->configs[0];
  const VcSeries& prod = forecast_series_of(c, "prod");
  ASSERT_FALSE(prod.preempted_at.empty());
  EXPECT_EQ(prod.preempted_at[0], 600);
  size_t marks = 0;
  for (const auto& s : c.series) marks += s.preempted_at.size();
  EXPECT_EQ(static_cast<int64_t>(marks), c.overall.preemptions);
  // The preempted group queues again: prod has a job waiting after 10 min.
  EXPECT_GT(prod.waiting_jobs[0], 0);
}

// A well-formedness check of an XML document: one root element, every tag
// closed in order, attribute values quoted, only the five named entities or
// character references, no stray '<' or '&'.
std::string forecast_xml_problem(const std::string& x) {
  std::vector<std::string> open;
  size_t roots = 0, i = 0;
  auto entity_ok = [&](size_t at) {
    const size_t semi = x.find(';', at);
    if (semi == std::string::npos || semi - at > 10) return false;
    const std::string e = x.substr(at + 1, semi - at - 1);
    return e == "amp" || e == "lt" || e == "gt" || e == "quot" || e == "apos" ||
           (!e.empty() && e[0] == '#');
  };
  while (i < x.size()) {
    if (x[i] == '&' && !entity_ok(i)) return "bad entity at " + std::to_string(i);
    if (x[i] != '<') {
      ++i;
      continue;
    }
    const size_t end = x.find('>', i);
    if (end == std::string::npos) return "unclosed tag at " + std::to_string(i);
    std::string tag = x.substr(i + 1, end - i - 1);
    if (tag.find('<') != std::string::npos) return "'<' inside a tag at " + std::to_string(i);
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes " + (open.empty() ? "nothing" : open.back());
      open.pop_back();
    } else if (tag[0] != '?' && tag[0] != '!') {
      const bool self = tag.back() == '/';
      const std::string name = tag.substr(0, tag.find_first_of(" \n/"));
      if (open.empty()) ++roots;
      // Attributes: name="value" pairs.
      size_t quotes = 0;
      for (char ch : tag) quotes += ch == '"';
      if (quotes % 2) return "unbalanced quotes in <" + name + ">";
      if (!self) open.push_back(name);
    }
    i = end + 1;
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  if (roots != 1) return std::to_string(roots) + " root elements";
  return "";
}

TEST(ForecastReport, SvgIsWellFormedAndNamesEveryVc) {
  Lab lab = lab_state();
  const double now = 1'800'000'000;
  ForecastRequest req;
  req.current = lab.model;
  req.proposed = model_from_yaml(forecast_read("tests/integration/hived/scenarios/lab-moved.yaml"));
  req.state = forecast_state(lab.live, lab.model.get(), forecast_lab_ends(now), {}, now);
  req.arrivals = forecast_arrivals(
      "vip,600,3600,prod,1x8,1000,V100\n" + forecast_arrivals_csv("research", 10, 900, 3600, 8),
      600);
  auto r = forecast(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string svg = forecast_svg(*r);
  EXPECT_EQ(forecast_xml_problem(svg), "") << svg.substr(0, 2000);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  for (const std::string name :
       {"VC prod: GPUs in use", "VC prod: jobs waiting", "VC research: GPUs in use",
        "VC research: jobs waiting", "current", "proposed", "the cluster: GPUs in use"})
    EXPECT_NE(svg.find(name), std::string::npos) << name;
  // prod's guarantee differs (40 -> 32): one dashed line per config.
  EXPECT_NE(svg.find("current guaranteed 40"), std::string::npos);
  EXPECT_NE(svg.find("proposed guaranteed 32"), std::string::npos);
  // The preemption at 10 min is marked.
  EXPECT_NE(svg.find("a job preempted at 10.0m from now"), std::string::npos);
  EXPECT_EQ(svg.find("<script"), std::string::npos);

  const std::string html = forecast_html_report(*r, "1.2.3");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  for (const std::string external : {"src=", "href=", "<link", "url("})
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  // The table as the text shows it: the same cells.
  for (const std::string cell :
       {"<th class=\"l\">VC</th>", "<td class=\"l\">prod</td>", "<td class=\"l\">research</td>",
        "<td>40 -&gt; 32</td>", "VC prod: GPUs in use", "VC research: jobs waiting", "1.2.3"})
    EXPECT_NE(html.find(cell), std::string::npos) << cell;
  EXPECT_NE(forecast_text(*r).find("40 -> 32"), std::string::npos);
  // Every chart in the page is a well-formed SVG element too.
  size_t charts = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
    const size_t end = html.find("</svg>", at);
    ASSERT_NE(end, std::string::npos);
    EXPECT_EQ(forecast_xml_problem(html.substr(at, end + 6 - at)), "");
    ++charts;
  }
  EXPECT_EQ(charts, 6u);  // the cluster, prod, research: two each
}

TEST(ForecastReport, WithoutStepsThereIsNoSeries) {
  Lab lab = lab_state();
  ForecastRequest req;
  req.current = lab.model;
  req.state = forecast_state(lab.live, lab.model.get(), {}, {}, 0);
  req.steps = 0;
  auto r = forecast(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->configs[0].series.empty());
  EXPECT_FALSE(forecast_json(*r)["configs"][0].contains("series"));
  EXPECT_EQ(forecast_xml_problem(forecast_svg(*r)), "");
}

}  // namespace
}  // namespace pai::sim
