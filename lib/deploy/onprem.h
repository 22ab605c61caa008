#pragma once
// The on-prem install: its settings, the phases of `paictl install` and
// `paictl reset` in order (each phase a file of phases/: what it observes,
// what it changes on a host and in the cluster, for Ubuntu 20.04/22.04/24.04
// and Debian 12), and what they render and read. docs/install.md lists every
// command they run.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/runner.h"
#include "config/cluster_files.h"
#include "deploy/cluster_files.h"
#include "deploy/offline_bundle.h"
#include "deploy/openpai.h"
#include "deploy/phase.h"
#include "deploy/proxy.h"
#include "remote/secret.h"
#include "util/result.h"

namespace pai::deploy {

struct InstallSettings {
  std::string cluster_name = "paictl";  // services-configuration cluster-id
  std::string kube_version = "1.30.10";
  std::string package_repo;    // "" = pkgs.k8s.io for the minor release
  std::string offline_bundle;  // local directory of .deb files copied to every host
  // kube_offline_bundle when it is a bundle (manifest.json), verified by
  // prepare_cluster before any host is reached; null for a plain .deb directory.
  std::shared_ptr<const OfflineBundle> bundle;
  std::string nvidia_repo;  // "" = nvidia.github.io/libnvidia-container
  std::string pods_subnet = "10.244.0.0/16";
  std::string service_subnet = "10.96.0.0/12";
  std::string control_plane_endpoint;  // "" = master hostip:6443
  // kube-vip's virtual address and the masters' interface that carries it
  // ("" = no kube-vip): a static pod on every master (templates/install/kube-vip.yaml).
  std::string kube_vip_address, kube_vip_interface;
  // Every master of layout.yaml in layout order (name, hostip): the first runs
  // kubeadm init, more than one make a highly available control plane.
  std::vector<std::pair<std::string, std::string>> masters;
  bool highly_available() const { return masters.size() > 1; }
  // paictl's state of the cluster directory (CLUSTER_DIR/.paictl): the
  // control plane's certificate key (certificate_key.h). "" = none (tests).
  std::string state_dir;
  // config.yaml's proxies (no_proxy completed with the cluster's own) and
  // registry mirrors (docs/install.md, "Proxies and mirrors").
  ProxySettings proxy;
  std::map<std::string, std::vector<std::string>> registry_mirrors;  // containerd's hosts.toml
  std::string image_mirror;   // image_registry_mirror: every image pulled from HOST[:PORT]
  std::string templates_dir;  // templates/ (install/*.yaml)
  std::vector<std::string> ignore_checks;  // --ignore-check-errors
  check::EvalOptions eval;
  facts::ScriptOptions script;
  remote::Secret sudo_password;
  int wait_s = 300;  // rollouts, nodes Ready, the API server
  int join_token_ttl_s = 900;
  OpenPaiSettings openpai;     // HiveD and the OpenPAI services
  ClusterFiles cluster_files;  // pushed to the cluster by the config phase ("" = not)
  // A hybrid cluster's files as check config read them: the pre-install checks
  // then include check hosts' hybrid checks (check/hybrid.h). Null otherwise.
  std::shared_ptr<const config::CheckOutcome> hybrid;
  // The files of a control plane of several masters: the pre-install checks then
  // include check hosts' ControlPlaneEndpoint and MasterPort (check/masters.h).
  std::shared_ptr<const config::CheckOutcome> masters_files;
  // A hybrid cluster's link between the sites (azure.tunnel-mtu), 0 for none:
  // the pods' VXLAN MTU is the smallest of it and the hosts' MTUs, less 50.
  int tunnel_mtu = 0;
};

// Phases of `install`, in order.
PhaseList install_phases(const InstallSettings& settings);
// Phases of `reset`: what install put on the hosts, removed.
PhaseList reset_phases(const InstallSettings& settings);

// "kubeadm.k8s.io/v1beta4" from Kubernetes 1.31, "v1beta3" before (1.22-1.30).
std::string kubeadm_api_version(const std::string& kube_version);
// Whether paictl install supports this OS (/etc/os-release's ID and
// VERSION_ID); the error says why not.
util::Result<void> supported_os(const std::string& id, const std::string& version_id);

// Renders templates_dir/install/NAME with mustache (no HTML escaping).
util::Result<std::string> render_template(const std::string& templates_dir, const std::string& name,
                                          const std::map<std::string, std::string>& values);

// The kubeadm configurations install sends on kubeadm's stdin, for a kubeadm of
// this version ("v1.30.10"): InitConfiguration + ClusterConfiguration +
// KubeletConfiguration, and a worker's JoinConfiguration.
// With several masters the init's configuration carries the certificate key
// (certificate_key.h) and apiServer.certSANs (control_plane_cert_sans), and a
// master's join (certificate_key not empty) JoinConfiguration.controlPlane.
util::Result<std::string> render_kubeadm_init(const InstallSettings& s, const HostSpec& master,
                                              const std::string& kubeadm_version,
                                              const std::string& certificate_key = {});
util::Result<std::string> render_kubeadm_join(const InstallSettings& s, const HostSpec& node,
                                              const std::string& kubeadm_version,
                                              const std::string& endpoint, const std::string& token,
                                              const std::string& ca_hash,
                                              const std::string& certificate_key = {});
// The API server certificate's extra names: the endpoint's host, every
// master's address and name (empty with one master and no endpoint set).
std::vector<std::string> control_plane_cert_sans(const InstallSettings& s);
// The kube-vip static pod of a master (s.kube_vip_address set): `initializing`
// for the first master's kubeadm init, whose kube-vip must use super-admin.conf
// from Kubernetes 1.29 (admin.conf has no rights before init ends).
util::Result<std::string> render_kube_vip(const InstallSettings& s, bool initializing);
// Where it goes on every master, before kubeadm init or join.
inline constexpr const char* kKubeVipManifest = "/etc/kubernetes/manifests/kube-vip.yaml";
inline constexpr const char* kKubeVipVersion = "v0.8.9";
// Every Kubernetes manifest install applies (flannel, the device plugin, HiveD,
// the OpenPAI services), rendered as the phases render them: (what, text).
util::Result<Manifests> render_install_manifests(const InstallSettings& s, const HostSpec& master,
                                                 int mtu);

// The cluster objects the phases read on the master, in one kubectl call: the
// nodes, DaemonSets, StatefulSets and Deployments of every namespace (a List).
std::string cluster_objects_script();
// The items of `list` of this kind (and namespace, when not ""), as {"items": [...]}.
nlohmann::json objects_of_kind(const nlohmann::json& list, const std::string& kind,
                               const std::string& ns = {});

// Whether a Deployment, StatefulSet or DaemonSet (as the API server returns it)
// has rolled out, as `kubectl rollout status` judges it: its controller saw its
// latest spec, and every replica is updated and available.
bool rolled_out(const nlohmann::json& workload);

// Waits, at most wait_s, until every one of `workloads` ("deployment/NAME",
// "statefulset/NAME", "daemonset/NAME", all in namespace `ns`) has rolled out,
// reading them all in one kubectl call per look (not one `rollout status` each).
// Returns those that had not, in the order given (empty: all rolled out).
std::vector<std::string> wait_for_rollouts(HostRun& master, const std::string& ns,
                                           const std::vector<std::string>& workloads, int wait_s);

// The pieces of `kubeadm token create --print-join-command`'s output.
struct JoinCommand {
  std::string endpoint, token, ca_hash;
  bool join = false;  // the output holds `kubeadm join`
  bool complete() const { return join && !endpoint.empty() && !token.empty() && !ca_hash.empty(); }
};
// What of it is there (complete() says whether it all is).
JoinCommand parse_join_command(const std::string& out);

// Lines of "key=value" output.
std::map<std::string, std::string> parse_key_values(const std::string& out);

}  // namespace pai::deploy
