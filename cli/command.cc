// The one dispatcher every command goes through: complete, validate, run.

#include "command.h"

#include <cstdio>

#include <CLI/CLI.hpp>

#include "command_tree.h"
#include "exit_codes.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/printable.h"

namespace paictl {

void Usage::error(std::string message, std::string hint) {
  errors_.push_back({std::move(message), std::move(hint)});
}

bool Usage::error_if(bool condition, std::string message, std::string hint) {
  if (condition) error(std::move(message), std::move(hint));
  return condition;
}

std::string Usage::summary() const {
  std::string s;
  for (const auto& e : errors_) s += (s.empty() ? "" : "; ") + e.message;
  return s;
}

int report_usage(const Usage& u, const std::vector<std::string>& path) {
  for (const auto& e : u.errors()) {
    print_error(e.message);
    if (!e.hint.empty())
      std::fprintf(stderr, "  hint: %s\n", pai::util::printable(e.hint, true).c_str());
  }
  std::fprintf(stderr, "Run '%s --help' for usage.\n", command_line(path).c_str());
  return kExitUsage;
}

int dispatch_command(const std::vector<std::string>& path, const std::function<void()>& complete,
                     const std::function<void(Usage&)>& validate, const std::function<int()>& run) {
  complete();
  Usage u;
  if (std::string e = output_usage_error(path); !e.empty()) u.error(e, kOutputNameHint);
  validate(u);
  if (!u.ok()) return report_usage(u, path);
  return run();
}

std::vector<std::string> command_path(const CLI::App& cmd) {
  return app_path(&cmd);
}

void set_command_callback(CLI::App& cmd, std::function<void()> callback) {
  cmd.callback(std::move(callback));
}

}  // namespace paictl
