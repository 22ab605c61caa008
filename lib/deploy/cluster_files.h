#pragma once
// The cluster files on the running cluster (OpenPAI kept them in a ConfigMap):
// layout.yaml in the ConfigMap openpai/pai-configuration; config.yaml and
// services-configuration.yaml, which hold passwords, in the Secret of the same
// name. `paictl config push|pull|diff` and install's `config` phase.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "deploy/phase.h"
#include "remote/transport.h"

#include "util/result.h"

namespace pai::deploy {

// file name -> content
using ClusterFiles = std::map<std::string, std::string>;

// The files of a cluster directory that are kept on the cluster (those present).
// One that is there but is no readable regular file (a directory, a FIFO, a
// broken symbolic link, larger than 16 MiB) is an error (Kind::Input).
util::Result<ClusterFiles> read_cluster_files(const std::string& dir);
// Whether a file holds secrets (kept in the Secret, not the ConfigMap).
bool secret_file(const std::string& name);

// The ConfigMap and the Secret holding `files` (JSON documents, one a line).
std::string cluster_files_manifest(const ClusterFiles& files, const std::string& ns);
// The files in `kubectl get configmap,secret -o json` output of those two objects
// (other objects in the same List are left out).
ClusterFiles parse_cluster_files(const std::string& kubectl_json);
// The command, run as root on the master, that prints that output ("{}" before
// the control plane exists).
std::string get_cluster_files_script(const std::string& ns);
// The two objects of the cluster files, as kubectl get names them
// ("configmap/NAME secret/NAME").
std::string cluster_files_objects();
// The same objects as API paths under /api/v1/namespaces/NS.
std::vector<std::string> cluster_files_paths();

// A line diff of two texts ("--- a/NAME", "+++ b/NAME", hunks of -/+ lines with
// one line of context); "" when equal. Values of keys that name secrets
// (password, secret, token, key) are shown as ***.
std::string file_diff(const std::string& name, const std::string& from, const std::string& to);

// Runs `script` on the master as root over `transport` (sudo -n unless root).
remote::ExecResult run_on_master(remote::Transport& transport, const HostSpec& master,
                                 const std::string& script, const std::string& input = {});

struct InstallSettings;
// The `config` phase: the cluster files pushed to the cluster when they differ.
std::unique_ptr<Phase> make_config_phase(const InstallSettings& s);

std::string base64_decode(const std::string& in);

}  // namespace pai::deploy
