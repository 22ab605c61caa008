#include "config/rules.h"

#include "diag/codes.h"

namespace pai::config {

const std::vector<diag::Rule>& rules() {
  // The entries live in the code catalogue (lib/diag/codes_config.cc), with what
  // each means, its fix and an example for `paictl explain`.
  static const std::vector<diag::Rule> kRules = diag::rules_of({"F", "L", "C", "A", "S", "H", "X"});
  return kRules;
}

}  // namespace pai::config
