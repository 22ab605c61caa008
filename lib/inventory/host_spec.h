#pragma once
// One host of a cluster directory as the runs over its hosts take it: the
// inventory's host with what the cluster files say of it (its role, its SKU's
// GPUs, its labels and taints) and how it is reached. deploy::prepare_cluster
// makes them for install, node add|remove, upgrade and check cluster alike.

#include <map>
#include <string>
#include <vector>

#include "config/node_settings.h"
#include "inventory/inventory.h"
#include "remote/target.h"

namespace pai::inventory {

// One host as the cluster files describe it.
struct HostSpec {
  std::string name;     // layout.yaml hostname
  std::string address;  // hostip
  bool master = false;  // pai-master: a control-plane host
  // A master after the first of layout.yaml (a highly available control plane):
  // it joins the first master's control plane (kubeadm join, controlPlane). The
  // first master (other_master false) runs kubeadm init and the cluster-wide
  // phases, and is RunContext::master().
  bool other_master = false;
  bool worker = false;
  std::string sku;       // machine-type
  int gpus = 0;          // the SKU's computing-device count when it is nvidia.com/gpu
  std::string gpu_type;  // "nvidia.com/gpu" or ""
  // More node labels, set by the labels phase: a hybrid cluster's site and
  // topology (paictl.io/site, topology.kubernetes.io/region, paictl.io/azure-pool).
  std::map<std::string, std::string> labels;
  // The operator's own labels and taints (layout.yaml, the SKU's then the
  // machine's), set by the labels phase and recorded on the node as paictl's
  // (paictl.io/managed-labels, paictl.io/managed-taints), so that one removed
  // from layout.yaml is removed from the node by the next run.
  std::map<std::string, std::string> operator_labels;
  std::vector<config::NodeTaint> taints;
  remote::Target target;
  HostPlan plan;  // the same host as the inventory has it (for the pre-install checks)
  // false: left out by --limit. Such a host (the master) is still reached, and
  // runs only the phases of cluster scope.
  bool selected = true;
};

}  // namespace pai::inventory
