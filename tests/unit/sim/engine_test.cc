// The discrete-event engine: the sharing anomaly end to end, preemption and
// node failures with requeue and lost GPU time, FIFO within priority and
// backfill, overflow, unschedulable jobs, exact metrics, determinism.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "scheduler/helpers.h"
#include "sim/engine.h"
#include "sim/fidelity.h"
#include "sim/generate.h"
#include "sim/report.h"
#include "sim/trace.h"

namespace pai::sim {
namespace {

using scheduler::test::kTwoSkuConfig;
using scheduler::test::model_from_yaml;

std::string read_source(const std::string& rel) {
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

Trace csv_trace(const std::string& text) {
  Trace t;
  TraceError e;
  EXPECT_TRUE(read_native_csv(text, "test.csv", {}, t, e))
      << e.file << ":" << e.line << ":" << e.column << ": " << e.message;
  return t;
}

PolicyRun run(const config::HivedModel& m, const Trace& t, const std::string& policy,
              SimOptions opt = {}) {
  Simulator sim(m, t, opt);
  auto prepared = sim.prepare();
  EXPECT_TRUE(prepared.ok()) << prepared.error().message;
  PolicyRun r;
  auto ran = sim.run(policy, r);
  EXPECT_TRUE(ran.ok()) << ran.error().message;
  return r;
}

size_t job(const Trace& t, const std::string& id) {
  for (size_t i = 0; i < t.jobs.size(); ++i)
    if (t.id(t.jobs[i]) == id) return i;
  ADD_FAILURE() << "no job " << id;
  return 0;
}

TEST(Engine, SharingAnomalyExample) {
  auto m = model_from_yaml(read_source("examples/clusters/heterogeneous/hivedscheduler.yaml"));
  Trace t = csv_trace(read_source("examples/traces/sharing-anomaly.csv"));
  const size_t prod = job(t, "production-train");
  PolicyRun quota = run(*m, t, "quota"), hived = run(*m, t, "hived");
  // Under quota production waits until the first interns job ends (10h after it started at 0).
  EXPECT_EQ(quota.jobs[prod].first_start - t.jobs[prod].submit, 36000 - 600);
  EXPECT_EQ(quota.overall.anomaly_jobs, 1);
  EXPECT_EQ(quota.jobs[prod].anomaly_wait, 36000 - 600);
  EXPECT_EQ(hived.jobs[prod].first_start, t.jobs[prod].submit);
  EXPECT_EQ(hived.overall.anomaly_jobs, 0);
  EXPECT_EQ(hived.overall.queue_delay.max, 0);
  for (const PolicyRun* r : {&quota, &hived}) EXPECT_EQ(r->overall.finished, 10);
}

TEST(Engine, PreemptionRequeuesTheWholeGroupAndCountsLostTime) {
  auto m = model_from_yaml(kTwoSkuConfig);
  Trace t = csv_trace(
      "job_id,submit_time,duration,vc,members,priority\n"
      "low,0,1000,b,2x4,10\n"
      "high,100,200,b,1x4,500\n");
  for (const char* policy : {"hived", "private"}) {
    PolicyRun r = run(*m, t, policy);
    const JobOutcome& low = r.jobs[job(t, "low")];
    const JobOutcome& high = r.jobs[job(t, "high")];
    EXPECT_EQ(high.first_start, 100) << policy;
    EXPECT_EQ(low.preemptions, 1) << policy;
    EXPECT_EQ(low.lost_gpu_seconds, 8 * 100) << policy;
    EXPECT_EQ(low.first_start, 0) << policy;
    EXPECT_EQ(low.finish, 300 + 1000) << policy;  // restarts when the rack is whole again
    EXPECT_EQ(r.overall.preemptions, 1) << policy;
  }
}

TEST(Engine, PreemptionRepliesOneNodeAtATimeAsHivedDoes) {
  auto m = model_from_yaml(kTwoSkuConfig);
  // b's rack has two 4-GPU nodes; the two low jobs take one each, high needs both.
  Trace t = csv_trace(
      "job_id,submit_time,duration,vc,members,priority\n"
      "low1,0,1000,b,1x4,10\n"
      "low2,0,1000,b,1x4,10\n"
      "high,100,200,b,2x4,500\n");
  SimOptions per_node;
  per_node.preempt_one_node = true;
  PolicyRun all = run(*m, t, "hived"), one = run(*m, t, "hived", per_node);
  for (const PolicyRun* r : {&all, &one}) {
    EXPECT_EQ(r->jobs[job(t, "high")].first_start, 100);
    EXPECT_EQ(r->jobs[job(t, "low1")].preemptions, 1);
    EXPECT_EQ(r->jobs[job(t, "low2")].preemptions, 1);
    EXPECT_EQ(r->overall.preemptions, 2);
  }
  // All at once: high asks, is told both victims, asks again and is bound. One
  // node at a time: one more reply, naming the second node's victim.
  EXPECT_EQ(one.decisions, all.decisions + 1);
  // A preemption with its victims on one node is the same either way.
  Trace single = csv_trace(
      "job_id,submit_time,duration,vc,members,priority\n"
      "low,0,1000,b,2x4,10\n"
      "high,100,200,b,1x4,500\n");
  PolicyRun a = run(*m, single, "hived"), b = run(*m, single, "hived", per_node);
  EXPECT_EQ(a.decisions, b.decisions);
  EXPECT_EQ(b.jobs[job(single, "high")].first_start, 100);
}

// simulate --suggested-fraction: hived and the baselines place only on the
// nodes of each decision's suggested set.
TEST(Engine, SuggestedNodesKeepHivedOffTheNodesKubernetesFilteredOut) {
  auto m = model_from_yaml(kTwoSkuConfig);
  Trace t = csv_trace("job_id,submit_time,duration,vc,members\nj,0,100,b,1x4\nk,10,100,b,1x4\n");
  SimOptions none;
  none.suggested_fraction = 0;  // no node passes Kubernetes' filters
  for (const char* policy : {"hived", "quota", "k8s-default", "private"}) {
    EXPECT_EQ(run(*m, t, policy, none).overall.finished, 0) << policy;
    EXPECT_EQ(run(*m, t, policy).overall.finished, 2) << policy;
  }
  // Half the nodes: the jobs run, every decision with a set it avoids, the same
  // way each time.
  SimOptions some;
  some.suggested_fraction = 0.5;
  some.suggested_seed = 3;
  std::ostringstream stream;
  int made = 0;
  some.make_policy =
      [&](const std::string& name,
          const config::HivedModel& model) -> util::Result<std::unique_ptr<scheduler::Policy>> {
    auto p = scheduler::make_policy(name, model);
    if (!p.ok()) return p;
    return made++ == 0 ? make_recording_policy(std::move(*p), stream) : std::move(*p);
  };
  PolicyRun a = run(*m, t, "hived", some);
  EXPECT_EQ(a.overall.finished, 2);
  const std::string text = stream.str();
  size_t schedules = 0, with_sets = 0, avoiding = 0;
  for (size_t pos = 0; (pos = text.find("\"op\":\"schedule\"", pos)) != std::string::npos; ++pos)
    ++schedules;
  for (const char* key : {"\"suggestedNodes\"", "\"nonSuggestedNodes\""})
    for (size_t pos = 0; (pos = text.find(key, pos)) != std::string::npos; ++pos) ++with_sets;
  for (size_t pos = 0;
       (pos = text.find("\"ignoreSuggestedNodes\":false", pos)) != std::string::npos; ++pos)
    ++avoiding;
  EXPECT_GT(schedules, 0u);
  EXPECT_EQ(with_sets, schedules);
  EXPECT_EQ(avoiding, schedules);
  some.make_policy = nullptr;
  PolicyRun b = run(*m, t, "hived", some);
  EXPECT_EQ(a.decisions, b.decisions);
  EXPECT_EQ(a.jobs[job(t, "k")].first_start, b.jobs[job(t, "k")].first_start);
}

// Counts the placements a policy returns outside its request's suggested nodes
// (into counts the test owns: the simulator destroys its policies).
struct SuggestedCounts {
  int64_t with_sets = 0, placements = 0, outside = 0;
};
class SuggestedOnly final : public scheduler::Policy {
 public:
  SuggestedOnly(std::unique_ptr<scheduler::Policy> p, SuggestedCounts& c)
      : p_(std::move(p)), c_(c) {}
  std::string_view name() const override { return p_->name(); }
  const scheduler::ClusterShape& cluster() const override { return p_->cluster(); }
  scheduler::ScheduleResult schedule(const scheduler::GroupRequest& r,
                                     bool allow_preemption) override {
    scheduler::ScheduleResult res = p_->schedule(r, allow_preemption);
    if (r.suggested_nodes) ++c_.with_sets;
    if (r.suggested_nodes && (res.outcome == scheduler::Outcome::Bound ||
                              res.outcome == scheduler::Outcome::Preempting)) {
      // A group bound earlier keeps its nodes; a new placement must be suggested.
      if (placed.insert(r.affinity_group).second)
        for (const auto& pod : res.pods)
          if (std::find(r.suggested_nodes->begin(), r.suggested_nodes->end(), pod.node) ==
              r.suggested_nodes->end())
            ++c_.outside;
      if (res.outcome == scheduler::Outcome::Preempting) placed.erase(r.affinity_group);
      ++c_.placements;
    }
    return res;
  }
  scheduler::ScheduleResult schedule_pod(std::string_view g, int32_t n) override {
    return p_->schedule_pod(g, n);
  }
  bool release(std::string_view g) override {
    placed.erase(std::string(g));
    return p_->release(g);
  }
  void set_node_health(int32_t n, bool h) override { p_->set_node_health(n, h); }
  uint64_t release_epoch() const override { return p_->release_epoch(); }
  scheduler::UsageSummary usage() const override { return p_->usage(); }
  bool has_group(std::string_view g) const override { return p_->has_group(g); }
  std::string check_invariants() const override { return p_->check_invariants(); }

 private:
  std::unique_ptr<scheduler::Policy> p_;
  SuggestedCounts& c_;
  std::set<std::string> placed;
};

// On a generated trace the baselines get a set at every decision and never
// place a group outside it; the sets change their results.
TEST(Engine, BaselinesPlaceOnlyOnSuggestedNodes) {
  auto m = model_from_yaml(kTwoSkuConfig);
  GenerateOptions g;
  g.jobs = 150;
  g.seed = 4;
  Trace t = generate_trace(g, cluster_template(*m));
  for (const char* policy : {"quota", "k8s-default", "private"}) {
    SimOptions opt;
    opt.suggested_fraction = 0.6;
    opt.suggested_seed = 2;
    SuggestedCounts seen;
    int made = 0;
    opt.make_policy =
        [&](const std::string& name,
            const config::HivedModel& model) -> util::Result<std::unique_ptr<scheduler::Policy>> {
      auto p = scheduler::make_policy(name, model);
      if (made++ > 0 || !p.ok()) return p;  // the second policy is the probe
      return std::unique_ptr<scheduler::Policy>(
          std::make_unique<SuggestedOnly>(std::move(*p), seen));
    };
    PolicyRun a = run(*m, t, policy, opt);
    EXPECT_GT(seen.placements, 50) << policy;
    EXPECT_GE(seen.with_sets, a.decisions) << policy;
    EXPECT_EQ(seen.outside, 0) << policy;
    PolicyRun b = run(*m, t, policy);
    EXPECT_GT(a.decisions, b.decisions) << policy << ": filtered decisions wait more often";
  }
}

TEST(Engine, NodeFailuresKillAndRestartJobs) {
  auto m = model_from_yaml(kTwoSkuConfig);
  Trace t = csv_trace("job_id,submit_time,duration,vc,members\nj,0,100,b,1x4\nk,0,100,a,1x4\n");
  SimOptions opt;
  auto shape = scheduler::describe_cluster(*m);
  opt.faults.events = {{50, shape.find_node("v1"), false}, {70, shape.find_node("v1"), true}};
  for (const char* policy : {"hived", "quota"}) {
    PolicyRun r = run(*m, t, policy, opt);
    EXPECT_EQ(r.node_failures, 1) << policy;
    EXPECT_EQ(r.overall.failure_restarts, 1) << policy;
    EXPECT_EQ(r.overall.lost_gpu_seconds, 4 * 50) << policy;
    EXPECT_EQ(r.overall.finished, 2) << policy;
    // The killed job restarts at once on another node and runs its full 100s again.
    double finish = std::max(r.jobs[0].finish, r.jobs[1].finish);
    EXPECT_EQ(finish, 150) << policy;
  }
}

TEST(Engine, RandomFaultModelIsSeeded) {
  auto m = model_from_yaml(kTwoSkuConfig);
  GenerateOptions g;
  g.jobs = 200;
  Trace t = generate_trace(g, cluster_template(*m));
  SimOptions opt;
  auto faults = parse_random_faults("random:mtbf=2d,mttr=2h,seed=3");
  ASSERT_TRUE(faults.ok()) << faults.error().message;
  opt.faults = *faults;
  EXPECT_EQ(opt.faults.mtbf, 2 * 86400);
  PolicyRun a = run(*m, t, "hived", opt), b = run(*m, t, "hived", opt);
  EXPECT_GT(a.node_failures, 0);
  EXPECT_EQ(a.node_failures, b.node_failures);
  EXPECT_EQ(a.overall.lost_gpu_seconds, b.overall.lost_gpu_seconds);
  EXPECT_EQ(a.overall.finished + a.overall.unschedulable + a.overall.never_started, 200);
  EXPECT_FALSE(parse_random_faults("random:mtbf=soon").ok());
  EXPECT_FALSE(parse_random_faults("random:mtbs=2d").ok());
}

TEST(Engine, FifoWithinPriorityAndOptionalBackfill) {
  auto m = model_from_yaml(kTwoSkuConfig);
  Trace t = csv_trace(
      "job_id,submit_time,duration,vc,members,priority\n"
      "half,0,1000,b,1x4,100\n"
      "whole,10,100,b,2x4,100\n"
      "small,20,50,b,1x1,100\n"
      "urgent,30,10,b,1x1,200\n");
  PolicyRun strict = run(*m, t, "hived");
  // The rack's second node is free, but "whole" needs both: the queue is blocked behind it.
  EXPECT_EQ(strict.jobs[job(t, "whole")].first_start, 1000);
  EXPECT_EQ(strict.jobs[job(t, "small")].first_start, 1100);
  // A higher priority goes to the head of the VC's queue, but cannot pass a running job.
  EXPECT_EQ(strict.jobs[job(t, "urgent")].first_start, 30);
  SimOptions opt;
  opt.backfill = true;
  opt.backfill_depth = 8;
  PolicyRun backfill = run(*m, t, "hived", opt);
  EXPECT_EQ(backfill.jobs[job(t, "small")].first_start, 20);
  EXPECT_EQ(backfill.jobs[job(t, "whole")].first_start, 1000);
}

TEST(Engine, OverflowRunsWaitingJobsAsOpportunisticWork) {
  auto m = model_from_yaml(kTwoSkuConfig);
  // c owns two 2-GPU sockets: the third 2-GPU job has to wait, or overflow.
  Trace t = csv_trace(
      "job_id,submit_time,duration,vc,members,priority,leaf_cell_type\n"
      "c1,0,100,c,1x2,100,V100\n"
      "c2,0,100,c,1x2,100,V100\n"
      "c3,0,100,c,1x2,100,V100\n"
      "cbig,0,100,c,1x4,100,V100\n"
      "b1,50,100,b,2x4,100,V100\n");
  PolicyRun plain = run(*m, t, "hived");
  EXPECT_EQ(plain.jobs[job(t, "c3")].first_start, 100);
  // A 4-GPU pod never fits c's 2-GPU cells...
  EXPECT_EQ(plain.jobs[job(t, "cbig")].state, JobState::Unschedulable);
  SimOptions opt;
  opt.overflow = true;
  PolicyRun over = run(*m, t, "hived", opt);
  const JobOutcome& c3 = over.jobs[job(t, "c3")];
  EXPECT_EQ(c3.first_start, 0);
  EXPECT_EQ(c3.overflow, 1);
  // b's guaranteed job starts at once, preempting the opportunistic one only if it must.
  EXPECT_EQ(over.jobs[job(t, "b1")].first_start, 50);
  // ...but it can run as opportunistic work.
  EXPECT_EQ(over.jobs[job(t, "cbig")].state, JobState::Finished);
  EXPECT_EQ(over.overall.overflow_starts, 2);
}

TEST(Engine, JobsThatCanNeverRunAreCountedWithTheirReason) {
  auto m = model_from_yaml(kTwoSkuConfig);
  Trace t = csv_trace(
      "job_id,submit_time,duration,vc,members,priority,leaf_cell_type\n"
      "ok,0,10,b,1x1,100,\n"
      "nowhere,0,10,zz,1x1,100,\n"
      "huge,0,10,b,3x8,100,\n"
      "wide,0,10,b,1x16,100,\n"
      "typo,0,10,b,1x1,100,A100\n");
  SimOptions opt;
  opt.vc_map = "strict";
  for (const char* policy : {"hived", "quota", "k8s-default", "private"}) {
    PolicyRun r = run(*m, t, policy, opt);
    EXPECT_EQ(r.overall.finished, 1) << policy;
    EXPECT_EQ(r.overall.unschedulable, 4) << policy;
    EXPECT_EQ(r.jobs[job(t, "nowhere")].state, JobState::Unschedulable);
    EXPECT_NE(
        r.reasons[static_cast<size_t>(r.jobs[job(t, "nowhere")].reason)].find("not in the cluster"),
        std::string::npos);
    EXPECT_NE(r.reasons[static_cast<size_t>(r.jobs[job(t, "typo")].reason)].find(
                  "whole cluster does not have"),
              std::string::npos);
    EXPECT_EQ(r.unmapped.jobs, 1) << policy;
  }
}

TEST(Engine, TheEmptyClusterProbeSaysWhyAndIsAskedOncePerShape) {
  auto m = model_from_yaml(kTwoSkuConfig);
  // One-member shapes and a shape of two members (its own key), each twice.
  Trace t = csv_trace(
      "job_id,submit_time,duration,vc,members,priority,leaf_cell_type\n"
      "huge,0,10,b,3x8,100,\n"
      "huge2,1,10,b,3x8,100,\n"
      "ok,2,10,b,1x4,100,\n"
      "two,3,10,c,1x2+1x4,100,V100\n"
      "two2,4,10,c,1x2+1x4,100,V100\n"
      "fits,5,10,c,1x2+1x2,100,V100\n");
  PolicyRun r = run(*m, t, "hived");
  auto why = [&](const char* name) {
    const JobOutcome& o = r.jobs[job(t, name)];
    EXPECT_EQ(o.state, JobState::Unschedulable) << name;
    return o.reason < 0 ? std::string() : r.reasons[static_cast<size_t>(o.reason)];
  };
  EXPECT_EQ(why("huge"),
            "does not fit even in an empty cluster: insufficient capacity when scheduling in VC b "
            "(chain V100-RACK)");
  EXPECT_EQ(why("huge2"), why("huge"));
  EXPECT_EQ(why("two"),
            "does not fit even in an empty cluster: insufficient capacity when scheduling in VC c "
            "(chain V100-RACK)");
  EXPECT_EQ(why("two2"), why("two"));
  EXPECT_EQ(r.jobs[job(t, "ok")].state, JobState::Finished);
  EXPECT_EQ(r.jobs[job(t, "fits")].state, JobState::Finished);
  EXPECT_EQ(r.overall.unschedulable, 4);
  EXPECT_EQ(r.unschedulable_by_reason.size(), 2u);
}

TEST(Engine, UtilisationAndFragmentationAreExact) {
  auto m = model_from_yaml(kTwoSkuConfig);
  Trace t = csv_trace("job_id,submit_time,duration,vc,members\na,0,1000,b,1x4\n");
  PolicyRun r = run(*m, t, "hived");
  EXPECT_EQ(r.gpus, 32);
  EXPECT_DOUBLE_EQ(r.gpu_utilization, 4.0 * 1000 / (32.0 * 1000));
  EXPECT_DOUBLE_EQ(r.fragmentation, 0);
  EXPECT_EQ(r.makespan, 1000);
  ASSERT_FALSE(r.used_gpus.empty());
  EXPECT_DOUBLE_EQ(r.used_gpus[0], 4);
  // A job that waits for its VC leaves idle GPUs of its type.
  Trace w = csv_trace("job_id,submit_time,duration,vc,members\na,0,1000,c,2x2\nb,0,1000,c,1x2\n");
  PolicyRun rw = run(*m, w, "hived");
  EXPECT_DOUBLE_EQ(rw.fragmentation, (32.0 - 4.0) * 1000 / (32.0 * 2000));
}

TEST(Engine, VcMappingAssignsUnknownVcsByDemand) {
  auto m = model_from_yaml(kTwoSkuConfig);
  Trace t = csv_trace(
      "job_id,submit_time,duration,vc,members\n"
      "x1,0,1000,hash-x,1x4\nx2,0,1000,hash-x,1x4\ny1,0,10,hash-y,1x1\nz,0,10,a,1x1\n");
  Simulator sim(*m, t, {});
  ASSERT_TRUE(sim.prepare().ok());
  const auto& map = sim.vc_mapping();
  EXPECT_EQ(
      sim.cluster()
          .vcs[static_cast<size_t>(map.to_cluster[static_cast<size_t>(t.jobs[job(t, "z")].vc)])]
          .name,
      "a");
  EXPECT_GE(map.to_cluster[static_cast<size_t>(t.jobs[job(t, "x1")].vc)], 0);
  EXPECT_GE(map.to_cluster[static_cast<size_t>(t.jobs[job(t, "y1")].vc)], 0);
  EXPECT_EQ(map.notes.size(), 2u);
  SimOptions explicit_map;
  explicit_map.vc_map = "hash-x=c,hash-y=b";
  Simulator sim2(*m, t, explicit_map);
  ASSERT_TRUE(sim2.prepare().ok());
  EXPECT_EQ(sim2.vc_mapping().to_cluster[static_cast<size_t>(t.jobs[job(t, "x1")].vc)],
            sim2.cluster().find_vc("c"));
  SimOptions bad;
  bad.vc_map = "hash-x=nope";
  Simulator sim3(*m, t, bad);
  auto refused = sim3.prepare();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("no virtual cluster \"nope\""), std::string::npos);
  // The hint lists the VCs there are, so the user need not open the config.
  EXPECT_EQ(refused.error().hint, "the cluster's virtual clusters: a, b, c");
}

TEST(Engine, ProgressIsReportedAsJobsArriveAndOnceAtTheEnd) {
  auto m = model_from_yaml(read_source("examples/clusters/heterogeneous/hivedscheduler.yaml"));
  GenerateOptions g;
  g.jobs = 1000;
  g.seed = 3;
  Trace t = generate_trace(g, cluster_template(*m));
  SimOptions opt;
  std::vector<std::pair<size_t, size_t>> calls;
  opt.on_progress = [&](size_t arrived, size_t total) { calls.emplace_back(arrived, total); };
  run(*m, t, "hived", opt);
  ASSERT_GE(calls.size(), 100u);
  EXPECT_LE(calls.size(), 257u);  // about every 1/256 of the trace, and once at the end
  for (size_t i = 1; i < calls.size(); ++i) EXPECT_LE(calls[i - 1].first, calls[i].first);
  EXPECT_EQ(calls.back(), std::make_pair(size_t{1000}, size_t{1000}));
  EXPECT_EQ(calls.front().second, 1000u);
}

TEST(Engine, SameInputsGiveTheSameResult) {
  auto m = model_from_yaml(read_source("examples/clusters/heterogeneous/hivedscheduler.yaml"));
  GenerateOptions g;
  g.jobs = 400;
  g.seed = 9;
  g.opportunistic = 0.2;
  Trace t = generate_trace(g, cluster_template(*m));
  SimOptions opt;
  opt.overflow = true;
  for (const char* policy : {"hived", "quota", "k8s-default", "private"}) {
    PolicyRun a = run(*m, t, policy, opt), b = run(*m, t, policy, opt);
    ASSERT_EQ(a.jobs.size(), b.jobs.size());
    for (size_t i = 0; i < a.jobs.size(); ++i) {
      EXPECT_EQ(a.jobs[i].first_start, b.jobs[i].first_start) << policy << " job " << i;
      EXPECT_EQ(a.jobs[i].finish, b.jobs[i].finish) << policy << " job " << i;
    }
    EXPECT_EQ(a.decisions, b.decisions);
    EXPECT_EQ(a.overall.finished + a.overall.unschedulable + a.overall.never_started, 400)
        << policy;
  }
}

TEST(Summary, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  Summary s = summarize(v);
  EXPECT_EQ(s.n, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_EQ(s.p50, 50);
  EXPECT_EQ(s.p95, 95);
  EXPECT_EQ(s.p99, 99);
  EXPECT_EQ(s.max, 100);
  EXPECT_EQ(summarize({}).n, 0);
}

TEST(Summary, MergedRunsAreTheSortedValues) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::vector<double>> runs(rng() % 20);
    std::vector<double> all;
    for (auto& r : runs) {
      size_t n = rng() % 50;  // some runs empty
      for (size_t i = 0; i < n; ++i) {
        // Repeated values and a few fractions, as delays are.
        double x = static_cast<double>(rng() % 100) + (rng() % 4 == 0 ? 0.25 : 0);
        r.push_back(x);
        all.push_back(x);
      }
      std::sort(r.begin(), r.end());
    }
    std::vector<double> merged = merge_sorted(runs);
    std::sort(all.begin(), all.end());
    ASSERT_EQ(merged, all);
    Summary a = summarize_sorted(merged), b = summarize(all);
    EXPECT_EQ(a.n, b.n);
    EXPECT_EQ(a.mean, b.mean);
    EXPECT_EQ(a.p50, b.p50);
    EXPECT_EQ(a.p95, b.p95);
    EXPECT_EQ(a.p99, b.p99);
    EXPECT_EQ(a.max, b.max);
  }
  EXPECT_TRUE(merge_sorted({}).empty());
  EXPECT_EQ(summarize_sorted({}).n, 0);
}

TEST(Summary, SortedValuesAreThoseOfStdSort) {
  std::mt19937_64 rng(5);
  // Short vectors (sorted by std::sort) and long ones (by radix), with
  // negatives, zeros of both signs, repeats, infinities, huge and tiny values.
  for (size_t n : {0, 1, 7, 2047, 2048, 5000, 70000}) {
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<double> v(n);
      for (double& x : v) {
        switch (kind) {
          case 0:  // delays: whole seconds and a few fractions
            x = static_cast<double>(rng() % 100000) + (rng() % 4 == 0 ? 0.5 : 0);
            break;
          case 1:  // every sign and scale
            x = std::ldexp(static_cast<double>(rng() % 1000) - 500,
                           static_cast<int>(rng() % 200) - 100);
            break;
          case 2:  // few distinct values, so that digits repeat
            x = static_cast<double>(rng() % 3);
            break;
          default:
            x = rng() % 50 == 0   ? std::numeric_limits<double>::infinity()
                : rng() % 50 == 0 ? -std::numeric_limits<double>::infinity()
                : rng() % 20 == 0 ? -0.0
                                  : std::ldexp(static_cast<double>(rng() % (1u << 30)), -30);
        }
      }
      std::vector<double> want = v;
      std::sort(want.begin(), want.end());
      sort_values(v);
      ASSERT_EQ(v.size(), want.size());
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(v[i], want[i]) << "n " << n << " kind " << kind << " at " << i;
      EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
    }
  }
  // Negative zero before positive zero: equal values, so the order std::sort may give too.
  std::vector<double> zeros(3000, 0.0);
  zeros[1234] = -0.0;
  sort_values(zeros);
  EXPECT_TRUE(std::signbit(zeros[0]));
  EXPECT_FALSE(std::signbit(zeros[1]));
}

}  // namespace
}  // namespace pai::sim
