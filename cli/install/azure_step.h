#pragma once
// The Azure provider's flags in `paictl install|reset` and `paictl node
// add|remove` (docs/azure.md), and how its plans read on a terminal; the Azure
// part itself is lib/deploy/azure_part.h.

#include <string>

#include "deploy/azure_part.h"
#include "flags.h"

namespace paictl {

struct AzureOptions {
  std::string arm_endpoint;    // else PAICTL_ARM_ENDPOINT, else management.azure.com
  std::string authority_host;  // else PAICTL_AUTHORITY_HOST, else login.microsoftonline.com
  std::string ca_file;         // else PAICTL_CA_FILE, else the system store
  bool azure_only = false;     // install: stop after the Azure resources
  bool reset_azure = false;    // reset: delete the cluster's Azure resources
};

void add_azure_options(Flags& cmd, AzureOptions& o, bool reset);
// Only --arm-endpoint, --authority-host and --ca-file.
void add_azure_endpoint_options(Flags& cmd, AzureOptions& o);
// Where the flags say Azure is.
pai::deploy::AzureAccess azure_access(const AzureOptions& o);

// The resources' plan: one line per resource with its action and differences.
void print_azure_plan(const pai::deploy::AzureInstallPlan& p, bool color);
// node add --azure: the scale set's new size and what follows it.
void print_azure_grow(const pai::deploy::AzureGrowPlan& g, const std::string& cluster_dir,
                      bool color);
// reset --azure --dry-run: what would be deleted.
void print_azure_reset_plan(const pai::deploy::AzureResetPlan& r);
// reset --azure: what was deleted and kept.
void print_azure_reset(const pai::deploy::AzureResetOutcome& r, const std::string& layout_file);

}  // namespace paictl
