// The generator: seeded and portable, Philly-shaped jobs and clusters.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "scheduler/cluster.h"
#include "scheduler/helpers.h"
#include "sim/generate.h"
#include "sim/trace.h"

namespace pai::sim {
namespace {

TEST(Generate, SameSeedSameTraceAnywhere) {
  GenerateOptions g;
  g.jobs = 2000;
  g.seed = 11;
  auto tmpl = philly_cluster_template(1, 15);
  std::string a = write_native_csv(generate_trace(g, tmpl)),
              b = write_native_csv(generate_trace(g, tmpl));
  EXPECT_EQ(a, b);
  g.seed = 12;
  EXPECT_NE(a, write_native_csv(generate_trace(g, tmpl)));
  // The generator's numbers are its own (splitmix64), not the standard library's.
  SplitMix64 r(0);
  EXPECT_EQ(r.next(), 0xe220a8397b1dcdafull);
}

TEST(Generate, JobsLookLikePhilly) {
  GenerateOptions g;
  g.jobs = 20000;
  auto tmpl = philly_cluster_template(1, 15);
  Trace t = generate_trace(g, tmpl);
  ASSERT_EQ(t.jobs.size(), 20000u);
  std::map<int64_t, int64_t> sizes;
  double work = 0;
  for (const auto& j : t.jobs) {
    sizes[t.gpus(j)]++;
    work += static_cast<double>(t.gpus(j)) * j.duration;
    EXPECT_GE(j.duration, 60);
    EXPECT_LE(j.duration, 14 * 86400);
    EXPECT_LE(j.gpus, 8);  // a pod fits a node
  }
  EXPECT_GT(sizes[1], 0.6 * 20000);
  EXPECT_LE(sizes.rbegin()->first, 128);
  EXPECT_GT(sizes.rbegin()->first, 16);
  // The arrival span gives the requested load.
  double span = t.jobs.back().submit;
  EXPECT_NEAR(work / (span * static_cast<double>(tmpl.gpus)), 0.7, 0.05);
  // Diurnal: the busiest hour of the day sees clearly more arrivals than the quietest.
  std::vector<int64_t> by_hour(24, 0);
  for (const auto& j : t.jobs)
    by_hour[static_cast<size_t>(std::fmod(t.origin + j.submit, 86400.0) / 3600)]++;
  EXPECT_GT(*std::max_element(by_hour.begin(), by_hour.end()),
            2 * *std::min_element(by_hour.begin(), by_hour.end()));
}

TEST(Generate, PhillyShapedClusterIsAValidHivedConfig) {
  auto model = scheduler::test::model_from_yaml(philly_cluster_config(1, 15));
  auto shape = scheduler::describe_cluster(*model);
  EXPECT_EQ(shape.nodes.size(), 552u);
  EXPECT_EQ(shape.leaf_cells, 2490);
  EXPECT_EQ(shape.vcs.size(), 15u);
  int64_t guaranteed = 0;
  for (const auto& v : shape.vcs)
    for (int64_t n : v.guaranteed) guaranteed += n;
  EXPECT_EQ(guaranteed, 2490);
  // The template the generator uses without a config matches the config's model.
  auto a = philly_cluster_template(1, 15), b = cluster_template(*model);
  ASSERT_EQ(a.vcs.size(), b.vcs.size());
  for (size_t i = 0; i < a.vcs.size(); ++i) {
    EXPECT_EQ(a.vcs[i].name, b.vcs[i].name);
    EXPECT_EQ(a.vcs[i].gpus, b.vcs[i].gpus);
  }
  auto big =
      scheduler::describe_cluster(*scheduler::test::model_from_yaml(philly_cluster_config(10, 15)));
  EXPECT_EQ(big.nodes.size(), 5520u);
}

TEST(Generate, JobsFitTheirVirtualClusters) {
  auto model = scheduler::test::model_from_yaml(scheduler::test::kTwoSkuConfig);
  auto tmpl = cluster_template(*model);
  GenerateOptions g;
  g.jobs = 3000;
  Trace t = generate_trace(g, tmpl);
  for (const auto& j : t.jobs) {
    const auto& vc =
        tmpl.vcs[static_cast<size_t>(std::find_if(tmpl.vcs.begin(), tmpl.vcs.end(),
                                                  [&](const auto& v) {
                                                    return v.name ==
                                                           t.vc_names[static_cast<size_t>(j.vc)];
                                                  }) -
                                     tmpl.vcs.begin())];
    EXPECT_LE(t.gpus(j), vc.gpus);
  }
}

}  // namespace
}  // namespace pai::sim
