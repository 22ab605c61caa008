#pragma once
// upgrade's node runner (internal): one worker taken out of service and back,
// through kubectl on the master. Cordon with the annotation
// paictl.io/maintenance = "upgrade RUN-ID" (a node a killed run left cordoned is
// found by it and finished), wait for the node's running groups to end (HiveD's
// inspect API, up to the wait) or drain it (evict), the action, verify (Ready
// at the version, the SKU's GPUs allocatable), uncordon and drop the annotation.
// A wait or drain that times out leaves the node as it was found (uncordoned)
// and names it.

#include <functional>
#include <string>
#include <vector>

#include "deploy/phase.h"
#include "http/client.h"
#include "remote/transport.h"
#include "util/clock.h"
#include "util/result.h"

namespace pai::deploy {

inline constexpr const char* kMaintenanceAnnotation = "paictl.io/maintenance";

struct NodeCheck {
  std::string node;
  std::string version;  // the kubelet's, "1.31.6"
  int gpus = 0;         // nvidia.com/gpu allocatable at least
};

struct NodeJob {
  std::string node;
  std::string annotation;           // "upgrade RUN-ID"
  std::vector<std::string> groups;  // its running groups (the plan's)
  bool evict = false;
  double wait_s = 0;
  std::string hived_url;  // "" : the groups are not watched (taken as ended)
  http::Client* hived_http = nullptr;
  std::function<util::Result<void>()> action;
  NodeCheck check;
};

class NodeRunner {
 public:
  NodeRunner(remote::Transport& t, const HostSpec& master, util::Clock clock, double node_wait_s,
             double poll_s)
      : t_(t),
        master_(master),
        clock_(std::move(clock)),
        node_wait_s_(node_wait_s),
        poll_s_(poll_s) {}
  // `progress("")` once cordoned; `progress("GROUPS")` while it waits for them.
  util::Result<void> run(const NodeJob& job,
                         const std::function<void(const std::string&)>& progress);
  // Polls until the node is Ready at the version with its GPUs.
  util::Result<void> wait_node(const NodeCheck& check);

 private:
  util::Result<std::string> kubectl(const std::string& args);
  remote::Transport& t_;
  const HostSpec& master_;
  util::Clock clock_;
  double node_wait_s_, poll_s_;
};

}  // namespace pai::deploy
