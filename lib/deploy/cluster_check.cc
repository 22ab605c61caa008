#include "deploy/cluster_check.h"

#include <utility>

#include "deploy/credentials.h"

namespace pai::deploy {

UseCaseResult<check::ClusterCheck> check_cluster(const check::ClusterCheckRequest& r,
                                                 const ClusterCheckDeps& deps) {
  PrepareRequest pr;
  pr.cluster_dir = r.cluster_dir;
  pr.templates_dir = r.templates_dir;
  auto p = prepare_cluster(pr, deps.load_hosts);
  if (!p.ok()) return std::move(p).error();
  check::ClusterUnderCheck cluster;
  cluster.cluster_dir = p->cluster_dir;
  cluster.hosts = p->specs;
  cluster.ns = p->settings.openpai.ns;
  cluster.kube_version = p->settings.kube_version;
  if (p->settings.openpai.enabled) cluster.hived = cluster_access(*p).hived;
  auto transport = make_transport(deps.transport, p->hosts.ssh_password);
  auto hived_http = hived_http_client(deps.hived_http, nullptr, 2);
  check::ClusterCheckDeps d;
  d.transport = transport.get();
  d.hived_http = hived_http.get();
  d.now_epoch = deps.now_epoch;
  return check::check_cluster(r, cluster, d);
}

}  // namespace pai::deploy
