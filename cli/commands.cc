#include "app.h"

#include <CLI/CLI.hpp>

namespace paictl {

// Each command lives in its own cmd_*.cc and exposes an add function.
void add_check_config(CLI::App& parent, Globals& g);

const std::vector<Group>& groups() {
  static const std::vector<Group> kGroups = {
      {"check", "Validate cluster configuration before it reaches an installer or a scheduler"},
  };
  return kGroups;
}

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {{"check", "config"},
       "Validate layout.yaml, config.yaml, services-configuration.yaml and HiveD configs; every error in one pass",
       add_check_config},
  };
  return kCommands;
}

}  // namespace paictl
