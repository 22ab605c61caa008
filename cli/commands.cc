#include <algorithm>

#include "app.h"

namespace paictl {

namespace {
std::vector<Command>& registry() {
  static std::vector<Command> r;
  return r;
}
}  // namespace

Registrar::Registrar(Command c) {
  registry().push_back(std::move(c));
}

std::vector<Command> commands() {
  std::vector<Command> out = registry();
  std::stable_sort(out.begin(), out.end(), [](const Command& a, const Command& b) {
    return a.order != b.order ? a.order < b.order : a.path < b.path;
  });
  return out;
}

const std::vector<Group>& groups() {
  static const std::vector<Group> kGroups = {
      {"check",
       "Validate cluster files, hosts and job files before they reach an installer or a scheduler"},
      {"facts", "Collect hardware and software facts from hosts"},
      {"cluster", "Register OpenPAI clusters and see their capacity"},
      {"job", "Validate, render, submit and follow OpenPAI jobs"},
      {"simulate", "Replay job traces on a cluster with HiveD and baseline schedulers"},
  };
  return kGroups;
}

}  // namespace paictl
