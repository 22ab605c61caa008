#pragma once
// config pull and config diff: the cluster files as the running cluster keeps
// them (cluster_files.h), written into a directory or compared with the cluster
// directory's own. docs/install.md.

#include <string>
#include <utility>
#include <vector>

#include "deploy/cluster_files.h"
#include "deploy/host_plan.h"

namespace pai::deploy {

struct ClusterFilesRequest {
  std::string cluster_dir;
  std::string operation = "config pull";  // how messages name the use case
  std::vector<std::string> limit;
  int wait_s = 300;
  std::string templates_dir;
};
// The cluster files the master's cluster holds (read as root on the master).
UseCaseResult<ClusterFiles> read_cluster_files_of(const ClusterFilesRequest& request,
                                                  const InstallDeps& deps,
                                                  std::string* cluster_dir = nullptr);

struct ConfigPullPlan {
  std::string dir;  // where the files go
  ClusterFiles remote;
  // A local file that differs from the cluster's and may not be replaced: the
  // pull is refused (nothing is written).
  std::string conflict;
};
// `out`: the directory to write to ("" = the cluster directory); `force`: files
// that differ are replaced. Reads; changes nothing.
UseCaseResult<ConfigPullPlan> plan_config_pull(const ClusterFilesRequest& request,
                                               const std::string& out, bool force,
                                               const InstallDeps& deps);

struct ConfigPullOutcome {
  std::vector<std::string> written;  // paths, in order
  std::optional<UseCaseError> error;
};
// Writes the files (secret ones at 0600) when the plan has no conflict.
ConfigPullOutcome apply_config_pull(const ConfigPullPlan& plan);

// The files' differences, cluster first (a/) and local second (b/): one
// (name, unified diff) per file that differs, in name order.
struct ConfigDiff {
  std::string cluster_dir;
  std::vector<std::pair<std::string, std::string>> diffs;
};
UseCaseResult<ConfigDiff> config_diff(const ClusterFilesRequest& request, const InstallDeps& deps);

}  // namespace pai::deploy
