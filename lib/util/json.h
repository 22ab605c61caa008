#pragma once
// JSON text from outside (files, what remote hosts print) parsed without exceptions.
// nlohmann::json::parse throws parse_error for bad syntax, which carries the byte
// offset, but out_of_range for a number too large for a double ("1e400"), which
// carries none; both come back here as a position in the text.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace pai::util {

struct JsonError {
  uint32_t line = 1;    // 1-based
  uint32_t column = 1;  // 1-based, in bytes
  std::string message;  // nlohmann's wording without its "[json.exception...]" prefix
};

// How deep arrays and objects may nest in JSON from outside. nlohmann parses
// any depth, but copying, comparing and dumping a value recurse once per level:
// a server answering `[[[[...` a million deep would overflow the stack.
inline constexpr size_t kJsonMaxDepth = 512;

// The byte offset of the bracket that opens level `max_depth + 1` of `text`
// (strings skipped), or nullopt when `text` nests no deeper than `max_depth`.
// A linear scan that allocates nothing; `text` need not be valid JSON.
std::optional<size_t> json_too_deep(std::string_view text, size_t max_depth = kJsonMaxDepth);

// The document, or where and why `text` is not JSON. A document nested deeper
// than `max_depth` is refused ("nested deeper than 512 levels") before it is parsed.
Result<nlohmann::json, JsonError> parse_json(std::string_view text,
                                             size_t max_depth = kJsonMaxDepth);

// The first key that appears twice in one object of `text` (valid JSON), as
// its position and "duplicate key \"name\"", or nullopt. nlohmann keeps the
// last value silently; files whose meaning must be clear (facts) refuse them.
// Keys are compared as written (escapes are not decoded).
std::optional<JsonError> json_duplicate_key(std::string_view text);

// The document, or a discarded value (`is_discarded()`) when `text` is not JSON
// or nests deeper than `max_depth`: for what a server or a host printed, where a
// position helps nobody. Never throws.
nlohmann::json parse_json_or_discarded(std::string_view text, size_t max_depth = kJsonMaxDepth);

// `j.dump(indent)`. Call these two instead of nlohmann's own: each source file
// that calls nlohmann's parser or writer compiles them anew (about 3 s and 1 s
// of CPU at -O2), these are compiled once.
std::string dump_json(const nlohmann::json& j, int indent = -1);

}  // namespace pai::util
