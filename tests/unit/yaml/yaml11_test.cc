#include "yaml/yaml11.h"

#include <gtest/gtest.h>

namespace pai::yaml {
namespace {

std::vector<LoaderDifference> diffs(const char* text, Loader l) {
  static std::vector<Stream> keep;  // the findings point into the stream
  keep.push_back(load(text));
  EXPECT_FALSE(keep.back().error);
  return loader_differences(keep.back(), l, "the loader");
}

TEST(Yaml11, PyYamlReadingsThatDifferFromYaml12) {
  auto d = diffs("a: yes\nb: 0777\nc: 1:20\nd: 1_000\ne: 1e3\nf: 2024-01-01\ng: 0o17\non: off\n",
                 Loader::PyYaml);
  ASSERT_EQ(d.size(), 9u);
  EXPECT_EQ(d[0].node->mark(), (Mark{1, 4}));
  EXPECT_EQ(d[0].message,
            "the loader reads yes as the boolean true, while YAML 1.2 (and paictl) reads the "
            "string \"yes\"");
  EXPECT_NE(d[1].message.find("the number 511"), std::string::npos);
  EXPECT_NE(d[1].message.find("the number 777"), std::string::npos);
  EXPECT_NE(d[2].message.find("the number 80"), std::string::npos);
  EXPECT_NE(d[3].message.find("the number 1000"), std::string::npos);
  EXPECT_NE(d[4].message.find("reads 1e3 as the string \"1e3\""), std::string::npos);
  EXPECT_NE(d[5].message.find("the date 2024-01-01"), std::string::npos);
  EXPECT_NE(d[6].message.find("reads 0o17 as the string"), std::string::npos);
  EXPECT_EQ(d[7].node->mark(), (Mark{8, 1}));  // keys too
  EXPECT_EQ(d[8].node->mark(), (Mark{8, 5}));
  for (const auto& x : d) EXPECT_FALSE(x.hint.empty());
}

TEST(Yaml11, SameReadingsQuotedAndTaggedValuesAreNotReported) {
  EXPECT_TRUE(diffs("a: true\nb: 12\nc: 1.5\nd: 0x1F\ne: ~\nf: \"yes\"\ng: !!str 0777\nh: 'on'\n"
                    "i: .inf\nj: 1.0e+3\nk: text\nl: |\n  yes\n",
                    Loader::PyYaml)
                  .empty());
}

TEST(Yaml11, GoYamlV2) {
  auto d = diffs("a: y\nb: 010\nc: 1:20\nd: 1_000\ne: 1e3\nf: 0o17\n", Loader::GoYamlV2);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_NE(d[0].message.find("reads y as the boolean true"), std::string::npos);
  EXPECT_NE(d[1].message.find("reads 010 as the number 8,"), std::string::npos);
  EXPECT_NE(d[2].message.find("reads 1_000 as the number 1000"), std::string::npos);
}

TEST(Yaml11, AnAliasedNodeIsReportedOnce) {
  auto d = diffs("a: &x yes\nb: *x\nc: [*x, *x]\n", Loader::PyYaml);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].node->mark(), (Mark{1, 7}));
}

}  // namespace
}  // namespace pai::yaml
