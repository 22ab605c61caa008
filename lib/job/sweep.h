#pragma once
// A parameter sweep over one job file: every combination of the parameters'
// values becomes one job, named after the file's job, the sweep and the values.
//
//   auto jobs = job::sweep_jobs("train", "20261201-120304", axes, "prod");
//   for (const auto& j : *jobs) submit(file, j.overrides);

#include <string>
#include <vector>

#include "job/job_file.h"
#include "util/result.h"

namespace pai::job {

// A job name from any text: characters the server refuses become '_', at most
// 255 characters.
std::string job_name_of(const std::string& text);

// One swept parameter and its values, in the order given.
struct SweepAxis {
  std::string name;
  std::vector<std::string> values;
};

// One job of a sweep: its overrides (name, VC when given, one parameter per axis)
// and a label of its values ("lr0.1-bs32").
struct SweepJob {
  std::string label;
  Overrides overrides;
};

// Every combination of the axes' values, the last axis changing fastest. A job
// is named `base`-`sweep_id`-NAMEVALUE...; a name above 240 characters is cut
// there and gets "-INDEX". `vc` (when not empty) is every job's virtual cluster.
// An error when two jobs get the same name (values that differ only in
// characters a name cannot hold).
util::Result<std::vector<SweepJob>> sweep_jobs(const std::string& base, const std::string& sweep_id,
                                               const std::vector<SweepAxis>& axes,
                                               const std::string& vc);

}  // namespace pai::job
