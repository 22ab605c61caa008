#include "util/time.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

namespace {

using pai::util::format_local;
using pai::util::format_utc;

TEST(Time, FormatsUtcWithAnyFormat) {
  // 2026-12-01 18:40:05 UTC.
  const std::time_t t = 1796150405;
  EXPECT_EQ(format_utc(t, "%Y-%m-%d %H:%M UTC"), "2026-12-01 18:40 UTC");
  EXPECT_EQ(format_utc(t, "%Y%m%d-%H%M%S"), "20261201-184005");
  EXPECT_EQ(pai::util::rfc3339_utc(t), "2026-12-01T18:40:05Z");
  EXPECT_EQ(format_utc(0, "%Y-%m-%dT%H:%M:%SZ"), "1970-01-01T00:00:00Z");
}

TEST(Time, LocalFollowsTheTimeZone) {
  const char* old = std::getenv("TZ");
  std::string saved = old ? old : "";
  setenv("TZ", "UTC-2", 1);  // POSIX: two hours east of UTC
  tzset();
  EXPECT_EQ(format_local(1796150405, "%H:%M"), "20:40");
  if (old)
    setenv("TZ", saved.c_str(), 1);
  else
    unsetenv("TZ");
  tzset();
}

TEST(Time, NowIsRfc3339) {
  EXPECT_TRUE(
      std::regex_match(pai::util::now_rfc3339(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  EXPECT_TRUE(std::regex_match(pai::util::now_rfc3339_ms(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
}

TEST(Time, AnEmptyResultIsEmptyNotGarbage) {
  EXPECT_EQ(format_utc(0, ""), "");
}

}  // namespace
