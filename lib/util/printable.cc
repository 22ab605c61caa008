#include "util/printable.h"

#include <cstdint>
#include <cstdio>

namespace pai::util {

namespace {

// Length of the valid UTF-8 sequence at s[i] and its code point; 0 if invalid.
size_t utf8_sequence(std::string_view s, size_t i, uint32_t* cp) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t len;
  uint32_t v;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
    v = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    v = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    v = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    v = (v << 6) | (b(i + k) & 0x3f);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not valid.
  if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10ffff)) ||
      (v >= 0xd800 && v <= 0xdfff))
    return 0;
  *cp = v;
  return len;
}

bool dangerous(uint32_t cp, bool keep_newlines) {
  if (cp == '\t') return false;
  if (cp == '\n') return !keep_newlines;
  if (cp < 0x20 || cp == 0x7f) return true;
  if (cp >= 0x80 && cp <= 0x9f) return true;
  if (cp >= 0x202a && cp <= 0x202e) return true;
  if (cp >= 0x2066 && cp <= 0x2069) return true;
  return false;
}

template <class Sink>
void scan(std::string_view s, bool keep_newlines, Sink&& sink) {
  size_t i = 0;
  while (i < s.size()) {
    uint32_t cp = 0;
    size_t len = utf8_sequence(s, i, &cp);
    if (len == 0) {
      sink(s.substr(i, 1), true, static_cast<unsigned char>(s[i]), false);
      i += 1;
      continue;
    }
    sink(s.substr(i, len), dangerous(cp, keep_newlines), cp, len > 1);
    i += len;
  }
}

}  // namespace

std::string printable(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  scan(s, keep_newlines, [&](std::string_view bytes, bool bad, uint32_t cp, bool unicode) {
    if (!bad) {
      out += bytes;
      return;
    }
    char buf[16];
    if (unicode)
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
    else
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
    out += buf;
  });
  return out;
}

bool needs_escaping(std::string_view s, bool keep_newlines) {
  bool any = false;
  scan(s, keep_newlines, [&](std::string_view, bool bad, uint32_t, bool) { any = any || bad; });
  return any;
}

}  // namespace pai::util
