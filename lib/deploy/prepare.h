#pragma once
// A cluster directory made ready for the install engine: its hosts as HostSpecs
// and the InstallSettings its files give (layout.yaml, config.yaml,
// services-configuration.yaml), for install, reset, node add|remove and config
// push|pull|diff.

#include <functional>
#include <string>
#include <vector>

#include "check/runner.h"
#include "deploy/onprem.h"
#include "deploy/phase.h"
#include "deploy/usecase.h"
#include "inventory/inventory.h"
#include "remote/secret.h"

namespace pai::deploy {

// How the hosts of a cluster directory are reached, as the front end read them:
// the inventory of layout.yaml and config.yaml (every host), the fact script's
// options and the sudo password, the SSH password.
struct ClusterHosts {
  inventory::Inventory inventory;
  check::CollectOptions collect;
  remote::Secret ssh_password;
};

// Reads the cluster directory's hosts. A use case calls it each time it needs
// them, so that it sees what an earlier step wrote into layout.yaml (Azure's
// VMs, a removed node). The front end tells the user why it fails
// (UseCaseError::About::HostsNotLoaded).
using HostsLoader = std::function<util::Result<ClusterHosts>()>;

struct PrepareRequest {
  std::string cluster_dir;
  std::vector<std::string> limit;          // host names or addresses; empty: every host
  std::vector<std::string> ignore_checks;  // pre-install checks whose errors do not stop
  int wait_s = 300;
  std::string templates_dir;  // templates/ (install/*.yaml)
  // false: a layout.yaml without a pai-master host is accepted (the checks before
  // Azure, when the master is the VM of a pool Azure creates next).
  bool need_master = true;
  // true: a count of masters install would not make (L007: 2, 4) is accepted, as
  // node remove leaves a control plane that lost a master until one replaces it.
  bool accept_master_count = false;
};

struct PreparedCluster {
  std::string cluster_dir;  // without a trailing '/'
  ClusterHosts hosts;
  // The hosts the run reaches: those of the limit, and the master even when the
  // limit leaves it out (HostSpec::selected false).
  std::vector<HostSpec> specs;
  bool limited = false;  // the request named some hosts
  InstallSettings settings;
  const HostSpec* master() const;
};

// The cluster directory without its trailing '/'s.
std::string clean_cluster_dir(std::string dir);

// Checks the cluster files and builds the hosts and the settings; changes nothing.
UseCaseResult<PreparedCluster> prepare_cluster(const PrepareRequest& request, ClusterHosts hosts);
// The same with the hosts read by `load`.
UseCaseResult<PreparedCluster> prepare_cluster(const PrepareRequest& request,
                                               const HostsLoader& load);

}  // namespace pai::deploy
