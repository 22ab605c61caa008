#pragma once
// Calendar times as text. One place for the strftime formats paictl prints and stores.

#include <ctime>
#include <string>

namespace pai::util {

// `t` (seconds since the epoch) in UTC with a strftime format, e.g. "%Y-%m-%d %H:%M UTC".
std::string format_utc(std::time_t t, const char* format);
// The same in the local time zone (what a user reads in a table).
std::string format_local(std::time_t t, const char* format);

// RFC 3339 in UTC with seconds: "2026-12-01T18:40:05Z".
std::string rfc3339_utc(std::time_t t);
std::string now_rfc3339();
// RFC 3339 in UTC with milliseconds: "2026-12-01T18:40:05.123Z" (journal entries).
std::string now_rfc3339_ms();

}  // namespace pai::util
