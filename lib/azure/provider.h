#pragma once
// The Azure part of a cluster as ARM resources, and plan/apply/reset over them.
//
// From config.yaml's azure: section (config/azure_config.h) come the desired
// resources, every one tagged paictl.cluster=<cluster id>:
//   resource group                          (level 0)
//   network security group, virtual network (level 1, created concurrently)
//   one virtual machine scale set per pool  (level 2, created concurrently)
// The NSG is attached to the scale sets' NICs, so it and the VNet do not
// depend on each other. plan() reads each resource (GET) and compares the
// desired body with what ARM shows: absent -> create, different -> update,
// equal -> none; scale sets of this cluster that no pool names -> delete.
// apply() carries out a plan, level by level; run again after success, it
// finds nothing to do and sends no PUT. reset() deletes only what carries
// this cluster's tag, waiting for each deletion.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "azure/arm.h"
#include "config/azure_config.h"
#include "util/result.h"

namespace pai::azure {

inline constexpr const char* kResourcesApi = "2021-04-01";
inline constexpr const char* kNetworkApi = "2024-05-01";
inline constexpr const char* kComputeApi = "2024-07-01";
inline constexpr const char* kClusterTag = "paictl.cluster";

struct Spec {
  std::string cluster = "pai";  // the cluster id: names and tags
  config::AzureConfig azure;
  std::string ssh_public_key;  // the key itself (from ssh-public-key-file)
  // Where on-prem hosts are (azure.onprem-address-space, else the layout's
  // on-prem hosts as /32): the NSG admits the cluster's ports from there.
  std::vector<std::string> onprem_prefixes;
};

struct Resource {
  std::string kind;  // "resource group", "network security group", "virtual network", "scale set"
  std::string name;
  std::string path;  // ARM id
  std::string api_version;
  int level = 0;
  std::string pool;  // scale sets: the pool
  nlohmann::json body;
};

std::vector<Resource> desired_resources(const Spec& s);

// Whether a pool of this VM size on this image gets the NVIDIA GPU Driver
// Extension: a GPU size (the N family) on an image that is not one of
// Microsoft's HPC images, which carry the driver.
bool needs_gpu_driver_extension(std::string_view sku, std::string_view image);

// The cloud-init customData of the scale sets: prepares the host only (kernel
// modules, sysctls, swap off) and holds no secrets.
std::string cloud_init();

enum class Action { Create, Update, None, Delete };
std::string_view to_string(Action a);

struct Change {
  Resource resource;
  Action action = Action::None;
  std::vector<std::string> differences;  // "sku.capacity: 2 -> 3"
};

struct Plan {
  std::vector<Change> changes;
  bool has_changes() const;
};

util::Result<Plan> plan(ArmClient& arm, const Spec& s);
// {"apiVersion":"paictl.azurePlan/v1","resourceGroup":...,"resources":[{kind,name,id,action,differences}]}
nlohmann::json plan_json(const Plan& p, const Spec& s);

// One line per event, for the terminal.
using Progress = std::function<void(const std::string&)>;

struct ApplyResult {
  int created = 0, updated = 0, deleted = 0, unchanged = 0;
};
util::Result<ApplyResult> apply(ArmClient& arm, const Plan& p, const Progress& progress);

// The VMs of the pools' scale sets with their private addresses.
struct Machine {
  std::string pool;
  std::string machine_type;
  std::string hostname;  // the VM's computer name, lower case
  std::string ip;
  std::string instance_id;
  bool master = false;  // the VM of the pool with role: master: the cluster's pai-master
};
util::Result<std::vector<Machine>> list_machines(ArmClient& arm, const Spec& s);

// layout.yaml's text with the machines in machine-list: entries paictl wrote
// before for Azure (marked "# azure pool NAME") are replaced, everything else
// is kept as it was, comments included. An error when machine-list is not
// found.
util::Result<std::string> update_layout(const std::string& text,
                                        const std::vector<Machine>& machines);

// Sets one pool's scale set to `count` VMs (the pool's desired body with that
// capacity) and waits; `node add --azure`. The pool must exist in `s`.
util::Result<nlohmann::json> scale_pool(ArmClient& arm, const Spec& s, const std::string& pool,
                                        int64_t count);

// The ARM id of one VM of its pool's scale set.
std::string machine_path(const Spec& s, const Machine& m);

// Deletes these VMs from their scale sets (`node remove --azure`): one DELETE
// each, all at once, each waited for (the LRO contract). In a Uniform scale set
// a VM's NIC and OS disk belong to it and go with it, and the scale set's
// capacity drops by one per VM. Returns the ids deleted; on an error, those
// deleted before it are in the error's message.
util::Result<std::vector<std::string>> delete_machines(ArmClient& arm, const Spec& s,
                                                       const std::vector<Machine>& machines,
                                                       const Progress& progress);

// config.yaml's text with the integer at `line`:`column` (1-based) replaced by
// `value`; an error when no integer is there.
util::Result<std::string> replace_integer_at(const std::string& text, uint32_t line,
                                             uint32_t column, int64_t value);

struct ResetResult {
  std::vector<std::string> deleted;  // ARM ids
  std::vector<std::string> kept;     // "id: why"
};
util::Result<ResetResult> reset(ArmClient& arm, const Spec& s, const Progress& progress);

}  // namespace pai::azure
