// The streaming JSON and CSV readers and the time formats of the traces.

#include <gtest/gtest.h>

#include "sim/text_input.h"

namespace pai::sim {
namespace {

TEST(JsonReader, ReadsNestedValuesWithPositions) {
  std::string text =
      "[\n {\"a\": \"x\\u00e9\\n\", \"n\": -1.5e2, \"b\": [true, false, null], \"o\": {}},\n {}\n]";
  ByteSource src(text, "t.json");
  JsonReader r(src);
  ASSERT_TRUE(r.begin_array());
  ASSERT_TRUE(r.next_element());
  EXPECT_EQ(r.value_position().line, 2u);
  ASSERT_TRUE(r.begin_object());
  EXPECT_EQ(*r.next_key(), "a");
  EXPECT_EQ(*r.read_string(), "x\xc3\xa9\n");
  EXPECT_EQ(*r.next_key(), "n");
  EXPECT_EQ(*r.read_number(), -150);
  EXPECT_EQ(*r.next_key(), "b");
  r.skip();
  EXPECT_EQ(*r.next_key(), "o");
  r.skip();
  EXPECT_FALSE(r.next_key().has_value());
  ASSERT_TRUE(r.next_element());
  r.skip();
  EXPECT_FALSE(r.next_element());
  EXPECT_TRUE(r.expect_end());
  EXPECT_TRUE(r.ok()) << r.error();
}

struct BadJson {
  const char* text;
  uint32_t line, column;
  const char* message_part;
};

TEST(JsonReader, ReportsWhereAndWhatWentWrong) {
  const BadJson cases[] = {
      {"[1,]", 1, 4, "expected a value"},        {"[{\"a\" 1}]", 1, 7, "':'"},
      {"[\"abc", 1, 2, "unterminated string"},   {"[1 2]", 1, 4, "expected ',' or ']'"},
      {"{\"a\":1}\n x", 2, 2, "after the end"},  {"[01]", 1, 2, "malformed number"},
      {"[\"\\q\"]", 1, 3, "bad escape"},         {"[\"\\ud800\"]", 1, 3, "surrogate"},
      {"[tru]", 1, 2, "expected true or false"},
  };
  for (const auto& c : cases) {
    ByteSource src(c.text, "t.json");
    JsonReader r(src);
    if (r.peek_kind() == JsonReader::Kind::Array) {
      r.begin_array();
      while (r.next_element()) r.skip();
    } else {
      r.skip();
    }
    r.expect_end();
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error_position().line, c.line) << c.text << ": " << r.error();
    EXPECT_EQ(r.error_position().column, c.column) << c.text << ": " << r.error();
    EXPECT_NE(r.error().find(c.message_part), std::string::npos) << c.text << ": " << r.error();
  }
}

TEST(JsonReader, BoundsNesting) {
  std::string deep(1000, '[');
  ByteSource src(deep, "deep.json");
  JsonReader r(src);
  r.skip();
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("deeper than 256"), std::string::npos);
}

TEST(CsvReader, HandlesQuotesCommentsAndCrlf) {
  std::string text = "# comment\r\na,\"b,c\",\"d\"\"e\"\r\n\r\n1,2,3\n\"multi\nline\",x,\n";
  ByteSource src(text, "t.csv");
  CsvReader csv(src);
  std::vector<std::string> f;
  ASSERT_TRUE(csv.next(f));
  EXPECT_EQ(f, (std::vector<std::string>{"a", "b,c", "d\"e"}));
  EXPECT_EQ(csv.line(), 2u);
  EXPECT_EQ(csv.column(1), 3u);
  ASSERT_TRUE(csv.next(f));
  EXPECT_EQ(f, (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(csv.line(), 4u);
  ASSERT_TRUE(csv.next(f));
  EXPECT_EQ(f, (std::vector<std::string>{"multi\nline", "x", ""}));
  EXPECT_FALSE(csv.next(f));
  EXPECT_TRUE(csv.error().empty());
}

TEST(CsvReader, ReportsBrokenQuotes) {
  for (const char* text : {"a,\"unterminated\n", "a,\"x\"y\n"}) {
    ByteSource src(text, "t.csv");
    CsvReader csv(src);
    std::vector<std::string> f;
    EXPECT_FALSE(csv.next(f)) << text;
    EXPECT_FALSE(csv.error().empty()) << text;
    EXPECT_EQ(csv.error_position().line, 1u);
  }
}

TEST(Time, ParsesAndFormatsTimestamps) {
  auto t = parse_timestamp("2017-10-03 06:47:47");
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, 1507013267);
  EXPECT_EQ(format_timestamp(*t), "2017-10-03 06:47:47");
  EXPECT_EQ(*parse_timestamp("1970-01-01T00:00:01.5Z"), 1.5);
  EXPECT_EQ(*parse_timestamp("2000-02-29 00:00:00"), 951782400);
  for (const char* bad :
       {"2017-13-01 00:00:00", "2017-10-03", "yesterday", "2017-10-03 06:47:47 trailing", ""})
    EXPECT_FALSE(parse_timestamp(bad).has_value()) << bad;
  EXPECT_EQ(*parse_time_value("4550879.0"), 4550879.0);
  EXPECT_EQ(*parse_duration("90m"), 5400);
  EXPECT_EQ(*parse_duration("1.5h"), 5400);
  EXPECT_EQ(*parse_duration("2d"), 172800);
  EXPECT_EQ(*parse_duration("45"), 45);
  EXPECT_FALSE(parse_duration("-5").has_value());
  EXPECT_FALSE(parse_duration("h").has_value());
}

}  // namespace
}  // namespace pai::sim
