// collect() over a scripted transport (a test double for the network: each
// host's answer is canned). The real transport is tested against sshd test hosts.
#include <gtest/gtest.h>

#include <mutex>

#include "check/runner.h"
#include "test_support.h"

using namespace pai::check;
using namespace pai::remote;

namespace {

class ScriptedTransport : public Transport {
 public:
  ExecResult exec(const Target& t, const ExecRequest& req) override {
    std::lock_guard lock(mu);
    inputs[t.endpoint.name] = req.input;
    commands[t.endpoint.name] = req.command;
    timeouts[t.endpoint.name] = req.timeout_ms;
    ExecResult r;
    if (t.endpoint.name == "down") {
      r.failure = Failure::Connect;
      r.error = "connection to down:22 refused";
      return r;
    }
    if (t.endpoint.name == "slow") {
      std::string out = pai::check::testing::captured_output();
      r.out = out.substr(0, out.find("@@begin nvidia")) + "@@begin nvidia\n";
      r.failure = Failure::CommandTimeout;
      r.error = "the command did not finish within 2 s";
      return r;
    }
    r.out = pai::check::testing::captured_output();
    r.exit_status = 0;
    r.first_output_epoch = 1796024589.0;
    return r;
  }
  std::mutex mu;
  std::map<std::string, std::string> inputs, commands;
  std::map<std::string, int> timeouts;
};

pai::inventory::HostPlan plan(const std::string& name, const std::string& user) {
  pai::inventory::HostPlan p;
  p.name = name;
  p.address = name;
  p.target.endpoint.name = name;
  p.target.endpoint.user = user;
  return p;
}

}  // namespace

TEST(Collect, EveryHostOnceWithTheSudoPasswordOnlyWhereNeeded) {
  ScriptedTransport t;
  CollectOptions o;
  o.sudo_password = Secret("hunter2");
  o.command_timeout_ms = 2000;
  o.script.dns_names = {"registry.example.com"};
  std::vector<pai::inventory::HostPlan> plans = {plan("as-root", "root"), plan("as-ops", "ops"),
                                                 plan("down", "ops"), plan("slow", "root")};
  size_t used = 0;
  auto out = collect(t, plans, o, &used);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_GE(used, 1u);
  // The first line of stdin: empty for root, the password for others; the script follows.
  EXPECT_EQ(t.inputs["as-root"].substr(0, 1), "\n");
  EXPECT_EQ(t.inputs["as-ops"].rfind("hunter2\n", 0), 0u);
  EXPECT_NE(t.inputs["as-ops"].find("DNS_NAMES=registry.example.com\n"), std::string::npos);
  EXPECT_EQ(t.commands["as-root"], pai::facts::bootstrap_command());
  EXPECT_EQ(t.commands["as-root"].find("hunter2"), std::string::npos);
  EXPECT_EQ(t.timeouts["as-ops"], 2000);

  EXPECT_EQ(out[0].plan.name, "as-root");  // plan order, whatever the completion order
  EXPECT_TRUE(out[0].reached);
  EXPECT_TRUE(out[0].facts.complete);
  EXPECT_EQ(out[0].facts.roles, std::vector<std::string>{"worker"});
  EXPECT_NEAR(out[0].facts.clock.skew_s, 0.67, 0.01);
  EXPECT_FALSE(out[2].reached);
  EXPECT_TRUE(out[2].facts.sections.empty());
  EXPECT_TRUE(out[3].reached);  // logged in; cut off
  EXPECT_EQ(out[3].facts.stuck_in, "nvidia");
}

TEST(Collect, APasswordWithANewlineIsNeverSent) {
  ScriptedTransport t;
  CollectOptions o;
  o.sudo_password = Secret("line1\nrm -rf /");
  collect(t, {plan("as-ops", "ops")}, o);
  EXPECT_EQ(t.inputs["as-ops"].substr(0, 1), "\n");  // it would have run as a command
}
