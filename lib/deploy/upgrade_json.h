#pragma once
// The -o json|yaml document of paictl upgrade (paictl.upgrade/v1): the
// versions the cluster runs, the minor steps, per step the control plane's
// part and the workers' maintenance plan (hived/maintenance_json.h), and what
// the apply did when it ran.

#include "deploy/install_json.h"
#include "deploy/upgrade.h"

namespace pai::deploy {

DocJson upgrade_json(const UpgradePlan& plan, const UpgradeOutcome* outcome);

}  // namespace pai::deploy
