#include "util/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace pai::util {

ReadResult read_file(const std::string& path, size_t max_bytes) {
  ReadResult r;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    r.error = std::strerror(errno);
    return r;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    r.error = std::strerror(errno);
    ::close(fd);
    return r;
  }
  if (S_ISDIR(st.st_mode)) {
    r.error = "is a directory";
    ::close(fd);
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.error = "not a regular file";
    ::close(fd);
    return r;
  }
  if (static_cast<size_t>(st.st_size) > max_bytes) {
    r.error = "file is larger than " + std::to_string(max_bytes >> 20) + " MiB";
    ::close(fd);
    return r;
  }
  r.content.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < r.content.size()) {
    ssize_t n = ::read(fd, r.content.data() + got, r.content.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      r.error = std::strerror(errno);
      ::close(fd);
      return r;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  r.content.resize(got);
  ::close(fd);
  r.ok = true;
  return r;
}

std::string write_file_atomic(const std::string& path, const std::string& content, unsigned mode) {
  std::string dir = ".";
  auto slash = path.rfind('/');
  if (slash != std::string::npos) dir = slash == 0 ? "/" : path.substr(0, slash);
  std::random_device rd;
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd() % 1000000);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST) return tmp + ": " + std::strerror(errno);
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

std::string make_directories(const std::string& path, unsigned mode) {
  if (path.empty()) return "empty path";
  std::string cur;
  size_t i = 0;
  while (i <= path.size()) {
    size_t next = path.find('/', i);
    if (next == std::string::npos) next = path.size();
    cur = path.substr(0, next);
    if (!cur.empty() && !is_directory(cur)) {
      if (::mkdir(cur.c_str(), mode) != 0 && errno != EEXIST)
        return cur + ": " + std::strerror(errno);
    }
    i = next + 1;
  }
  return {};
}

}  // namespace pai::util
