#include "remote/library_version.h"

#include <libssh/libssh.h>

namespace pai::remote {

std::string libssh_version() {
  const char* v = ssh_version(0);
  if (!v) return "unknown";
  std::string s = v;
  // "0.10.4/openssl/zlib": the library's own number first.
  return s.substr(0, s.find('/'));
}

}  // namespace pai::remote
