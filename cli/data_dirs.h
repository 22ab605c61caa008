#pragma once
// Where paictl's data directories (layouts/, templates/) are, for the commands that
// read them when no flag names one.

#include <string>

namespace paictl {

// The directory NAME ("layouts", "templates"): `flag` when given, else the
// environment variable `env` (PAICTL_LAYOUTS), else share/paictl/NAME of the
// installed prefix (relative to the binary), else NAME of the source tree when the
// binary runs from its build tree, else ./NAME.
std::string find_data_dir(const std::string& flag, const char* env, const std::string& name);

// The install templates (templates/install/*.yaml) for install, reset, node add|remove,
// config push and hived apply: find_data_dir with $PAICTL_TEMPLATES.
std::string find_templates();

}  // namespace paictl
