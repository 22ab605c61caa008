#pragma once
// What `check hosts` and `facts collect` share: the host-selection and SSH flags,
// building the inventory (config validated first), passwords from stdin or the
// environment (never from an argument), the dry run and the progress line.

#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "check/runner.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "inventory/inventory.h"
#include "remote/secret.h"

namespace paictl {

struct HostsOptions {
  std::vector<std::string> paths;
  std::vector<std::string> hosts;
  std::string hosts_file;
  std::vector<std::string> limit;
  std::string user;
  std::vector<std::string> identities;
  std::string ssh_config;
  std::string known_hosts;
  std::string host_key_policy = "strict";
  bool no_agent = false;
  bool password_stdin = false;
  int parallel = 64;
  double connect_timeout_s = 10;
  double command_timeout_s = 120;
  int keepalive_s = 15;
  std::string docker_data_root;
  std::vector<std::string> registries;
  bool dry_run = false;
  bool print_script = false;
  std::vector<std::string> accept_codes;  // InventoryOptions's (node remove: L007)
  // --password-stdin's line, once read: shared by the copies of these options,
  // so that a command that prepares its hosts twice (install: the pre-install
  // checks before Azure, then the install) reads stdin once.
  struct StdinPassword {
    bool read = false;
    pai::remote::Secret secret;
  };
  std::shared_ptr<StdinPassword> stdin_password = std::make_shared<StdinPassword>();
};

// Adds PATH..., --hosts, --hosts-file, --limit and the SSH flags to `cmd`.
void add_hosts_options(Flags* cmd, HostsOptions& o);

// The usage errors of those flags, before any file is read or host reached:
// --hosts-file - with --password-stdin (both want stdin), a --registry that is
// not a host name.
void validate_hosts_options(const HostsOptions& o, Usage& u);

struct PreparedHosts {
  pai::inventory::Inventory inventory;
  pai::check::CollectOptions collect;
  pai::remote::Secret ssh_password;
  std::string password_origin;  // "config.yaml", "stdin", "PAICTL_SSH_PASSWORD" or ""
  std::string sudo_origin;
};

// Validates the options and the cluster files, reads the passwords: the hosts
// to reach and how, or the exit code to stop with (after printing why).
Step<PreparedHosts> prepare_hosts(const HostsOptions& o, const Globals& g);

// --dry-run: how each host would be reached, without contacting any. `format` is -o's.
void print_dry_run(const PreparedHosts& p, const HostsOptions& o, const std::string& command,
                   const std::string& format);

// The progress line's text, at most `width` columns: "checking hosts: 12/50
// hosts, waiting for gpu-07, gpu-12 and 3 more" (the hosts still running, in
// the layout's order; as many names as fit).
std::string progress_text(const std::string& what, const pai::check::CollectProgress& p,
                          size_t width);

// Collects facts with a progress line on stderr when it is a terminal.
std::vector<pai::check::HostOutcome> collect_with_progress(PreparedHosts& p, const Globals& g,
                                                           const char* what, double* duration_ms,
                                                           size_t* parallel_used);

// Facts collected from hosts given by address (--hosts, --hosts-file) named by
// the hosts' own hostnames, `master` (a name or address, may be "") marked as the
// master; hosts of a layout keep its names. Exit 2 when `master` names no host.
Step<void> name_collected_facts(std::vector<pai::check::HostOutcome>& outcomes,
                                const std::string& master, const Globals& g);

}  // namespace paictl
