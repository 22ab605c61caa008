// paictl node add --azure POOL --count N PATH: more VMs in one Azure pool
// (docs/azure.md). The scale set grows first; config.yaml's count and
// layout.yaml follow once Azure has the VMs, so a later install plans nothing.

#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "app.h"
#include "azure/provider.h"
#include "azure_step.h"
#include "exit_codes.h"
#include "output.h"
#include "printer.h"
#include "util/fs.h"
#include "util/strings.h"

namespace paictl {

namespace {

struct NodeAddOptions {
  std::string path;
  std::string azure_pool;
  int count = 1;
  bool dry_run = false;
  std::string output = "text";
  AzureOptions azure;
};

int run_node_add(const NodeAddOptions& o, const Globals& g) {
  if (o.azure_pool.empty()) {
    print_error("node add needs --azure POOL (on-prem hosts: add them to layout.yaml and run "
                "paictl install --limit)");
    return kExitUsage;
  }
  if (!pai::util::is_directory(o.path)) {
    print_error(o.path + " is not a cluster directory");
    return kExitUsage;
  }
  return run_azure_node_add(o.azure, o.path, g, o.azure_pool, o.count, o.dry_run,
                            is_structured(o.output));
}

}  // namespace

void build_node_add(CLI::App& cmd, Globals& g) {
  auto o = std::make_shared<NodeAddOptions>();
  cmd.add_option("PATH", o->path, "The cluster directory (config.yaml with azure:, layout.yaml)")
      ->required();
  cmd.add_option("--azure", o->azure_pool, "The Azure pool (azure.pools[].name) to grow")
      ->type_name("POOL");
  cmd.add_option("--count", o->count, "How many VMs to add")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd.add_flag("--dry-run", o->dry_run, "Show the new size, and change nothing");
  add_output_option(cmd, o->output, g);
  add_azure_endpoint_options(cmd, o->azure);
  cmd.callback([o, &g]() { g.exit_code = run_node_add(*o, g); });
}

}  // namespace paictl
