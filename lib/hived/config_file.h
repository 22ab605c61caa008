#pragma once
// A HiveD config named by a path, as hived diff, why and apply take it: a
// hivedscheduler.yaml, a services-configuration.yaml that embeds one
// (hivedscheduler.config), or a cluster directory holding either.

#include <memory>
#include <string>
#include <vector>

#include "config/hived_model.h"
#include "diag/diagnostic.h"
#include "util/result.h"

namespace pai::hived {

// Why a path gives no model.
struct ConfigLoadError {
  enum class Kind { HasErrors, NoHivedConfig } kind = Kind::HasErrors;
  std::string path;
  std::vector<diag::Diagnostic> errors;  // HasErrors: the errors `check config` finds
  size_t files = 0;                      // files read (for the diagnostics' text summary)
};

// The model of PATH, checked as `check config` checks it.
util::Result<std::shared_ptr<config::HivedModel>, ConfigLoadError> load_hived_model(
    const std::string& path);

// The HiveD config's own text (what HiveD's ConfigMap carries): the file
// itself, or the config embedded in services-configuration.yaml.
util::Result<std::string> hived_config_text(const std::string& path);

}  // namespace pai::hived
