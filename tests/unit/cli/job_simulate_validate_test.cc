// The validate steps of job list, simulate and simulate generate: every usage
// error of a command line at once, with its hint, before a registry, a cluster,
// a trace or a HiveD config is read.

#include <gtest/gtest.h>

#include <string>

#include "command.h"
#include "job/cmd_job_list.h"
#include "sim/cmd_simulate.h"
#include "usage_matchers.h"

namespace paictl {
namespace {

using usage_test::hint_of;

TEST(JobListValidate, EveryErrorAtOnce) {
  JobListOptions o;
  o.state = "running, dozing,SUCCEEDED,napping";
  o.all_clusters = true;
  o.remote.cluster = "lab";
  o.tags = {"ok", "a,b"};
  o.no_tags = {""};
  o.since = "later";
  o.order = "nme,asc";
  o.watch = true;
  o.output = "yaml";
  Usage u;
  validate_job_list(o, u);
  ASSERT_EQ(u.errors().size(), 8u) << u.summary();
  const auto& e = u.errors();
  EXPECT_EQ(e[0].message, "unknown state \" dozing\"");
  EXPECT_EQ(e[0].hint,
            "states are WAITING, RUNNING, STOPPING, STOPPED, SUCCEEDED, FAILED, UNKNOWN");
  EXPECT_EQ(e[1].message, "unknown state \"napping\"");
  EXPECT_EQ(e[2].message, "give --cluster or --all-clusters, not both");
  EXPECT_EQ(e[3].message, "--tag \"a,b\": a tag is non-empty and has no ','");
  EXPECT_EQ(e[4].message, "--no-tag \"\": a tag is non-empty and has no ','");
  EXPECT_EQ(e[5].message, "--since \"later\" is not a duration (e.g. 90s, 30m, 6h, 2d, 1w)");
  EXPECT_EQ(e[6].message, "--order \"nme,asc\" is not FIELD[,asc|desc] (did you mean \"name\"?)");
  EXPECT_EQ(e[6].hint,
            "FIELD is one of submitted, name, state, completed, gpus, retries, vc, user");
  EXPECT_EQ(e[7].message.rfind("--watch prints a table", 0), 0u) << e[7].message;
}

TEST(JobListValidate, GoodFlags) {
  JobListOptions o;
  o.state = "running,succeeded";
  o.all_clusters = true;
  o.tags = {"sweep-lr"};
  o.since = "6h";
  o.order = "gpus,DESC";
  o.watch = true;
  Usage u;
  validate_job_list(o, u);
  EXPECT_TRUE(u.ok()) << u.summary();
  o.order = "name,sideways";
  Usage dir;
  validate_job_list(o, dir);
  EXPECT_EQ(dir.errors().size(), 1u) << dir.summary();
}

TEST(SimulateValidate, EveryErrorAtOnce) {
  SimulateOptions o;
  o.policies = "hive, quota,nope,hive";
  o.priority = 2000;
  o.bin = "0s";
  o.faults = "random:bogus";
  o.tie_order = "random";
  Usage u;
  validate_simulate(o, u);
  const auto& e = u.errors();
  ASSERT_EQ(e.size(), 8u) << u.summary();
  EXPECT_EQ(e[0].message, "--config is required");
  EXPECT_EQ(e[1].message, "--trace is required");
  EXPECT_EQ(e[2].message, "unknown policy \"hive\" (did you mean \"hived\"?)");
  EXPECT_EQ(e[2].hint.rfind("policies: ", 0), 0u) << e[2].hint;
  EXPECT_NE(e[2].hint.find("quota"), std::string::npos) << e[2].hint;
  EXPECT_EQ(e[3].message.rfind("unknown policy \"nope\"", 0), 0u) << e[3].message;
  EXPECT_EQ(e[4].message, "--priority must be -1 (opportunistic) or 0..1000");
  EXPECT_EQ(e[5].message, "--bin \"0s\" is not a duration of at least 1s (e.g. 10m)");
  EXPECT_EQ(e[6].message.rfind("--faults: ", 0), 0u) << e[6].message;
  EXPECT_EQ(e[7].message, "--tie-order must be hived or config, not \"random\"");
  EXPECT_EQ(hint_of(u, "--trace is required"),
            "a job trace (Philly, Helios, Alibaba, CSV); paictl simulate generate makes one");
}

TEST(SimulateValidate, NoPolicyAndGoodFlags) {
  SimulateOptions o;
  o.config = "cluster/";
  o.traces = {"trace.json"};
  o.policies = " , ";
  Usage none;
  validate_simulate(o, none);
  EXPECT_EQ(none.summary(), "--policy names no policy");
  o.policies = "hived,quota";
  o.bin = "10m";
  o.tie_order = "config";
  Usage ok;
  validate_simulate(o, ok);
  EXPECT_TRUE(ok.ok()) << ok.summary();
}

TEST(SimulateValidate, HorizonBounds) {
  Usage good;
  EXPECT_EQ(validate_horizon("24h", good).value(), 86400);
  EXPECT_EQ(validate_horizon("90m", good).value(), 5400);
  EXPECT_TRUE(good.ok()) << good.summary();
  for (const char* bad : {"0", "0h", "-1h", "100y", "36600d", "soon", ""}) {
    Usage u;
    EXPECT_FALSE(validate_horizon(bad, u).has_value()) << bad;
    EXPECT_EQ(u.errors().size(), 1u) << bad;
  }
  Usage year, zero;
  validate_horizon("36600d", year);
  validate_horizon("0", zero);
  EXPECT_NE(year.summary().find("more than a year"), std::string::npos) << year.summary();
  EXPECT_NE(zero.summary().find("--horizon must be above 0"), std::string::npos) << zero.summary();
}

TEST(SimulateValidate, Generate) {
  GenerateOptions o;
  o.jobs = 0;
  o.load = 0;
  o.opportunistic = 2;
  o.scale = 0;
  o.max_gpus = 0;
  o.priority = -1;
  o.cluster_out = "out/";
  o.config = "cluster/";
  Usage u;
  validate_generate(o, u);
  EXPECT_EQ(u.errors().size(), 7u) << u.summary();
  EXPECT_NE(u.summary().find("--cluster-out writes a Philly-shaped cluster"), std::string::npos);
  Usage ok;
  validate_generate(GenerateOptions{}, ok);
  EXPECT_TRUE(ok.ok()) << ok.summary();
}

TEST(SimulateValidate, GenerateLoadAndDaysAreOneChoice) {
  GenerateOptions o;
  o.load_given = o.days_given = true;
  o.days = 30;
  Usage both;
  validate_generate(o, both);
  ASSERT_EQ(both.errors().size(), 1u) << both.summary();
  EXPECT_EQ(both.errors()[0].message, "--load and --days both set the arrival span");
  EXPECT_NE(both.errors()[0].hint.find("give one"), std::string::npos);
  o.load_given = false;
  Usage days;
  validate_generate(o, days);
  EXPECT_TRUE(days.ok()) << days.summary();
  o.days = 0;
  Usage zero;
  validate_generate(o, zero);
  EXPECT_EQ(zero.summary(), "--days must be above 0");
}

}  // namespace
}  // namespace paictl
