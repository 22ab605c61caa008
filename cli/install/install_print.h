#pragma once
// How the install use cases' plans and progress read on a terminal: the
// engine's events, a hosts' plan, the line that registers an installed
// cluster, the Azure VMs written into layout.yaml, a HiveD config's change.

#include "deploy/azure_part.h"
#include "deploy/credentials.h"
#include "deploy/engine.h"
#include "deploy/hived_edit.h"
#include "deploy/prepare.h"

namespace paictl {

// One line per event on stderr; `verbose`: also the observations, skips and
// connections.
void print_engine_event(const pai::deploy::Event& e, bool color, bool verbose);
// Per host: what each phase would change (or that it is up to date), then a summary.
void print_run_plan(const pai::deploy::RunResult& plan, bool color);
// Per host, after an apply: how many phases were ok (up to date), changed,
// failed and skipped, as Kubespray's PLAY RECAP.
void print_recap(const pai::deploy::RunResult& r);
// How the installed cluster is reached and where its admin password is; the
// password itself when `shown_password` (made now, stdout a terminal); the
// command that registers it (`register_hint`).
struct AccessShown {
  pai::deploy::ClusterAccess access;
  std::string cluster_dir;
  bool has_password = false;
  bool password_made = false;
  const pai::remote::Secret* shown_password = nullptr;
  bool register_hint = true;
};
void print_cluster_access(const AccessShown& a);
// The pools' VMs as written into layout.yaml.
void print_machines(const pai::deploy::AzureMachines& m);
// A HiveD config's change: its warnings, lines and diff, and that HiveD restarts.
void print_hived_edit(const pai::deploy::HivedEdit& h);

}  // namespace paictl
