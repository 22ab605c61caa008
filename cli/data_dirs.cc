#include "data_dirs.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "data_dirs_config.h"
#include "util/fs.h"

namespace paictl {

namespace {

// The directory of the running binary (the paictl launcher), symlinks resolved.
std::string data_dirs_exe_dir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string p(buf, static_cast<size_t>(n));
  auto s = p.find_last_of('/');
  return s == std::string::npos ? std::string() : p.substr(0, s);
}

bool data_dirs_same(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) && !ec;
}

}  // namespace

std::string find_data_dir(const std::string& flag, const char* env, const std::string& name) {
  if (!flag.empty()) return flag;
  if (const char* e = env ? std::getenv(env) : nullptr; e && *e) return e;
  std::string d = data_dirs_exe_dir();
  if (!d.empty()) {
    std::string installed = d + "/" + PAICTL_DATADIR_FROM_BINDIR + "/paictl/" + name;
    if (pai::util::is_directory(installed)) return installed;
    std::string source = std::string(PAICTL_SOURCE_DIR) + "/" + name;
    if (data_dirs_same(d, PAICTL_BUILD_DIR) && pai::util::is_directory(source)) return source;
  }
  return name;
}

std::string find_templates() {
  return find_data_dir({}, "PAICTL_TEMPLATES", "templates");
}

}  // namespace paictl
