#pragma once
// The catalogue of `check config` diagnostic codes. docs/check-config.md has a
// section per code with a wrong example and the fix.

#include <vector>

#include "diag/diagnostic.h"

namespace pai::config {

const std::vector<diag::Rule>& rules();

}  // namespace pai::config
