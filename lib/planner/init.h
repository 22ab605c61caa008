#pragma once
// `paictl init CLUSTER_DIR`: a new cluster directory with every file that
// `paictl install` reads, planned from the hosts' facts (k0sctl's `init`, with
// paictl's planner): layout.yaml, config.yaml (the SSH user and the release, and
// paictl's settings of the directory: ssh_config, ssh_user, ssh_key_file_path,
// known_hosts, ignore_check_errors, hived_url), services-configuration.yaml (the
// HiveD config and a generated admin password, mode 0600), and the collected
// facts under facts/. plan_init changes nothing; apply_init writes the files.

#include <optional>
#include <string>
#include <vector>

#include "facts/host_facts.h"
#include "planner/plan_run.h"
#include "util/result.h"

namespace pai::planner {

// paictl's settings of a cluster directory, as config.yaml holds them. Paths are
// written as given (absolute, or relative to the cluster directory).
struct ClusterSettings {
  std::string user = "root";                // OpenPAI's `user` (the SSH user of its installer)
  std::string docker_image_tag = "v1.8.0";  // OpenPAI's release
  std::string ssh_config;
  std::string ssh_user;
  std::string ssh_key_file_path;
  std::string known_hosts;
  std::vector<std::string> ignore_check_errors;
  std::string hived_url;
};

// config.yaml for these settings, with a comment at the top on what to edit; a
// setting not given is a commented-out line. `master_ip` (may be "") fills the
// example of hived_url.
std::string render_cluster_config(const ClusterSettings& s, const std::string& master_ip);

struct InitRequest {
  std::string cluster_dir;
  PlanInputs inputs;  // facts directories, collected facts, profiles, --master, --vc
  ClusterSettings settings;
  bool force = false;  // write into an existing, non-empty directory
};

struct InitFile {
  std::string name;     // relative to the cluster directory ("facts/gpu-1.json")
  std::string content;  // what is written
  std::string shown;    // what a dry run shows: the content with its secret masked
  unsigned mode = 0644;
  bool exists = false;  // a file of that name is there and will be replaced
};

struct InitPlan {
  std::string cluster_dir;  // without a trailing '/'
  PlanRun run;              // the planner's plan and its findings
  std::vector<InitFile> files;
  diag::List checks;  // check config's findings on the files (none expected)
  bool ok() const { return run.ok() && !checks.has_errors(); }
};

// Plans the directory. An Input error when CLUSTER_DIR is a file, or a directory
// that is not empty and `force` is false; the planner's findings are in
// plan.run.diagnostics (plan.ok() false when there are errors, and no files).
util::Result<InitPlan> plan_init(const InitRequest& request);

// Writes the files of an ok() plan (the directory and facts/ created as needed,
// each file atomically, a file with a secret at mode 0600). Returns the paths written.
util::Result<std::vector<std::string>> apply_init(const InitPlan& plan);

// A strong random password: `length` letters and digits from /dev/urandom.
util::Result<std::string> random_password(size_t length = 24);

}  // namespace pai::planner
