#pragma once
// How the install use cases' plans and progress read on a terminal: the
// engine's events, a hosts' plan, the line that registers an installed
// cluster, the Azure VMs written into layout.yaml, a HiveD config's change.

#include "deploy/azure_part.h"
#include "deploy/engine.h"
#include "deploy/hived_edit.h"
#include "deploy/prepare.h"

namespace paictl {

// One line per event on stderr; `verbose`: also the observations, skips and
// connections.
void print_engine_event(const pai::deploy::Event& e, bool color, bool verbose);
// Per host: what each phase would change (or that it is up to date), then a summary.
void print_run_plan(const pai::deploy::RunResult& plan, bool color);
// The line that registers the installed cluster with paictl, through the gateway.
void print_cluster_add(const pai::deploy::PreparedCluster& p);
// The pools' VMs as written into layout.yaml.
void print_machines(const pai::deploy::AzureMachines& m);
// A HiveD config's change: its warnings, lines and diff, and that HiveD restarts.
void print_hived_edit(const pai::deploy::HivedEdit& h);

}  // namespace paictl
