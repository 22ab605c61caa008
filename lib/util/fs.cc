#include "util/fs.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>

namespace pai::util {

namespace {

Error fs_read_error(std::string message) {
  return Error{std::move(message), {}, Error::Kind::Input};
}

// "64 MiB", "512 KiB", "100 bytes".
std::string fs_size_text(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// What `mode` is, for "is a FIFO (named pipe), not a regular file".
const char* fs_kind_text(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

// Why open(2) failed, in words that say what is at `path`.
std::string fs_open_error(const std::string& path, int err) {
  if (err == ELOOP) return "is a loop of symbolic links";
  if (err == ENOENT) {
    struct stat lst {};
    if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
      char target[4096];
      ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
      std::string to = n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string("?");
      return "is a broken symbolic link (to " + to + ", which does not exist)";
    }
  }
  return std::strerror(err);
}

// Opens `path` for reading without ever blocking (O_NONBLOCK: a FIFO opens at
// once and is then refused) and checks that it is a regular file of at most
// `max_bytes` (0: no limit). The descriptor and the file's size, or why not.
Result<std::pair<int, size_t>> fs_open_regular(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return fs_read_error(fs_open_error(path, errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    std::string err = std::strerror(errno);
    ::close(fd);
    return fs_read_error(err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    if (S_ISDIR(st.st_mode)) return fs_read_error("is a directory");
    return fs_read_error(std::string("is ") + fs_kind_text(st.st_mode) + ", not a regular file");
  }
  if (max_bytes > 0 && static_cast<size_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return fs_read_error("is larger than " + fs_size_text(max_bytes) + " (" +
                         std::to_string(st.st_size) + " bytes)");
  }
  // Reads block from here on (a regular file never waits long).
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return std::pair<int, size_t>{fd, static_cast<size_t>(st.st_size)};
}

// Reads up to `want` bytes at `offset`; fewer when the file shrank meanwhile.
Result<std::string> fs_read_at(int fd, size_t offset, size_t want) {
  std::string content(want, '\0');
  size_t got = 0;
  while (got < content.size()) {
    ssize_t n =
        ::pread(fd, content.data() + got, content.size() - got, static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string err = std::strerror(errno);
      ::close(fd);
      return fs_read_error(err);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  content.resize(got);
  return content;
}

}  // namespace

Result<std::string> read_file(const std::string& path, size_t max_bytes) {
  auto opened = fs_open_regular(path, max_bytes);
  if (!opened.ok()) return std::move(opened).error();
  // Never more than max_bytes, even if the file grew since fstat.
  return fs_read_at(opened->first, 0, opened->second);
}

Result<std::optional<std::string>> read_file_if_present(const std::string& path, size_t max_bytes) {
  if (!path_entry_exists(path)) return std::optional<std::string>();
  auto r = read_file(path, max_bytes);
  if (!r.ok()) return std::move(r).error();
  return std::optional<std::string>(std::move(*r));
}

Result<FileTail> read_file_tail(const std::string& path, size_t max_bytes) {
  auto opened = fs_open_regular(path, 0);
  if (!opened.ok()) return std::move(opened).error();
  auto [fd, size] = *opened;
  FileTail tail;
  tail.skipped = size > max_bytes ? size - max_bytes : 0;
  auto r = fs_read_at(fd, tail.skipped, size - tail.skipped);
  if (!r.ok()) return std::move(r).error();
  tail.text = std::move(*r);
  return tail;
}

Result<void> check_regular_file(const std::string& path, size_t max_bytes) {
  auto opened = fs_open_regular(path, max_bytes);
  if (!opened.ok()) return std::move(opened).error();
  ::close(opened->first);
  return {};
}

bool path_entry_exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 || errno != ENOENT;
}

namespace {

// Replaces the regular file (or creates) `path` through a temporary file in its directory.
std::string replace_regular_file(const std::string& path, const std::string& content,
                                 unsigned mode) {
  std::string dir = ".";
  auto slash = path.rfind('/');
  if (slash != std::string::npos) dir = slash == 0 ? "/" : path.substr(0, slash);
  std::random_device rd;
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd() % 1000000);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
    // The message names the path asked for, never the temporary file.
    if (fd < 0 && errno == ENOENT) return path + ": the directory " + dir + " does not exist";
    if (fd < 0 && errno != EEXIST) return path + ": " + std::strerror(errno);
  }
  if (fd < 0) return path + ": could not create a temporary file";
  ::fchmod(fd, mode);  // the umask may have narrowed it; never widen beyond `mode`
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return path + ": " + err;
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    std::string err = std::strerror(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    return path + ": fsync: " + err;
  }
  ::close(fd);
  // The path may have changed while the content was written: never rename over
  // anything but a regular file.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    ::unlink(tmp.c_str());
    return path + ": changed into something other than a regular file while it was written";
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    return path + ": " + err;
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

// Writes into an existing character device or FIFO as `cat >` would: no
// temporary file, no rename, the node itself stays.
std::string write_through(const std::string& path, const std::string& content, bool fifo) {
  // O_NONBLOCK: a FIFO without a reader fails with ENXIO instead of blocking forever.
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENXIO && fifo) return path + ": is a FIFO with no reader";
    return path + ": " + std::strerror(errno);
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string err = std::strerror(errno);
      ::close(fd);
      return path + ": " + err;
    }
    off += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && errno != EINTR) return path + ": " + std::strerror(errno);
  return {};
}

// write_file_atomic's steps: the error, or "" when the file was written.
std::string write_file_atomic_impl(const std::string& path, const std::string& content,
                                   unsigned mode) {
  if (path.empty()) return "empty path";
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) != 0) {
    if (errno != ENOENT) return path + ": " + std::strerror(errno);
    return replace_regular_file(path, content, mode);
  }
  std::string target = path;
  struct stat st = lst;
  if (S_ISLNK(lst.st_mode)) {
    // Replace what the link points at and keep the link.
    char* real = ::realpath(path.c_str(), nullptr);
    if (!real) {
      return path + ": is a symbolic link to a missing file (" + std::strerror(errno) +
             "); not replacing the link";
    }
    target = real;
    std::free(real);
    if (::lstat(target.c_str(), &st) != 0) return target + ": " + std::strerror(errno);
  }
  if (S_ISREG(st.st_mode)) return replace_regular_file(target, content, mode);
  if (S_ISDIR(st.st_mode)) return path + ": is a directory";
  if (S_ISCHR(st.st_mode)) return write_through(target, content, false);
  if (S_ISFIFO(st.st_mode)) return write_through(target, content, true);
  if (S_ISBLK(st.st_mode)) return path + ": is a block device; refusing to write a file over it";
  return path + ": is neither a regular file nor a character device or FIFO; not replacing it";
}

}  // namespace

Result<void> write_file_atomic(const std::string& path, const std::string& content, unsigned mode) {
  std::string err = write_file_atomic_impl(path, content, mode);
  if (!err.empty()) return Error{std::move(err), {}};
  return {};
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::optional<std::string> others_may_read(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077) == 0)
    return std::nullopt;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return std::string(mode);
}

Result<void> make_directories(const std::string& path, unsigned mode) {
  if (path.empty()) return Error{"empty path", {}};
  std::string cur;
  size_t i = 0;
  while (i <= path.size()) {
    size_t next = path.find('/', i);
    if (next == std::string::npos) next = path.size();
    cur = path.substr(0, next);
    if (!cur.empty() && !is_directory(cur)) {
      if (::mkdir(cur.c_str(), mode) != 0 && errno != EEXIST)
        return Error{cur + ": " + std::strerror(errno), {}};
    }
    i = next + 1;
  }
  return {};
}

Result<std::string> random_hex(size_t bytes) {
  std::string raw(bytes, '\0');
  size_t got = 0;
  while (got < raw.size()) {
    ssize_t r = ::getrandom(raw.data() + got, raw.size() - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      return Error{std::string("cannot read random bytes from the kernel (getrandom): ") +
                       (r < 0 ? std::strerror(errno) : "none returned"),
                   {}};
    got += static_cast<size_t>(r);
  }
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes);
  for (unsigned char c : raw) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  std::fill(raw.begin(), raw.end(), '\0');
  return out;
}

}  // namespace pai::util
