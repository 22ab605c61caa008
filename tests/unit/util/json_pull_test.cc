#include "util/json_pull.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace pai::util {
namespace {

using Kind = JsonPull::Kind;

// Reads any value back into nlohmann's tree, to compare with its parser.
nlohmann::json read(JsonPull& r) {
  std::string scratch;
  std::string_view v;
  switch (r.peek()) {
    case Kind::Object: {
      nlohmann::json o = nlohmann::json::object();
      r.begin_object();
      while (r.next_key(v, scratch)) {
        std::string k(v);
        o[k] = read(r);
      }
      return o;
    }
    case Kind::Array: {
      nlohmann::json a = nlohmann::json::array();
      r.begin_array();
      while (r.next_element()) a.push_back(read(r));
      return a;
    }
    case Kind::String: {
      std::string s;
      r.read_string(s);
      return s;
    }
    case Kind::Number: {
      bool integer = false;
      r.read_number(v, integer);
      return nlohmann::json::parse(v);
    }
    case Kind::Bool: {
      bool b = false;
      r.read_bool(b);
      return b;
    }
    case Kind::Null:
      r.read_null();
      return nullptr;
    default:
      r.skip();
      return nullptr;
  }
}

TEST(JsonPull, ReadsWhatNlohmannReads) {
  const char* texts[] = {
      R"({"a": [1, -2, 3.5, 1e3, true, false, null], "b": {"c": "d", "e": {}}, "f": []})",
      R"("caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t")",
      "  [ \"ünïcödé\", {\"k\\u0041\": 0} ]  ",
      "-0",
  };
  for (const char* t : texts) {
    JsonPull r(t);
    nlohmann::json got = read(r);
    EXPECT_TRUE(r.expect_end()) << t << ": " << r.error();
    EXPECT_EQ(got, nlohmann::json::parse(t)) << t;
  }
}

TEST(JsonPull, KeysWithoutEscapesAreViewsIntoTheText) {
  std::string text = R"({"plain": 1, "esc\u0061ped": 2})";
  JsonPull r(text);
  std::string scratch;
  std::string_view key;
  ASSERT_TRUE(r.begin_object());
  ASSERT_TRUE(r.next_key(key, scratch));
  EXPECT_EQ(key, "plain");
  EXPECT_TRUE(key.data() >= text.data() && key.data() < text.data() + text.size());
  ASSERT_TRUE(r.skip());
  ASSERT_TRUE(r.next_key(key, scratch));
  EXPECT_EQ(key, "escaped");
  EXPECT_EQ(key.data(), scratch.data());
  ASSERT_TRUE(r.skip());
  EXPECT_FALSE(r.next_key(key, scratch));
  EXPECT_TRUE(r.ok());
}

TEST(JsonPull, NumbersSayWhetherTheyAreIntegers) {
  JsonPull r("[12, 1.0, 2e1, -7]");
  std::string_view t;
  bool integer = false;
  std::vector<bool> kinds;
  ASSERT_TRUE(r.begin_array());
  while (r.next_element()) {
    ASSERT_TRUE(r.read_number(t, integer));
    kinds.push_back(integer);
  }
  EXPECT_EQ(kinds, (std::vector<bool>{true, false, false, true}));
}

TEST(JsonPull, BadTextGivesAPositionAndTheFirstErrorSticks) {
  struct Case {
    const char* text;
    uint32_t line, column;
  };
  const Case cases[] = {
      {"{\"a\": 1,}", 1, 9},      // trailing comma
      {"[1, 2\n, 3", 2, 4},       // unterminated array
      {"{\"a\" 1}", 1, 6},        // no colon
      {"\"tab\tinside\"", 1, 5},  // raw control character
      {"[01]", 1, 3},             // leading zero: 0, then '1' where ',' belongs
      {"\"\\ud800x\"", 1, 8},     // lone surrogate
      {"\"\xff\"", 1, 2},         // invalid UTF-8
      {"[1] [2]", 1, 5},          // text after the value
      {"tru", 1, 1},              // cut literal
  };
  for (const auto& c : cases) {
    JsonPull r(c.text);
    r.skip();
    r.expect_end();
    ASSERT_FALSE(r.ok()) << c.text;
    auto [line, col] = r.line_column(r.error_offset());
    EXPECT_EQ(line, c.line) << c.text << ": " << r.error();
    EXPECT_EQ(col, c.column) << c.text << ": " << r.error();
    std::string first = r.error();
    EXPECT_EQ(r.peek(), Kind::Bad);
    EXPECT_FALSE(r.skip());
    EXPECT_EQ(r.error(), first);
  }
}

TEST(JsonPull, NestingIsBounded) {
  std::string deep(100000, '[');
  JsonPull r(deep);
  EXPECT_FALSE(r.skip());
  EXPECT_NE(r.error().find("nested deeper"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace pai::util
