#pragma once
// An SVG picture of a plan: chains -> racks -> nodes -> cells -> GPUs, each
// leaf coloured by the virtual cluster it is bound to in one feasible binding.
// HiveD binds virtual cells to physical cells only when jobs run; the picture
// shows the binding a buddy allocator makes on an empty cluster (VCs in
// order, largest cells first), which is one of the bindings HiveD can choose.

#include <string>
#include <vector>

#include "planner/planner.h"

namespace pai::planner {

// For each host of the plan, the VC index (into Plan::vcs) of each leaf in
// leaf order; -1 for a leaf that no VC holds.
std::vector<std::vector<int>> example_binding(const Plan& plan);

std::string render_svg(const Plan& plan);

}  // namespace pai::planner
