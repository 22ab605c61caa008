#pragma once
// Runs the check catalogue: gathers every host's facts in parallel (one SSH
// round trip each), then evaluates the per-host and cross-host checks.

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "check/catalogue.h"
#include "facts/fact_script.h"
#include "facts/host_facts.h"
#include "inventory/inventory.h"
#include "remote/secret.h"
#include "remote/target.h"
#include "remote/transport.h"

namespace pai::check {

struct HostOutcome {
  inventory::HostPlan plan;
  remote::ExecResult exec;
  bool reached = false;    // logged in and the script started
  facts::HostFacts facts;  // partial when the script was cut off
};

// Where a collection stands: hosts done, and those whose script runs now (plan order).
struct CollectProgress {
  size_t done = 0;
  size_t total = 0;
  std::vector<std::string> running;
};

struct CollectOptions {
  size_t parallel = 64;
  int command_timeout_ms = 120000;
  remote::Secret sudo_password;  // sent on the script's stdin, only to hosts not logged in as root
  facts::ScriptOptions script;
  std::function<void(size_t done, size_t total)> progress;
  // Called, one call at a time, whenever a host starts or ends.
  std::function<void(const CollectProgress&)> on_progress;
};

// Gathers facts from every host. Hosts that cannot be reached are outcomes
// with reached == false; the others go on. Returns outcomes in plan order.
std::vector<HostOutcome> collect(remote::Transport& transport,
                                 const std::vector<inventory::HostPlan>& plans,
                                 const CollectOptions& opts, size_t* parallelism_used = nullptr);

struct EvalOptions {
  std::vector<std::string> registries;  // the names the DNS check reports on
  int64_t min_disk_free_bytes = int64_t{50} << 30;
  double max_clock_skew_s = 1.0;
  std::string docker_data_root = "/mnt/docker";
  // config.yaml's kube_offline_bundle when it is a bundle (manifest.json): the
  // platforms it carries ("ubuntu-22.04-amd64") and its NVIDIA driver branch
  // ("535", "" = none), for the OfflineBundle check (reported only with a bundle).
  std::vector<std::string> bundle_platforms;
  std::string bundle_driver;
};

// Per-host checks then cross-host checks, in catalogue order per host.
std::vector<CheckResult> evaluate(const std::vector<HostOutcome>& hosts, const EvalOptions& opts);

// --ignore-check-errors: "all" or check names (case-insensitive; "Port-<N>" or
// "Port-6443"). Returns the names that are not in the catalogue.
std::vector<std::string> unknown_check_names(const std::vector<std::string>& names);
// Demotes failures of the named checks to warnings (they still ran).
void demote(std::vector<CheckResult>& results, const std::vector<std::string>& names);

struct Summary {
  size_t hosts = 0;
  size_t unreachable = 0;  // hosts whose Reachable check failed (not demoted)
  size_t pass = 0, warn = 0, fail = 0, skip = 0;
  size_t install = 0;  // Status::Install: left to install, not a finding
};
Summary summarize(const std::vector<CheckResult>& results, size_t hosts);

// 0 ok; 1 findings (failures, or warnings with fail_on_warn); 3 some host could not be reached.
int exit_code(const Summary& s, bool fail_on_warn);

}  // namespace pai::check
