#pragma once
// The build functions of the hived commands added after app.h's list (so that
// adding one recompiles the command table only).

#include "app.h"

namespace paictl {

void build_hived_apply(CLI::App&, Globals&);
void build_hived_cells(CLI::App&, Globals&);
void build_hived_drift(CLI::App&, Globals&);

}  // namespace paictl
