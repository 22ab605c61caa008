// A sweep's jobs: every combination of the values, named after the job, the
// sweep and the values.

#include <gtest/gtest.h>

#include "job/sweep.h"

namespace {

using pai::job::job_name_of;
using pai::job::sweep_jobs;

TEST(Sweep, JobNamesKeepOnlyWhatTheServerTakes) {
  EXPECT_EQ(job_name_of("train-lr0.1_a"), "train-lr0_1_a");
  EXPECT_EQ(job_name_of("a b/c~d"), "a_b_c_d");
  EXPECT_EQ(job_name_of(std::string(300, 'x')).size(), 255u);
}

TEST(Sweep, EveryCombinationTheLastAxisFastest) {
  auto jobs = sweep_jobs("train", "s1", {{"lr", {"1", "2"}}, {"bs", {"8", "16", "32"}}}, "");
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 6u);
  EXPECT_EQ((*jobs)[0].label, "lr1-bs8");
  EXPECT_EQ((*jobs)[1].label, "lr1-bs16");
  EXPECT_EQ((*jobs)[3].label, "lr2-bs8");
  EXPECT_EQ((*jobs)[5].label, "lr2-bs32");
  const auto& last = (*jobs)[5].overrides;
  EXPECT_EQ(*last.name, "train-s1-lr2-bs32");
  ASSERT_EQ(last.params.size(), 2u);
  EXPECT_EQ(last.params[0].name, "lr");
  EXPECT_EQ(last.params[0].value, "2");
  EXPECT_EQ(last.params[1].name, "bs");
  EXPECT_EQ(last.params[1].value, "32");
  EXPECT_FALSE(last.virtual_cluster.has_value());
}

TEST(Sweep, TheVcGoesToEveryJob) {
  auto jobs = sweep_jobs("j", "s", {{"a", {"1", "2"}}}, "prod");
  ASSERT_TRUE(jobs.ok());
  for (const auto& j : *jobs) EXPECT_EQ(j.overrides.virtual_cluster.value_or(""), "prod");
}

TEST(Sweep, LongNamesAreCutAndNumbered) {
  auto jobs = sweep_jobs(std::string(250, 'b'), "s", {{"p", {"1", "2"}}}, "");
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  const std::string cut(240, 'b');
  for (size_t i = 0; i < 2; ++i) {
    const std::string& name = *(*jobs)[i].overrides.name;
    EXPECT_EQ(name.substr(0, 240), cut);
    EXPECT_EQ(name.substr(240), "-" + std::to_string(i));
  }
}

TEST(Sweep, NamesThatCollideAreRefused) {
  auto jobs = sweep_jobs("j", "s", {{"p", {"a.b", "a/b"}}}, "");
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.error().message,
            "two jobs of the sweep get the name j-s-pa_b (values that differ only in characters a "
            "name cannot hold)");
  EXPECT_EQ(jobs.error().kind, pai::util::Error::Kind::Input);
}

}  // namespace
