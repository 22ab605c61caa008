#pragma once
// Validates a job protocol v2 file as the OpenPAI rest-server does before it
// accepts a submission (config/v2/protocol.js schema, middlewares/v2/protocol.js
// semantic checks, config/v2/hived.js and middlewares/v2/hived.js for the HiveD
// extras), reporting every finding instead of the first, with positions, plus
// warnings for known pitfalls. docs/jobs.md lists every code.

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "diag/diagnostic.h"
#include "job/job_file.h"

namespace pai::job {

struct ValidateOptions {
  Overrides overrides;  // --name, --vc, --param: checked as if they were in the file
};

// Appends the findings about `f` to `out` (file names are f.path).
void validate(const JobFile& f, diag::List& out, const ValidateOptions& opt = {});

// Lines of `f` that hold secret values (the `secrets:` block, registry
// passwords). Reports never quote them.
std::set<uint32_t> secret_lines(const JobFile& f);

struct CheckOutcome {
  diag::List diagnostics;
  std::vector<std::string> files;                          // in the order given
  std::map<std::string, std::string> sources;              // file -> text, for source snippets
  std::map<std::string, std::set<uint32_t>> hidden_lines;  // file -> lines never to quote
  bool input_error = false;                                // a file could not be read
};

// Loads and validates each path ("-" reads stdin once).
CheckOutcome check_files(const std::vector<std::string>& paths, const ValidateOptions& opt = {});

}  // namespace pai::job
