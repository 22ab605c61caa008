#pragma once
// paictl node maintain as a use case (usecase.h; docs/maintain.md): the GPU
// driver, a set of packages, or a reboot changed on some nodes, node by node in
// the maintenance planner's batches (lib/hived/maintenance.h) and through the
// node batch runner (node_batches.h): cordon, wait for the running groups (or
// drain them with evict), change, reboot when needed, verify, uncordon.
//
// The plan reads each host (its OS, the packages it has and holds, what apt
// offers, what nvidia-smi reports) and HiveD's live state (with a HiveD URL),
// and changes nothing. paictl does not know when a running group ends: a group
// on a node to maintain is taken as ending within the wait (--wait-for-groups),
// so with a wait the planner waits for it and the run stops, naming it, when it
// still runs at the wait's end; with no wait it blocks its nodes unless evict.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deploy/host_plan.h"
#include "deploy/node_batches.h"
#include "deploy/usecase.h"
#include "hived/maintenance.h"
#include "http/client.h"
#include "util/clock.h"

namespace pai::deploy {

struct MaintainRequest {
  std::string cluster_dir;
  std::vector<std::string> hosts;  // layout.yaml's names
  // --driver VERSION: "550" (the newest of the branch apt offers) or
  // "550.127.05"; the package is the OS's (Ubuntu: nvidia-driver-BRANCH;
  // Debian: nvidia-driver). A driver change reboots.
  std::string driver;
  std::vector<std::string> packages;  // --packages PKG=VER
  bool reboot = false;                // --reboot (also with packages)
  std::string max_unavailable = "1";  // N or P% (hived::parse_max_unavailable)
  double wait_for_groups_s = 0;
  bool evict = false;
  std::string hived;  // HiveD's inspect API; "" : plain order
  bool dry_run = false;
  bool yes = false;
  int drain_timeout_s = 300;
  int verify_timeout_s = 300;  // how long a node may take to come back verified
  double poll_s = 2;
};

struct MaintainDeps {
  InstallDeps install;  // the hosts (load_hosts) and the SSH transport
  // HiveD's inspect API. Null: a CurlClient (30 s a request, 10 s to connect).
  http::Client* hived_http = nullptr;
  util::Clock clock = util::Clock::real();
  // Epoch seconds (the planner's now). Null: the system clock.
  std::function<double()> epoch;
};

// One package a host changes.
struct PackageChange {
  std::string name;
  std::string from;  // the version installed, "" when none
  std::string to;
  bool held = false;                 // held now: unheld for the change, held again after
  std::vector<std::string> removes;  // installed packages it replaces (another driver branch)
};

struct HostChange {
  std::string host;
  std::string os;  // "ubuntu 22.04"
  int gpus = 0;    // the SKU's GPU count (what nvidia-smi and the Node must show)
  std::vector<PackageChange> packages;
  bool reboot = false;
  std::string driver_now;       // what nvidia-smi reports now ("" : none)
  std::string driver_expected;  // the driver nvidia-smi must report after ("" : not checked)
  bool changes() const;
};

struct MaintainPlan {
  MaintainRequest request;
  MaintainDeps deps;
  std::shared_ptr<const PreparedCluster> cluster;
  hived::MaintenancePlan maintenance;
  std::vector<HostChange> hosts;  // in the request's order
  std::string hived_source;       // "the live HiveD at URL", or why the order is plain
  // Nodes that no batch takes (running groups that block without evict).
  bool blocked() const { return !maintenance.blocked.empty(); }
  bool changes() const;
  // The script that changes `h` (run as root on it).
  static std::string change_script(const HostChange& h, const std::string& run_id);
};

// Refuses hosts that are not in layout.yaml, a driver on a host without GPUs, a
// driver or package version apt on the host does not offer, a bad
// --max-unavailable, HiveD not answering (About::HivedUnreachable). Changes nothing.
UseCaseResult<MaintainPlan> plan_maintain(const MaintainRequest& request, const MaintainDeps& deps,
                                          const Callbacks& callbacks);

struct MaintainOutcome {
  enum class End {
    DryRun,    // a dry run: nothing changed
    Blocked,   // running groups block nodes (no evict): nothing changed (`error`)
    UpToDate,  // every host has what was asked: nothing changed
    Declined,  // not confirmed
    Applied,   // the batches ran (`run`; it may have stopped: `error`)
    Busy,      // another run holds the cluster directory's lock: nothing changed (`error`)
  } end = End::Declined;
  std::optional<UseCaseError> error;
  std::optional<NodeBatchOutcome> run;
};
MaintainOutcome apply_maintain(MaintainPlan& plan, const Callbacks& callbacks);

}  // namespace pai::deploy
