#pragma once
// `paictl plan` end to end, without the terminal: read the inputs (facts
// directories, machine profiles), plan, render the files, and check them with
// the same checks as `paictl check config`.

#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "facts/host_facts.h"
#include "planner/planner.h"

namespace pai::planner {

struct ProfileCount {
  std::string name;
  int count = 0;
  int racks = 0;
};

struct PlanInputs {
  std::vector<std::string> facts_dirs;
  // Facts collected in this run (paictl init --hosts), named as the hosts will be.
  std::vector<facts::HostFacts> collected;
  std::vector<ProfileCount> profiles;
  std::string layouts_dir;
  PlanOptions options;
};

struct PlanRun {
  Plan plan;
  diag::List diagnostics;  // reading the inputs and planning, sorted
  std::vector<std::string> files_read;
  bool ok() const { return !diagnostics.has_errors(); }
};

PlanRun plan_from_inputs(const PlanInputs& in);

struct PlanFiles {
  std::string layout;    // layout.yaml
  std::string hived;     // hivedscheduler.yaml
  std::string services;  // services-configuration.yaml (merged with `existing_services`)
};

PlanFiles render_files(const Plan& plan, const std::string& existing_services);

// Writes the plan's files to a fresh temporary directory and runs
// config::check_paths on it: the diagnostics `paictl check config` would
// print (the standalone hivedscheduler block stands in for a merged
// services-configuration.yaml, so that findings in the rest of a user's file
// do not count). `scratch` is where the temporary directory goes ("" = $TMPDIR).
diag::List check_plan_files(const Plan& plan, const std::string& scratch = {});

}  // namespace pai::planner
