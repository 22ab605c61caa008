#include "util/time.h"

#include <chrono>
#include <cstdio>

namespace pai::util {

namespace {
std::string format_tm(const std::tm& tm, const char* format) {
  char buf[128];
  size_t n = std::strftime(buf, sizeof buf, format, &tm);
  return std::string(buf, n);
}
}  // namespace

std::string format_utc(std::time_t t, const char* format) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  return format_tm(tm, format);
}

std::string format_local(std::time_t t, const char* format) {
  std::tm tm{};
  localtime_r(&t, &tm);
  return format_tm(tm, format);
}

std::string rfc3339_utc(std::time_t t) {
  return format_utc(t, "%Y-%m-%dT%H:%M:%SZ");
}

std::string now_rfc3339() {
  return rfc3339_utc(std::time(nullptr));
}

std::string now_rfc3339_ms() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  char out[8];
  std::snprintf(out, sizeof out, ".%03dZ", static_cast<int>(ms));
  return format_utc(t, "%Y-%m-%dT%H:%M:%S") + out;
}

}  // namespace pai::util
