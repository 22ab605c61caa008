#include "job/job_file.h"

#include <cmath>
#include <cstdio>

#include "util/fs.h"
#include "util/stdin.h"

namespace pai::job {

util::Result<ParamOverride> parse_param(std::string_view kv) {
  size_t eq = kv.find('=');
  if (eq == std::string_view::npos)
    return util::Error{
        "--param takes NAME=VALUE, got \"" + std::string(kv) + "\"", {}, util::Error::Kind::Input};
  if (eq == 0)
    return util::Error{"--param needs a name before '=' in \"" + std::string(kv) + "\"",
                       {},
                       util::Error::Kind::Input};
  return ParamOverride{std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1))};
}

const ParamOverride* Overrides::param(std::string_view key) const {
  const ParamOverride* found = nullptr;
  for (const auto& p : params)
    if (p.name == key) found = &p;
  return found;
}

JobFile JobFile::parse(std::string text, std::string path) {
  JobFile f;
  f.path = std::move(path);
  f.text = std::move(text);
  f.stream = yaml::load(f.text);
  if (!f.stream.documents.empty() && f.stream.documents[0]->is_mapping())
    f.root = f.stream.documents[0];
  return f;
}

JobFile JobFile::load(const std::string& path) {
  auto r =
      path == "-" ? util::read_fd(0, kMaxJobFileBytes) : util::read_file(path, kMaxJobFileBytes);
  if (!r.ok()) {
    JobFile f;
    f.path = path;
    f.read_error = r.error().message;
    return f;
  }
  return parse(std::move(*r), path);
}

namespace {

int64_t int_or_zero(const yaml::Node* n) {
  auto v = js_number(n);
  if (!v || std::isnan(*v) || std::isinf(*v)) return 0;
  if (*v > 9e15 || *v < -9e15) return 0;
  return static_cast<int64_t>(*v);
}

std::string string_or_empty(const yaml::Node* n) {
  if (!n) return {};
  JsScalar s = js_scalar(n);
  return s.type == JsType::String ? s.text : std::string();
}

}  // namespace

JobRequest request_of(const JobFile& f, const Overrides& o) {
  JobRequest r;
  r.name = o.name ? *o.name : string_or_empty(f.get("name"));
  const yaml::Node* defaults = f.get("defaults");
  std::string vc =
      defaults && defaults->is_mapping() ? string_or_empty(defaults->get("virtualCluster")) : "";
  if (o.virtual_cluster) vc = *o.virtual_cluster;
  r.virtual_cluster_defaulted = vc.empty();
  r.virtual_cluster = vc.empty() ? "default" : vc;

  const yaml::Node* extras = f.get("extras");
  const yaml::Node* hived =
      extras && extras->is_mapping() ? extras->get("hivedScheduler") : nullptr;
  if (hived && hived->is_mapping())
    r.priority_class = string_or_empty(hived->get("jobPriorityClass"));
  if (extras && extras->is_mapping())
    if (const yaml::Node* gang = extras->get("gangAllocation")) {
      // The server gangs only on the boolean true (lodash get(..., true) === true).
      JsScalar v = js_scalar(gang);
      r.gang_allocation = v.type == JsType::Boolean && v.boolean;
    }
  const yaml::Node* hived_roles = hived && hived->is_mapping() ? hived->get("taskRoles") : nullptr;

  const yaml::Node* roles = f.get("taskRoles");
  if (roles && roles->is_mapping()) {
    for (const auto& p : roles->pairs()) {
      TaskRoleRequest t;
      t.name = p.key->scalar();
      t.mark = p.key->mark();
      const yaml::Node* role = p.value;
      if (role && role->is_mapping()) {
        if (const yaml::Node* inst = role->get("instances")) t.instances = int_or_zero(inst);
        const yaml::Node* res = role->get("resourcePerInstance");
        if (res && res->is_mapping()) {
          t.cpu = int_or_zero(res->get("cpu"));
          t.gpu = int_or_zero(res->get("gpu"));
          t.memory_mb = int_or_zero(res->get("memoryMB"));
        }
      }
      if (hived_roles && hived_roles->is_mapping()) {
        const yaml::Node* h = hived_roles->get(t.name);
        if (h && h->is_mapping()) {
          t.sku_type = string_or_empty(h->get("skuType"));
          t.pinned_cell = string_or_empty(h->get("pinnedCellId"));
          t.affinity_group_name = string_or_empty(h->get("affinityGroupName"));
        }
      }
      r.task_roles.push_back(std::move(t));
    }
  }

  if (extras && extras->is_mapping()) {
    const yaml::Node* storages = extras->get("storages");
    if (storages && storages->is_sequence()) {
      if (storages->items().empty()) r.uses_default_storages = true;
      for (const yaml::Node* s : storages->items())
        if (s && s->is_mapping()) {
          std::string n = string_or_empty(s->get("name"));
          if (!n.empty()) r.storages.push_back(n);
        }
    } else if (!storages) {
      // The legacy teamwise_storage runtime plugin, which the server converts.
      const yaml::Node* plugins = extras->get("com.microsoft.pai.runtimeplugin");
      if (plugins && plugins->is_sequence())
        for (const yaml::Node* pl : plugins->items()) {
          if (!pl || !pl->is_mapping() || string_or_empty(pl->get("plugin")) != "teamwise_storage")
            continue;
          const yaml::Node* params = pl->get("parameters");
          const yaml::Node* names =
              params && params->is_mapping() ? params->get("storageConfigNames") : nullptr;
          if (names && names->is_sequence()) {
            for (const yaml::Node* n : names->items())
              if (!string_or_empty(n).empty()) r.storages.push_back(string_or_empty(n));
          } else {
            r.uses_default_storages = true;
          }
        }
    }
  }
  return r;
}

int64_t JobRequest::total_cpu() const {
  int64_t t = 0;
  for (const auto& r : task_roles) t += r.instances * r.cpu;
  return t;
}
int64_t JobRequest::total_gpu() const {
  int64_t t = 0;
  for (const auto& r : task_roles) t += r.instances * r.gpu;
  return t;
}
int64_t JobRequest::total_memory_mb() const {
  int64_t t = 0;
  for (const auto& r : task_roles) t += r.instances * r.memory_mb;
  return t;
}

}  // namespace pai::job
