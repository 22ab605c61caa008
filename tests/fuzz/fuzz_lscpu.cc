// Fuzz the lscpu parser (text and JSON): no crash, no exception, sane numbers.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "facts/parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = pai::facts::parse_lscpu(text, "fuzz");
  if (r.value.logical < 0 || r.value.sockets < 0 || r.value.numa_nodes < 0) std::abort();
  if (r.ok() && r.value.logical == 0) std::abort();
  (void)r.value.numa_of_cpu(3);
  return 0;
}
