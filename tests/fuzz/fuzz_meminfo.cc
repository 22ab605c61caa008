// Fuzz the /proc/meminfo parser: no crash, no overflow, totals only when valid.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "facts/parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = pai::facts::parse_meminfo(text, "fuzz");
  if (r.value.total_bytes < 0 || r.value.available_bytes < 0) std::abort();
  if (r.ok() && r.value.total_bytes == 0) std::abort();
  return 0;
}
