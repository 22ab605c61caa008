#pragma once
// The command table and what every command shares.
//
// Each command lives in its own cmd_*.cc and registers itself with a static
// Registrar, so adding a command touches no other file:
//
//   static paictl::Registrar reg({{"check", "config"}, "Validate ...", 10, add_check_config});

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace paictl {

struct Globals {
  bool verbose = false;
  bool quiet = false;
  bool no_color = false;
  // Set by the command that runs; main() returns it.
  int exit_code = 0;
};

// One command: its path under `paictl`, a one-line purpose for the top-level
// help, its place in that help, and how to add it to its parent (the root app
// or its group's app, e.g. "check").
struct Command {
  std::vector<std::string> path;  // e.g. {"check", "config"} or {"simulate"}
  std::string summary;
  int order = 100;
  std::function<void(CLI::App& parent, Globals& g)> add;
};

// Commands in help order.
std::vector<Command> commands();

struct Registrar {
  explicit Registrar(Command c);
};

// Group commands ("check", "job", ...): one-line purpose of each group. A group
// appears only when at least one of its commands is registered.
struct Group {
  std::string name;
  std::string summary;
};
const std::vector<Group>& groups();

}  // namespace paictl
