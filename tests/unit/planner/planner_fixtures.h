#pragma once
// What the planner's tests share: where the machine profiles are, and diagnostics as text.

#include <string>

#include "diag/diagnostic.h"

namespace pai::test {

inline const std::string kLayouts = std::string(PAI_SOURCE_DIR) + "/layouts";

// One line per finding, "file:line CODE message", for a failing assertion's message.
inline std::string dump(const pai::diag::List& l) {
  std::string s;
  for (const auto& d : l.items())
    s += d.file + ":" + std::to_string(d.line) + " " + d.code + " " + d.message + "\n";
  return s;
}

}  // namespace pai::test
