#pragma once
// The cluster files on the running cluster (kube/cluster_files.h: which files,
// where, read back), as the use cases write them: `paictl config push|pull|diff`
// and install's `config` phase.

#include <memory>
#include <string>

#include "deploy/phase.h"
#include "kube/cluster_files.h"
#include "kube/master.h"

namespace pai::deploy {

using kube::cluster_files_objects;
using kube::cluster_files_paths;
using kube::ClusterFiles;
using kube::parse_cluster_files;
using kube::read_cluster_files;
using kube::run_on_master;
using kube::secret_file;

// The ConfigMap and the Secret holding `files` (JSON documents, one a line).
std::string cluster_files_manifest(const ClusterFiles& files, const std::string& ns);
// The command, run as root on the master, that prints the two objects as
// `kubectl get configmap,secret -o json` does ("{}" before the control plane
// exists): parse_cluster_files reads the files from it.
std::string get_cluster_files_script(const std::string& ns);

// A line diff of two texts ("--- a/NAME", "+++ b/NAME", hunks of -/+ lines with
// one line of context); "" when equal. Values of keys that name secrets
// (password, secret, token, key) are shown as ***.
std::string file_diff(const std::string& name, const std::string& from, const std::string& to);

struct InstallSettings;
// The `config` phase: the cluster files pushed to the cluster when they differ.
std::unique_ptr<Phase> make_config_phase(const InstallSettings& s);

}  // namespace pai::deploy
