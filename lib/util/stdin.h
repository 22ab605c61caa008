#pragma once
// Bounded reads from a file descriptor (stdin, a pipe): every reader of stdin
// goes through these, so an endless producer (`yes | paictl ...`) ends with a
// clear error instead of exhausting memory.

#include <cstddef>
#include <string>
#include <string_view>

#include "util/fs.h"

namespace pai::util {

// The same cap as job files read from disk.
inline constexpr size_t kMaxStdinBytes = 16u << 20;
// A password or token is short; anything longer is not one.
inline constexpr size_t kMaxSecretBytes = 64u << 10;

// Reads `fd` to its end. Stops as soon as more than `max_bytes` arrived: then
// the error says "<what> is larger than N MiB" (or KiB).
Result<std::string> read_fd(int fd, size_t max_bytes = kMaxStdinBytes,
                            std::string_view what = "stdin");

// Reads one line from `fd` (up to '\n' or the end), without the newline and a
// final '\r'. A line longer than `max_bytes` is an error, not a truncation.
// Reads byte by byte so nothing after the line is consumed.
Result<std::string> read_line(int fd, size_t max_bytes = kMaxSecretBytes,
                              std::string_view what = "stdin");

// "16 MiB", "64 KiB", "100 bytes".
std::string format_limit(size_t bytes);

}  // namespace pai::util
