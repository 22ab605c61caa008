// Fuzz the nvidia-smi --query-gpu CSV parser: no crash, GPUs sorted by a unique index.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "facts/parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = pai::facts::parse_gpu_query(text, "fuzz");
  uint32_t lines = 1;
  for (char c : text) lines += c == '\n';
  for (const auto& d : r.diagnostics.items())
    if (d.line > lines) std::abort();
  for (size_t i = 1; i < r.value.size(); ++i)
    if (r.value[i - 1].index >= r.value[i].index) std::abort();
  for (const auto& g : r.value)
    if (g.index < 0 || g.memory_mib < 0) std::abort();
  return 0;
}
