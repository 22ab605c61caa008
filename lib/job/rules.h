#pragma once
// The catalogue of job file diagnostic codes (`paictl check job`). docs/jobs.md
// has a section per code with a wrong example and the fix.

#include <string_view>
#include <vector>

#include "diag/diagnostic.h"

namespace pai::job {

const std::vector<diag::Rule>& rules();
const diag::Rule* find_rule(std::string_view code);

}  // namespace pai::job
