#pragma once
#include <string>

namespace pai::remote {
// The version of the libssh libpai runs with ("0.10.4").
std::string libssh_version();
}  // namespace pai::remote
