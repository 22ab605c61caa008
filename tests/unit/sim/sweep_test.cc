// Sweep specs: the grid they make, their diagnostics with positions, the keys
// of points, trace transforms, and results carried through log text.

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "sim/sweep.h"
#include "sim/trace.h"

namespace pai::sim {
namespace {

const std::string kExamples = PAI_SOURCE_DIR "/examples";

bool parse(const std::string& text, SweepSpec& s, diag::List& d) {
  return parse_sweep_spec(text, "sweep.yaml", kExamples, s, d);
}

TEST(SweepSpec, GridHasEveryCombinationAndSeedsOnlyWhereTheyMatter) {
  SweepSpec s;
  diag::List d;
  ASSERT_TRUE(
      parse("configs: [clusters/heterogeneous]\n"
            "traces:\n"
            "  - traces/philly-small.json\n"
            "  - {name: gen, generate: {jobs: 50}}\n"
            "policies: [hived, quota]\n"
            "load: [1, 2]\n"
            "windows: [all, 0-2d]\n"
            "seeds: [1, 2, 3]\n",
            s, d))
      << (d.empty() ? "" : d.items()[0].message);
  // file trace: 2 windows x 2 loads x 1 seed x 2 policies; generated: x 3 seeds
  auto pts = sweep_points(s);
  EXPECT_EQ(pts.size(), 8u + 24u);
  EXPECT_EQ(point_axes(s, pts[0])["seed"], nullptr);
  EXPECT_EQ(point_axes(s, pts.back())["seed"], 3);
  EXPECT_EQ(s.windows[1].from, 0);
  EXPECT_EQ(s.windows[1].to, 2 * 86400);
  auto keyed = key_sweep_points(s, "v1", pts);
  ASSERT_TRUE(keyed.ok()) << keyed.error().message;
  std::set<std::string> keys;
  for (const auto& p : pts) keys.insert(p.key);
  EXPECT_EQ(keys.size(), pts.size()) << "every point has its own key";
  // The same inputs give the same keys; another version gives others.
  auto again = sweep_points(s), other = sweep_points(s);
  ASSERT_TRUE(key_sweep_points(s, "v1", again).ok());
  ASSERT_TRUE(key_sweep_points(s, "v2", other).ok());
  EXPECT_EQ(again[5].key, pts[5].key);
  EXPECT_NE(other[5].key, pts[5].key);
}

TEST(SweepSpec, ErrorsHaveLineAndColumn) {
  SweepSpec s;
  diag::List d;
  EXPECT_FALSE(
      parse("configs: [clusters/heterogeneous]\n"
            "traces: [traces/philly-small.json]\n"
            "policies: [hived, qouta]\n"
            "load: [1, -2]\n"
            "colours: 3\n",
            s, d));
  ASSERT_EQ(d.size(), 3u);
  std::map<std::string, diag::Diagnostic> by_line;
  for (const auto& x : d.items()) by_line[std::to_string(x.line)] = x;
  EXPECT_EQ(by_line["3"].column, 19u);
  EXPECT_NE(by_line["3"].hint.find("quota"), std::string::npos);
  EXPECT_EQ(by_line["4"].column, 11u);
  EXPECT_EQ(by_line["5"].column, 1u);
  EXPECT_NE(by_line["5"].message.find("colours"), std::string::npos);
}

TEST(SweepSpec, MissingFilesAndUselessSeedsAreErrors) {
  SweepSpec s;
  diag::List d;
  EXPECT_FALSE(parse("configs: [nowhere]\ntraces: [traces/philly-small.json]\n", s, d));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.items()[0].line, 1u);
  EXPECT_EQ(d.items()[0].column, 11u);
  diag::List d2;
  EXPECT_FALSE(
      parse("configs: [clusters/heterogeneous]\ntraces: [traces/philly-small.json]\n"
            "seeds: [1, 2]\n",
            s, d2));
  ASSERT_EQ(d2.size(), 1u);
  EXPECT_EQ(d2.items()[0].code, "G010");
  EXPECT_EQ(d2.items()[0].line, 3u);
  diag::List d3;
  EXPECT_FALSE(parse("configs: [clusters/heterogeneous\n", s, d3));
  ASSERT_EQ(d3.size(), 1u);
  EXPECT_GT(d3.items()[0].line, 0u);
}

// suggested-fraction and suggested-seed: seeds repeat only fractions below 1,
// and a fraction of 1 keeps the key it had before the dimensions existed.
TEST(SweepSpec, SuggestedSetsAreGridDimensions) {
  const std::string base =
      "configs: [clusters/heterogeneous]\n"
      "traces: [{name: gen, generate: {jobs: 30}}]\n"
      "policies: [hived, quota]\n";
  SweepSpec plain, s;
  diag::List d;
  ASSERT_TRUE(parse(base, plain, d));
  ASSERT_TRUE(parse(base + "suggested-fraction: [1, 0.8]\nsuggested-seed: [3, 4]\n", s, d))
      << (d.empty() ? "" : d.items()[0].message);
  // fraction 1: 2 policies; 0.8: 2 suggested seeds x 2 policies
  auto pts = sweep_points(s);
  ASSERT_EQ(pts.size(), 2u + 4u);
  EXPECT_EQ(point_axes(s, pts[0])["suggested_fraction"], 1.0);
  EXPECT_EQ(point_axes(s, pts[0])["suggested_seed"], nullptr);
  EXPECT_EQ(point_axes(s, pts[2])["suggested_fraction"], 0.8);
  EXPECT_EQ(point_axes(s, pts[2])["suggested_seed"], 3);
  EXPECT_EQ(point_axes(s, pts.back())["suggested_seed"], 4);
  EXPECT_EQ(point_axes(s, pts.back())["policy"], "quota");
  auto keyed = key_sweep_points(s, "v1", pts);
  ASSERT_TRUE(keyed.ok()) << keyed.error().message;
  std::set<std::string> keys;
  for (const auto& p : pts) keys.insert(p.key);
  EXPECT_EQ(keys.size(), pts.size());
  auto old = sweep_points(plain);
  auto keyed_old = key_sweep_points(plain, "v1", old);
  ASSERT_TRUE(keyed_old.ok()) << keyed_old.error().message;
  ASSERT_EQ(old.size(), 2u);
  EXPECT_EQ(old[0].key, pts[0].key) << "fraction 1 is the sweep without suggested sets";
  EXPECT_EQ(old[1].key, pts[1].key);

  diag::List bad;
  EXPECT_FALSE(parse(base + "suggested-fraction: [0.9, 1.5, 0.9]\nsuggested-seed: -1\n", s, bad));
  ASSERT_EQ(bad.size(), 3u);
  EXPECT_EQ(bad.items()[0].code, "G009");
  EXPECT_EQ(bad.items()[0].line, 4u);
  EXPECT_EQ(bad.items()[0].column, 27u);
  EXPECT_EQ(bad.items()[1].code, "G006");
  EXPECT_EQ(bad.items()[1].column, 32u);
  EXPECT_EQ(bad.items()[2].line, 5u);
  diag::List useless;
  EXPECT_FALSE(parse(base + "suggested-seed: [1, 2]\n", s, useless));
  ASSERT_EQ(useless.size(), 1u);
  EXPECT_EQ(useless.items()[0].code, "G010");
  EXPECT_EQ(useless.items()[0].line, 4u);
}

// The point's fraction reaches the simulation: with 0 no node passes
// Kubernetes' filters and no policy starts a job.
TEST(SweepSpec, APointRunsWithItsSuggestedFraction) {
  SweepSpec s;
  diag::List d;
  ASSERT_TRUE(
      parse("configs: [clusters/heterogeneous]\n"
            "traces: [{name: gen, generate: {jobs: 20}}]\n"
            "policies: [quota]\n"
            "suggested-fraction: [1, 0]\n",
            s, d));
  auto pts = sweep_points(s);
  ASSERT_EQ(pts.size(), 2u);
  auto all = run_sweep_point(s, pts[0]);
  ASSERT_TRUE(all.ok()) << all.error().message;
  auto none = run_sweep_point(s, pts[1]);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ((*all)["result"]["finished"], 20);
  EXPECT_EQ((*none)["result"]["finished"], 0);
}

TEST(SweepTransform, WindowThenLoad) {
  Trace t;
  for (int i = 0; i < 10; ++i) {
    TraceJob j;
    j.submit = i * 100.0;
    j.duration = 10;
    j.pods = 1;
    j.gpus = 1;
    j.vc = t.intern_vc("a");
    t.add(j, "j" + std::to_string(i), {});
  }
  t.finish();
  transform_trace(t, 250, 700, 2);
  ASSERT_EQ(t.jobs.size(), 4u);  // 300, 400, 500, 600
  EXPECT_EQ(t.jobs[0].submit, 0);
  EXPECT_EQ(t.jobs[3].submit, 150);  // (600 - 300) / 2
  EXPECT_EQ(t.id(t.jobs[0]), "j3");
}

TEST(SweepResults, SurviveLogTextAndCutOnesAreIgnored) {
  nlohmann::json r{{"result", {{"jobs", 5}, {"name", "a\nb"}}}};
  std::string log = "starting\n" + encode_result("00000000000000aa", r) + "noise\n" +
                    encode_result("00000000000000bb", {{"x", 1}});
  auto got = decode_results(log);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got["00000000000000aa"], r);
  // A log that wraps the long line still gives the result.
  std::string wrapped = encode_result("00000000000000cc", r);
  wrapped.insert(wrapped.find("\"name\""), "\n");
  EXPECT_EQ(decode_results(wrapped).size(), 1u);
  // A cut result (a byte missing) is not a result.
  std::string cut = encode_result("00000000000000dd", r);
  cut.erase(cut.find("jobs"), 1);
  EXPECT_TRUE(decode_results(cut).empty());
}

}  // namespace
}  // namespace pai::sim
