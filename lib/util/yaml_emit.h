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

// `s` double-quoted, with \" \\ \n \t \r and \xNN for other control bytes.
std::string yaml_double_quoted(std::string_view s);

// Whether a literal block (`|`) gives back exactly `s`: it has a newline, no
// control characters other than newlines, and its first line neither is empty
// nor starts with a space or a tab (either would need an indentation indicator).
bool yaml_literal_is_exact(std::string_view s);

// `s` as a literal block whose lines are indented by `indent` spaces, with the
// chomping indicator that keeps its trailing newlines; starts with `|`.
std::string yaml_literal_block(std::string_view s, int indent);

}  // namespace pai::util
