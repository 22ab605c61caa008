#pragma once
// A job protocol v2 file as read from disk, the changes a user asks for on the
// command line (--name, --vc, --param), and the facts paictl needs about a job
// (its request per task role) to check it against a cluster.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "job/js_value.h"
#include "util/result.h"
#include "yaml/yaml.h"

namespace pai::job {

// The server's body-parser refuses text bodies above 100 KiB ("100kb").
inline constexpr size_t kMaxBodyBytes = 100 * 1024;

struct ParamOverride {
  std::string name;
  std::string value;  // read as a plain YAML scalar, as the server would read it in the file
};

// "k=v" -> {k, v}; an error when there is no '=' or the name is empty.
util::Result<ParamOverride> parse_param(std::string_view kv);

struct Overrides {
  std::optional<std::string> name;
  std::optional<std::string> virtual_cluster;
  std::vector<ParamOverride> params;  // later ones win
  bool export_params = false;         // prepend `export K=V` lines to every task role's commands
  bool empty() const { return !name && !virtual_cluster && params.empty() && !export_params; }
  const ParamOverride* param(std::string_view key) const;
};

// Job files larger than this are refused, whether read from disk or stdin (the
// server itself takes 100 KiB).
inline constexpr size_t kMaxJobFileBytes = 16u << 20;

class JobFile {
 public:
  std::string path;  // as the user named it ("-" for stdin)
  std::string text;
  std::string read_error;  // non-empty when the file could not be read
  yaml::Stream stream;
  const yaml::Node* root = nullptr;  // the first document when it is a mapping

  static JobFile load(const std::string& path);
  static JobFile parse(std::string text, std::string path);

  JobFile() = default;
  JobFile(JobFile&&) = default;
  JobFile& operator=(JobFile&&) = default;

  // A top-level value, or nullptr.
  const yaml::Node* get(std::string_view key) const { return root ? root->get(key) : nullptr; }
};

// One task role's request, read leniently from a job that may be invalid
// (missing numbers count as 0).
struct TaskRoleRequest {
  std::string name;
  int64_t instances = 1;
  int64_t cpu = 0;
  int64_t gpu = 0;
  int64_t memory_mb = 0;
  std::string sku_type;             // extras.hivedScheduler.taskRoles.<name>.skuType
  std::string pinned_cell;          // ... .pinnedCellId
  std::string affinity_group_name;  // ... .affinityGroupName
  yaml::Mark mark;
};

struct JobRequest {
  std::string name;
  std::string virtual_cluster;  // "default" when the file does not say
  bool virtual_cluster_defaulted = true;
  std::string priority_class;   // jobPriorityClass, "" when unset
  bool gang_allocation = true;  // extras.gangAllocation: absent or the boolean true
  std::vector<TaskRoleRequest> task_roles;
  std::vector<std::string>
      storages;  // extras.storages[].name (and the legacy teamwise_storage plugin)
  bool uses_default_storages = false;  // extras.storages: []
  int64_t total_cpu() const;
  int64_t total_gpu() const;
  int64_t total_memory_mb() const;
};

JobRequest request_of(const JobFile& f, const Overrides& o = {});

}  // namespace pai::job
