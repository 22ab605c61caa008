#pragma once
// Internal to libpai: the parts of the code catalogue (lib/diag/codes.h), one per
// family group, each in its own file.

#include <vector>

#include "diag/codes.h"

namespace pai::diag::codes_detail {

const std::vector<CodeInfo>& config_codes();
const std::vector<CodeInfo>& job_codes();
const std::vector<CodeInfo>& other_codes();
const std::vector<CodeInfo>& certs_codes();
const std::vector<CodeInfo>& cluster_codes();
const std::vector<CodeInfo>& hosts_codes();

}  // namespace pai::diag::codes_detail
