#pragma once
// paictl install|reset, node add|remove and config push|pull|diff: their options
// and validate steps (cmd_install.cc), shared with their unit tests.

#include <string>
#include <vector>

#include "check/hosts_common.h"
#include "command.h"
#include "install/azure_step.h"
#include "output/printer.h"

namespace paictl {

struct InstallOptions {
  HostsOptions hosts;
  bool yes = false;
  bool detailed_exitcode = false;
  std::vector<std::string> ignore;
  std::string output = "text";
  int wait_s = 300;
  AzureOptions azure;
  // node add --azure: the Azure part is done; its document goes into the output.
  bool skip_azure = false;
  Json azure_doc;
  Json hived_doc;  // node add: the HiveD config's change
  // Set (node add|remove -o json|yaml): the document goes here instead of stdout,
  // so that the command prints one document of its own.
  Json* capture = nullptr;
};

struct PullOptions {
  InstallOptions install;
  std::string out;
  bool force = false;
};

struct NodeOptions {
  InstallOptions install;
  // The hosts named after the cluster directory (complete moves them here from
  // the positional arguments; run makes them --limit).
  std::vector<std::string> nodes;
  bool drain = false;
  std::string azure_pool;  // node add --azure POOL
  int count = 0;           // node add --count N (default 1)
  bool azure = false;      // node remove --azure
  std::string vc;          // --vc VC: the VC that gets (add) or gives up (remove) the cells
  std::string hived;       // node remove --hived URL: HiveD's inspect API, for the running groups
  bool force = false;      // node remove --force: even when running groups use the nodes
  bool interactive =
      false;  // complete: stdin and stderr are terminals (a confirmation can be asked)
};

// The usage errors of install, reset and config push|pull|diff (`verb`), before any
// file is read or host reached: not exactly one cluster directory, --hosts or
// --hosts-file, unknown --ignore-check-errors names, the SSH flags' errors
// (validate_hosts_options), an Azure endpoint that is not an http(s) URL or a
// --ca-file that is not a file.
void validate_install(const InstallOptions& o, const std::string& verb, Usage& u);
// config pull: those, and an --out that exists and is not a directory.
void validate_config_pull(const PullOptions& o, Usage& u);
// node add: no host named (or, with --azure POOL, hosts named), --count without
// --azure, and validate_install's errors.
void validate_node_add(const NodeOptions& o, Usage& u);
// node remove: no host named, --yes missing when no confirmation can be asked,
// a --hived that is not an http(s) URL, and validate_install's errors.
void validate_node_remove(const NodeOptions& o, Usage& u);

// node add|remove's complete step: the positional hosts after the cluster
// directory become `nodes`; whether a confirmation can be asked.
void complete_node(NodeOptions& o);

}  // namespace paictl
