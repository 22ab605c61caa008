// Fuzz the YAML reader: any bytes must give documents or one syntax error with a
// position inside the input, never a crash, a hang or unbounded memory.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "yaml/yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  pai::yaml::LoadOptions opt;
  opt.max_nodes = 2'000'000;
  pai::yaml::Stream s = pai::yaml::load(text, opt);
  if (s.error) {
    // A position is always given and never past the end of the input.
    uint32_t lines = 1;
    for (char c : text) lines += c == '\n';
    if (s.error->mark.line == 0 || s.error->mark.line > lines + 1) std::abort();
  }
  for (const auto* d : s.documents) {
    (void)d->describe();
    if (d->is_mapping())
      for (const auto& p : d->pairs()) (void)p.value->as_int(), (void)p.value->as_bool();
  }
  return 0;
}
