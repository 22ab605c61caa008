// Fuzz the <% %> template tokenizer and renderer (mustache.js 2.3 rules).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "job/template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  pai::job::ParsedTemplate t = pai::job::parse_template(text);
  for (const auto& tag : t.tags)
    if (tag.begin > tag.end || tag.end > text.size()) std::abort();
  if (t.error && t.error->offset > text.size()) std::abort();
  std::string r =
      pai::job::render_template(t, [](const std::string& name) -> std::optional<std::string> {
        if (name.size() % 2) return std::nullopt;
        return name;
      });
  (void)pai::job::lookup_name(text);
  (void)pai::job::js_trim(text);
  return 0;
}
