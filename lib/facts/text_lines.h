#pragma once
// Internal to libpai (not installed): line and token helpers shared by the fact
// parsers and the planner's facts reader.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.h"

namespace pai::facts::detail {

struct TextLine {
  std::string_view text;  // without the line break (and without a trailing \r)
  uint32_t number = 0;    // 1-based
};

// Splits on \n; a trailing \r is dropped from each line.
std::vector<TextLine> split_lines(std::string_view text);

struct Token {
  std::string_view text;
  uint32_t column = 0;  // 1-based byte column in the original line
};

// Splits a line on spaces and tabs. ANSI escape sequences (ESC [ ... letter),
// which nvidia-smi prints on a terminal, count as separators.
std::vector<Token> tokenize(std::string_view line);

// Adds a diagnostic; `source` becomes its file.
void report(diag::List& out, std::string_view source, std::string code, diag::Severity sev,
            uint32_t line, uint32_t column, std::string message, std::string hint = {});

// Printable excerpt of untrusted input for messages: at most 40 bytes of valid
// UTF-8, control bytes and bytes that are not UTF-8 replaced by '?'.
std::string excerpt(std::string_view s);

// Whether a file's content is binary data rather than command output (a NUL byte).
bool is_binary(std::string_view s);

}  // namespace pai::facts::detail
