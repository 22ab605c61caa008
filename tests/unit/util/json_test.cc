// JSON from outside is refused when it nests deeper than a bound: copying,
// comparing or dumping a value recurses once per level, so a server answering
// `[[[[...` a million deep would otherwise overflow the stack.
#include "util/json.h"

#include <gtest/gtest.h>

#include <string>

namespace pai::util {
namespace {

std::string json_test_nested_arrays(size_t n) {
  return std::string(n, '[') + std::string(n, ']');
}

std::string json_test_nested_objects(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += "{\"a\":";
  s += "1";
  s += std::string(n, '}');
  return s;
}

TEST(JsonDepth, AMillionNestedArraysAreRefusedWithAPosition) {
  std::string text = "\n  " + json_test_nested_arrays(1000000);
  auto r = parse_json(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().line, 2u);
  EXPECT_EQ(r.error().column, 3u + kJsonMaxDepth);  // the bracket one level too deep
  EXPECT_NE(r.error().message.find("nested deeper than 512 levels"), std::string::npos)
      << r.error().message;
  EXPECT_TRUE(parse_json_or_discarded(text).is_discarded());
}

TEST(JsonDepth, DeepObjectsAreRefused) {
  std::string text = json_test_nested_objects(200000);
  EXPECT_FALSE(parse_json(text).ok());
  EXPECT_TRUE(parse_json_or_discarded(text).is_discarded());
}

TEST(JsonDepth, AnUnclosedDeepDocumentIsRefused) {
  EXPECT_TRUE(parse_json_or_discarded(std::string(300000, '[')).is_discarded());
}

TEST(JsonDepth, TheBoundItselfIsAccepted) {
  auto r = parse_json(json_test_nested_arrays(kJsonMaxDepth));
  ASSERT_TRUE(r.ok()) << r.error().message;
  nlohmann::json copy = *r;  // copying recurses: fine at this depth
  EXPECT_EQ(dump_json(copy).size(), 2 * kJsonMaxDepth);
  EXPECT_FALSE(parse_json(json_test_nested_arrays(kJsonMaxDepth + 1)).ok());
  EXPECT_FALSE(parse_json_or_discarded(json_test_nested_objects(kJsonMaxDepth)).is_discarded());
}

TEST(JsonDepth, BracketsInStringsDoNotCount) {
  std::string text =
      "{\"k\": \"" + std::string(10000, '[') + "\\\"" + std::string(10000, '{') + "\"}";
  auto r = parse_json(text);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["k"].get<std::string>().size(), 20001u);
}

TEST(JsonDepth, ASmallerBoundIsHonoured) {
  EXPECT_TRUE(json_too_deep("[[[1]]]", 2).has_value());
  EXPECT_EQ(*json_too_deep("[[[1]]]", 2), 2u);
  EXPECT_FALSE(json_too_deep("[[1],[2],{\"a\":3}]", 2).has_value());
  EXPECT_FALSE(parse_json("[[[1]]]", 2).ok());
  EXPECT_TRUE(parse_json("[[[1]]]", 3).ok());
}

TEST(JsonParse, SyntaxErrorsStillCarryTheirPosition) {
  auto r = parse_json("{\n  \"a\": tru\n}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().line, 2u);
}

TEST(JsonDuplicateKey, FoundWithItsPositionInAnyObject) {
  auto d = json_duplicate_key("{\n  \"a\": 1,\n  \"b\": {\"x\": [1, {\"y\": 2}]},\n  \"a\": 3\n}");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->line, 4u);
  EXPECT_EQ(d->column, 3u);
  EXPECT_EQ(d->message, "duplicate key \"a\"");
  auto nested = json_duplicate_key("[{\"k\": 1}, {\"k\": 2, \"m\": {\"k\": 1, \"k\" : 2}}]");
  ASSERT_TRUE(nested.has_value());
  EXPECT_EQ(nested->message, "duplicate key \"k\"");
}

TEST(JsonDuplicateKey, SameKeysInSiblingObjectsAndStringValuesAreFine) {
  EXPECT_FALSE(json_duplicate_key("[{\"k\": 1}, {\"k\": 2}]").has_value());
  EXPECT_FALSE(
      json_duplicate_key("{\"a\": \"a\", \"b\": [\"a\", \"a\"], \"c\": \"x\\\":\"}").has_value());
}

}  // namespace
}  // namespace pai::util
