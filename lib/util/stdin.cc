#include "util/stdin.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace pai::util {

std::string format_limit(size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

Result<std::string> read_fd(int fd, size_t max_bytes, std::string_view what) {
  std::string content;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{std::string(what) + ": " + std::strerror(errno), {}, Error::Kind::Input};
    }
    if (n == 0) break;
    if (content.size() + static_cast<size_t>(n) > max_bytes)
      return Error{
          std::string(what) + " is larger than " + format_limit(max_bytes), {}, Error::Kind::Input};
    content.append(buf, static_cast<size_t>(n));
  }
  return content;
}

Result<std::string> read_line(int fd, size_t max_bytes, std::string_view what) {
  std::string line;
  char c;
  while (true) {
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string err = std::strerror(errno);
      std::fill(line.begin(), line.end(), '\0');
      return Error{std::string(what) + ": " + err, {}, Error::Kind::Input};
    }
    if (n == 0 || c == '\n') break;
    if (line.size() >= max_bytes) {
      // Overwrite before releasing: it may be (the start of) a secret.
      std::fill(line.begin(), line.end(), '\0');
      return Error{
          "the line on " + std::string(what) + " is longer than " + format_limit(max_bytes),
          {},
          Error::Kind::Input};
    }
    line.push_back(c);
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

}  // namespace pai::util
