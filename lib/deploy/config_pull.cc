#include "deploy/config_pull.h"

#include <algorithm>
#include <set>
#include <utility>

#include "util/fs.h"
#include "util/strings.h"

namespace pai::deploy {

UseCaseResult<ClusterFiles> read_cluster_files_of(const ClusterFilesRequest& r,
                                                  const InstallDeps& deps,
                                                  std::string* cluster_dir) {
  PrepareRequest pr;
  pr.cluster_dir = r.cluster_dir;
  pr.limit = r.limit;
  pr.wait_s = r.wait_s;
  pr.templates_dir = r.templates_dir;
  auto p = prepare_cluster(pr, deps.load_hosts);
  if (!p.ok()) return std::move(p).error();
  if (cluster_dir) *cluster_dir = p->cluster_dir;
  const HostSpec& master = *p->master();
  auto transport = make_transport(deps.transport, p->hosts.ssh_password);
  auto x = run_on_master(*transport, master, get_cluster_files_script(p->settings.openpai.ns));
  if (!x.ok() || x.exit_status != 0)
    return remote_error(r.operation + ": reading the cluster files on " + master.name +
                        " failed: " + (x.ok() ? std::string(util::trim(x.err)) : x.error));
  ClusterFiles remote = parse_cluster_files(x.out);
  std::fill(x.out.begin(), x.out.end(), '\0');
  if (remote.empty())
    return remote_error(r.operation + ": the cluster of " + p->cluster_dir +
                        " holds no cluster files (paictl install or paictl config push puts them "
                        "there)");
  return remote;
}

UseCaseResult<ConfigPullPlan> plan_config_pull(const ClusterFilesRequest& r, const std::string& out,
                                               bool force, const InstallDeps& deps) {
  ConfigPullPlan p;
  std::string cluster_dir;
  auto remote = read_cluster_files_of(r, deps, &cluster_dir);
  if (!remote.ok()) return std::move(remote).error();
  p.remote = std::move(remote).value();
  p.dir = out.empty() ? cluster_dir : out;
  auto read_local = read_cluster_files(p.dir);
  if (!read_local.ok()) return UseCaseError{std::move(read_local).error()};
  const ClusterFiles& local = *read_local;
  // Nothing the operator has is overwritten without `force`.
  for (const auto& [name, content] : p.remote) {
    auto it = local.find(name);
    if (it != local.end() && it->second != content && !force) {
      p.conflict = name;
      break;
    }
  }
  return p;
}

ConfigPullOutcome apply_config_pull(const ConfigPullPlan& p) {
  ConfigPullOutcome o;
  if (!p.conflict.empty()) return o;
  (void)util::make_directories(p.dir, 0700);
  for (const auto& [name, content] : p.remote) {
    std::string path = p.dir + "/" + name;
    if (auto w = util::write_file_atomic(path, content, secret_file(name) ? 0600 : 0644); !w.ok()) {
      o.error = input_error(w.error().message);
      return o;
    }
    o.written.push_back(path);
  }
  return o;
}

UseCaseResult<ConfigDiff> config_diff(const ClusterFilesRequest& r, const InstallDeps& deps) {
  ConfigDiff d;
  auto got = read_cluster_files_of(r, deps, &d.cluster_dir);
  if (!got.ok()) return std::move(got).error();
  ClusterFiles remote = std::move(got).value();
  auto read_local = read_cluster_files(d.cluster_dir);
  if (!read_local.ok()) return UseCaseError{std::move(read_local).error()};
  ClusterFiles local = std::move(*read_local);
  std::set<std::string> names;
  for (const auto& [n, c] : remote) names.insert(n);
  for (const auto& [n, c] : local) names.insert(n);
  for (const auto& n : names) {
    std::string a = remote.count(n) ? remote[n] : "";
    std::string b = local.count(n) ? local[n] : "";
    if (std::string diff = file_diff(n, a, b); !diff.empty()) d.diffs.emplace_back(n, diff);
  }
  return d;
}

}  // namespace pai::deploy
