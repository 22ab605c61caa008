#include "facts/text_lines.h"

namespace pai::facts::detail {

std::vector<TextLine> split_lines(std::string_view text) {
  std::vector<TextLine> out;
  uint32_t number = 1;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back({line, number++});
    pos = end + 1;
  }
  return out;
}

std::vector<Token> tokenize(std::string_view line) {
  std::vector<Token> out;
  size_t i = 0;
  size_t start = std::string_view::npos;
  auto flush = [&](size_t end) {
    if (start != std::string_view::npos && end > start)
      out.push_back({line.substr(start, end - start), static_cast<uint32_t>(start + 1)});
    start = std::string_view::npos;
  };
  while (i < line.size()) {
    char c = line[i];
    if (c == '\x1b') {
      flush(i);
      ++i;
      if (i < line.size() && line[i] == '[') {
        ++i;
        while (i < line.size() && !(line[i] >= 0x40 && line[i] <= 0x7e)) ++i;
        if (i < line.size()) ++i;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\v' || c == '\f') {
      flush(i);
      ++i;
      continue;
    }
    if (start == std::string_view::npos) start = i;
    ++i;
  }
  flush(line.size());
  return out;
}

void report(diag::List& out, std::string_view source, std::string code, diag::Severity sev,
            uint32_t line, uint32_t column, std::string message, std::string hint) {
  out.add(std::move(code), sev, std::string(source), line, column, std::move(message),
          std::move(hint));
}

namespace {

// Length of the well-formed UTF-8 sequence at s[i] (1-4), or 0 when it is not one.
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = c < 0x80                   ? 1
             : (c >= 0xc2 && c <= 0xdf) ? 2
             : (c >= 0xe0 && c <= 0xef) ? 3
             : (c >= 0xf0 && c <= 0xf4) ? 4
                                        : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  if (n == 3 && ((c == 0xe0 && b(i + 1) < 0xa0) || (c == 0xed && b(i + 1) > 0x9f)))
    return 0;  // overlong, surrogate
  if (n == 4 && ((c == 0xf0 && b(i + 1) < 0x90) || (c == 0xf4 && b(i + 1) > 0x8f)))
    return 0;  // overlong, > U+10FFFF
  return n;
}

}  // namespace

std::string excerpt(std::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size() && i < 40) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = utf8_length(s, i);
    if (n == 0 || c < 0x20 || c == 0x7f) {
      out += '?';
      ++i;
    } else if (i + n > 40) {
      break;  // never cut a character in two
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  if (i < s.size()) out += "...";
  return out;
}

bool is_binary(std::string_view s) {
  return s.find('\0') != std::string_view::npos;
}

}  // namespace pai::facts::detail
