#include "job/rules.h"

#include "diag/codes.h"

namespace pai::job {

const std::vector<diag::Rule>& rules() {
  // The entries live in the code catalogue (lib/diag/codes_job.cc), with what
  // each means, its fix and an example for `paictl explain`.
  static const std::vector<diag::Rule> kRules = diag::rules_of({"J"});
  return kRules;
}

const diag::Rule* find_rule(std::string_view code) {
  for (const auto& r : rules())
    if (r.code == code) return &r;
  return nullptr;
}

}  // namespace pai::job
