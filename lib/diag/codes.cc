#include "diag/codes.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <tuple>

#include "diag/codes_tables.h"
#include "util/strings.h"

namespace pai::diag {

const std::vector<CodeInfo>& codes() {
  static const std::vector<CodeInfo> kAll = [] {
    std::vector<CodeInfo> all;
    for (const auto* part : {&codes_detail::config_codes(), &codes_detail::job_codes(),
                             &codes_detail::other_codes(), &codes_detail::certs_codes(),
                             &codes_detail::cluster_codes(), &codes_detail::hosts_codes()})
      all.insert(all.end(), part->begin(), part->end());
    return all;
  }();
  return kAll;
}

std::string_view family_of(std::string_view code) {
  size_t i = 0;
  while (i < code.size() && std::isalpha(static_cast<unsigned char>(code[i]))) ++i;
  return code.substr(0, i);
}

namespace {

std::string codes_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

const CodeInfo* find_code(std::string_view code) {
  std::string want = codes_upper(code);
  for (const auto& c : codes())
    if (c.code == want) return &c;
  return nullptr;
}

std::vector<std::string_view> similar_codes(std::string_view code, size_t max) {
  std::string want = codes_upper(code);
  std::vector<std::string_view> out;
  // "L1", "l01", "J5": the same family and number written with other padding.
  std::string_view family = family_of(want);
  std::string digits = want.substr(family.size());
  if (!family.empty() && !digits.empty() && digits.size() < 3 &&
      std::all_of(digits.begin(), digits.end(),
                  [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); })) {
    std::string padded = std::string(family) + std::string(3 - digits.size(), '0') + digits;
    if (const CodeInfo* c = find_code(padded)) out.push_back(c->code);
  }
  struct Scored {
    size_t distance;
    bool other_family;
    std::string_view code;
  };
  std::vector<Scored> scored;
  for (const auto& c : codes()) {
    // A code ("L01") or a code's name ("invalid-hostnam").
    size_t d = std::min(util::edit_distance(want, c.code, 2),
                        util::edit_distance(util::to_lower(code), c.name, 2));
    if (d > 2) continue;
    scored.push_back({d, family_of(c.code) != family, c.code});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    return std::tie(a.distance, a.other_family) < std::tie(b.distance, b.other_family);
  });
  for (const auto& s : scored) {
    if (out.size() >= max) break;
    if (std::find(out.begin(), out.end(), s.code) == out.end()) out.push_back(s.code);
  }
  return out;
}

std::vector<Rule> rules_of(const std::vector<std::string_view>& families) {
  std::vector<Rule> out;
  for (const auto& c : codes())
    if (std::find(families.begin(), families.end(), family_of(c.code)) != families.end())
      out.push_back({c.code, c.name, c.severity, c.title});
  return out;
}

}  // namespace pai::diag
