#include "scheduler/spec.h"

#include <limits>

#include "yaml/yaml.h"

namespace pai::scheduler {

namespace {

constexpr std::string_view kPrefix =
    "Pod annotation hivedscheduler.microsoft.com/pod-scheduling-spec: ";

// HiveD's message for a malformed annotation.
std::string spec_error(std::string_view what) {
  std::string s(kPrefix);
  s.append(what);
  return s;
}

// Go's yaml.Unmarshal into the struct: a value of the wrong type is an error.
bool int32_of(const yaml::Node* n, const char* key, int32_t& out, std::string& error) {
  if (!n || n->is_null()) return true;
  auto v = n->as_int();
  if (!n->is_scalar() || !v || *v < std::numeric_limits<int32_t>::min() ||
      *v > std::numeric_limits<int32_t>::max()) {
    error = spec_error(std::string(key)
                           .append(" must be a 32-bit integer (line ")
                           .append(std::to_string(n->mark().line))
                           .append(")"));
    return false;
  }
  out = static_cast<int32_t>(*v);
  return true;
}

bool string_of(const yaml::Node* n, const char* key, std::string& out, std::string& error) {
  if (!n || n->is_null()) return true;
  if (!n->is_scalar()) {
    error = spec_error(std::string(key)
                           .append(" must be a string (line ")
                           .append(std::to_string(n->mark().line))
                           .append(")"));
    return false;
  }
  out = n->scalar();
  return true;
}

bool bool_of(const yaml::Node* n, const char* key, bool& out, std::string& error) {
  if (!n || n->is_null()) return true;
  auto v = n->as_bool();
  if (!n->is_scalar() || !v) {
    error = spec_error(std::string(key)
                           .append(" must be true or false (line ")
                           .append(std::to_string(n->mark().line))
                           .append(")"));
    return false;
  }
  out = *v;
  return true;
}

// The key, or its legacy name from before HiveD's leaf cell rename.
const yaml::Node* get(const yaml::Node* m, const char* key, const char* legacy = nullptr) {
  const yaml::Node* n = m->get(key);
  if (!n && legacy) n = m->get(legacy);
  return n;
}

// The annotation into `out`; false with HiveD's message in `error`.
bool parse_spec_into(std::string_view text, std::string_view pod_key, PodSchedulingSpec& out,
                     std::string& error) {
  out = PodSchedulingSpec();
  yaml::LoadOptions lo;
  lo.max_nodes = 1'000'000;  // an annotation is small; bound alias expansion
  yaml::Stream s = yaml::load(text, lo);
  if (s.error) {
    error = spec_error("line " + std::to_string(s.error->mark.line) + ", column " +
                       std::to_string(s.error->mark.column) + ": " + s.error->message);
    return false;
  }
  if (s.documents.empty() || s.documents[0]->is_null()) {
    error = spec_error("Annotation does not exist or is empty");
    return false;
  }
  const yaml::Node* root = s.documents[0];
  if (!root->is_mapping()) {
    error = spec_error("expected a mapping of pod-scheduling-spec fields");
    return false;
  }
  GroupRequest& g = out.group;
  if (!string_of(root->get("virtualCluster"), "virtualCluster", g.virtual_cluster, error) ||
      !int32_of(root->get("priority"), "priority", g.priority, error) ||
      !string_of(root->get("pinnedCellId"), "pinnedCellId", g.pinned_cell_id, error) ||
      !string_of(get(root, "leafCellType", "gpuType"), "leafCellType", g.leaf_cell_type, error) ||
      !int32_of(get(root, "leafCellNumber", "gpuNumber"), "leafCellNumber", out.leaf_cell_number,
                error) ||
      !bool_of(root->get("gangReleaseEnable"), "gangReleaseEnable", out.gang_release_enable,
               error) ||
      !bool_of(root->get("lazyPreemptionEnable"), "lazyPreemptionEnable", g.lazy_preemption_enable,
               error) ||
      !bool_of(root->get("ignoreK8sSuggestedNodes"), "ignoreK8sSuggestedNodes",
               out.ignore_k8s_suggested_nodes, error))
    return false;
  const yaml::Node* ag = root->get("affinityGroup");
  if (!ag || ag->is_null()) {
    g.affinity_group = std::string(pod_key);
    g.members = {{1, out.leaf_cell_number}};
  } else {
    if (!ag->is_mapping()) {
      error = spec_error("affinityGroup must be a mapping with name and members");
      return false;
    }
    if (!string_of(ag->get("name"), "affinityGroup.name", g.affinity_group, error)) return false;
    const yaml::Node* members = ag->get("members");
    if (members && !members->is_null()) {
      if (!members->is_sequence()) {
        error = spec_error("affinityGroup.members must be a list");
        return false;
      }
      for (const yaml::Node* m : members->items()) {
        if (!m->is_mapping()) {
          error = spec_error("affinityGroup.members entries must be {podNumber, leafCellNumber}");
          return false;
        }
        AffinityGroupMember mem;
        if (!int32_of(m->get("podNumber"), "podNumber", mem.pod_number, error) ||
            !int32_of(get(m, "leafCellNumber", "gpuNumber"), "leafCellNumber", mem.leaf_cell_number,
                      error))
          return false;
        g.members.push_back(mem);
      }
    }
  }
  // HiveD's validation, in its order.
  if (g.virtual_cluster.empty()) return error = spec_error("VirtualCluster is empty"), false;
  if (g.priority < kOpportunisticPriority)
    return error = spec_error("Priority is less than -1"), false;
  if (g.priority > kMaxGuaranteedPriority)
    return error = spec_error("Priority is greater than 1000"), false;
  if (out.leaf_cell_number <= 0) return error = spec_error("LeafCellNumber is non-positive"), false;
  if (g.affinity_group.empty()) return error = spec_error("AffinityGroup.Name is empty"), false;
  bool in_group = false;
  int64_t pods = 0;
  for (const auto& m : g.members) {
    pods += m.pod_number;
    if (m.pod_number <= 0)
      return error = spec_error("AffinityGroup.Members has non-positive PodNumber"), false;
    if (m.leaf_cell_number <= 0)
      return error = spec_error("AffinityGroup.Members has non-positive LeafCellNumber"), false;
    in_group |= m.leaf_cell_number == out.leaf_cell_number;
  }
  if (!in_group)
    return error = spec_error("AffinityGroup.Members does not contains current Pod"), false;
  // Not HiveD's: a bound that keeps one request from exhausting memory (as validate_request).
  if (pods > 1'000'000)
    return error = spec_error("AffinityGroup.Members declares more than 1000000 pods"), false;
  return true;
}

}  // namespace

util::Result<PodSchedulingSpec> parse_pod_scheduling_spec(std::string_view text,
                                                          std::string_view pod_key) {
  PodSchedulingSpec out;
  std::string error;
  if (!parse_spec_into(text, pod_key, out, error)) return util::Error{error, {}};
  return out;
}

nlohmann::json pod_bind_info(const ClusterShape& cluster, const ScheduleResult& r, size_t pod) {
  nlohmann::json members = nlohmann::json::array();
  for (size_t i = 0; i < r.pods.size();) {
    nlohmann::json placements = nlohmann::json::array();
    const int32_t n = r.pods[i].leaf_cell_number;
    for (; i < r.pods.size() && r.pods[i].leaf_cell_number == n; ++i) {
      const PodPlacement& p = r.pods[i];
      placements.push_back(
          {{"physicalNode", p.node >= 0 ? cluster.nodes[static_cast<size_t>(p.node)].name : ""},
           {"physicalLeafCellIndices", p.physical_leaf_cell_indices},
           {"preassignedCellTypes", p.preassigned_cell_types}});
    }
    members.push_back({{"podPlacements", placements}});
  }
  nlohmann::json info{{"cellChain", r.cell_chain}, {"affinityGroupBindInfo", members}};
  if (pod < r.pods.size()) {
    const PodPlacement& p = r.pods[pod];
    info["node"] = p.node >= 0 ? cluster.nodes[static_cast<size_t>(p.node)].name : "";
    info["leafCellIsolation"] = p.physical_leaf_cell_indices;
  }
  return info;
}

}  // namespace pai::scheduler
