#pragma once
// How install, reset, node add|remove and config push|pull|diff show their use
// cases (lib/deploy/install.h, node_add.h, node_remove.h, config_pull.h): the use cases' events as
// progress lines on stderr and plans on stdout, the confirmations on the
// terminal, the failures and the exit codes.

#include <optional>
#include <string>
#include <vector>

#include "app.h"
#include "check/hosts_common.h"
#include "deploy/install.h"
#include "deploy/install_json.h"
#include "deploy/node_add.h"
#include "deploy/node_remove.h"
#include "exit_codes.h"
#include "install/cmd_install.h"
#include "install/install_print.h"

namespace paictl {

// What a command shows, and what its hosts' reads reported.
struct UseCaseView {
  const Globals* g = nullptr;
  std::string output;  // -o
  bool json = false;   // -o json|yaml: the document on stdout, no text
  bool dry_run = false;
  // The exit code of the last read of the hosts that failed (prepare_hosts
  // printed why).
  int hosts_failed = kExitUsage;
};
UseCaseView use_case_view(const InstallOptions& o, const Globals& g);

// The hosts of o's cluster directory as prepare_hosts reads them (every host:
// the use case applies the limit), and the rest of what the use cases talk through.
pai::deploy::InstallDeps install_deps(const InstallOptions& o, UseCaseView& view);
// The events shown, the confirmations asked on the terminal.
pai::deploy::Callbacks use_case_callbacks(UseCaseView& view);

// Prints why a use case stopped; returns the exit code.
int report(const pai::deploy::UseCaseError& e, const UseCaseView& view);
int exit_code_of(const pai::deploy::UseCaseError& e, const UseCaseView& view);

// The exit code of a hosts' run; `changed_before`: an earlier step changed something.
int stage_exit_code(const pai::deploy::HostStage& s, bool changed_before);
int install_exit_code(const pai::deploy::InstallPlan& p, const pai::deploy::InstallOutcome& o,
                      const UseCaseView& view);
// The push that ends node add|remove, with its follow-up message when it fails.
int push_exit_code(const std::optional<pai::deploy::PushOutcome>& push,
                   const std::string& cluster_dir, const UseCaseView& view);

// A document through the output layer (apiVersion paictl.KIND/v1); nothing when null.
void print_use_case_document(const pai::deploy::DocJson& doc, const char* kind,
                             const UseCaseView& view);

// NAME,NAME given once or more: the names, trimmed.
std::vector<std::string> split_names(const std::vector<std::string>& lists);

}  // namespace paictl
