#pragma once
// The usage checks the job commands share (their validate steps): --param,
// --name and --vc as job submit, job clone and job check take them.

#include <string>
#include <vector>

#include "command.h"

namespace paictl::jobcli {

// Every --param that is not NAME=VALUE, and a --name the server refuses.
void validate_overrides(const std::vector<std::string>& params, const std::string& name, Usage& u);

}  // namespace paictl::jobcli
