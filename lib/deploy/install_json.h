#pragma once
// The -o json|yaml documents of install, reset and config push
// (paictl.install/v1, paictl.reset/v1; docs/schemas/), from their plans and
// outcomes. Keys are in the order the documents have always had.

#include <nlohmann/json.hpp>

#include "deploy/install.h"
#include "deploy/reset.h"

namespace pai::deploy {

using DocJson = nlohmann::ordered_json;

// The Azure part ("azure"): ARM's plan (paictl.azurePlan/v1), then, when the
// apply got that far, what it did ("result"), the VMs ("machines") and the
// requests it took ("requests").
DocJson azure_install_json(const AzureInstallPlan& plan, const AzureInstallOutcome* outcome);
// A change of the HiveD config ("hived"): its lines, warnings, whether HiveD
// restarts, the unified diff.
DocJson hived_edit_json(const HivedEdit& edit);
// "Install", "Reset", "ConfigPush" or "HivedPush".
const char* host_operation_kind(HostOperation operation);
// One run of the hosts: apiVersion, kind, cluster, the plan and (when applied)
// the result.
DocJson host_stage_json(const HostRunPlan& plan, const RunResult* result);
// What a hosts' run cost (its plan and apply): `stats` of install.schema.json.
DocJson run_stats_json(const HostRunPlan& plan);

// install's document; null when the outcome has none (it failed before there
// was one to show).
DocJson install_json(const InstallPlan& plan, const InstallOutcome& outcome);
// reset's document; null when it has none. A reset of hosts is a
// paictl.install/v1 document of kind Reset, reset --azure a paictl.reset/v1
// document of kind AzureReset.
DocJson reset_json(const ResetPlan& plan, const ResetOutcome& outcome);

}  // namespace pai::deploy
