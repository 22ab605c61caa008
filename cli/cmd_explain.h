#pragma once
// paictl explain [CODE]: what a diagnostic code means, how to fix it, an example.
// The options and validate step are here for tests/unit/cli.

#include <string>

#include "command.h"

namespace paictl {

struct ExplainOptions {
  std::string code;  // empty: list every code
  std::string output = "text";
};

// An unknown code is a usage error with the closest codes as the hint.
void validate_explain(const ExplainOptions& o, Usage& u);

}  // namespace paictl
