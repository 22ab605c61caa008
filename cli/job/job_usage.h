#pragma once
// --param, --name and --vc as job submit, job clone and job check take them:
// the usage checks the job commands share (their validate steps), and the
// overrides they make.

#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "job/job_file.h"

namespace paictl::jobcli {

// Every --param that is not NAME=VALUE, and a --name the server refuses.
void validate_overrides(const std::vector<std::string>& params, const std::string& name, Usage& u);

// --param/--name/--vc into overrides; prints the error and returns nullopt on bad input.
std::optional<pai::job::Overrides> make_overrides(const std::vector<std::string>& params,
                                                  const std::string& name, const std::string& vc);

}  // namespace paictl::jobcli
