#pragma once
// The command table and what every command shares.

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
// help, and how to add it to its parent.
struct Command {
  std::vector<std::string> path;  // e.g. {"check", "config"}
  std::string summary;
  std::function<void(CLI::App& parent, Globals& g)> add;
};

const std::vector<Command>& commands();

// Group commands ("check", "job", ...) with their one-line purpose.
struct Group {
  std::string name;
  std::string summary;
};
const std::vector<Group>& groups();

}  // namespace paictl
