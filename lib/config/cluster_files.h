#pragma once
// Finds, loads and checks the files of one or more clusters: the entry point
// of `paictl check config`, and how other commands load a cluster.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/cluster_config.h"
#include "config/hived.h"
#include "config/hived_model.h"
#include "config/layout.h"
#include "config/services.h"
#include "diag/diagnostic.h"

namespace pai::config {

enum class FileKind { Layout, ClusterConfig, ServicesConfig, Hived, Unknown };
std::string_view to_string(FileKind k);

// The OpenPAI file names looked for in a directory, and the kind of each.
const std::vector<std::pair<std::string, FileKind>>& known_file_names();

// What a file is, from its name, else from its top-level keys.
FileKind detect_kind(const std::string& path, const std::string& content);

// One cluster: the files found in one directory, or the files named on the command line.
struct Cluster {
  std::string origin;  // the directory, or "" for files given one by one
  std::optional<Layout> layout;
  std::optional<ClusterConfig> config;
  std::optional<ServicesConfig> services;
  std::optional<HivedConfig> hived;  // a standalone hivedscheduler.yaml
  // The HiveD model the scheduler would run: the embedded config when there is
  // one, else the standalone file.
  std::shared_ptr<HivedModel> model;
  const HivedConfig* model_config() const {
    if (services && services->has_hived) return &services->hived;
    return hived ? &*hived : nullptr;
  }
};

struct CheckOutcome {
  diag::List diagnostics;          // sorted
  std::vector<std::string> files;  // every file read, in order
  std::map<std::string, std::string> sources;
  std::vector<Cluster> clusters;
  bool input_error = false;  // a path could not be read or holds no cluster file
};

// Loads and validates everything under `paths` (files or directories).
CheckOutcome check_paths(const std::vector<std::string>& paths);

// The same for files already in memory, (name, content) pairs forming one
// cluster; the kind of each comes from its name, else its content.
CheckOutcome check_sources(const std::vector<std::pair<std::string, std::string>>& files);

// The config.yaml of a cluster directory, for the defaults it gives commands
// (ssh_config, hived_url, ...); its findings are check config's. nullopt when the
// directory has no config.yaml or it is not YAML.
std::optional<ClusterConfig> read_cluster_settings(const std::string& dir);

// What paictl install needs of each cluster directory among `paths` that
// check_paths read into `out`: F012 warnings naming a missing config.yaml or
// layout.yaml and what to put there. `check config` adds them to its findings.
diag::List install_readiness(const CheckOutcome& out, const std::vector<std::string>& paths);

}  // namespace pai::config
