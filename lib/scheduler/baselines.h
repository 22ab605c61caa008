#pragma once
// Baseline policies behind the same interface as HiveD, for comparison.
//
//  quota        Kubernetes' default scheduler with a GPU ResourceQuota per VC.
//               A guaranteed group (priority >= 0) is admitted only while its
//               VC's guaranteed groups hold at most the VC's quota of that leaf
//               cell type (the leaf cells of its virtual and pinned cells; one
//               extended resource per SKU). Placement is topology-unaware: pods
//               go one by one (ascending size) to the feasible node with the
//               largest free fraction (LeastAllocated; ties by node order), and
//               take the node's lowest free GPU indices. Opportunistic groups
//               (priority -1) are not charged to the quota. A group that does
//               not fit may preempt whole groups of strictly lower priority
//               (any VC), like Kubernetes priority preemption.
//  k8s-default  The same without quotas: no VC limits at all.
//  private      Each VC owns a static set of cells: its virtual cells are
//               bound once, at start, by buddy allocation in configuration
//               order (pinned cells go to their VC). A VC schedules only inside
//               its own cells, with HiveD's topology-aware packing (most used
//               node first, lowest common ancestor in the node); it may preempt
//               its own lower-priority groups.
//
// All three place a gang all or nothing (as the coscheduling plugin does).
//
// Suggested nodes (GroupRequest::suggested_nodes): the set is what Kubernetes'
// own filters (taints, CPU, memory, affinity) leave, so all three place a new
// group, with or without victims, on suggested nodes only and wait otherwise,
// whatever ignore_suggested_nodes (HiveD's flag) says. quota and k8s-default
// pick the least allocated suggested node; private packs into the most used
// suggested node of the VC's own cells (and of a pinned cell); victims come
// only from suggested nodes. An allocated group keeps its nodes.

#include <memory>
#include <string>

#include "scheduler/policy.h"

namespace pai::scheduler {

enum class Baseline { Quota, K8sDefault, Private };

util::Result<std::unique_ptr<Policy>> make_baseline_policy(Baseline kind,
                                                           const config::HivedModel& model);

}  // namespace pai::scheduler
