#include "output/output.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/fs.h"
#include "util/printable.h"

namespace paictl {

bool is_tty(int fd) {
  return ::isatty(fd) == 1;
}

bool use_color(bool no_color_flag, int fd) {
  if (no_color_flag) return false;
  const char* nc = std::getenv("NO_COLOR");
  if (nc && *nc) return false;
  const char* term = std::getenv("TERM");
  if (term && std::strcmp(term, "dumb") == 0) return false;
  return is_tty(fd);
}

pai::util::Result<void> write_report_file(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    return {};
  }
  return pai::util::write_file_atomic(path, content, 0644);
}

void print_error(const std::string& message) {
  bool color = use_color(false, 2);
  std::fprintf(stderr, "%spaictl: error:%s %s\n", color ? "\x1b[1;31m" : "", color ? "\x1b[0m" : "",
               pai::util::printable(message, true).c_str());
}

void print_warning(const std::string& message) {
  bool color = use_color(false, 2);
  std::fprintf(stderr, "%spaictl: warning:%s %s\n", color ? "\x1b[1;33m" : "",
               color ? "\x1b[0m" : "", pai::util::printable(message, true).c_str());
}

}  // namespace paictl
