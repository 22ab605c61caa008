// hived apply as a library call, with HiveD behind a fake HTTP client, the
// push and restart commands answered by the scripted process runner and a clock
// that advances only when the wait sleeps: the refusal changes nothing, the
// push comes before the restart, the wait ends when HiveD runs the new config
// (and not before), and it times out when HiveD never does.

#include "hived/apply.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "hived/apply_json.h"
#include "hived/live.h"
#include "scheduler/helpers.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"
#include "support/fake_client.h"
#include "support/fake_clock.h"
#include "support/scripted_process.h"

namespace pai::hived {
namespace {

using util::ScriptedAnswer;

const std::string kScenarios = PAI_SOURCE_DIR "/tests/integration/hived/scenarios/";

std::string read_scenario(const std::string& name) {
  std::ifstream f(kScenarios + name);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// HiveD's answers (cluster status, affinity groups) after the reconf lab's
// groups (tests/integration/hived/scenarios/reconf.json) are placed on `config`.
std::pair<std::string, std::string> reconf_answers(const std::string& config) {
  auto model = scheduler::test::model_from_yaml(read_scenario(config));
  auto made = scheduler::make_hived_policy(*model);
  EXPECT_TRUE(made.ok()) << made.error().message;
  auto policy = std::move(*made);
  using scheduler::test::req;
  for (const auto& r :
       {req("a-train", "a", 100, {{1, 8}}, "V100"), req("a-big", "a", 100, {{1, 8}}, "V100"),
        req("b-1", "b", 50, {{1, 8}}, "V100"), req("b-pin", "b", 50, {{1, 4}}, "", "b-pin"),
        req("a-k", "a", 10, {{1, 4}}, "K80"), req("opp", "b", -1, {{1, 2}}, "K80")})
    EXPECT_EQ(policy->schedule(r).outcome, scheduler::Outcome::Bound) << r.affinity_group;
  auto snap = scheduler::snapshot_hived(*policy);
  return {to_json(cluster_status_of(*model, *snap)).dump(),
          to_json(affinity_groups_of(*model, *snap)).dump()};
}

http::FakeAnswer ok_json(const std::string& body) {
  http::FakeAnswer a;
  a.response.status = 200;
  a.response.headers.push_back({"content-type", "application/json"});
  a.response.body = body;
  return a;
}

struct HivedApply : ::testing::Test {
  http::FakeClient http;
  Client hived{http, "http://hived.test:30096"};
  util::ScriptedProcessRunner runner;
  pai::testing::FakeClock fc;
  util::Clock clock = fc.clock();
  std::vector<ApplyEvent> events;

  // HiveD answers `states` in order (one look each: the status and the
  // groups), then keeps answering the last one.
  void hived_answers(const std::vector<std::pair<std::string, std::string>>& states) {
    http::Route status, groups;
    status.path = "/v1/inspect/clusterstatus";
    groups.path = "/v1/inspect/affinitygroups/";
    for (const auto& [s, g] : states) {
      status.answers.push_back(ok_json(s));
      groups.answers.push_back(ok_json(g));
    }
    http.add(status);
    http.add(groups);
  }

  ApplyRequest request(const std::string& new_config) {
    ApplyRequest r;
    r.new_path = kScenarios + new_config;
    r.current_path = kScenarios + "reconf-hived.yaml";
    r.templates_dir = PAI_SOURCE_DIR "/templates";
    r.hived_name = "lab";
    r.wait_s = 60;
    r.poll_s = 2;
    return r;
  }

  util::Result<ApplyOutcome, ApplyFailure> apply(const ApplyPlan& plan) {
    return apply_hived_apply(plan, hived, runner, clock,
                             [this](const ApplyEvent& e) { events.push_back(e); });
  }

  void TearDown() override {
    for (const auto& r : http.unmatched()) ADD_FAILURE() << "unexpected request " << r.url;
  }
};

TEST_F(HivedApply, RefusesToPreemptRunningGuaranteedGroups) {
  hived_answers({reconf_answers("reconf-hived.yaml")});
  auto plan = plan_hived_apply(request("reconf-shrunk.yaml"), hived, runner);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_TRUE(plan->changes());
  EXPECT_TRUE(plan->refused);
  EXPECT_EQ(plan->refused_groups, std::vector<std::string>{"a-big"});
  EXPECT_FALSE(plan->applicable());
  EXPECT_EQ(plan->input.source_detail, "the live HiveD at lab");
  auto doc = apply_json(*plan);
  EXPECT_EQ(doc["refused"], "running guaranteed groups would be lazily preempted");
  EXPECT_EQ(doc["applied"], false);
  EXPECT_FALSE(doc.contains("pushCommand"));
  // Applying a refused plan runs nothing.
  auto out = apply(*plan);
  EXPECT_FALSE(out.ok());
  EXPECT_TRUE(runner.calls().empty());
  EXPECT_EQ(fc.sleeps.size(), 0u);

  // With allow_preemption it is applicable.
  auto req = request("reconf-shrunk.yaml");
  req.allow_preemption = true;
  auto allowed = plan_hived_apply(req, hived, runner);
  ASSERT_TRUE(allowed.ok());
  EXPECT_FALSE(allowed->refused);
  EXPECT_TRUE(allowed->applicable());
}

TEST_F(HivedApply, PushesThenRestartsThenWaitsWithoutSleepingForTheNewConfig) {
  auto before = reconf_answers("reconf-hived.yaml");
  auto after = reconf_answers("reconf-grown.yaml");
  // The plan's look, two looks at the old config, then the new one.
  hived_answers({before, before, before, after});
  runner.on("apply -f -", {.out = "configmap/hivedscheduler-config configured\n"});
  runner.on("rollout restart", {.err = "restarted\n"});

  auto plan = plan_hived_apply(request("reconf-grown.yaml"), hived, runner);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_TRUE(plan->applicable());
  EXPECT_EQ(plan->diff.nodes_added, std::vector<std::string>{"n6"});
  EXPECT_EQ(plan->push_command, "kubectl apply -f -");
  EXPECT_EQ(plan->restart_command,
            "kubectl -n openpai rollout restart statefulset/hivedscheduler-hs");
  EXPECT_TRUE(runner.calls().empty()) << "planning ran " << runner.command_lines()[0];

  auto out = apply(*plan);
  ASSERT_TRUE(out.ok()) << out.error().error.message;
  EXPECT_EQ(runner.command_lines(),
            (std::vector<std::string>{
                "/bin/sh -c kubectl apply -f -",
                "/bin/sh -c kubectl -n openpai rollout restart statefulset/hivedscheduler-hs"}));
  const auto push = runner.calls()[0];
  EXPECT_NE(push.stdin_text.find("kind: ConfigMap"), std::string::npos) << push.stdin_text;
  EXPECT_NE(push.stdin_text.find("cellAddress: n6"), std::string::npos) << push.stdin_text;
  ASSERT_EQ(push.env.count("PAICTL_HIVED_CONFIG"), 1u);
  EXPECT_GT(push.timeout_s, 0);
  EXPECT_EQ(runner.calls()[1].stdin_text, "");

  EXPECT_TRUE(out->restarted);
  EXPECT_TRUE(out->healthy);
  EXPECT_EQ(fc.sleeps.size(), 2u);  // two looks found the old config
  EXPECT_EQ(out->waited_s, 4);
  EXPECT_EQ(out->nodes, 8);
  EXPECT_EQ(out->not_as_planned, 0);
  EXPECT_EQ(out->groups.size(), plan->diff.groups.size());
  for (const auto& g : out->groups) EXPECT_TRUE(g.as_planned) << g.name << " " << g.now;

  std::vector<std::string> seen;
  for (const auto& e : events)
    seen.push_back(std::to_string(static_cast<int>(e.kind)) + ":" + e.text);
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "0:kubectl apply -f -", "2:configmap/hivedscheduler-config configured\n",
                      "1:kubectl -n openpai rollout restart statefulset/hivedscheduler-hs",
                      "2:restarted\n", "3:HiveD does not run the new config yet",
                      "3:HiveD does not run the new config yet"}));

  auto doc = apply_json(*plan, *out);
  EXPECT_EQ(doc["applied"], true);
  EXPECT_EQ(doc["waitedSeconds"], 4);
  EXPECT_EQ(doc["result"]["notAsPlanned"], 0);
  EXPECT_EQ(doc["pushCommand"], "kubectl apply -f -");
}

TEST_F(HivedApply, TimesOutWhenHivedNeverRunsTheNewConfig) {
  hived_answers({reconf_answers("reconf-hived.yaml")});
  runner.on("", ScriptedAnswer{});
  auto req = request("reconf-grown.yaml");
  req.push_command = "cat >/somewhere";
  req.restart_command = "kill -HUP 1";
  req.wait_s = 10;
  auto plan = plan_hived_apply(req, hived, runner);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->manifest, "");
  auto out = apply(*plan);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().error.kind, ApplyError::Kind::Timeout);
  EXPECT_EQ(out.error().error.message,
            "HiveD did not come back healthy on the new config within 10 s: HiveD does not run "
            "the new config yet");
  EXPECT_TRUE(out.error().so_far.restarted);
  EXPECT_FALSE(out.error().so_far.healthy);
  EXPECT_EQ(fc.sleeps.size(), 5u);  // looks at 0, 2, 4, 6, 8 and 10 s
  EXPECT_EQ(out.error().so_far.waited_s, 10);
  // The custom push gets the config itself, on stdin.
  ASSERT_EQ(runner.calls().size(), 2u);
  EXPECT_EQ(runner.calls()[0].stdin_text, plan->configs.new_text);
  EXPECT_EQ(runner.command_lines()[1], "/bin/sh -c kill -HUP 1");
  auto doc = apply_json(*plan, out.error().so_far);
  EXPECT_EQ(doc["applied"], true);
  EXPECT_EQ(doc["waitedSeconds"], 10);
  EXPECT_EQ(doc["notHealthy"], Json::array());
}

TEST_F(HivedApply, AFailedPushStopsBeforeTheRestart) {
  hived_answers({reconf_answers("reconf-hived.yaml")});
  runner.on("apply -f -", {.exit_code = 7});
  auto plan = plan_hived_apply(request("reconf-grown.yaml"), hived, runner);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto out = apply(*plan);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().error.kind, ApplyError::Kind::Push);
  EXPECT_EQ(out.error().error.message,
            "pushing the config failed (exit 7); HiveD still runs the old config");
  EXPECT_FALSE(out.error().so_far.pushed);
  EXPECT_EQ(runner.calls().size(), 1u);
  EXPECT_EQ(apply_json(*plan, out.error().so_far)["applied"], false);

  // A restart that never ends.
  runner.on("apply -f -", ScriptedAnswer{});
  runner.on("rollout restart", {.timed_out = true});
  out = apply(*plan);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().error.kind, ApplyError::Kind::Restart);
  EXPECT_EQ(out.error().error.message,
            "restarting HiveD failed (did not finish); the new config is pushed and is read at "
            "HiveD's next start");
  EXPECT_TRUE(out.error().so_far.pushed);
  EXPECT_EQ(fc.sleeps.size(), 0u);
}

TEST_F(HivedApply, TheCurrentConfigComesFromTheConfigMap) {
  hived_answers({reconf_answers("reconf-hived.yaml")});
  runner.on("get configmap hivedscheduler-config", {.out = read_scenario("reconf-hived.yaml")});
  auto req = request("reconf-grown.yaml");
  req.current_path = "";
  req.kubectl = "ssh master kubectl";
  req.ns = "pai";
  auto plan = plan_hived_apply(req, hived, runner);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(runner.command_lines(),
            std::vector<std::string>{"/bin/sh -c ssh master kubectl -n pai get configmap "
                                     "hivedscheduler-config -o "
                                     "'jsonpath={.data.hivedscheduler\\.yaml}'"});
  EXPECT_EQ(plan->input.old_path, "the HiveD ConfigMap");
  EXPECT_EQ(plan->diff.nodes_added, std::vector<std::string>{"n6"});
  EXPECT_EQ(plan->push_command, "ssh master kubectl apply -f -");
  EXPECT_NE(plan->manifest.find("namespace: pai"), std::string::npos) << plan->manifest;

  // It prints nothing: the current config is unknown.
  runner.on("get configmap", ScriptedAnswer{});
  auto none = plan_hived_apply(req, hived, runner);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, ApplyError::Kind::CurrentConfig);
  EXPECT_NE(none.error().message.find(" printed nothing"), std::string::npos);
  runner.on("get configmap", {.exit_code = 1});
  none = plan_hived_apply(req, hived, runner);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find(" failed"), std::string::npos);
}

TEST_F(HivedApply, AConfigWithErrorsOrNoChangeIsNotApplicable) {
  hived_answers({reconf_answers("reconf-hived.yaml")});
  auto broken = plan_hived_apply(request("reconf-broken.yaml"), hived, runner);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().kind, ApplyError::Kind::ConfigErrors);
  ASSERT_TRUE(broken.error().config);
  EXPECT_FALSE(broken.error().config->errors.empty());
  EXPECT_TRUE(http.requests().empty());  // HiveD is not asked before the configs are good

  auto same = plan_hived_apply(request("reconf-hived.yaml"), hived, runner);
  ASSERT_TRUE(same.ok()) << same.error().message;
  EXPECT_FALSE(same->changes());
  EXPECT_FALSE(same->applicable());
  EXPECT_FALSE(apply_json(*same).contains("pushCommand"));
}

TEST_F(HivedApply, AnUnreadableHivedSaysWhatItWasReading) {
  http.add("GET", "/v1/inspect/clusterstatus", 502, "Bad Gateway", "text/plain");
  http.add("GET", "/v1/inspect/affinitygroups/", 200, R"({"items": null})");
  auto plan = plan_hived_apply(request("reconf-grown.yaml"), hived, runner);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().kind, ApplyError::Kind::HiveD);
  ASSERT_TRUE(plan.error().hived);
  EXPECT_EQ(plan.error().hived->doing, "reading the cluster status");
  EXPECT_EQ(plan.error().hived->status, 502);
}

}  // namespace
}  // namespace pai::hived
