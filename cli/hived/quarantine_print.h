#pragma once
// How hived quarantine|release and hived health --quarantine show a
// quarantine's plan and outcome (lib/deploy/quarantine.h).

#include <string>

#include "deploy/quarantine.h"

namespace paictl {

// The plan: each node's action, the doomed cells per VC, the running groups.
std::string quarantine_plan_text(const pai::deploy::QuarantinePlan& p);
// USER@HOST of this process.
std::string quarantine_who();

}  // namespace paictl
