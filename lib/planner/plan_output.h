#pragma once
// What `paictl plan` writes: layout.yaml, the HiveD config (hivedscheduler.yaml
// and the hivedscheduler.config block of services-configuration.yaml), a JSON
// form of the plan for -o json|yaml, and the text summary for -o table.

#include <string>

#include <nlohmann/json.hpp>

#include "planner/planner.h"

namespace pai::planner {

std::string render_layout(const Plan& plan);
std::string render_hived(const Plan& plan);

// services-configuration.yaml: `existing` with its hivedscheduler.config block
// replaced by the plan's HiveD config (the rest of the file is kept as it is),
// or a file holding only that block when `existing` is empty.
std::string render_services(const Plan& plan, const std::string& existing);

// The VC cell type path written in virtualCells, e.g. "DGX-A100-RACK.DGX-A100-NODE".
std::string vc_cell_type(const Chain& chain, size_t level);

nlohmann::ordered_json plan_to_json(const Plan& plan);

struct TableOptions {
  bool color = false;
  bool verbose = false;  // also info findings and per-host lines
};
std::string render_table(const Plan& plan, const TableOptions& options);

// "123Gi" for whole GiB, else "1536Mi".
std::string memory_quantity(int64_t bytes);

}  // namespace pai::planner
