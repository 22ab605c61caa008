// Reason codes and wouldFit (lib/hived/reasons.h, why.h): each code in a
// hand-worked live state where it is the answer, the ranking where two apply,
// the kube-scheduler's reason from pod events, and wouldFit checked against
// the simulator run forward from the same live state with no arrivals.

#include "hived/reasons.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "hived/why.h"
#include "scheduler/helpers.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"
#include "sim/forecast.h"
#include "sim/forecast_input.h"
#include "util/json.h"

namespace pai::hived {
namespace {

using scheduler::test::req;

// One rack of four 8-GPU V100 nodes (n1-n4) and a 4-GPU K80 node (k1).
// VC a: two V100 node cells; VC b: one V100 node cell and four single V100
// cells; VC k: the K80 node.
constexpr const char* kReasonsConfig = R"(
physicalCluster:
  skuTypes:
    V100: {gpu: 1, cpu: 6, memory: 60Gi}
    K80: {gpu: 1, cpu: 4, memory: 40Gi}
  cellTypes:
    V100-NODE: {childCellType: V100, childCellNumber: 8, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 4}
    K80-NODE: {childCellType: K80, childCellNumber: 4, isNodeLevel: true}
  physicalCells:
  - cellType: V100-RACK
    cellChildren: [{cellAddress: n1}, {cellAddress: n2}, {cellAddress: n3}, {cellAddress: n4}]
  - {cellType: K80-NODE, cellAddress: k1}
virtualClusters:
  a:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 2}]
  b:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 1}, {cellType: V100-RACK.V100-NODE.V100, cellNumber: 4}]
  k:
    virtualCells: [{cellType: K80-NODE, cellNumber: 1}]
)";

struct ReasonsState {
  std::shared_ptr<config::HivedModel> model;
  LiveState live;
};

// The live state after `run` (scheduled in order, all bound) and `gone`
// (released afterwards), with `bad` nodes, as HiveD's inspect API shows it.
ReasonsState reasons_state(const std::string& yaml, const std::vector<scheduler::GroupRequest>& run,
                           const std::vector<std::string>& gone = {},
                           const std::vector<std::string>& bad = {}) {
  ReasonsState out;
  out.model = scheduler::test::model_from_yaml(yaml);
  auto made = scheduler::make_hived_policy(*out.model);
  EXPECT_TRUE(made.ok()) << made.error().message;
  auto policy = std::move(*made);
  for (const auto& n : bad) policy->set_node_health(policy->cluster().find_node(n), false);
  for (const auto& r : run)
    EXPECT_EQ(policy->schedule(r).outcome, scheduler::Outcome::Bound) << r.affinity_group;
  for (const auto& g : gone) EXPECT_TRUE(policy->release(g)) << g;
  auto state = *scheduler::snapshot_hived(*policy);
  out.live =
      index_live(cluster_status_of(*out.model, state), affinity_groups_of(*out.model, state));
  return out;
}

std::string lab_yaml() {
  std::ifstream f(PAI_SOURCE_DIR "/tests/integration/hived/scenarios/lab-hived.yaml");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The lab of why_test: prod's node cells held by train-a (two), train-b and
// infer-c (4 GPUs, priority 10); research runs res-1 on one of its three, and
// v7 (bad) is doomed to research.
const ReasonsState& reasons_lab() {
  static const ReasonsState l = reasons_state(
      lab_yaml(),
      {req("train-a", "prod", 300, {{2, 8}}, "V100"), req("train-b", "prod", 300, {{1, 8}}, "V100"),
       req("infer-c", "prod", 10, {{1, 4}}, "V100"),
       req("res-1", "research", 50, {{1, 8}}, "V100")},
      {}, {"v7"});
  return l;
}

WaitingAnswer reasons_judge(const ReasonsState& s, const scheduler::GroupRequest& r,
                            const ExpectedEnds& ends = {}) {
  auto a = judge_waiting(r.affinity_group, r, "the command line", *s.model, s.live, ends);
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message);
  return a.ok() ? a.value() : WaitingAnswer{};
}

std::vector<std::string> reasons_codes(const WaitingAnswer& a) {
  std::vector<std::string> out;
  for (const auto& r : a.reasons) out.emplace_back(to_string(r.code));
  return out;
}

bool reasons_has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The simulator from the same live state, no arrivals (a forecast over the
// longest horizon): when `r` starts, or -1 when it never does.
double reasons_simulated_start(const ReasonsState& s, const scheduler::GroupRequest& r,
                               const ExpectedEnds& ends) {
  sim::ForecastRequest in;
  in.current = s.model;
  in.horizon_s = sim::kMaxForecastHorizon;
  in.state = sim::forecast_state(s.live, s.model.get(), ends.by_group,
                                 {{r.affinity_group, r, 0, sim::kMaxForecastHorizon}}, ends.now_s);
  auto run = sim::forecast(in);
  EXPECT_TRUE(run.ok()) << (run.ok() ? "" : run.error().message);
  if (!run.ok() || run->configs.empty() || run->configs[0].waiting_start_s.empty()) return -2;
  const double start = run->configs[0].waiting_start_s[0];
  return start < 0 ? -1 : ends.now_s + start;
}

constexpr double kNow = 1.7e9;

TEST(HivedReasons, TheTableIsRankedAndEveryCodeHasATitleAndAHint) {
  const auto& t = reason_table();
  ASSERT_GE(t.size(), 10u);
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_FALSE(t[i].title.empty()) << t[i].name;
    EXPECT_FALSE(t[i].hint.empty()) << t[i].name;
    EXPECT_EQ(parse_reason_code(t[i].name), t[i].code);
    if (i > 0) {
      EXPECT_LE(t[i - 1].tier, t[i].tier) << t[i].name;
    }
  }
  EXPECT_EQ(reason_info(ReasonCode::KubeUnschedulable).family, "kube");
  EXPECT_EQ(reason_info(ReasonCode::VCQuotaExhausted).family, "hived");
  EXPECT_TRUE(reason_info(ReasonCode::NoSuchLeafType).never);
  EXPECT_FALSE(reason_info(ReasonCode::ChainFragmented).never);
  EXPECT_FALSE(parse_reason_code("Nope").has_value());
  EXPECT_EQ(fill_hint("a {x} b {y} {x}", {{"x", "1"}}), "a 1 b {y} 1");

  // Ranking: the tier first, repeated codes dropped.
  std::vector<Reason> v{{ReasonCode::VCQuotaExhausted, "q", ""},
                        {ReasonCode::KubeUnschedulable, "k", ""},
                        {ReasonCode::VCQuotaExhausted, "q2", ""},
                        {ReasonCode::BadCellsDoomed, "b", ""}};
  rank_reasons(v);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].code, ReasonCode::KubeUnschedulable);
  EXPECT_EQ(v[1].code, ReasonCode::BadCellsDoomed);
  EXPECT_EQ(v[2].code, ReasonCode::VCQuotaExhausted);
  EXPECT_EQ(v[2].detail, "q");
}

TEST(HivedReasons, VcQuotaExhaustedNamesTheHoldersAndWouldFitWhenTheFirstEnds) {
  auto s = reasons_state(kReasonsConfig, {req("a1", "a", 100, {{1, 8}}, "V100"),
                                          req("a2", "a", 100, {{1, 8}}, "V100")});
  ExpectedEnds ends{{{"a1", kNow + 7200}, {"a2", kNow + 3600}}, kNow};
  auto r = req("wait", "a", 50, {{1, 8}}, "V100");
  auto a = reasons_judge(s, r, ends);
  EXPECT_EQ(a.verdict, WaitVerdict::Waits);
  EXPECT_EQ(reasons_codes(a), std::vector<std::string>{"VCQuotaExhausted"});
  EXPECT_TRUE(reasons_has(a.reasons[0].detail,
                          "16 of VC a's 16 guaranteed leaf cells in chain "
                          "V100-RACK are bound to running groups: a1 (100), "
                          "a2 (100); 0 free, it needs 8"))
      << a.reasons[0].detail;
  EXPECT_TRUE(reasons_has(a.reasons[0].hint, "a1 (100), a2 (100) end")) << a.reasons[0].hint;
  EXPECT_EQ(a.would_fit.kind, WouldFit::Kind::At);
  ASSERT_TRUE(a.would_fit.at_s.has_value());
  EXPECT_EQ(*a.would_fit.at_s, kNow + 3600);  // a2 ends first
  EXPECT_EQ(a.would_fit.event, "a2 ends");
  EXPECT_EQ(a.would_fit.needs, "1 more V100-NODE cell(s) in chain V100-RACK");
  EXPECT_TRUE(reasons_has(a.would_fit.text,
                          "needs 1 more V100-NODE cell(s) in chain V100-RACK; frees about "))
      << a.would_fit.text;
  // The simulator, run forward from the same state, starts it then.
  EXPECT_EQ(reasons_simulated_start(s, r, ends), kNow + 3600);

  std::string text = to_text(a, false);
  EXPECT_TRUE(reasons_has(text, "  reason: VCQuotaExhausted (tier 5, ")) << text;
  EXPECT_TRUE(reasons_has(text, "  wouldFit: needs 1 more V100-NODE")) << text;
  Json j = to_json(a);
  EXPECT_EQ(j["reason"]["code"], "VCQuotaExhausted");
  EXPECT_EQ(j["reason"]["tier"], 5);
  EXPECT_EQ(j["reason"]["hint"], a.reasons[0].hint);
  EXPECT_EQ(j["wouldFit"]["kind"], "at");
  EXPECT_EQ(j["wouldFit"]["event"], "a2 ends");
  EXPECT_EQ(j["schedulerReason"], a.reason);

  // No expected end: unknown, and the simulator never starts it either.
  auto u = reasons_judge(s, r, ExpectedEnds{{}, kNow});
  EXPECT_EQ(u.would_fit.kind, WouldFit::Kind::Unknown);
  EXPECT_TRUE(reasons_has(u.would_fit.text, "no running group has an expected end"));
  EXPECT_EQ(reasons_simulated_start(s, r, ExpectedEnds{{}, kNow}), -1);
}

TEST(HivedReasons, WouldFitWaitsForEveryGroupItNeedsGone) {
  // Two pods of 8 in a: both of a's cells must empty; a1 ends last.
  auto s = reasons_state(kReasonsConfig, {req("a1", "a", 100, {{1, 8}}, "V100"),
                                          req("a2", "a", 100, {{1, 8}}, "V100")});
  ExpectedEnds ends{{{"a1", kNow + 5400}, {"a2", kNow + 600}}, kNow};
  auto r = req("both", "a", 50, {{2, 8}}, "V100");
  auto a = reasons_judge(s, r, ends);
  EXPECT_EQ(a.would_fit.kind, WouldFit::Kind::At);
  EXPECT_EQ(a.would_fit.event, "a1 ends");
  EXPECT_EQ(a.would_fit.after_groups, (std::vector<std::string>{"a2", "a1"}));
  EXPECT_EQ(a.would_fit.needs, "2 more V100-NODE cell(s) in chain V100-RACK");
  EXPECT_EQ(reasons_simulated_start(s, r, ends), kNow + 5400);
}

TEST(HivedReasons, BadCellsDoomedRanksBeforeVcQuotaExhausted) {
  // research: research/0 doomed on v7, one cell res-1's, one free; 16 GPUs wait.
  const auto& s = reasons_lab();
  auto r = req("two", "research", 50, {{2, 8}}, "V100");
  auto a = reasons_judge(s, r, ExpectedEnds{{}, kNow});
  EXPECT_EQ(a.verdict, WaitVerdict::Waits);
  EXPECT_EQ(reasons_codes(a), (std::vector<std::string>{"BadCellsDoomed", "VCQuotaExhausted"}));
  EXPECT_TRUE(reasons_has(a.reasons[0].detail,
                          "8 of VC research's 24 leaf cells in chain "
                          "V100-RACK are doomed on bad nodes: research/"))
      << a.reasons[0].detail;
  EXPECT_TRUE(reasons_has(a.reasons[0].detail, " on v7")) << a.reasons[0].detail;
  EXPECT_TRUE(reasons_has(a.reasons[0].hint, "repair v7")) << a.reasons[0].hint;
  // No group ends: it fits once v7 is healthy again (no time is known for that).
  EXPECT_EQ(a.would_fit.kind, WouldFit::Kind::Unknown);
  EXPECT_EQ(a.would_fit.event, "v7 healthy again");
  // With res-1's end known, that comes first.
  ExpectedEnds ends{{{"res-1", kNow + 1800}}, kNow};
  auto b = reasons_judge(s, r, ends);
  EXPECT_EQ(b.would_fit.kind, WouldFit::Kind::At);
  EXPECT_EQ(b.would_fit.event, "res-1 ends");
  EXPECT_EQ(reasons_simulated_start(s, r, ends), kNow + 1800);
  std::string text = to_text(b, false);
  EXPECT_TRUE(reasons_has(text, "  reason: BadCellsDoomed (tier 3")) << text;
  EXPECT_TRUE(reasons_has(text, "  also:   VCQuotaExhausted (tier 5")) << text;
}

TEST(HivedReasons, ChainFragmentedSaysHowManyAndWhere) {
  // a1..a4 (4 GPUs each) packed two to a node cell of a; a2 and a4 gone: 8
  // free leaves of a, 4 in each cell, no free node cell.
  auto s =
      reasons_state(kReasonsConfig,
                    {req("a1", "a", 100, {{1, 4}}, "V100"), req("a2", "a", 100, {{1, 4}}, "V100"),
                     req("a3", "a", 100, {{1, 4}}, "V100"), req("a4", "a", 100, {{1, 4}}, "V100")},
                    {"a2", "a4"});
  ExpectedEnds ends{{{"a1", kNow + 900}, {"a3", kNow + 60}}, kNow};
  auto r = req("whole", "a", 100, {{1, 8}}, "V100");
  auto a = reasons_judge(s, r, ends);
  EXPECT_EQ(a.verdict, WaitVerdict::Waits) << a.reason;
  EXPECT_EQ(reasons_codes(a), std::vector<std::string>{"ChainFragmented"});
  EXPECT_TRUE(reasons_has(a.reasons[0].detail,
                          "VC a has 8 free leaf cells in chain V100-RACK but "
                          "0 free V100-NODE cell(s) of the 1 it needs"))
      << a.reasons[0].detail;
  EXPECT_TRUE(reasons_has(a.reasons[0].detail, "4 in a/")) << a.reasons[0].detail;
  EXPECT_TRUE(reasons_has(a.reasons[0].hint, "pods of at most 4 GPUs would fit now"))
      << a.reasons[0].hint;
  EXPECT_EQ(a.would_fit.event, "a3 ends");
  EXPECT_EQ(reasons_simulated_start(s, r, ends), kNow + 60);
}

TEST(HivedReasons, CellSplitBySmallerGroupNamesTheGroupInsideTheLargerCell) {
  // b: one node cell and four single cells. One GPU goes first; where HiveD's
  // intra-VC placement puts it decides whether 8 GPUs fit after it.
  auto s = reasons_state(kReasonsConfig, {req("small", "b", 100, {{1, 1}}, "V100")});
  auto r = req("big", "b", 100, {{1, 8}}, "V100");
  auto a = reasons_judge(s, r, ExpectedEnds{{{"small", kNow + 300}}, kNow});
  bool in_node_cell = false;
  for (const auto& g : s.live.groups)
    if (g.name == "small")
      for (const auto& [vcell, leaves] : g.virtual_placement)
        for (const auto& leaf : leaves)  // "b/K/i": a leaf of a node cell; "b/K": a single cell
          in_node_cell |= std::count(leaf.begin(), leaf.end(), '/') == 2;
  if (!in_node_cell) {
    // The single cell took it: 8 GPUs fit in the node cell.
    EXPECT_EQ(a.verdict, WaitVerdict::Fits);
    GTEST_SKIP() << "the intra-VC placement took a single cell";
  }
  EXPECT_EQ(a.verdict, WaitVerdict::Waits) << a.reason;
  ASSERT_FALSE(a.reasons.empty());
  EXPECT_EQ(reasons_codes(a),
            (std::vector<std::string>{"CellSplitBySmallerGroup", "ChainFragmented"}));
  EXPECT_TRUE(reasons_has(a.reasons[0].detail, "small sit(s) in V100-NODE cell b/"))
      << a.reasons[0].detail;
  EXPECT_TRUE(reasons_has(a.reasons[0].hint, "--vc-cells node")) << a.reasons[0].hint;
  EXPECT_EQ(a.would_fit.event, "small ends");
  EXPECT_EQ(reasons_simulated_start(s, r, ExpectedEnds{{{"small", kNow + 300}}, kNow}), kNow + 300);
}

TEST(HivedReasons, RequestsThatNeverFitSayWhatToChange) {
  auto s = reasons_state(kReasonsConfig, {});
  // A leaf type the cluster lacks.
  auto a = reasons_judge(s, req("x", "a", 100, {{1, 1}}, "A100"), {{}, kNow});
  EXPECT_EQ(a.verdict, WaitVerdict::Rejected);
  EXPECT_EQ(reasons_codes(a), std::vector<std::string>{"NoSuchLeafType"});
  EXPECT_TRUE(reasons_has(a.reasons[0].detail, "it has V100, K80") ||
              reasons_has(a.reasons[0].detail, "it has K80, V100"))
      << a.reasons[0].detail;
  EXPECT_EQ(a.would_fit.kind, WouldFit::Kind::Never);
  EXPECT_TRUE(reasons_has(a.would_fit.text, "never under this config: ask for one of"))
      << a.would_fit.text;
  EXPECT_EQ(to_json(a)["wouldFit"]["kind"], "never");
  // A VC without cells of the type.
  auto b = reasons_judge(s, req("x", "k", 100, {{1, 1}}, "V100"), {{}, kNow});
  EXPECT_EQ(reasons_codes(b), std::vector<std::string>{"NoChainForVC"});
  EXPECT_TRUE(reasons_has(b.reasons[0].detail, "VC k has no V100 cells")) << b.reasons[0].detail;
  EXPECT_EQ(b.would_fit.kind, WouldFit::Kind::Never);
  // A VC HiveD does not have.
  auto c = reasons_judge(s, req("x", "nope", 100, {{1, 1}}, "V100"), {{}, kNow});
  EXPECT_EQ(reasons_codes(c), std::vector<std::string>{"NoChainForVC"});
  // More than all of a's cells, and a pod larger than a node.
  auto d = reasons_judge(s, req("x", "a", 100, {{3, 8}}, "V100"), {{}, kNow});
  EXPECT_EQ(reasons_codes(d), std::vector<std::string>{"RequestExceedsVC"});
  EXPECT_TRUE(reasons_has(d.reasons[0].detail, "it needs 24 leaf cells")) << d.reasons[0].detail;
  EXPECT_EQ(d.would_fit.kind, WouldFit::Kind::Never);
  EXPECT_TRUE(reasons_has(d.would_fit.text, "ask for at most 16 GPUs")) << d.would_fit.text;
  auto e = reasons_judge(s, req("x", "a", 100, {{1, 16}}, "V100"), {{}, kNow});
  EXPECT_EQ(reasons_codes(e), std::vector<std::string>{"RequestExceedsVC"});
}

TEST(HivedReasons, OpportunisticWorkWaitsForFreeCells) {
  // The lab: two free V100 nodes (v4 half, v8, research's free cell...): three
  // opportunistic pods of 8 do not fit.
  const auto& s = reasons_lab();
  auto a = reasons_judge(s, req("opp", "research", -1, {{4, 8}}, "V100"), {{}, kNow});
  EXPECT_EQ(a.verdict, WaitVerdict::Waits) << a.reason;
  EXPECT_EQ(reasons_codes(a), std::vector<std::string>{"OpportunisticNoCapacity"});
  EXPECT_TRUE(reasons_has(a.reasons[0].detail, "chain V100-RACK has ")) << a.reasons[0].detail;
}

TEST(HivedReasons, APlacementThatPreemptsWaitsForItsVictims) {
  const auto& s = reasons_lab();
  auto a = reasons_judge(s, req("urgent", "prod", 100, {{1, 8}}, "V100"), {{}, kNow});
  EXPECT_EQ(a.verdict, WaitVerdict::Preempts);
  EXPECT_EQ(reasons_codes(a), std::vector<std::string>{"WaitingForPreemption"});
  EXPECT_TRUE(reasons_has(a.reasons[0].detail, "infer-c")) << a.reasons[0].detail;
  EXPECT_EQ(a.would_fit.kind, WouldFit::Kind::Now);
  // A group HiveD shows Preempting carries the same code.
  AffinityGroup g;
  g.name = "urgent";
  g.vc = "prod";
  g.state = "Preempting";
  g.priority = 100;
  RunningAnswer ra;
  ra.group = g;
  ra.waits_for.push_back({"opp-5", "research", "BeingPreempted", -1, {{"v5", {0, 1}}}});
  EXPECT_EQ(preempting_reason(ra).code, ReasonCode::WaitingForPreemption);
  EXPECT_TRUE(reasons_has(preempting_reason(ra).hint, "opp-5")) << preempting_reason(ra).hint;
  Json j = to_json(ra);
  EXPECT_EQ(j["reason"]["code"], "WaitingForPreemption");
}

TEST(HivedReasons, AGroupThatFitsHasNoCode) {
  const auto& s = reasons_lab();
  auto a = reasons_judge(s, req("one", "research", 50, {{1, 8}}, "V100"), {{}, kNow});
  EXPECT_EQ(a.verdict, WaitVerdict::Fits);
  EXPECT_TRUE(a.reasons.empty());
  EXPECT_EQ(a.would_fit.kind, WouldFit::Kind::Now);
  EXPECT_TRUE(to_json(a)["reason"].is_null());
  EXPECT_FALSE(reasons_has(to_text(a, false), "reason:"));
}

TEST(HivedReasons, TheKubeSchedulersReasonComesFromThePodEvents) {
  auto parsed = util::parse_json(R"({"totalCount": 3, "data": [
    {"type": "Normal", "reason": "Scheduled", "message": "old", "lastTimestamp": "2024-05-01T09:00:00Z"},
    {"type": "Warning", "reason": "FailedScheduling", "taskroleName": "worker", "taskIndex": 1,
     "lastTimestamp": "2024-05-01T10:00:00Z",
     "message": "0/5 nodes are available: 2 node(s) had untolerated taint {dedicated: infer}, 2 node(s) didn't match Pod's node affinity/selector, 1 Insufficient nvidia.com/gpu. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."},
    "not an event"]})");
  ASSERT_TRUE(parsed.ok());
  auto events = parse_pod_events(*parsed);
  ASSERT_EQ(events.size(), 2u);
  auto r = kube_reason(events);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->code, ReasonCode::KubeUnschedulable);
  EXPECT_TRUE(reasons_has(r->detail, "pod worker[1] is Unschedulable (0/5 nodes are available"))
      << r->detail;
  EXPECT_FALSE(reasons_has(r->detail, "preemption:")) << r->detail;
  EXPECT_TRUE(reasons_has(r->hint,
                          "taints: 2 node(s) had untolerated taint {dedicated: infer}; node "
                          "selector or affinity: 2 node(s) didn't match Pod's node "
                          "affinity/selector; resources: 1 Insufficient nvidia.com/gpu"))
      << r->hint;
  EXPECT_EQ(to_json(*r)["family"], "kube");
  // A later Scheduled event: no reason.
  events.push_back({"Normal", "Scheduled", "ok", "2024-05-01T11:00:00Z", "worker", 1});
  EXPECT_FALSE(kube_reason(events).has_value());
  EXPECT_FALSE(kube_reason({}).has_value());
}

}  // namespace
}  // namespace pai::hived
