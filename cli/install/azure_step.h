#pragma once
// The Azure provider in `paictl install` and `paictl reset` (docs/azure.md):
// the plan of the cluster's ARM resources before the on-prem plan, their
// creation before the on-prem phases, the VMs written into layout.yaml, and
// `reset --azure`.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "flags.h"
#include "output/printer.h"

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

// Before the on-prem install. Returns -1 when the on-prem part should follow,
// else the command's result. The plan and what was done go into `doc`
// ("azure"); `changed` says whether the Azure plan had changes.
// `format` is -o's: a JSON or YAML document of --azure-only goes to stdout through
// the output layer.
// `before_apply`, when given, runs once the plan has changes and before anything
// is created or changed in Azure (install: the on-prem hosts' pre-install checks,
// so that a bad network plan is refused before money is spent); it returns -1 to
// go on, else the command's result (then nothing was changed in Azure).
int run_azure_install(const AzureOptions& a, const std::string& cluster_dir, const Globals& g,
                      bool dry_run, bool yes, const std::string& format, Json& doc, bool& changed,
                      const std::function<int(const Json& azure_plan)>& before_apply = nullptr);

// reset --azure: deletes the resources tagged with this cluster, waiting for
// each, and removes their VMs from layout.yaml.
int run_azure_reset(const AzureOptions& a, const std::string& cluster_dir, const Globals& g,
                    bool dry_run, bool yes, const std::string& format);

// node add --azure POOL --count N, the Azure half: grows the pool's scale set
// to count+N and waits, then writes the new count into config.yaml and the VMs
// into layout.yaml. `new_hosts` gets the names of the VMs that were not there
// before (the caller joins them as on-prem hosts are joined). With `dry_run`,
// only reads and prints (or puts into `doc`) the change. Returns -1 when the
// VMs exist and the join should follow, else the command's result.
int run_azure_grow(const AzureOptions& a, const std::string& cluster_dir, const Globals& g,
                   const std::string& pool, int add, bool dry_run, bool yes, bool json,
                   std::vector<std::string>& new_hosts, Json& doc);

// node remove --azure NODE...: the VMs behind these layout.yaml names.
struct AzureRemoval;
struct AzureRemovalDeleter {
  void operator()(AzureRemoval*) const;
};
using AzureRemovalPtr = std::unique_ptr<AzureRemoval, AzureRemovalDeleter>;
// Finds each node among the pools' VMs (an error names what is not one);
// changes nothing. Returns -1 when every node is a VM of a pool.
int azure_removal_plan(const AzureOptions& a, const std::string& cluster_dir, const Globals& g,
                       const std::vector<std::string>& nodes, AzureRemovalPtr& out);
// What azure_removal_apply will do, one line each (dry run), and as JSON.
std::vector<std::string> azure_removal_lines(const AzureRemoval& r);
Json azure_removal_json(const AzureRemoval& r);
// Deletes the VMs (with their NICs and OS disks) and writes config.yaml's
// counts and layout.yaml from what Azure then shows. kExitOk or an error code.
int azure_removal_apply(AzureRemoval& r, const Globals& g, bool json, Json& doc);

}  // namespace paictl
