// collect() over the scripted transport of tests/support (a test double for the
// network: each host's answer is canned). The real transport is tested against
// sshd test hosts.
#include <gtest/gtest.h>

#include "check/runner.h"
#include "support/scripted_transport.h"
#include "test_support.h"

using namespace pai::check;
using namespace pai::remote;

namespace {

// Every host answers the captured fact script's output, but "down", which
// refuses the connection, and "slow", whose output stops in the GPU section.
void script_hosts(pai::testing::ScriptedTransport& t) {
  t.fallback.out = pai::check::testing::captured_output();
  t.fallback.first_output_epoch = 1796024589.0;
  t.on("", {.failure = Failure::Connect, .error = "connection to down:22 refused"}, "down");
  std::string out = pai::check::testing::captured_output();
  t.on("",
       {.out = out.substr(0, out.find("@@begin nvidia")) + "@@begin nvidia\n",
        .failure = Failure::CommandTimeout,
        .error = "the command did not finish within 2 s"},
       "slow");
}

// The last command sent to `host`.
pai::testing::ScriptedCall last_call(const pai::testing::ScriptedTransport& t,
                                     const std::string& host) {
  auto calls = t.calls_to(host);
  return calls.empty() ? pai::testing::ScriptedCall{} : calls.back();
}

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
  pai::testing::ScriptedTransport t;
  script_hosts(t);
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
  EXPECT_EQ(last_call(t, "as-root").input.substr(0, 1), "\n");
  EXPECT_EQ(last_call(t, "as-ops").input.rfind("hunter2\n", 0), 0u);
  EXPECT_NE(last_call(t, "as-ops").input.find("DNS_NAMES=registry.example.com\n"),
            std::string::npos);
  EXPECT_EQ(last_call(t, "as-root").command, pai::facts::bootstrap_command());
  EXPECT_EQ(last_call(t, "as-root").command.find("hunter2"), std::string::npos);
  EXPECT_EQ(last_call(t, "as-ops").timeout_ms, 2000);

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
  pai::testing::ScriptedTransport t;
  script_hosts(t);
  CollectOptions o;
  o.sudo_password = Secret("line1\nrm -rf /");
  collect(t, {plan("as-ops", "ops")}, o);
  EXPECT_EQ(last_call(t, "as-ops").input.substr(0, 1), "\n");  // it would have run as a command
}

TEST(Collect, ProgressNamesTheHostsStillRunning) {
  pai::testing::ScriptedTransport t;
  script_hosts(t);
  CollectOptions o;
  o.parallel = 1;  // one at a time: each host runs alone, in plan order
  std::vector<CollectProgress> seen;
  o.on_progress = [&](const CollectProgress& p) { seen.push_back(p); };
  collect(t, {plan("a", "root"), plan("b", "root"), plan("down", "root")}, o);
  ASSERT_EQ(seen.size(), 6u);  // each host starts and ends
  using V = std::vector<std::string>;
  EXPECT_EQ(seen[0].running, V{"a"});
  EXPECT_EQ(seen[0].done, 0u);
  EXPECT_EQ(seen[1].running, V{});
  EXPECT_EQ(seen[1].done, 1u);
  EXPECT_EQ(seen[4].running, V{"down"});  // an unreachable host is waited for too
  EXPECT_EQ(seen[5].done, 3u);
  EXPECT_EQ(seen[5].total, 3u);
  EXPECT_TRUE(seen[5].running.empty());
}
