#include "util/strings.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pai::util {

bool equals_ignoring_case(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(sep, start);
    if (p == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, p - start));
    start = p + 1;
  }
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b, size_t max_distance) {
  const size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > max_distance)
    return max_distance == SIZE_MAX ? SIZE_MAX : max_distance + 1;
  // Optimal string alignment distance with three rolling rows.
  std::vector<size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t v = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        v = std::min(v, prev2[j - 2] + 1);
      cur[j] = v;
      row_min = std::min(row_min, v);
    }
    if (max_distance != SIZE_MAX && row_min > max_distance) return max_distance + 1;
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

namespace {
std::string normalize_for_match(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_' || c == '.') continue;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}
}  // namespace

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.empty()) return {};
  const std::string norm = normalize_for_match(word);
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    if (c == word) continue;
    size_t d;
    if (!norm.empty() && normalize_for_match(c) == norm) {
      d = 0;
    } else {
      d = edit_distance(word, c, limit);
      if (d > limit) continue;
    }
    // Ties go to the earlier candidate so the answer is deterministic.
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

bool is_dns1123_label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-') return false;
  return true;
}

bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (auto part : split(s, '.'))
    if (!is_dns1123_label(part)) return false;
  return true;
}

bool is_ipv4(std::string_view s) {
  auto parts = split(s, '.');
  if (parts.size() != 4) return false;
  for (auto p : parts) {
    if (p.empty() || p.size() > 3) return false;
    if (p.size() > 1 && p[0] == '0') return false;
    int v = 0;
    for (char c : p) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    if (v > 255) return false;
  }
  return true;
}

std::optional<int64_t> parse_int(std::string_view s) {
  if (s.empty()) return std::nullopt;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    i = 1;
  }
  if (i >= s.size()) return std::nullopt;
  int64_t v = 0;
  auto r = std::from_chars(s.data() + i, s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return neg ? -v : v;
}

std::optional<double> parse_double(std::string_view s) {
  if (s.empty()) return std::nullopt;
  // Plain decimal text, whole: from_chars reads it as strtod does (both round
  // correctly) without a copy or the locale. Anything else (a sign '+',
  // underflow, not a number) takes strtod's way below.
  if (s[0] != '+') {
    double v = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(v)) {
      bool plain = true;
      for (char c : s)
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
          plain = false;
      if (plain) return v;
    }
  }
  std::string tmp(s);
  char* end = nullptr;
  double v = std::strtod(tmp.c_str(), &end);
  if (end != tmp.c_str() + tmp.size() || !std::isfinite(v)) return std::nullopt;
  // strtod accepts hex floats, "inf" and leading spaces: refuse anything that is not plain decimal.
  for (char c : tmp)
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
      return std::nullopt;
  return v;
}

std::optional<double> parse_quantity(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  struct Suffix {
    const char* text;
    double factor;
  };
  static const Suffix suffixes[] = {
      {"Ki", 1024.0},
      {"Mi", 1048576.0},
      {"Gi", 1073741824.0},
      {"Ti", 1099511627776.0},
      {"Pi", 1125899906842624.0},
      {"Ei", 1152921504606846976.0},
      {"k", 1e3},
      {"M", 1e6},
      {"G", 1e9},
      {"T", 1e12},
      {"P", 1e15},
      {"E", 1e18},
      {"m", 1e-3},
      {"u", 1e-6},
      {"n", 1e-9},
  };
  for (const auto& suf : suffixes) {
    std::string_view t(suf.text);
    if (s.size() > t.size() && s.substr(s.size() - t.size()) == t) {
      auto num = s.substr(0, s.size() - t.size());
      // "1e3" style exponents never combine with a suffix.
      if (num.find_first_of("eE") != std::string_view::npos) return std::nullopt;
      auto v = parse_double(num);
      if (!v || *v < 0) return std::nullopt;
      return *v * suf.factor;
    }
  }
  auto v = parse_double(s);
  if (!v || *v < 0) return std::nullopt;
  return v;
}

std::string format_bytes(double bytes) {
  static const char* units[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[64];
  if (bytes == std::floor(bytes))
    std::snprintf(buf, sizeof buf, "%.0f%s", bytes, units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.1f%s", bytes, units[u]);
  return buf;
}

std::string shell_quote(std::string_view s) {
  if (s.empty()) return "''";
  bool safe = true;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-' || c == '.' || c == '/' || c == ':' || c == ',' || c == '=' || c == '@' ||
          c == '+' || c == '%')) {
      safe = false;
      break;
    }
  }
  if (safe) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  out += '\'';
  return out;
}

std::optional<std::string> base64_decode(std::string_view in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t buf = 0;
  int bits = 0;
  bool padding = false;
  for (char c : in) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    int v = val(c);
    if (v < 0 || padding) return std::nullopt;
    buf = (buf << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xff);
    }
  }
  return out;
}

}  // namespace pai::util
