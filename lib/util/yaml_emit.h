#pragma once
// A small block-style YAML writer for JSON values, for `-o yaml` output.
//
// Strings are written plain only when every common YAML loader (YAML 1.1 and
// 1.2, PyYAML, js-yaml, Go yaml) reads them back as the same string; anything
// that could turn into a number, a boolean, null, a date or a syntax error is
// double-quoted. Multi-line strings become literal blocks (`|`) when that is
// exact, otherwise double-quoted with escapes.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pai::util {

// The document for `value`, ending with a newline. Objects keep their key order
// (sorted for nlohmann::json, insertion order for ordered_json).
std::string to_yaml(const nlohmann::json& value);
std::string to_yaml(const nlohmann::ordered_json& value);

// `s` as a YAML scalar: plain when that is unambiguous, else double-quoted.
std::string yaml_scalar(std::string_view s);

}  // namespace pai::util
