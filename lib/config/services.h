#pragma once
// OpenPAI services-configuration.yaml, with the HiveD config embedded as a
// string under hivedscheduler.config.

#include <optional>
#include <string>

#include "config/context.h"
#include "config/hived.h"

namespace pai::config {

struct ServicesConfig {
  std::string file;
  std::string cluster_id = "pai";
  std::string docker_data_root;
  bool has_hived = false;  // hivedscheduler.config is present and non-empty
  HivedConfig hived;       // marks point into this file
};

// Reads services-configuration.yaml; the embedded HiveD config is parsed too
// and its diagnostics carry lines of this file.
ServicesConfig load_services_config(const Node* root, Context& ctx);

}  // namespace pai::config
