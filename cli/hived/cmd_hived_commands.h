#pragma once
// The build functions of the hived commands added after app.h's list (so that
// adding one recompiles the command table only).

#include "app.h"
#include "flags.h"

namespace paictl {

void build_hived_apply(Flags&, Globals&);
void build_hived_cells(Flags&, Globals&);
void build_hived_drift(Flags&, Globals&);
void build_hived_health(Flags&, Globals&);
void build_hived_quarantine(Flags&, Globals&);
void build_hived_release(Flags&, Globals&);

}  // namespace paictl
