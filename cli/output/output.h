#pragma once
// Terminal helpers for the front end: colour, TTY detection, report files.

#include <string>

#include "util/result.h"

namespace paictl {

// Colour on stdout: a TTY, no NO_COLOR in the environment, no --no-color, TERM not "dumb".
bool use_color(bool no_color_flag, int fd = 1);
bool is_tty(int fd);

// Writes a report file atomically ("-": on stdout).
pai::util::Result<void> write_report_file(const std::string& path, const std::string& content);

void print_error(const std::string& message);    // "paictl: error: ..." on stderr
void print_warning(const std::string& message);  // "paictl: warning: ..." on stderr

}  // namespace paictl
