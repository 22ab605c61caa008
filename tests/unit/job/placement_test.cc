// Checking a job against cluster facts, and ranking clusters for --cluster auto.

#include <gtest/gtest.h>

#include "job/placement.h"

namespace {

using pai::api::Resources;
using pai::api::SkuType;
using pai::api::VirtualCluster;
using pai::job::ClusterFacts;
using pai::job::JobRequest;
using pai::job::TaskRoleRequest;

VirtualCluster vc(const std::string& name, double total_gpu, double used_gpu) {
  VirtualCluster v;
  v.name = name;
  v.total = {total_gpu * 4, total_gpu * 16384, total_gpu};
  v.guaranteed = v.total;
  v.used = {used_gpu * 4, used_gpu * 16384, used_gpu};
  return v;
}

ClusterFacts facts(const std::string& name, double total_gpu, double used_gpu) {
  ClusterFacts f;
  f.cluster = name;
  f.user = "alice";
  f.vcs = {vc("default", total_gpu, used_gpu)};
  pai::api::UserInfo u;
  u.username = "alice";
  u.virtual_clusters = {"default"};
  f.user_info = u;
  f.skus = std::vector<SkuType>{{"GPU", 4, 16384, 1}, {"CPU", 8, 32768, 0}};
  f.storages = std::vector<pai::api::Storage>{{"team-nfs", true, true}};
  f.name_taken = false;
  return f;
}

JobRequest job(int gpus) {
  JobRequest j;
  j.name = "train";
  j.virtual_cluster = "default";
  TaskRoleRequest t;
  t.name = "worker";
  t.instances = gpus;
  t.cpu = 4;
  t.gpu = 1;
  t.memory_mb = 16384;
  t.sku_type = "GPU";
  j.task_roles.push_back(t);
  return j;
}

const pai::job::Check* check(const pai::job::Evaluation& e, const std::string& name) {
  for (const auto& c : e.checks)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(Placement, AllChecksPass) {
  auto e = pai::job::evaluate(job(2), facts("lab", 8, 2));
  EXPECT_TRUE(e.eligible) << e.reason;
  EXPECT_TRUE(e.fits_now);
  EXPECT_DOUBLE_EQ(e.free.gpu, 6);
  EXPECT_DOUBLE_EQ(e.headroom, 3);
}

TEST(Placement, EachCheckCanDropTheCluster) {
  {
    auto f = facts("lab", 8, 2);
    f.vcs[0].name = "other";
    auto e = pai::job::evaluate(job(1), f);
    EXPECT_FALSE(e.eligible);
    EXPECT_FALSE(check(e, "vc")->ok);
  }
  {
    auto f = facts("lab", 8, 2);
    f.user_info->virtual_clusters = {"research"};
    auto e = pai::job::evaluate(job(1), f);
    EXPECT_FALSE(check(e, "permission")->ok);
    f.user_info->admin = true;  // administrators may use every VC
    EXPECT_TRUE(pai::job::evaluate(job(1), f).eligible);
  }
  {
    auto j = job(1);
    j.task_roles[0].sku_type = "V100";
    auto e = pai::job::evaluate(j, facts("lab", 8, 2));
    EXPECT_FALSE(check(e, "sku")->ok);
    EXPECT_NE(e.reason.find("V100"), std::string::npos);
  }
  {
    auto j = job(1);
    j.task_roles[0].sku_type = "CPU";  // asks for a GPU on a SKU without GPUs
    auto e = pai::job::evaluate(j, facts("lab", 8, 2));
    EXPECT_FALSE(check(e, "sku")->ok);
    EXPECT_NE(e.reason.find("has none"), std::string::npos) << e.reason;
  }
  {
    auto e = pai::job::evaluate(job(16), facts("lab", 8, 0));
    EXPECT_FALSE(check(e, "resources")->ok);
    auto j = job(16);
    j.priority_class = "oppo";  // opportunistic jobs are not bounded by the quota
    EXPECT_TRUE(check(pai::job::evaluate(j, facts("lab", 8, 0)), "resources")->ok);
  }
  {
    auto j = job(1);
    j.storages = {"team-nfs", "scratch"};
    auto e = pai::job::evaluate(j, facts("lab", 8, 2));
    EXPECT_FALSE(check(e, "storages")->ok);
    EXPECT_NE(e.reason.find("scratch"), std::string::npos);
  }
  {
    auto f = facts("lab", 8, 2);
    f.name_taken = true;
    EXPECT_FALSE(check(pai::job::evaluate(job(1), f), "name")->ok);
  }
  {
    ClusterFacts f;
    f.cluster = "down";
    pai::api::Error err;
    err.kind = pai::api::Error::Kind::Transport;
    err.message = "connection refused";
    f.error = err;
    auto e = pai::job::evaluate(job(1), f);
    EXPECT_FALSE(e.eligible);
    EXPECT_NE(e.reason.find("unreachable"), std::string::npos);
  }
}

TEST(Placement, RankingPutsFitNowFirstThenPreferenceThenHeadroom) {
  std::vector<ClusterFacts> all = {facts("a", 8, 7), facts("b", 32, 0), facts("c", 16, 0),
                                   facts("d", 8, 2)};
  all.push_back(facts("e", 8, 0));
  all.back().vcs[0].name = "nope";
  // Job of 4 GPUs: a has 1 free (would wait), b 32, c 16, d 6; e is dropped.
  auto r = pai::job::rank_clusters(job(4), all, {"d", "a"});
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0].cluster, "d");  // fits now and preferred
  EXPECT_EQ(r[1].cluster, "b");  // fits now, not listed, more headroom than c
  EXPECT_EQ(r[2].cluster, "c");
  EXPECT_EQ(r[3].cluster, "a");  // preferred, but would wait
  EXPECT_EQ(r[4].cluster, "e");
  EXPECT_EQ(r[0].rank, 1);
  EXPECT_EQ(r[3].rank, 4);
  EXPECT_EQ(r[4].rank, 0);
  EXPECT_FALSE(r[4].eligible);
  // Without a preference order: headroom decides among those that fit now.
  auto r2 = pai::job::rank_clusters(job(4), all, {});
  EXPECT_EQ(r2[0].cluster, "b");
  EXPECT_EQ(r2[1].cluster, "c");
  EXPECT_EQ(r2[2].cluster, "d");
}

TEST(Placement, SkuCountFollowsTheHivedMiddleware) {
  TaskRoleRequest t;
  t.name = "w";
  t.gpu = 3;
  t.cpu = 4;
  t.memory_mb = 100000;
  auto n = pai::job::sku_count(t, {"GPU", 4, 16384, 1});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 7);  // memory: ceil(100000 / 16384)
  t.memory_mb = 0;
  EXPECT_EQ(*pai::job::sku_count(t, {"GPU", 4, 16384, 1}), 3);
  auto none = pai::job::sku_count(t, {"CPU", 8, 32768, 0});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("GPU"), std::string::npos);
}

}  // namespace
