#include "util/json_pull.h"

#include <gtest/gtest.h>

#include <cstring>

#include <algorithm>

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
// Hands out the text a few bytes at a time, so that every token of a
// streamed document is cut by the window's end somewhere.
class Trickle final : public JsonPull::Source {
 public:
  Trickle(std::string text, size_t step) : text_(std::move(text)), step_(step) {}
  Result<size_t> read(char* buf, size_t cap) override {
    if (at_ == text_.size() && !fail_.empty()) return Error{fail_, {}};
    size_t n = std::min({cap, step_, text_.size() - at_});
    text_.copy(buf, n, at_);
    at_ += n;
    step_ = step_ % 7 + 1;  // 1..7 bytes, varying
    return n;
  }
  std::string fail_;  // a read error at the end instead of the end

 private:
  std::string text_;
  size_t at_ = 0;
  size_t step_;
};

// A document with long strings, escapes cut anywhere, multi-byte UTF-8 and
// numbers longer than the smallest window.
std::string long_document(bool indented) {
  nlohmann::json doc = nlohmann::json::array();
  for (int i = 0; i < 40; ++i) {
    nlohmann::json o;
    o["id" + std::to_string(i)] = std::string(static_cast<size_t>(i) * 7, 'x') + "\u00e9\"\\\n";
    o["n"] = i % 2 ? nlohmann::json(-12345678.25e-3 * i) : nlohmann::json(i * 1000003);
    o["nested"] = {{"a", {true, false, nullptr}}, {"\xf0\x9f\x98\x80 k", "\xe2\x82\xac"}};
    o[std::string(100, 'k')] = "\\u00e9 is not an escape here";
    doc.push_back(o);
  }
  return doc.dump(indented ? 1 : -1);
}

// An endless stream of one string ("xxxx... without its closing quote): the
// window stops growing at kJsonPullMaxToken and the reader says why.
class EndlessString final : public JsonPull::Source {
 public:
  Result<size_t> read(char* buf, size_t cap) override {
    size_t n = cap;
    std::memset(buf, 'x', n);
    if (!started_) buf[0] = '[', buf[1 % cap] = '"', started_ = true;
    given_ += n;
    return n;
  }
  size_t given_ = 0;

 private:
  bool started_ = false;
};

TEST(JsonPull, AnEndlessTokenIsBounded) {
  EndlessString src;
  JsonPull r(src, 512, 1u << 20);
  std::string_view text;
  std::string scratch;
  bool was_null = false;
  ASSERT_TRUE(r.begin_array());
  ASSERT_TRUE(r.next_element());
  EXPECT_FALSE(r.read_scalar_text(text, scratch, was_null));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("longer than 64 MiB"), std::string::npos) << r.error();
  EXPECT_LT(src.given_, size_t{200} << 20);
}

TEST(JsonPull, StreamingReadsWhatInMemoryReads) {
  std::vector<std::string> texts = {
      R"({"a": [1, -2, 3.5, 1e3, true, false, null], "b": {"c": "d", "e": {}}, "f": []})",
      R"("caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t")",
      "  [ \"ünïcödé\", {\"k\\u0041\": 0} ]  ",
      "-0",
      "123456789012345678901234567890.5e-7",
      nlohmann::json::parse(R"([{"k": "v"}])").dump(2),
  };
  texts.push_back(long_document(false));
  texts.push_back(long_document(true));
  for (const auto& t : texts) {
    for (size_t window : {64, 4096}) {
      Trickle src(t, 3);
      JsonPull r(src, 512, window);
      nlohmann::json got = read(r);
      EXPECT_TRUE(r.expect_end()) << t.substr(0, 40) << ": " << r.error();
      EXPECT_EQ(got, nlohmann::json::parse(t)) << t.substr(0, 40) << " window " << window;
    }
  }
}

TEST(JsonPull, StreamingPositionsAreThoseOfTheText) {
  const std::string t = long_document(true);  // one member a line
  Trickle src(t, 5);
  JsonPull r(src, 512, 64);
  ASSERT_TRUE(r.begin_array());
  size_t checked = 0;
  while (r.next_element()) {
    size_t off = r.value_offset();
    auto [line, col] = r.value_position();
    // The same position counted in the whole text.
    uint32_t want_line = 1 + static_cast<uint32_t>(std::count(t.begin(), t.begin() + off, '\n'));
    size_t nl = t.rfind('\n', off == 0 ? 0 : off - 1);
    uint32_t want_col = static_cast<uint32_t>(nl == std::string::npos ? off + 1 : off - nl);
    EXPECT_EQ(line, want_line) << off;
    EXPECT_EQ(col, want_col) << off;
    EXPECT_EQ(t[off], '{');
    ASSERT_TRUE(r.skip()) << r.error();
    ++checked;
  }
  EXPECT_EQ(checked, 40u);
  EXPECT_TRUE(r.expect_end());
}

TEST(JsonPull, StreamingErrorsAreWhereTheyAreInMemory) {
  const char* texts[] = {
      "{\"a\": 1,}",
      "[1, 2\n, 3",
      "{\"a\" 1}",
      "\"tab\tinside\"",
      "[01]",
      "\"\\ud800x\"",
      "\"\xff\"",
      "[1] [2]",
      "tru",
      "[\"abc",
      "[{\"jobid\": \"a\"}",
      "\n\n  [\"\\q\"]",
  };
  for (const char* t : texts) {
    JsonPull mem(t);
    mem.skip();
    mem.expect_end();
    ASSERT_FALSE(mem.ok()) << t;
    Trickle src(t, 1);
    JsonPull r(src, 512, 64);
    r.skip();
    r.expect_end();
    ASSERT_FALSE(r.ok()) << t;
    EXPECT_EQ(r.error(), mem.error()) << t;
    EXPECT_EQ(r.error_offset(), mem.error_offset()) << t;
    EXPECT_EQ(r.line_column(r.error_offset()), mem.line_column(mem.error_offset())) << t;
  }
}

TEST(JsonPull, MessagesSayWhatWasFoundAndUnterminatedStringsWhereTheyOpen) {
  struct Case {
    const char* text;
    uint32_t line, column;
    const char* part;
  };
  const Case cases[] = {
      {"[\"abc", 1, 2, "unterminated string"},
      {"[1 2]", 1, 4, "expected ',' or ']' in an array, found '2'"},
      {"[{\"jobid\": \"a\"}", 1, 16, "expected ',' or ']' in an array, found the end of the text"},
      {"{\"a\" 1}", 1, 6, "expected ':' after an object key, found '1'"},
      {"[\"\\q\"]", 1, 4, "invalid escape"},
  };
  for (const auto& c : cases) {
    JsonPull r(c.text);
    r.skip();
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.line_column(r.error_offset()), std::make_pair(c.line, c.column))
        << c.text << ": " << r.error();
    EXPECT_NE(r.error().find(c.part), std::string::npos) << c.text << ": " << r.error();
  }
}

TEST(JsonPull, StreamingReadErrorIsTheError) {
  Trickle src("[1, 2", 2);
  src.fail_ = "Input/output error";
  JsonPull r(src, 512, 64);
  r.skip();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "Input/output error");
}

TEST(JsonPull, ScalarTextIsTheTextAsWritten) {
  JsonPull r(R"(["a\u0062", 1.50, null, -3e2, {}])");
  std::string scratch;
  std::string_view v;
  bool was_null = false;
  std::vector<std::string> got;
  ASSERT_TRUE(r.begin_array());
  while (r.next_element()) {
    if (!r.read_scalar_text(v, scratch, was_null)) break;
    got.push_back(was_null ? "<null>" : std::string(v));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"ab", "1.50", "<null>", "-3e2"}));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("expected a string, a number or null"), std::string::npos) << r.error();
}

}  // namespace pai::util
