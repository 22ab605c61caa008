#include "deploy/certificate_key.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "util/fs.h"
#include "util/strings.h"

namespace pai::deploy {

std::string certificate_key_path(const std::string& state_dir) {
  return state_dir + "/certificate-key";
}

bool valid_certificate_key(const std::string& key) {
  return key.size() == 64 &&
         std::all_of(key.begin(), key.end(), [](char c) { return std::isxdigit(c) != 0; });
}

util::Result<remote::Secret> certificate_key(const std::string& state_dir) {
  const std::string path = certificate_key_path(state_dir);
  if (util::path_entry_exists(path)) {
    if (auto loose = util::others_may_read(path))
      return util::Error{path + " holds the control plane's certificate key but has mode " + *loose,
                         "chmod 600 " + path + " (only its owner may read it)",
                         util::Error::Kind::Input};
    auto read = util::read_file(path, 4096);
    if (!read) return util::Error{"cannot read " + path + ": " + read.error().message, {}};
    std::string key(util::trim(*read));
    std::fill(read->begin(), read->end(), '\0');
    if (!valid_certificate_key(key))
      return util::Error{path + " is not a certificate key (64 hexadecimal characters)",
                         "remove it: the next install makes a new one and uploads the "
                         "certificates with it",
                         util::Error::Kind::Input};
    return remote::Secret(std::move(key));
  }
  if (auto made = util::make_directories(state_dir, 0700); !made.ok()) return made.error();
  auto key = util::random_hex(32);
  if (!key)
    return util::Error{"cannot make the control plane's certificate key: " + key.error().message,
                       {}};
  // O_EXCL: two runs never make two keys (the lock allows one anyway).
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return util::Error{"cannot create " + path + ": " + std::strerror(errno), {}};
  std::string line = *key + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ok = ::fsync(fd) == 0 && ok;
  ::close(fd);
  std::fill(line.begin(), line.end(), '\0');
  if (!ok) {
    ::unlink(path.c_str());
    return util::Error{"cannot write " + path, {}};
  }
  return remote::Secret(std::move(*key));
}

}  // namespace pai::deploy
