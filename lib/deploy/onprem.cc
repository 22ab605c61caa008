// What install and reset run (the phases, one file each under phases/), and
// what they render: kubeadm's configurations and the manifests.
#include "deploy/onprem.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <kainjow/mustache.hpp>

#include "deploy/engine.h"
#include "deploy/image_mirror.h"
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy {

namespace {

int minor_number(const std::string& v) {
  std::string t = !v.empty() && v[0] == 'v' ? v.substr(1) : v;
  auto parts = util::split(t, '.');
  return parts.size() >= 2 ? static_cast<int>(util::parse_int(parts[1]).value_or(0)) : 0;
}

// ClusterConfiguration's image settings for image_registry_mirror: the control
// plane's images (registry.k8s.io/NAME) and CoreDNS's
// (registry.k8s.io/coredns/coredns) at the same paths under the mirror.
std::string kubeadm_image_lines(const std::string& mirror) {
  if (mirror.empty()) return {};
  return "imageRepository: " + mirror + "\ndns:\n  imageRepository: " + mirror + "/coredns\n";
}

}  // namespace

// ------------------------------------------------------------------ public helpers

std::string kubeadm_api_version(const std::string& kube_version) {
  return minor_number(kube_version) >= 31 ? "kubeadm.k8s.io/v1beta4" : "kubeadm.k8s.io/v1beta3";
}

util::Result<void> supported_os(const std::string& id, const std::string& version_id) {
  if (id == "ubuntu" && (version_id == "20.04" || version_id == "22.04" || version_id == "24.04"))
    return {};
  if (id == "debian" && version_id == "12") return {};
  std::string shown =
      id.empty() ? std::string("an unknown OS (no /etc/os-release)") : id + " " + version_id;
  return util::Error{shown + " is not supported by paictl install", ""};
}

util::Result<std::string> render_template(const std::string& templates_dir, const std::string& name,
                                          const std::map<std::string, std::string>& values) {
  std::string path = templates_dir + "/install/" + name;
  auto read = util::read_file(path, 1u << 20);
  if (!read.ok())
    return util::Error{"cannot read the template " + path + ": " + read.error().message +
                           " (set PAICTL_TEMPLATES to paictl's templates/)",
                       "", util::Error::Kind::Input};
  const std::string& text = *read;
  kainjow::mustache::mustache tmpl(text);
  if (!tmpl.is_valid())
    return util::Error{path + ": " + tmpl.error_message(), "", util::Error::Kind::Input};
  tmpl.set_custom_escape([](const std::string& s) { return s; });
  kainjow::mustache::data data;
  for (const auto& [k, v] : values) data.set(k, v);
  std::string out = tmpl.render(data);
  if (!tmpl.is_valid())
    return util::Error{path + ": " + tmpl.error_message(), "", util::Error::Kind::Input};
  return out;
}

std::vector<std::string> control_plane_cert_sans(const InstallSettings& s) {
  std::vector<std::string> out;
  auto add = [&](const std::string& n) {
    if (!n.empty() && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  if (!s.control_plane_endpoint.empty())
    add(s.control_plane_endpoint.substr(0, s.control_plane_endpoint.rfind(':')));
  if (s.highly_available())
    for (const auto& [name, address] : s.masters) {
      add(address);
      add(name);
    }
  return out;
}

util::Result<std::string> render_kube_vip(const InstallSettings& s, bool initializing) {
  return render_template(s.templates_dir, "kube-vip.yaml",
                         {{"version", kKubeVipVersion},
                          {"address", s.kube_vip_address},
                          {"interface", s.kube_vip_interface},
                          {"kubeconfig", initializing && minor_number(s.kube_version) >= 29
                                             ? "/etc/kubernetes/super-admin.conf"
                                             : "/etc/kubernetes/admin.conf"}});
}

util::Result<std::string> render_kubeadm_init(const InstallSettings& s, const HostSpec& master,
                                              const std::string& kubeadm_version,
                                              const std::string& certificate_key) {
  std::string v = kubeadm_version.substr(!kubeadm_version.empty() && kubeadm_version[0] == 'v');
  std::string sans;
  for (const auto& n : control_plane_cert_sans(s)) sans += "\n  - \"" + n + "\"";
  return render_template(
      s.templates_dir, "kubeadm-init.yaml",
      {{"certificate_key",
        certificate_key.empty() ? std::string() : "certificateKey: \"" + certificate_key + "\""},
       {"api_server", sans.empty() ? std::string() : "apiServer:\n  certSANs:" + sans},
       {"api", kubeadm_api_version(v).substr(15)},
       {"version", s.kube_version},
       {"advertise", master.address},
       {"node", master.name},
       {"cluster", s.cluster_name},
       {"endpoint", phases::endpoint_of(s, master)},
       {"pods", s.pods_subnet},
       {"services", s.service_subnet},
       {"images", kubeadm_image_lines(s.image_mirror)}});
}

util::Result<std::string> render_kubeadm_join(const InstallSettings& s, const HostSpec& node,
                                              const std::string& kubeadm_version,
                                              const std::string& endpoint, const std::string& token,
                                              const std::string& ca_hash,
                                              const std::string& certificate_key) {
  std::string v = kubeadm_version.substr(!kubeadm_version.empty() && kubeadm_version[0] == 'v');
  const bool master = !certificate_key.empty();
  return render_template(s.templates_dir, "kubeadm-join.yaml",
                         {{"taints", master ? "  taints:\n"
                                              "  - key: node-role.kubernetes.io/control-plane\n"
                                              "    effect: NoSchedule"
                                            : ""},
                          {"control_plane", master ? "controlPlane:\n"
                                                     "  localAPIEndpoint:\n"
                                                     "    advertiseAddress: " +
                                                         node.address +
                                                         "\n"
                                                         "    bindPort: 6443\n"
                                                         "  certificateKey: \"" +
                                                         certificate_key + "\""
                                                   : std::string()},
                          {"api", kubeadm_api_version(v).substr(15)},
                          {"node", node.name},
                          {"endpoint", endpoint},
                          {"token", token},
                          {"ca_hash", ca_hash}});
}

util::Result<Manifests> render_install_manifests(const InstallSettings& s, const HostSpec& master,
                                                 int mtu) {
  Manifests out;
  auto flannel = render_template(
      s.templates_dir, "kube-flannel.yaml",
      {{"pods", s.pods_subnet}, {"mtu", std::to_string(mtu - 50)}, {"hash", "0000000000000000"}});
  if (!flannel) return flannel.error();
  out.emplace_back("cni", manifest_through_mirror(*flannel, s.image_mirror));
  auto plugin =
      render_template(s.templates_dir, "nvidia-device-plugin.yaml", {{"hash", "0000000000000000"}});
  if (!plugin) return plugin.error();
  out.emplace_back("device-plugin", manifest_through_mirror(*plugin, s.image_mirror));
  auto services = render_openpai_manifests(s, master);
  if (!services) return services.error();
  for (auto& m : *services)
    out.emplace_back(m.first, manifest_through_mirror(m.second, s.image_mirror));
  return out;
}

std::string cluster_objects_script() {
  return api_json_read_script({"/api/v1/nodes", "/apis/apps/v1/daemonsets",
                               "/apis/apps/v1/statefulsets", "/apis/apps/v1/deployments"},
                              "get nodes,daemonsets,statefulsets,deployments -A -o json");
}

nlohmann::json objects_of_kind(const nlohmann::json& list, const std::string& kind,
                               const std::string& ns) {
  nlohmann::json out = {{"items", nlohmann::json::array()}};
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) return out;
  for (const auto& o : list["items"]) {
    if (!o.is_object() || o.value("kind", "") != kind || !o.contains("metadata") ||
        !o["metadata"].is_object())
      continue;
    if (!ns.empty() && o["metadata"].value("namespace", "") != ns) continue;
    out["items"].push_back(o);
  }
  return out;
}

bool rolled_out(const nlohmann::json& w) {
  if (!w.is_object()) return false;
  auto obj = [&](const nlohmann::json& o, const char* k) {
    return o.contains(k) && o[k].is_object() ? o[k] : nlohmann::json::object();
  };
  auto num = [](const nlohmann::json& o, const char* k, int64_t dflt = 0) {
    return o.contains(k) && o[k].is_number_integer() ? o[k].get<int64_t>() : dflt;
  };
  const nlohmann::json md = obj(w, "metadata"), spec = obj(w, "spec"), st = obj(w, "status");
  if (num(st, "observedGeneration") < num(md, "generation")) return false;
  std::string kind = w.value("kind", "");
  if (kind == "DaemonSet") {
    int64_t want = num(st, "desiredNumberScheduled");
    return num(st, "updatedNumberScheduled") >= want && num(st, "numberAvailable") >= want;
  }
  int64_t replicas = num(spec, "replicas", 1);
  if (kind == "Deployment") {
    int64_t updated = num(st, "updatedReplicas");
    return updated >= replicas && num(st, "replicas") <= updated &&
           num(st, "availableReplicas") >= updated;
  }
  if (kind == "StatefulSet") {
    const nlohmann::json strategy = obj(spec, "updateStrategy");
    if (strategy.value("type", "RollingUpdate") != "RollingUpdate") return true;
    if (num(st, "readyReplicas") < replicas) return false;
    const nlohmann::json ru = obj(strategy, "rollingUpdate");
    if (ru.contains("partition"))
      return num(st, "updatedReplicas") >= replicas - num(ru, "partition");
    return st.value("updateRevision", "") == st.value("currentRevision", "");
  }
  return false;
}

std::vector<std::string> wait_for_rollouts(HostRun& master, const std::string& ns,
                                           const std::vector<std::string>& workloads, int wait_s) {
  const std::string script = std::string(kKubectl) + " -n " + util::shell_quote(ns) +
                             " get daemonsets,statefulsets,deployments -o json "
                             "--request-timeout=20s";
  std::vector<std::string> left = workloads;
  phases::poll(master.run().clock, wait_s, 1000, [&] {
    auto r = master.sh(script);
    if (!r.ok() || r.exit_status != 0) return false;
    auto list = util::parse_json_or_discarded(r.out);
    std::set<std::string> done;
    if (list.is_object() && list.contains("items") && list["items"].is_array())
      for (const auto& o : list["items"])
        if (o.is_object() && o.contains("metadata") && o["metadata"].is_object() && rolled_out(o))
          done.insert(util::to_lower(o.value("kind", "")) + "/" + o["metadata"].value("name", ""));
    std::vector<std::string> still;
    for (const auto& w : left)
      if (!done.count(w)) still.push_back(w);
    left = std::move(still);
    return left.empty();
  });
  return left;
}

JoinCommand parse_join_command(const std::string& out) {
  std::istringstream in(out);
  std::string word, prev;
  JoinCommand jc;
  while (in >> word) {
    if (prev == "join" && jc.endpoint.empty()) jc.endpoint = word;
    if (prev == "--token") jc.token = word;
    if (prev == "--discovery-token-ca-cert-hash") jc.ca_hash = word;
    jc.join |= word == "join";
    prev = word;
  }
  return jc;
}

std::map<std::string, std::string> parse_key_values(const std::string& out) {
  std::map<std::string, std::string> kv;
  for (auto line : util::split(out, '\n')) {
    auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    kv[std::string(util::trim(line.substr(0, eq)))] = std::string(util::trim(line.substr(eq + 1)));
  }
  return kv;
}

PhaseList install_phases(const InstallSettings& s) {
  PhaseList p;
  p.push_back(phases::make_os_phase());
  p.push_back(phases::make_checks_phase(s));
  p.push_back(phases::make_mark_phase(s));
  p.push_back(phases::make_swap_phase());
  p.push_back(phases::make_kernel_phase());
  p.push_back(phases::make_proxy_phase(s));
  p.push_back(phases::make_packages_phase(s));
  p.push_back(phases::make_containerd_phase(s));
  p.push_back(phases::make_images_phase(s));
  p.push_back(phases::make_control_plane_phase(s));
  p.push_back(phases::make_cni_phase(s));
  if (s.highly_available()) p.push_back(phases::make_join_control_plane_phase(s));
  p.push_back(phases::make_join_phase(s));
  p.push_back(phases::make_labels_phase());
  p.push_back(phases::make_device_plugin_phase(s));
  p.push_back(phases::make_verify_phase(s));
  p.push_back(make_hived_phase(s));
  p.push_back(make_openpai_phase(s));
  p.push_back(make_config_phase(s));
  p.push_back(make_endpoints_phase(s));
  return p;
}

PhaseList reset_phases(const InstallSettings&) {
  PhaseList p;
  p.push_back(phases::make_os_phase());
  p.push_back(phases::make_reset_phase());
  return p;
}

}  // namespace pai::deploy
