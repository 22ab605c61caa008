#pragma once
// HiveD's pod annotations: the pod-scheduling-spec a pod carries
// (hivedscheduler.microsoft.com/pod-scheduling-spec, YAML or JSON), and the
// pod-bind-info HiveD writes back. Field names, defaults and errors follow
// HiveD's pkg/api/types.go and pkg/internal/utils.go ExtractPodSchedulingSpec.

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "scheduler/policy.h"
#include "util/result.h"

namespace pai::scheduler {

struct PodSchedulingSpec {
  GroupRequest group;  // virtualCluster, priority, pinnedCellId, leafCellType, affinityGroup,
                       // lazyPreemptionEnable
  int32_t leaf_cell_number = 0;            // leafCellNumber: this pod's leaf cells
  bool ignore_k8s_suggested_nodes = true;  // ignoreK8sSuggestedNodes (default true)
  bool gang_release_enable = false;        // gangReleaseEnable (unused by HiveD's algorithm)
};

// Parses the annotation. A missing affinityGroup defaults, as in HiveD, to
// {name: pod_key, members: [{podNumber: 1, leafCellNumber}]}; the legacy keys
// gpuType and gpuNumber are read as leafCellType and leafCellNumber. An error
// says HiveD's message ("Pod annotation ...: VirtualCluster is empty").
util::Result<PodSchedulingSpec> parse_pod_scheduling_spec(std::string_view text,
                                                          std::string_view pod_key);

// HiveD's PodBindInfo for pod `pod` of a Bound result: {node, leafCellIsolation,
// cellChain, affinityGroupBindInfo: [{podPlacements: [{physicalNode,
// physicalLeafCellIndices, preassignedCellTypes}]}]}, members by leaf cell number.
nlohmann::json pod_bind_info(const ClusterShape& cluster, const ScheduleResult& result, size_t pod);

}  // namespace pai::scheduler
