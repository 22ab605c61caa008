#pragma once
// paictl's exit codes, and the one rule that turns a command's result into the
// process's exit status. Scripts and CI depend on them.

#include "util/result.h"

namespace paictl {

enum ExitCode : int {
  kExitOk = 0,           // success, nothing found
  kExitFindings = 1,     // checks found errors (or warnings with --fail-on-warn); a job failed
  kExitUsage = 2,        // bad usage or unreadable/invalid input
  kExitRemote = 3,       // a remote system failed (SSH, HTTP, Azure)
  kExitWaitTimeout = 4,  // job wait / submit --wait: --timeout expired before the job ended
  // Not an exit status: what a plan-like command returns when it would change
  // files. exit_code_for() makes it 0, or 2 under --detailed-exitcode.
  kExitChanges = 100,
};

// The process exit status for a command's result. Under --detailed-exitcode
// (terraform's rule) 0 means no changes, 2 changes, and every error is 1.
constexpr int exit_code_for(int result, bool detailed_exitcode) {
  if (!detailed_exitcode) return result == kExitChanges ? kExitOk : result;
  if (result == kExitOk) return 0;
  if (result == kExitChanges) return 2;
  return 1;
}

// A step of a command's run that either lets the run go on (with a value, or
// none) or ends the command with an exit code: `Step<> prepare(...)`, then
// `if (auto s = prepare(...); !s) return s.error().code;`.
struct ExitNow {
  int code = kExitUsage;
};
template <class T = void>
using Step = pai::util::Result<T, ExitNow>;

// The exit code for a library failure of this kind: bad input 2, a remote
// system 3, anything else 1.
constexpr int exit_code_of(pai::util::Error::Kind kind) {
  switch (kind) {
    case pai::util::Error::Kind::Input:
      return kExitUsage;
    case pai::util::Error::Kind::Remote:
      return kExitRemote;
    default:
      return kExitFindings;
  }
}

}  // namespace paictl
