#pragma once
// Small string helpers that know nothing about paictl's domain.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pai::util {

// Without the blanks (space, tab, CR, LF) at both ends. Inline: readers call it
// on every field, and most fields have nothing to trim.
inline std::string_view trim(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  size_t b = 0, e = s.size();
  while (b < e && blank(s[b])) ++b;
  while (e > b && blank(s[e - 1])) --e;
  return s.substr(b, e - b);
}
std::vector<std::string_view> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string to_lower(std::string_view s);
// ASCII case-insensitive equality with a word written in lower case, without a copy.
bool equals_ignoring_case(std::string_view s, std::string_view lower);

// Edit distance (insert, delete, substitute, adjacent transposition), capped:
// returns max_distance + 1 as soon as the distance is known to exceed it.
size_t edit_distance(std::string_view a, std::string_view b, size_t max_distance = SIZE_MAX);

// The closest candidate to `word` when it is close enough to be a likely typo
// (distance at most max(1, len/3), or equal ignoring case and '-'/'_'), else empty.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters (Kubernetes names).
bool is_dns1123_label(std::string_view s);
// Dotted RFC 1123 subdomain, at most 253 characters.
bool is_dns1123_subdomain(std::string_view s);
// Dotted-quad IPv4 with each octet 0..255 and no leading zeros.
bool is_ipv4(std::string_view s);

// Strict decimal integer (optional sign); no spaces, no trailing garbage.
std::optional<int64_t> parse_int(std::string_view s);
std::optional<double> parse_double(std::string_view s);

// Kubernetes resource quantity ("60Gi", "500M", "1.5Ti", "128974848", "129e6", "100m")
// to its value in base units (bytes for memory). nullopt if malformed.
std::optional<double> parse_quantity(std::string_view s);
// Human readable binary size: 1536 -> "1.5Ki", 64424509440 -> "60Gi".
std::string format_bytes(double bytes);

// Quote for a POSIX shell: abc -> abc, a b -> 'a b', it's -> 'it'\''s'.
std::string shell_quote(std::string_view s);

// Standard base64 (RFC 4648, '+' and '/'), whitespace skipped, '=' only at
// the end: the bytes, or nullopt for any other character.
std::optional<std::string> base64_decode(std::string_view in);

}  // namespace pai::util
