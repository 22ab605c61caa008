#pragma once
// The verdict of the host checks for a purpose: before `paictl install` (what
// install sets up itself is Status::Install, not a failure) or on a running
// cluster (every violation counts). One rule over the catalogue's ByInstall
// column, read by `check hosts` and by install's checks phase alike, so that
// the same hosts get the same errors through both.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check/catalogue.h"
#include "check/runner.h"
#include "facts/host_facts.h"

namespace pai::check {

enum class Purpose {
  Auto,     // per host: Running where an install left its marker, else Install
  Install,  // the hosts are about to be installed (install's own checks phase)
  Running,  // the hosts run an installed cluster: nothing is left to install
};
std::string_view to_string(Purpose p);
// "auto", "install", "running".
std::optional<Purpose> parse_purpose(std::string_view s);

// Markers install leaves on a host it installed (what install's `os` phase
// reads as "ours"): /etc/paictl/cluster, or the kubelet's kubeconfig.
const std::vector<std::string>& install_markers();
// Some marker exists on the host (false when the facts did not list them).
bool host_installed(const facts::HostFacts& f);
// The purpose a host is judged for: `p`, or with Auto, by host_installed().
Purpose purpose_for(Purpose p, const facts::HostFacts& f);

// Applies the catalogue's ByInstall column to each host's failures and
// warnings (demoted ones included), by the purpose of its host:
//   SetsUp, Install purpose           -> Status::Install, hint: install_does
//   Keeps on an installed host, Install purpose -> Status::Install (install keeps it)
//   Keeps on an installed host, Running purpose -> Status::Pass (the cluster's own)
// and leaves everything else as found. Call it before demote().
void judge(std::vector<CheckResult>& results, const std::vector<HostOutcome>& hosts, Purpose p);

// The results that are errors (Status::Fail), by host name;
// hosts without errors are absent. What stops an install and what makes
// `check hosts` exit 1 (besides an unreachable host).
std::map<std::string, std::vector<CheckResult>> errors_by_host(
    const std::vector<CheckResult>& results);

// The host checks of `check hosts` and of install's checks phase, from the
// facts gathered to the verdict: evaluate(), the extra results (hybrid
// clusters' cross-site checks), judge() for `purpose`, then demote(ignore).
std::vector<CheckResult> host_verdicts(const std::vector<HostOutcome>& hosts,
                                       const EvalOptions& eval, std::vector<CheckResult> extra,
                                       Purpose purpose, const std::vector<std::string>& ignore);

}  // namespace pai::check
