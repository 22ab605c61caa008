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

ReadResult read_fd(int fd, size_t max_bytes, std::string_view what) {
  ReadResult r;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      r.error = std::string(what) + ": " + std::strerror(errno);
      r.content.clear();
      return r;
    }
    if (n == 0) break;
    if (r.content.size() + static_cast<size_t>(n) > max_bytes) {
      r.error = std::string(what) + " is larger than " + format_limit(max_bytes);
      r.content.clear();
      return r;
    }
    r.content.append(buf, static_cast<size_t>(n));
  }
  r.ok = true;
  return r;
}

ReadResult read_line(int fd, size_t max_bytes, std::string_view what) {
  ReadResult r;
  char c;
  while (true) {
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0) {
      if (errno == EINTR) continue;
      r.error = std::string(what) + ": " + std::strerror(errno);
      r.content.clear();
      return r;
    }
    if (n == 0 || c == '\n') break;
    if (r.content.size() >= max_bytes) {
      r.error = "the line on " + std::string(what) + " is longer than " + format_limit(max_bytes);
      // Overwrite before releasing: it may be (the start of) a secret.
      std::fill(r.content.begin(), r.content.end(), '\0');
      r.content.clear();
      return r;
    }
    r.content.push_back(c);
  }
  if (!r.content.empty() && r.content.back() == '\r') r.content.pop_back();
  r.ok = true;
  return r;
}

}  // namespace pai::util
