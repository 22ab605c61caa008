#include "topology/text_lines.h"

namespace pai::topology::detail {

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

void report(diag::List& out, std::string_view source, std::string code, diag::Severity sev, uint32_t line,
            uint32_t column, std::string message, std::string hint) {
  out.add(std::move(code), sev, std::string(source), line, column, std::move(message), std::move(hint));
}

std::string excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 40)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (s.size() > 40) out += "...";
  return out;
}

}  // namespace pai::topology::detail
