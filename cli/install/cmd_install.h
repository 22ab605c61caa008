#pragma once
// paictl install|reset, node add|remove and config push|pull|diff: their options
// and validate steps (cmd_install.cc), shared with their unit tests. Their run
// steps turn the options into a request of lib/deploy's use cases (install.h,
// node_add.h, node_remove.h, config_pull.h) and show what comes back (install_view.h).

#include <string>
#include <vector>

#include "check/hosts_common.h"
#include "command.h"
#include "flags.h"
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
  std::string register_name;  // install --register NAME
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

// The flags install, reset, node add|remove and config push|pull|diff share:
// the hosts' and SSH flags, --yes, --detailed-exitcode, --wait, -o, and the
// Azure flags (`azure`: install's or reset's; else only the endpoints).
void add_install_flags(Flags& cmd, InstallOptions& o, Globals& g, bool reset, bool azure);

// The usage errors of install, reset and config push|pull|diff (`verb`), before any
// file is read or host reached: not exactly one cluster directory, --hosts or
// --hosts-file, unknown --ignore-check-errors names, the SSH flags' errors
// (validate_hosts_options), an Azure endpoint that is not an http(s) URL or a
// --ca-file that is not a file.
void validate_install(const InstallOptions& o, const std::string& verb, Usage& u);
// install --register NAME: a cluster name, not with --dry-run nor --limit.
void validate_register(const InstallOptions& o, Usage& u);
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
