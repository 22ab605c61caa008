#pragma once
// paictl plan's options and its validate step (cmd_plan.cc), shared with its unit tests.

#include <string>
#include <vector>

#include "command.h"
#include "planner/plan_run.h"

namespace paictl {

struct PlanCliOptions {
  std::vector<std::string> facts;
  std::vector<std::string> facts_positional;
  std::vector<std::string> profiles;
  std::vector<int> counts;
  std::vector<int> racks;
  std::vector<std::string> vcs;
  std::string odd_hosts = "split";
  std::string vc_cells = "node";
  std::string master;
  int reserve_cpu = -1;
  std::string reserve_memory;
  std::string layouts;
  std::string out;
  std::string diagram;
  std::string output = "table";
  bool dry_run = false;
  bool detailed_exitcode = false;
  bool list_profiles = false;
  // --profile, --count and --racks in command-line order: each count/racks belongs to the --profile
  // before it.
  std::vector<pai::planner::ProfileCount> profile_counts;
  std::string pairing_error;  // set by complete: a --count/--racks before any --profile
};

// Every usage error of `o` (no files read): nothing to plan, --count/--racks without
// their --profile, a --profile without --count, --dry-run without --out, a bad
// --reserve-memory.
void validate_plan(const PlanCliOptions& o, Usage& u);

}  // namespace paictl
