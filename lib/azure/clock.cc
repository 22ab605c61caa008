#include "azure/clock.h"

#include <cstdio>
#include <cstdlib>
#include <random>

namespace pai::azure {

Endpoints endpoints_from_env() {
  Endpoints e;
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
  };
  if (auto v = env("PAICTL_ARM_ENDPOINT"); !v.empty()) e.arm = v;
  if (auto v = env("PAICTL_AUTHORITY_HOST"); !v.empty()) e.authority = v;
  if (auto v = env("PAICTL_CA_FILE"); !v.empty()) e.ca_file = v;
  while (e.arm.size() > 8 && e.arm.back() == '/') e.arm.pop_back();
  while (e.authority.size() > 8 && e.authority.back() == '/') e.authority.pop_back();
  return e;
}

std::string new_uuid() {
  thread_local std::mt19937_64 rng{std::random_device{}() ^
                                   (static_cast<uint64_t>(std::random_device{}()) << 32)};
  uint64_t a = rng(), b = rng();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

}  // namespace pai::azure
