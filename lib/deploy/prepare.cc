#include "deploy/prepare.h"

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "config/cluster_files.h"
#include "config/node_settings.h"
#include "deploy/cluster_files.h"
#include "deploy/openpai.h"
#include "util/fs.h"

namespace pai::deploy {

namespace {

// services-configuration.yaml's settings: the one call of load_openpai_settings.
// Every failure is the cluster directory's (bad input).
util::Result<void> prepare_load_openpai(const std::string& file, OpenPaiSettings& s) {
  auto loaded = load_openpai_settings(file);
  if (!loaded) {
    util::Error e = std::move(loaded).error();
    e.kind = util::Error::Kind::Input;
    return e;
  }
  s = std::move(*loaded);
  return {};
}

// What install needs and the directory lacks, named: a layout.yaml (the hosts), a
// config.yaml (the SSH user and the release), or files it can read at all.
util::Result<void> prepare_missing_files(const config::CheckOutcome& loaded,
                                         const std::string& dir) {
  const config::Cluster* c = loaded.clusters.empty() ? nullptr : &loaded.clusters[0];
  std::vector<std::string> missing;
  if (!c || !c->layout) missing.push_back("layout.yaml");
  if (!c || !c->config) missing.push_back("config.yaml");
  if (missing.empty()) return {};
  std::string what = missing.size() == 2 ? "layout.yaml or config.yaml" : missing[0];
  std::string hint = "paictl init " + dir + " writes every file of a cluster directory";
  if (missing.size() == 1 && missing[0] == "config.yaml")
    hint = "add " + dir +
           "/config.yaml with at least user: root and docker_image_tag: v1.8.0, and the SSH "
           "settings (ssh_config, ssh_key_file_path; docs/init.md): paictl init writes one";
  else if (missing.size() == 1)
    hint = "paictl plan --out " + dir + " or paictl init " + dir + " writes layout.yaml";
  return util::Error{dir + " has no " + what, hint, util::Error::Kind::Input};
}

}  // namespace

const HostSpec* PreparedCluster::master() const {
  for (const auto& h : specs)
    if (h.master && !h.other_master) return &h;
  return nullptr;
}

std::string clean_cluster_dir(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

UseCaseResult<PreparedCluster> prepare_cluster(const PrepareRequest& request,
                                               const HostsLoader& load) {
  auto hosts = load();
  if (!hosts.ok()) {
    UseCaseError e{std::move(hosts).error()};
    e.about = UseCaseError::About::HostsNotLoaded;
    return e;
  }
  return prepare_cluster(request, std::move(hosts).value());
}

UseCaseResult<PreparedCluster> prepare_cluster(const PrepareRequest& request, ClusterHosts hosts) {
  PreparedCluster p;
  p.cluster_dir = clean_cluster_dir(request.cluster_dir);
  p.hosts = std::move(hosts);
  p.limited = !request.limit.empty();

  auto loaded = config::check_paths({p.cluster_dir});
  // A cluster file that is there but cannot be read (a directory, a FIFO, a
  // broken symbolic link in its place) stops the plan: it is never "no file".
  if (loaded.input_error)
    for (const auto& d : loaded.diagnostics.items())
      if (d.code == "F008") return input_error(d.message);
  if (auto missing = prepare_missing_files(loaded, p.cluster_dir); !missing.ok())
    return UseCaseError{std::move(missing).error()};
  // The masters and their endpoint (a highly available control plane): a count
  // install cannot make, or no endpoint in front of several, stops it here.
  for (const auto& d : loaded.diagnostics.items())
    if (d.severity == diag::Severity::Error &&
        ((d.code == "L007" && !request.accept_master_count) ||
         (d.code.size() == 4 && d.code.rfind("L06", 0) == 0)))
      return input_error(std::filesystem::path(d.file).filename().string() + ":" +
                             std::to_string(d.line) + ":" + std::to_string(d.column) + ": " +
                             d.message + " [" + d.code + "]",
                         d.hint);
  const auto& cluster = loaded.clusters[0];
  const auto& cfg = *cluster.config;
  auto& s = p.settings;
  s.kube_version = cfg.kube_version;
  s.package_repo = cfg.kube_package_repo;
  s.offline_bundle = cfg.kube_offline_bundle;
  if (!s.offline_bundle.empty() && s.offline_bundle[0] != '/')
    s.offline_bundle = p.cluster_dir + "/" + s.offline_bundle;
  if (!s.offline_bundle.empty() && !util::is_directory(s.offline_bundle))
    return input_error("kube_offline_bundle: " + s.offline_bundle + " is not a directory");
  // A bundle (manifest.json) is verified whole, every file's size and sha256,
  // before any host is reached: a changed or missing file stops the run here.
  if (!s.offline_bundle.empty() && is_manifest_bundle(s.offline_bundle)) {
    auto bundle = verify_offline_bundle(s.offline_bundle);
    if (!bundle.ok()) {
      util::Error e = std::move(bundle).error();
      e.message = "kube_offline_bundle: " + e.message;
      e.kind = util::Error::Kind::Input;
      return UseCaseError{std::move(e)};
    }
    if (bundle->kube_version != cfg.kube_version)
      return UseCaseError{util::Error{"kube_offline_bundle: the bundle carries Kubernetes " +
                                          bundle->kube_version +
                                          ", config.yaml's kube_version is " + cfg.kube_version,
                                      "build the bundle again for " + cfg.kube_version +
                                          ", or set kube_version: " + bundle->kube_version,
                                      util::Error::Kind::Input}};
    for (const auto& pl : bundle->platforms) s.eval.bundle_platforms.push_back(pl.name());
    s.eval.bundle_driver = bundle->driver;
    s.bundle = std::make_shared<const OfflineBundle>(std::move(*bundle));
  }
  s.nvidia_repo = cfg.nvidia_package_repo;
  s.pods_subnet = cfg.kube_pods_subnet;
  s.service_subnet = cfg.kube_service_addresses;
  s.control_plane_endpoint = config::control_plane_endpoint(cfg);
  if (cfg.kube_vip) {
    s.kube_vip_address = cfg.kube_vip->address;
    s.kube_vip_interface = cfg.kube_vip->interface;
  }
  s.state_dir = p.cluster_dir + "/.paictl";
  if (cluster.layout)
    for (const auto& m : cluster.layout->machines)
      if (m.master) s.masters.push_back({m.hostname, m.hostip});
  s.proxy.http = cfg.http_proxy;
  s.proxy.https = cfg.https_proxy.empty() ? cfg.http_proxy : cfg.https_proxy;
  if (!s.proxy.empty()) {
    // Every host of layout.yaml, not only those of this run (--limit): the
    // hosts' files stay the same whichever part a run touches.
    std::vector<std::string> addresses, names;
    for (const auto& h : p.hosts.inventory.hosts) {
      addresses.push_back(h.hostip.empty() ? h.address : h.hostip);
      names.push_back(h.name);
    }
    s.proxy.no_proxy =
        complete_no_proxy(cfg.no_proxy, cfg.kube_pods_subnet, cfg.kube_service_addresses, addresses,
                          names, s.control_plane_endpoint);
  }
  s.registry_mirrors = cfg.containerd_registry_mirrors;
  // With an offline bundle the images are imported under their own names
  // (bundle build pulled them through the mirror): install names them so.
  if (!s.bundle) s.image_mirror = cfg.image_registry_mirror;
  if (cluster.services && !cluster.services->cluster_id.empty())
    s.cluster_name = cluster.services->cluster_id;
  s.templates_dir = request.templates_dir;
  // --ignore-check-errors, else config.yaml's ignore_check_errors.
  s.ignore_checks = request.ignore_checks.empty() ? cfg.ignore_check_errors : request.ignore_checks;
  s.eval.registries = p.hosts.collect.script.dns_names;
  s.eval.docker_data_root = p.hosts.collect.script.docker_data_root;
  s.script = p.hosts.collect.script;
  s.sudo_password = p.hosts.collect.sudo_password;
  s.wait_s = request.wait_s;
  if (auto r = prepare_load_openpai(p.cluster_dir + "/services-configuration.yaml", s.openpai);
      !r.ok())
    return UseCaseError{std::move(r).error()};
  s.openpai.hived_enabled = cfg.enable_hived_scheduler;
  if (s.openpai.enabled) {
    auto files = read_cluster_files(p.cluster_dir);
    if (!files.ok()) return UseCaseError{std::move(files).error()};
    s.cluster_files = std::move(*files);
  }
  size_t masters = 0;
  if (cluster.layout)
    for (const auto& m : cluster.layout->machines) masters += m.master;
  if (masters > 1) s.masters_files = std::make_shared<const config::CheckOutcome>(loaded);
  if (cfg.azure) {
    s.hybrid = std::make_shared<const config::CheckOutcome>(loaded);
    s.tunnel_mtu = cfg.azure->tunnel_mtu;
  }

  // A hybrid cluster's nodes carry their site (docs/hybrid.md).
  std::map<std::string, std::string> azure_vms;
  if (cfg.azure && cluster.layout)
    azure_vms = config::azure_pools_in_layout(loaded.sources[cluster.layout->file]);

  std::set<std::string> wanted(request.limit.begin(), request.limit.end());
  std::set<std::string> matched;
  bool has_master = false, first_master_seen = false;
  for (const auto& h : p.hosts.inventory.hosts) {
    bool in = wanted.empty() || wanted.count(h.name) || wanted.count(h.address);
    if (wanted.count(h.name)) matched.insert(h.name);
    if (wanted.count(h.address)) matched.insert(h.address);
    if (!in && !h.master) continue;
    HostSpec spec;
    spec.name = h.name;
    spec.address = h.hostip.empty() ? h.address : h.hostip;
    spec.master = h.master;
    spec.other_master = h.master && first_master_seen;
    first_master_seen |= h.master;
    spec.worker = h.worker;
    spec.selected = in;
    if (h.sku) {
      spec.sku = h.sku->name;
      if (h.sku->device) {
        spec.gpu_type = h.sku->device->type;
        spec.gpus = static_cast<int>(h.sku->device->count);
      }
    }
    if (cfg.azure) spec.labels = config::site_labels(*cfg.azure, azure_vms, h.name, spec.address);
    if (cluster.layout)
      if (const config::Machine* m = cluster.layout->find_machine(h.name)) {
        const config::MachineSku* sku = cluster.layout->find_sku(m->machine_type);
        spec.operator_labels = config::node_labels(*m, sku);
        spec.taints = config::node_taints(*m, sku);
      }
    spec.target = h.target;
    spec.plan = h;
    has_master |= h.master;
    p.specs.push_back(std::move(spec));
  }
  for (const auto& w : wanted)
    if (!matched.count(w)) {
      UseCaseError e = input_error(w + " is not a host of " + p.hosts.inventory.layout_file);
      e.about = UseCaseError::About::UnknownHost;
      return e;
    }
  if (!has_master && request.need_master) return input_error("layout.yaml has no pai-master host");
  return p;
}

}  // namespace pai::deploy
