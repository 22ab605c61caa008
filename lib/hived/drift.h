#pragma once
// The physical cluster HiveD sees against the cluster files (the HiveD config
// and layout.yaml) and, when given, the hosts' facts: `paictl hived drift` and
// `paictl check cluster` report the same findings.

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/hived_model.h"
#include "config/layout.h"
#include "facts/host_facts.h"
#include "hived/live.h"

namespace pai::hived {

struct DriftFinding {
  // missing: in the config, HiveD does not list it; unexpected: HiveD lists it,
  // the config has no cell on it; bad: HiveD sees it bad; notInHived: a
  // layout.yaml worker with GPUs that no cell covers; gpusDropped, gpusAdded:
  // the host's facts have fewer or more GPUs than its cells' leaves.
  std::string kind;
  std::string node;
  std::string message;
  std::string hint;
};

// The kinds, in the order findings of each are reported.
const std::vector<std::string>& drift_kinds();

// `layout`: the workers of layout.yaml (may be null); `facts` by host name,
// `facts_dir` where they were read from (for the hints; "" when none).
std::vector<DriftFinding> physical_drift(const LiveState& live, const config::HivedModel& model,
                                         const config::Layout* layout,
                                         const std::map<std::string, facts::HostFacts>& facts = {},
                                         const std::string& facts_dir = {});

// What a HiveD config looks like from HiveD's inspect API: its top physical
// cells, its nodes and its virtual clusters. HiveD answers with the shape of
// the config it runs, so two shapes that differ say that it runs another one
// (restore's check after HiveD's ConfigMap came back with etcd).
struct ConfigShape {
  size_t top_cells = 0;
  std::set<std::string> nodes;
  std::set<std::string> vcs;
  bool operator==(const ConfigShape&) const = default;
};
ConfigShape config_shape(const ClusterStatus& status);
ConfigShape config_shape(const config::HivedModel& model);
// "2 top cells, nodes w1, w2, VCs default, prod" (long lists cut short).
std::string config_shape_text(const ConfigShape& shape);

}  // namespace pai::hived
