#pragma once
// The cluster files as the running cluster keeps its copy (OpenPAI kept them in
// a ConfigMap): layout.yaml in the ConfigMap NS/pai-configuration; config.yaml
// and services-configuration.yaml, which hold passwords, in the Secret of the
// same name. Which files, where, and how to read them back: config push|pull|
// diff and install's `config` phase write them (deploy/cluster_files.h), check
// cluster compares them with the cluster directory's.

#include <map>
#include <string>
#include <vector>

#include "util/result.h"

namespace pai::kube {

// file name -> content
using ClusterFiles = std::map<std::string, std::string>;

// The name of the ConfigMap and of the Secret.
inline constexpr const char* kClusterFilesObject = "pai-configuration";

// The files of a cluster directory that are kept on the cluster (those present).
// One that is there but is no readable regular file (a directory, a FIFO, a
// broken symbolic link, larger than 16 MiB) is an error (Kind::Input).
util::Result<ClusterFiles> read_cluster_files(const std::string& dir);
// Whether a file holds secrets (kept in the Secret, not the ConfigMap).
bool secret_file(const std::string& name);

// The files in `kubectl get configmap,secret -o json` output of those two objects
// (other objects in the same List are left out).
ClusterFiles parse_cluster_files(const std::string& kubectl_json);
// The two objects of the cluster files, as kubectl get names them
// ("configmap/NAME secret/NAME").
std::string cluster_files_objects();
// The same objects as API paths under /api/v1/namespaces/NS.
std::vector<std::string> cluster_files_paths();

}  // namespace pai::kube
