#pragma once

namespace paictl {

// Stable exit codes; scripts and CI depend on them.
enum ExitCode : int {
  kExitOk = 0,        // success, nothing found
  kExitFindings = 1,  // checks found errors (or warnings with --fail-on-warn)
  kExitUsage = 2,     // bad usage or unreadable/invalid input
  kExitRemote = 3,    // a remote system failed (SSH, HTTP, Azure)
};

}  // namespace paictl
