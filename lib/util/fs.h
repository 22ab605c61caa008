#pragma once
// File helpers: bounded reads and atomic writes.

#include <cstddef>
#include <optional>
#include <string>

#include "util/result.h"

namespace pai::util {

// Reads a whole regular file: the one way paictl reads a file it is given.
// Refuses files above max_bytes and anything that is not a regular file, and
// never blocks (it opens with O_NONBLOCK and checks with fstat, so a FIFO is
// refused at once). The error (Kind::Input) says what is at the path, without
// the path: "No such file or directory", "is a directory", "is a FIFO (named
// pipe), not a regular file", "is a broken symbolic link (to X, which does not
// exist)", "is a loop of symbolic links", "is larger than 64 MiB (N bytes)".
Result<std::string> read_file(const std::string& path, size_t max_bytes = 64u << 20);

// read_file for a file that may be absent: nullopt when nothing at all is at
// `path`; anything else there (a directory, a FIFO, a broken symbolic link) is
// the error read_file gives, never taken for "no file".
Result<std::optional<std::string>> read_file_if_present(const std::string& path,
                                                        size_t max_bytes = 64u << 20);

// The last `max_bytes` of a regular file (all of it when smaller), with
// read_file's checks but no size limit: for logs that only grow.
struct FileTail {
  std::string text;
  size_t skipped = 0;  // bytes before `text` that were not read (0: the whole file)
};
Result<FileTail> read_file_tail(const std::string& path, size_t max_bytes);

// read_file's checks without reading: for a file another library or tool opens,
// so that it never blocks on a FIFO or takes a directory for an empty file.
// max_bytes 0: no size limit.
Result<void> check_regular_file(const std::string& path, size_t max_bytes = 0);

// Whether anything (a file, a directory, a FIFO, a broken symbolic link) has
// this name: lstat(2) succeeds or fails for another reason than ENOENT.
bool path_entry_exists(const std::string& path);

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

// `bytes` random bytes from the kernel's CSPRNG (getrandom), as 2*bytes lower-case
// hexadecimal digits: keys and secrets paictl makes. An error when the kernel gives none.
Result<std::string> random_hex(size_t bytes);

}  // namespace pai::util
