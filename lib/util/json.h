#pragma once
// JSON text from outside (files, what remote hosts print) parsed without exceptions.
// nlohmann::json::parse throws parse_error for bad syntax, which carries the byte
// offset, but out_of_range for a number too large for a double ("1e400"), which
// carries none; both come back here as a position in the text.

#include <cstdint>
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

// The document, or where and why `text` is not JSON.
Result<nlohmann::json, JsonError> parse_json(std::string_view text);

// The document, or a discarded value (`is_discarded()`) when `text` is not JSON:
// for what a server or a host printed, where a position helps nobody. Never throws.
nlohmann::json parse_json_or_discarded(std::string_view text);

// `j.dump(indent)`. Call these two instead of nlohmann's own: each source file
// that calls nlohmann's parser or writer compiles them anew (about 3 s and 1 s
// of CPU at -O2), these are compiled once.
std::string dump_json(const nlohmann::json& j, int indent = -1);

}  // namespace pai::util
