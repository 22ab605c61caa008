#include "job/hived_request.h"

#include <algorithm>
#include <limits>
#include <map>

#include "job/placement.h"

namespace pai::job {

std::optional<int32_t> hived_priority(std::string_view priority_class) {
  if (priority_class.empty() || priority_class == "test") return 10;
  if (priority_class == "crit") return 120;
  if (priority_class == "prod") return 100;
  if (priority_class == "oppo") return -1;
  return std::nullopt;
}

std::string job_of_group(std::string_view group) {
  size_t tilde = group.find('~');
  size_t slash = group.find('/', tilde == std::string_view::npos ? 0 : tilde);
  return std::string(slash == std::string_view::npos ? group : group.substr(0, slash));
}

util::Result<HivedRequests> hived_requests(const JobRequest& job, const std::string& user,
                                           const std::vector<api::SkuType>& skus,
                                           const std::set<std::string>& leaf_types) {
  auto fail = [](std::string m) { return util::Error{std::move(m), {}}; };
  auto priority = hived_priority(job.priority_class);
  if (!priority)
    return fail("jobPriorityClass " + job.priority_class +
                " is none of crit, prod, test, oppo (the server refuses the job)");
  if (job.task_roles.empty()) return fail("the job has no task roles");

  // The smallest SKU on each dimension: the unit of a role without a skuType.
  double inf = std::numeric_limits<double>::infinity();
  api::SkuType unit{"the smallest of the VC's SKU types", inf, inf, inf};
  for (const auto& s : skus) {
    unit.cpu = std::min(unit.cpu, s.cpu);
    unit.memory_mb = std::min(unit.memory_mb, s.memory_mb);
    unit.gpu = std::min(unit.gpu, s.gpu);
  }

  struct Role {
    const TaskRoleRequest* tr;
    int32_t leaves;
  };
  std::vector<Role> roles;
  for (const auto& tr : job.task_roles) {
    const api::SkuType* sku = nullptr;
    if (!tr.sku_type.empty()) {
      auto it = std::find_if(skus.begin(), skus.end(),
                             [&](const api::SkuType& s) { return s.name == tr.sku_type; });
      if (it == skus.end())
        return fail("task role " + tr.name + " asks for SKU " + tr.sku_type +
                    ", which the cluster does not have for this job");
      sku = &*it;
    } else {
      if (skus.empty()) return fail("the cluster has no SKU types (not a HiveD cluster?)");
      sku = &unit;
    }
    auto n = sku_count(tr, *sku);
    if (!n.ok()) return n.error();
    if (*n <= 0) return fail("task role " + tr.name + " asks for no resources (no leaf cells)");
    if (tr.instances <= 0) return fail("task role " + tr.name + " has no instances");
    if (*n > std::numeric_limits<int32_t>::max() ||
        tr.instances > std::numeric_limits<int32_t>::max())
      return fail("task role " + tr.name + " asks for more cells than HiveD counts");
    roles.push_back({&tr, static_cast<int32_t>(*n)});
  }

  auto base = [&](const TaskRoleRequest& tr) {
    scheduler::GroupRequest g;
    g.virtual_cluster = job.virtual_cluster;
    g.priority = *priority;
    g.pinned_cell_id = tr.pinned_cell;
    if (!tr.sku_type.empty() && leaf_types.count(tr.sku_type)) g.leaf_cell_type = tr.sku_type;
    return g;
  };
  // HiveD merges members of the same leaf cell number.
  auto add_member = [](scheduler::GroupRequest& g, int32_t pods, int32_t leaves) {
    for (auto& m : g.members)
      if (m.leaf_cell_number == leaves) {
        m.pod_number += pods;
        return;
      }
    g.members.push_back({pods, leaves});
  };

  HivedRequests out;
  const std::string job_id = user + "~" + job.name;
  bool named = std::any_of(roles.begin(), roles.end(),
                           [](const Role& r) { return !r.tr->affinity_group_name.empty(); });
  if (named) {
    std::map<std::string, size_t> index;  // group name -> position in out.groups
    for (const auto& r : roles) {
      if (r.tr->affinity_group_name.empty()) {
        // Not in a named group: every pod is its own group.
        scheduler::GroupRequest g = base(*r.tr);
        g.affinity_group = job_id + "/" + r.tr->name;
        add_member(g, 1, r.leaves);
        out.groups.push_back(std::move(g));
        continue;
      }
      auto [it, fresh] = index.try_emplace(r.tr->affinity_group_name, out.groups.size());
      if (fresh) {
        scheduler::GroupRequest g = base(*r.tr);
        g.affinity_group = job_id + "/" + r.tr->affinity_group_name;
        out.groups.push_back(std::move(g));
      }
      auto& g = out.groups[it->second];
      add_member(g, static_cast<int32_t>(r.tr->instances), r.leaves);
    }
    return out;
  }
  if (job.gang_allocation) {
    scheduler::GroupRequest g = base(*roles.front().tr);
    g.affinity_group = job_id + "/default";
    // One leaf cell type for the gang only when every role names the same one.
    for (const auto& r : roles)
      if (r.tr->sku_type != roles.front().tr->sku_type) g.leaf_cell_type.clear();
    for (const auto& r : roles) add_member(g, static_cast<int32_t>(r.tr->instances), r.leaves);
    out.groups.push_back(std::move(g));
    return out;
  }
  out.per_pod = true;
  for (const auto& r : roles) {
    scheduler::GroupRequest g = base(*r.tr);
    g.affinity_group = job_id + "/" + r.tr->name;
    add_member(g, 1, r.leaves);
    out.groups.push_back(std::move(g));
  }
  return out;
}

}  // namespace pai::job
