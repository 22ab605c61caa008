#pragma once
// The catalogue of every diagnostic code paictl reports, one entry per code with
// what it means, how to fix it and an example. `paictl explain CODE` prints an
// entry; `check config --list-rules`, SARIF rule metadata and the code reference
// of docs/check-config.md and docs/explain.md are made from the same entries
// (scripts/gen-docs-check-config.py).
//
// Families: F L C A S H X (check config), J (job files), I (host lists), SSH (the
// SSH config), T (fact parsers), P (plan), R (cluster registry), G (sweep specs),
// K (the cluster's certificates K100-K149: certs check, check cluster), N (what
// check hosts and hived health find on a host: an offline bundle that does not
// fit it, GPUs in bad health).

#include <string_view>
#include <vector>

#include "diag/diagnostic.h"

namespace pai::diag {

struct CodeInfo {
  std::string_view code;      // "L001"
  std::string_view name;      // kebab-case, "invalid-hostname"
  Severity severity;          // default severity (some codes are reported at another one)
  std::string_view reporter;  // the commands that report it, "check config"
  std::string_view title;     // one line
  std::string_view meaning;   // what it means, a paragraph
  std::string_view fix;       // how to fix it
  std::string_view example;   // a wrong input and what paictl says about it
};

// Every code, grouped by family in the order above.
const std::vector<CodeInfo>& codes();
// Case-insensitive; nullptr when no such code.
const CodeInfo* find_code(std::string_view code);
// The closest codes to a mistyped one (same family first), at most `max`.
std::vector<std::string_view> similar_codes(std::string_view code, size_t max = 3);
// The catalogue entries of the codes whose family (the letters before the
// digits) is one of `families`, as rules (SARIF, --list-rules), in catalogue order.
std::vector<Rule> rules_of(const std::vector<std::string_view>& families);
// The letters before the digits: "SSH" for "SSH001", "L" for "L001".
std::string_view family_of(std::string_view code);

}  // namespace pai::diag
