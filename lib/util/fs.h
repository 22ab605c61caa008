#pragma once
// File helpers: bounded reads and atomic writes.

#include <cstddef>
#include <optional>
#include <string>

#include "util/result.h"

namespace pai::util {

// Reads a whole regular file. Refuses files above max_bytes and anything that
// is not a regular file (a FIFO would block, a directory has no content). The
// error's message is what went wrong, without the path: "No such file or
// directory", "file is larger than 64 MiB", "is a directory".
Result<std::string> read_file(const std::string& path, size_t max_bytes = 64u << 20);

// Writes `content` to `path` through a temporary file in the same directory,
// fsync, then rename, so readers see the old or the new file and never a torn one.
// `mode` is applied to the temporary file before any byte is written.
// Only a regular file is ever replaced: a symbolic link keeps existing and the
// file it points at is replaced; a character device (/dev/null, a terminal) or
// a FIFO is written through, as `cat >` would (a FIFO without a reader is an
// error, never a wait); a block device, a directory or a socket is refused.
// The error's message names the path.
Result<void> write_file_atomic(const std::string& path, const std::string& content,
                               unsigned mode = 0644);

bool is_directory(const std::string& path);
bool is_regular_file(const std::string& path);
bool path_exists(const std::string& path);
// A regular file's mode ("0644") when its group or other users may use it
// (any of the 077 bits), for warnings about files that hold secrets; nullopt
// when only its owner may, or it is not a regular file.
std::optional<std::string> others_may_read(const std::string& path);

// Creates a directory and its parents (like mkdir -p).
Result<void> make_directories(const std::string& path, unsigned mode = 0755);

}  // namespace pai::util
