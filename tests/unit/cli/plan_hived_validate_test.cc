// The validate steps of plan and hived diff: every usage error at once, from the
// options alone.

#include <gtest/gtest.h>

#include <string>

#include "command.h"
#include "hived/cmd_hived_diff.h"
#include "plan/cmd_plan.h"

namespace paictl {
namespace {

TEST(PlanValidate, EveryErrorAtOnce) {
  PlanCliOptions o;
  o.pairing_error = "--count must follow the --profile it belongs to";
  o.profile_counts = {{"dgx-a100", 0, 0}, {"nd96", -2, -1}};
  o.dry_run = true;
  o.reserve_memory = "lots";
  Usage u;
  validate_plan(o, u);
  ASSERT_EQ(u.errors().size(), 7u) << u.summary();
  const auto& e = u.errors();
  // In the order of the checks, nothing to plan first.
  EXPECT_EQ(e[0].message.rfind("nothing to plan", 0), 0u) << e[0].message;
  EXPECT_EQ(e[1].message, "--count must follow the --profile it belongs to");
  EXPECT_EQ(e[2].message, "--profile dgx-a100 needs --count N after it");
  EXPECT_EQ(e[3].message, "--count for --profile nd96 must be at least 1");
  EXPECT_EQ(e[4].message, "--racks for --profile nd96 must be 0 or more");
  EXPECT_EQ(e[5].message, "--dry-run compares with the files in --out DIR; give --out");
  EXPECT_EQ(e[6].message, "--reserve-memory lots is not a memory quantity (e.g. 8Gi)");
  o.out = "out";
  o.reserve_memory = "8Gi";
  Usage fewer;
  validate_plan(o, fewer);
  EXPECT_EQ(fewer.errors().size(), 5u) << fewer.summary();
}

TEST(PlanValidate, ListProfilesNeedsNothingElse) {
  PlanCliOptions o;
  o.list_profiles = true;
  o.reserve_memory = "lots";
  Usage u;
  validate_plan(o, u);
  EXPECT_TRUE(u.ok()) << u.summary();
}

TEST(HivedDiffValidate, LiveSnapshotAndUrlTogether) {
  hivedcli::DiffOptions o;
  o.live = true;
  o.snapshot = "/nonexistent/snapshot.json";
  o.h.hived = "10.0.0.1:30096";
  Usage u;
  hivedcli::validate_hived_diff(o, u);
  ASSERT_EQ(u.errors().size(), 3u) << u.summary();
  EXPECT_EQ(u.errors()[0].message,
            "--live and --snapshot both name the running groups; give one of them");
  EXPECT_EQ(u.errors()[1].hint, "write one with paictl hived snapshot --out FILE");
  EXPECT_EQ(u.errors()[2].message, "--hived 10.0.0.1:30096 is not an http:// or https:// URL");
  EXPECT_EQ(u.errors()[2].hint,
            "HiveD's web server listens on :30096, e.g. --hived http://10.0.0.1:30096");
}

}  // namespace
}  // namespace paictl
