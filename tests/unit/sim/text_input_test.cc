// The streaming CSV reader and the time formats of the traces (JSON traces:
// util::JsonPull, tests/unit/util/json_pull_test.cc).

#include <gtest/gtest.h>

#include <random>

#include "sim/text_input.h"

namespace pai::sim {
namespace {

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

// Plain lines (split at once) between lines with quotes or CR (read byte by
// byte): the same fields, lines and columns either way.
TEST(CsvReader, PlainLinesSplitAsQuotedOnes) {
  std::string text = "a,,bc,\n\"q\",r\r\n,x\n\n1,22,333\rlast,,\n";
  ByteSource src(text, "t.csv");
  CsvReader csv(src);
  std::vector<std::string> f;
  ASSERT_TRUE(csv.next(f));
  EXPECT_EQ(f, (std::vector<std::string>{"a", "", "bc", ""}));
  EXPECT_EQ(csv.line(), 1u);
  EXPECT_EQ(csv.column(2), 4u);
  EXPECT_EQ(csv.column(3), 7u);
  ASSERT_TRUE(csv.next(f));
  EXPECT_EQ(f, (std::vector<std::string>{"q", "r"}));
  EXPECT_EQ(csv.column(1), 5u);
  ASSERT_TRUE(csv.next(f));
  EXPECT_EQ(f, (std::vector<std::string>{"", "x"}));
  EXPECT_EQ(csv.line(), 3u);
  EXPECT_EQ(csv.column(1), 2u);
  ASSERT_TRUE(csv.next(f));  // ends at a lone CR
  EXPECT_EQ(f, (std::vector<std::string>{"1", "22", "333"}));
  EXPECT_EQ(csv.line(), 5u);
  EXPECT_EQ(csv.column(2), 6u);
  ASSERT_TRUE(csv.next(f));  // starts after it, on the same line
  EXPECT_EQ(f, (std::vector<std::string>{"last", "", ""}));
  EXPECT_EQ(csv.line(), 5u);
  EXPECT_EQ(csv.column(0), 10u);
  EXPECT_EQ(csv.column(1), 15u);
  EXPECT_EQ(csv.column(2), 16u);
  EXPECT_FALSE(csv.next(f));
  EXPECT_TRUE(f.empty());
  EXPECT_TRUE(csv.error().empty());
}

// Records as views (plain lines point into the source's buffer) are the
// records as strings: random texts of commas, quotes, CRs, LFs, comments and
// spaces, read both ways, give the same fields, lines, columns and errors.
TEST(CsvReader, ViewsReadAsStrings) {
  const char alphabet[] = {'a', '1', ',', ',', '"', '\r', '\n', '\n', '#', ' '};
  std::mt19937 rng(11);
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const size_t n = rng() % 60;
    for (size_t i = 0; i < n; ++i) text += alphabet[rng() % sizeof alphabet];
    ByteSource a(text, "a.csv"), b(text, "b.csv");
    CsvReader strings(a), views(b);
    std::vector<std::string> fs;
    std::vector<std::string_view> fv;
    for (int record = 0;; ++record) {
      bool got_s = strings.next(fs), got_v = views.next(fv);
      ASSERT_EQ(got_s, got_v) << text;
      EXPECT_EQ(strings.error(), views.error()) << text;
      if (!got_s) break;
      ASSERT_EQ(fs.size(), fv.size()) << text;
      for (size_t i = 0; i < fs.size(); ++i) {
        EXPECT_EQ(fs[i], fv[i]) << text << " record " << record << " field " << i;
        EXPECT_EQ(strings.column(i), views.column(i)) << text;
      }
      EXPECT_EQ(strings.line(), views.line()) << text;
    }
  }
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
