// A job as the requests OpenPAI's rest-server gives HiveD: priorities, leaf
// cell numbers, affinity groups (named, the default gang, one per pod).

#include <gtest/gtest.h>

#include "job/hived_request.h"

namespace {

using pai::api::SkuType;
using pai::job::hived_requests;
using pai::job::JobFile;
using pai::job::JobRequest;

const std::vector<SkuType> kSkus = {{"V100", 8, 65536, 1}, {"K80", 4, 16384, 1}};
const std::set<std::string> kLeaves = {"V100", "K80"};

JobRequest job(const std::string& yaml) {
  return pai::job::request_of(JobFile::parse(yaml, "job.yaml"));
}

TEST(HivedRequest, PriorityClasses) {
  EXPECT_EQ(pai::job::hived_priority(""), 10);
  EXPECT_EQ(pai::job::hived_priority("test"), 10);
  EXPECT_EQ(pai::job::hived_priority("prod"), 100);
  EXPECT_EQ(pai::job::hived_priority("crit"), 120);
  EXPECT_EQ(pai::job::hived_priority("oppo"), -1);
  EXPECT_FALSE(pai::job::hived_priority("urgent").has_value());
}

TEST(HivedRequest, JobOfGroup) {
  EXPECT_EQ(pai::job::job_of_group("alice~train/default"), "alice~train");
  EXPECT_EQ(pai::job::job_of_group("alice~train/ps"), "alice~train");
  EXPECT_EQ(pai::job::job_of_group("alice~train"), "alice~train");
  EXPECT_EQ(pai::job::job_of_group("ns/pod-0"), "ns");
}

TEST(HivedRequest, TheDefaultGangHoldsEveryRole) {
  // Two roles, gangAllocation unset: one group USER~JOB/default. The worker's 2
  // GPUs and 20 CPUs on V100 (8 CPUs a leaf) take 3 leaf cells; the two
  // 1-leaf roles merge into one member of 3 pods.
  auto j = job(R"(protocolVersion: 2
name: train
taskRoles:
  worker: {instances: 4, resourcePerInstance: {gpu: 2, cpu: 20, memoryMB: 1000}}
  ps: {instances: 2, resourcePerInstance: {gpu: 1, cpu: 8, memoryMB: 1000}}
  eval: {instances: 1, resourcePerInstance: {gpu: 1, cpu: 1, memoryMB: 100}}
defaults: {virtualCluster: prod}
extras:
  hivedScheduler:
    jobPriorityClass: prod
    taskRoles:
      worker: {skuType: V100}
      ps: {skuType: V100}
      eval: {skuType: V100}
)");
  auto r = hived_requests(j, "alice", kSkus, kLeaves);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->groups.size(), 1u);
  EXPECT_FALSE(r->per_pod);
  const auto& g = r->groups[0];
  EXPECT_EQ(g.affinity_group, "alice~train/default");
  EXPECT_EQ(g.virtual_cluster, "prod");
  EXPECT_EQ(g.priority, 100);
  EXPECT_EQ(g.leaf_cell_type, "V100");
  ASSERT_EQ(g.members.size(), 2u);
  EXPECT_EQ(g.members[0].pod_number, 4);
  EXPECT_EQ(g.members[0].leaf_cell_number, 3);
  EXPECT_EQ(g.members[1].pod_number, 3);
  EXPECT_EQ(g.members[1].leaf_cell_number, 1);
}

TEST(HivedRequest, WithoutASkuTypeTheSmallestSkuIsTheUnit) {
  // No skuType: measured in the smallest of the SKUs (4 CPUs, 16 GiB, 1 GPU):
  // 1 GPU but 10 CPUs -> 3 leaf cells; any leaf type; the VC defaults.
  auto j = job(R"(protocolVersion: 2
name: any
taskRoles:
  w: {instances: 1, resourcePerInstance: {gpu: 1, cpu: 10, memoryMB: 100}}
)");
  auto r = hived_requests(j, "bob", kSkus, kLeaves);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->groups.size(), 1u);
  EXPECT_EQ(r->groups[0].virtual_cluster, "default");
  EXPECT_EQ(r->groups[0].priority, 10);
  EXPECT_EQ(r->groups[0].leaf_cell_type, "");
  ASSERT_EQ(r->groups[0].members.size(), 1u);
  EXPECT_EQ(r->groups[0].members[0].leaf_cell_number, 3);
}

TEST(HivedRequest, NamedAffinityGroups) {
  auto j = job(R"(protocolVersion: 2
name: mixed
taskRoles:
  a: {instances: 2, resourcePerInstance: {gpu: 1, cpu: 1, memoryMB: 100}}
  b: {instances: 3, resourcePerInstance: {gpu: 2, cpu: 1, memoryMB: 100}}
  c: {instances: 1, resourcePerInstance: {gpu: 4, cpu: 1, memoryMB: 100}}
  d: {instances: 1, resourcePerInstance: {gpu: 1, cpu: 1, memoryMB: 100}}
extras:
  hivedScheduler:
    taskRoles:
      a: {skuType: K80, affinityGroupName: g1}
      b: {skuType: K80, affinityGroupName: g1}
      c: {skuType: K80, affinityGroupName: g2}
      d: {skuType: K80}
)");
  auto r = hived_requests(j, "carol", kSkus, kLeaves);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->groups.size(), 3u);
  EXPECT_EQ(r->groups[0].affinity_group, "carol~mixed/g1");
  ASSERT_EQ(r->groups[0].members.size(), 2u);
  EXPECT_EQ(r->groups[0].members[0].pod_number, 2);
  EXPECT_EQ(r->groups[0].members[1].pod_number, 3);
  EXPECT_EQ(r->groups[0].members[1].leaf_cell_number, 2);
  EXPECT_EQ(r->groups[1].affinity_group, "carol~mixed/g2");
  // A role outside the named groups: each of its pods is its own group.
  EXPECT_EQ(r->groups[2].affinity_group, "carol~mixed/d");
  EXPECT_EQ(r->groups[2].members[0].pod_number, 1);
}

TEST(HivedRequest, NoGangMeansOnePodAGroup) {
  auto j = job(R"(protocolVersion: 2
name: loose
taskRoles:
  w: {instances: 8, resourcePerInstance: {gpu: 1, cpu: 1, memoryMB: 100}}
extras:
  gangAllocation: false
  hivedScheduler: {jobPriorityClass: oppo}
)");
  auto r = hived_requests(j, "dan", kSkus, kLeaves);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->per_pod);
  ASSERT_EQ(r->groups.size(), 1u);
  EXPECT_EQ(r->groups[0].priority, -1);
  EXPECT_EQ(r->groups[0].members[0].pod_number, 1);
  // Only the boolean true gangs: a string does not.
  auto s =
      job("protocolVersion: 2\nname: s\ntaskRoles:\n  w: {instances: 2, resourcePerInstance: "
          "{gpu: 1, cpu: 1, memoryMB: 1}}\nextras: {gangAllocation: 'true'}\n");
  EXPECT_FALSE(s.gang_allocation);
}

TEST(HivedRequest, JobsHiveDCannotBeAskedFor) {
  // Why a job cannot be asked for, or "" when it can.
  auto why_not = [](const pai::util::Result<pai::job::HivedRequests>& r) {
    return r.ok() ? std::string() : r.error().message;
  };
  std::string why;
  auto unknown_sku = job(R"(protocolVersion: 2
name: x
taskRoles:
  w: {instances: 1, resourcePerInstance: {gpu: 1, cpu: 1, memoryMB: 1}}
extras: {hivedScheduler: {taskRoles: {w: {skuType: A100}}}}
)");
  why = why_not(hived_requests(unknown_sku, "u", kSkus, kLeaves));
  EXPECT_FALSE(why.empty());
  EXPECT_NE(why.find("SKU A100"), std::string::npos) << why;

  auto bad_class = job(R"(protocolVersion: 2
name: x
taskRoles:
  w: {instances: 1, resourcePerInstance: {gpu: 1, cpu: 1, memoryMB: 1}}
extras: {hivedScheduler: {jobPriorityClass: urgent}}
)");
  why = why_not(hived_requests(bad_class, "u", kSkus, kLeaves));
  EXPECT_FALSE(why.empty());
  EXPECT_NE(why.find("urgent"), std::string::npos) << why;

  // A GPU request on a SKU without GPUs.
  auto no_gpu = job(R"(protocolVersion: 2
name: x
taskRoles:
  w: {instances: 1, resourcePerInstance: {gpu: 1, cpu: 1, memoryMB: 1}}
extras: {hivedScheduler: {taskRoles: {w: {skuType: CPU}}}}
)");
  why = why_not(hived_requests(no_gpu, "u", {{"CPU", 8, 1024, 0}}, kLeaves));
  EXPECT_FALSE(why.empty());
  EXPECT_NE(why.find("GPU"), std::string::npos) << why;
  why = why_not(hived_requests(no_gpu, "u", {}, kLeaves));
  EXPECT_FALSE(why.empty());
}

}  // namespace
