#pragma once
// What the validate tests ask of a Usage.

#include <string>

#include "command.h"

namespace paictl::usage_test {

// The hint of the first error whose message contains `what`; "<none>" when no error does.
inline std::string hint_of(const Usage& u, const std::string& what) {
  for (const auto& e : u.errors())
    if (e.message.find(what) != std::string::npos) return e.hint;
  return "<none>";
}

// Whether the summary of every error mentions `what`.
inline bool has(const Usage& u, const std::string& what) {
  return u.summary().find(what) != std::string::npos;
}

}  // namespace paictl::usage_test
