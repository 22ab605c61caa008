#pragma once
// How the OpenPAI rest-server sees a YAML node.
//
// The server loads job files with js-yaml 3 (`safeLoad`, the default safe
// schema) and checks them with AJV, then renders commands with JavaScript's
// string conversion. The types differ from YAML 1.2: `0755` is the octal
// number 493, `1:30` is the number 90, `2020-01-01` is a Date, `yes` is a
// string, and `1.10` renders as "1.1". Validation and rendering use these
// rules so that paictl agrees with the server.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "yaml/yaml.h"

namespace pai::job {

enum class JsType : uint8_t {
  Undefined,
  Null,
  Boolean,
  Number,
  String,
  Date,
  Binary,
  Array,
  Object
};

std::string_view js_type_name(JsType t);  // "null", "boolean", "number", "string", "a date", ...

struct JsScalar {
  JsType type = JsType::Undefined;
  bool boolean = false;
  double number = 0;
  std::string text;   // the string value (String type), or the source text
  std::string error;  // non-empty when js-yaml refuses the node (an unknown tag, a bad !!int)
};

// The value js-yaml gives a plain scalar written as `text` (no tag).
JsScalar js_resolve_plain(std::string_view text);

// The value of a scalar or null node; sequences and mappings give Array/Object.
JsScalar js_scalar(const yaml::Node* n);
JsType js_type(const yaml::Node* n);

// AJV's "integer": a number without a fractional part.
bool js_is_integer(const yaml::Node* n);
std::optional<double> js_number(const yaml::Node* n);

// JavaScript's Number.prototype.toString() for `v`.
std::string js_number_to_string(double v);

// JavaScript's String(value) for a node, as `result += value` does in the
// server's renderer: arrays are joined with ",", objects give "[object Object]".
std::string js_to_string(const yaml::Node* n);
std::string js_to_string(const JsScalar& s);

// The tag of `n` in long form ("tag:yaml.org,2002:str"), "" when untagged.
std::string normalized_tag(const yaml::Node* n);

}  // namespace pai::job
