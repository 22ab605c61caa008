#include "config/cluster_config.h"

#include <cctype>
#include <cstdlib>

#include "config/node_settings.h"
#include "util/fs.h"
#include "util/strings.h"

namespace pai::config {

const std::vector<std::string>& cluster_config_keys() {
  static const std::vector<std::string> keys = {
      "user", "password", "docker_image_tag",
      // OpenPAI settings
      "enable_hived_scheduler", "enable_marketplace", "enable_docker_cache",
      "docker_cache_storage_backend", "docker_cache_azure_account_name",
      "docker_cache_azure_account_key", "docker_cache_azure_container_name",
      "docker_cache_fs_mount_path", "docker_cache_remote_url", "docker_cache_registry_htpasswd",
      // inventory
      "ssh_key_file_path",
      // service image registry
      "docker_registry_domain", "docker_registry_namespace", "docker_registry_username",
      "docker_registry_password", "qos-switch",
      // pre-check toggles
      "docker_check", "resource_check",
      // docker
      "docker_data_root", "docker_config_file_path", "docker_iptables_enabled",
      "openpai_docker_insecure_registries", "openpai_docker_registry_mirrors",
      // kubespray
      "gcr_image_repo", "kube_image_repo", "quay_image_repo", "docker_image_repo",
      "etcd_image_repo", "pod_infra_image_repo", "kubeadm_download_url", "hyperkube_download_url",
      "openpai_kube_network_plugin", "openpai_kubespray_extra_var", "kubelet_custom_flags",
      // host daemon ports
      "host_daemon_port_start", "host_daemon_port_end",
      // paictl install (docs/install.md)
      "kube_version", "kube_package_repo", "kube_offline_bundle", "kube_pods_subnet",
      "kube_service_addresses", "kube_control_plane_endpoint", "kube_vip", "nvidia_package_repo",
      // proxies and registry mirrors (docs/install.md)
      "http_proxy", "https_proxy", "no_proxy", "containerd_registry_mirrors",
      "image_registry_mirror",
      // paictl install's Azure provider (docs/azure.md)
      "azure",
      // paictl's settings of the cluster directory (docs/init.md)
      "ssh_config", "ssh_user", "known_hosts", "ignore_check_errors", "hived_url"};
  return keys;
}

namespace {

// HOST:PORT with a DNS name or an IPv4 address and a port 1-65535.
bool valid_endpoint(const std::string& e) {
  size_t colon = e.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  std::string host = e.substr(0, colon);
  auto port = util::parse_int(e.substr(colon + 1));
  if (!port || *port < 1 || *port > 65535) return false;
  return util::is_ipv4(host) || util::is_dns1123_subdomain(util::to_lower(host));
}

void load_kube_vip(const Node* n, ClusterConfig& c, Context& ctx) {
  if (!ctx.is_mapping(n, "kube_vip")) return;
  ctx.unknown_keys(n, {"address", "interface"}, "kube_vip");
  KubeVip v;
  v.mark = ctx.at(n);
  bool ok = true;
  if (const Node* a = ctx.required(n, "address", "kube_vip")) {
    if (auto s = ctx.string_value(a, "kube_vip.address")) {
      v.address = *s;
      if (!util::is_ipv4(*s)) {
        ok = false;
        ctx.error("L061", ctx.at(a), "kube_vip.address \"" + *s + "\" is not an IPv4 address",
                  "a free address on the masters' network that kube-vip announces with ARP, "
                  "e.g. 10.0.0.250");
      }
    } else {
      ok = false;
    }
  } else {
    ok = false;
  }
  if (const Node* i = ctx.required(n, "interface", "kube_vip")) {
    if (auto s = ctx.string_value(i, "kube_vip.interface")) {
      v.interface = *s;
      if (!is_interface_name(*s)) {
        ok = false;
        ctx.error("L061", ctx.at(i),
                  "kube_vip.interface \"" + *s + "\" is not a network interface name",
                  "the masters' interface on that network as `ip -br link` shows it, e.g. eth0 "
                  "(at most 15 characters, no '/', ':' or spaces)");
      }
    } else {
      ok = false;
    }
  } else {
    ok = false;
  }
  if (!ok) return;
  if (!c.kube_control_plane_endpoint.empty() &&
      c.kube_control_plane_endpoint != v.address + ":6443")
    ctx.error("L062", v.mark,
              "kube_vip.address " + v.address + " and kube_control_plane_endpoint " +
                  c.kube_control_plane_endpoint + " name two different endpoints",
              "keep one: kube_vip (the endpoint is then " + v.address +
                  ":6443) or an operator's load balancer in kube_control_plane_endpoint");
  c.kube_vip = std::move(v);
}

// The registry host of an image repository ("gcr.io/google-containers" -> "gcr.io").
std::string registry_host(const std::string& repo) {
  std::string r = repo;
  if (auto p = r.find("://"); p != std::string::npos) r = r.substr(p + 3);
  if (auto p = r.find('/'); p != std::string::npos) r = r.substr(0, p);
  return r;
}

// The installer tests some switches with `is False` / `is sameas true`: only a
// real YAML boolean works, a quoted string silently keeps the default.
std::optional<bool> strict_bool(const Node* n, const std::string& key, bool default_value,
                                const char* effect, Context& ctx) {
  if (!n) return std::nullopt;
  if (auto b = n->as_bool()) return b;
  if (n->is_scalar() && (n->scalar() == "true" || n->scalar() == "false")) {
    ctx.warning("C004", ctx.at(n),
                key + ": \"" + n->scalar() +
                    "\" is a string, not a boolean; the installer keeps the default (" +
                    (default_value ? "true" : "false") + ")" + effect,
                "remove the quotes: " + key + ": " + n->scalar());
    return std::nullopt;
  }
  ctx.bool_value(n, key);
  return std::nullopt;
}

// paictl's settings of the cluster directory: the SSH settings the commands take
// as defaults, the checks install may go past, HiveD's address.
void cluster_config_load_settings(const Node* root, Context& ctx, bool check_files,
                                  ClusterConfig& c) {
  struct PathKey {
    const char* key;
    std::string* field;
    const char* what;
  };
  for (const PathKey& k : {PathKey{"ssh_config", &c.ssh_config, "an SSH client config (ssh -F)"},
                           PathKey{"known_hosts", &c.known_hosts, "a known_hosts file"},
                           PathKey{"ssh_key_file_path", &c.ssh_key_file_path, "a private key"}}) {
    const Node* n = root->get(k.key);
    if (!n || !k.field->size()) {
      if (n && n->is_scalar() && n->scalar().empty())
        ctx.error("C003", ctx.at(n), std::string(k.key) + " is empty",
                  std::string("name ") + k.what + ", or remove the key");
      continue;
    }
    const std::string& v = *k.field;
    if (!check_files || v == "none") continue;
    // An absolute ssh_key_file_path is OpenPAI's, read on the machine that
    // installs: only paictl's own relative paths are checked here.
    if (std::string(k.key) == "ssh_key_file_path" && v[0] == '/') continue;
    std::string p = resolve_setting_path(ctx.file(), v);
    if (!util::is_regular_file(p))
      ctx.error(
          "C009", ctx.at(n),
          std::string(k.key) + ": " + p +
              (util::path_exists(p) ? " is not a file" : " does not exist"),
          std::string("name ") + k.what + ", absolute or relative to the directory of config.yaml");
  }
  if (const Node* n = root->get("ssh_user")) {
    if (auto v = ctx.string_value(n, "ssh_user", true)) {
      if (v->empty() || v->find_first_of(" \t@:/") != std::string::npos)
        ctx.error("C003", ctx.at(n), "ssh_user must be a login name, found \"" + *v + "\"",
                  "e.g. ssh_user: root");
      else
        c.ssh_user = *v;
    }
  }
  if (const Node* n = root->get("ignore_check_errors")) {
    if (ctx.is_sequence(n, "ignore_check_errors")) {
      size_t i = 0;
      for (const Node* item : n->items()) {
        auto v = ctx.string_value(item, "ignore_check_errors[" + std::to_string(i++) + "]");
        if (!v) continue;
        if (v->empty() || v->find_first_of(" ,") != std::string::npos)
          ctx.error("C003", ctx.at(item),
                    "ignore_check_errors holds check names, found \"" + *v + "\"",
                    "one name a line, e.g. ignore_check_errors: [CPU, DNS]; the names are the "
                    "host checks' (docs/check-hosts.md)");
        else
          c.ignore_check_errors.push_back(*v);
      }
    }
  }
  if (const Node* n = root->get("hived_url")) {
    if (auto v = ctx.string_value(n, "hived_url")) {
      bool scheme = v->rfind("http://", 0) == 0 || v->rfind("https://", 0) == 0;
      size_t host = v->find("://");
      if (!scheme || host == std::string::npos || host + 3 >= v->size())
        ctx.error("C003", ctx.at(n),
                  "hived_url must be an http:// or https:// URL, found \"" + *v + "\"",
                  "HiveD's inspect API, e.g. hived_url: http://10.0.0.1:30096");
      else
        c.hived_url = *v;
    }
  }
}

// Proxies and registry mirrors (L080-L082). A proxy's password is never echoed:
// messages show the URL with mask_url_credentials.
void cluster_config_load_network(const Node* root, Context& ctx, ClusterConfig& c) {
  for (auto [key, field] :
       {std::pair{"http_proxy", &c.http_proxy}, std::pair{"https_proxy", &c.https_proxy}}) {
    const Node* n = root->get(key);
    if (!n || n->is_null()) continue;
    auto v = ctx.string_value(n, key);
    if (!v) continue;
    if (auto ok = check_proxy_url(*v); !ok.ok())
      ctx.error("L080", ctx.at(n),
                std::string(key) + " \"" + mask_url_credentials(*v) + "\" " + ok.error().message,
                ok.error().hint);
    else
      *field = *v;
  }
  if (const Node* n = root->get("no_proxy"); n && !n->is_null()) {
    std::vector<std::pair<std::string, const Node*>> entries;
    if (n->is_sequence()) {
      size_t i = 0;
      for (const Node* item : n->items())
        if (auto v = ctx.string_value(item, "no_proxy[" + std::to_string(i++) + "]"))
          entries.emplace_back(std::string(util::trim(*v)), item);
    } else if (auto v = ctx.string_value(n, "no_proxy")) {
      for (auto& e : split_no_proxy(*v)) entries.emplace_back(e, n);
    }
    for (const auto& [e, at] : entries) {
      if (auto ok = check_no_proxy_entry(e); !ok.ok())
        ctx.error("L081", ctx.at(at), "no_proxy entry \"" + e + "\" " + ok.error().message,
                  ok.error().hint);
      else
        c.no_proxy.push_back(e);
    }
  }
  if (const Node* n = root->get("image_registry_mirror"); n && !n->is_null()) {
    if (auto v = ctx.string_value(n, "image_registry_mirror")) {
      std::string host = *v;
      while (!host.empty() && host.back() == '/') host.pop_back();
      if (auto ok = check_registry_host(host); !ok.ok())
        ctx.error("L082", ctx.at(n), "image_registry_mirror \"" + *v + "\" " + ok.error().message,
                  std::string(ok.error().hint) +
                      " (every image is pulled as HOST[:PORT]/REPOSITORY:TAG)");
      else
        c.image_registry_mirror = host;
    }
  }
  if (const Node* n = root->get("containerd_registry_mirrors"); n && !n->is_null()) {
    if (ctx.is_mapping(n, "containerd_registry_mirrors")) {
      for (const auto& p : n->pairs()) {
        std::string reg = p.key->scalar();
        std::string where = "containerd_registry_mirrors." + reg;
        bool ok = true;
        if (reg != "_default")
          if (auto r = check_registry_host(reg); !r.ok()) {
            ctx.error("L082", ctx.at(p.key),
                      "containerd_registry_mirrors: registry \"" + reg + "\" " + r.error().message,
                      "a key is the registry the images name (docker.io, registry.k8s.io, "
                      "nvcr.io, ...) or _default");
            ok = false;
          }
        std::vector<std::string> urls;
        if (p.value && p.value->is_scalar() && !p.value->is_null()) {
          if (auto v = ctx.string_value(p.value, where)) urls.push_back(*v);
        } else if (p.value && p.value->is_sequence()) {
          size_t i = 0;
          for (const Node* item : p.value->items())
            if (auto v = ctx.string_value(item, where + "[" + std::to_string(i++) + "]")) {
              if (auto r = check_mirror_url(*v); !r.ok()) {
                ctx.error(
                    "L082", ctx.at(item),
                    where + ": mirror \"" + mask_url_credentials(*v) + "\" " + r.error().message,
                    r.error().hint);
                ok = false;
              } else {
                urls.push_back(*v);
              }
            }
        } else {
          ctx.error("L082", ctx.at(p.value ? p.value : p.key),
                    where + " must be a list of mirror URLs",
                    "e.g. containerd_registry_mirrors: {docker.io: [https://mirror.example.com]}");
          ok = false;
        }
        if (p.value && p.value->is_scalar() && !urls.empty())
          if (auto r = check_mirror_url(urls[0]); !r.ok()) {
            ctx.error(
                "L082", ctx.at(p.value),
                where + ": mirror \"" + mask_url_credentials(urls[0]) + "\" " + r.error().message,
                r.error().hint);
            ok = false;
          }
        if (ok && urls.empty())
          ctx.error("L082", ctx.at(p.value ? p.value : p.key), where + " lists no mirror",
                    "give at least one URL, or remove the registry");
        else if (ok)
          c.containerd_registry_mirrors[reg] = urls;
      }
    }
  }
}

}  // namespace

std::string control_plane_endpoint(const ClusterConfig& c) {
  if (!c.kube_control_plane_endpoint.empty()) return c.kube_control_plane_endpoint;
  if (c.kube_vip) return c.kube_vip->address + ":6443";
  return {};
}

bool is_interface_name(std::string_view name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  for (char ch : name)
    if (ch == '/' || ch == ':' || ch == '\0' || std::isspace(static_cast<unsigned char>(ch)) ||
        static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f)
      return false;
  return true;
}

std::string resolve_setting_path(const std::string& config_file, const std::string& path) {
  if (path.empty() || path == "none" || path[0] == '/') return path;
  if (path[0] == '~') {
    const char* home = std::getenv("HOME");
    if (home && *home && (path.size() == 1 || path[1] == '/')) return home + path.substr(1);
    return path;
  }
  auto slash = config_file.find_last_of('/');
  if (slash == std::string::npos) return path;
  return config_file.substr(0, slash + 1) + path;
}

ClusterConfig load_cluster_config(const Node* root, Context& ctx, bool check_files) {
  ClusterConfig c;
  c.file = ctx.file();
  if (!ctx.is_mapping(root, "config.yaml")) return c;

  const auto& known = cluster_config_keys();
  for (const auto& p : root->pairs()) {
    const std::string& k = p.key->scalar();
    if (k == "docker_cache_htpasswd") {
      ctx.warning(
          "C001", ctx.at(p.key),
          "docker_cache_htpasswd is never read: OpenPAI's services-configuration template reads "
          "docker_cache_registry_htpasswd",
          "rename the key to docker_cache_registry_htpasswd");
      continue;
    }
    if (k == "branch_name" || k == "gpu_type" || k == "worker_default_docker_runtime") {
      ctx.warning("C002", ctx.at(p.key),
                  k + " belongs to the pre-v1.5 installer and is no longer read",
                  k == "gpu_type" ? "the NVIDIA checks now follow machine-sku computing-device in "
                                    "layout.yaml; remove it"
                                  : "remove it");
      continue;
    }
    bool ok = false;
    for (const auto& kk : known) ok |= (kk == k);
    if (!ok) {
      std::string guess = util::did_you_mean(k, known);
      ctx.warning("F006", ctx.at(p.key),
                  "unknown key \"" + k + "\" in config.yaml; the installer ignores it",
                  guess.empty() ? "extra kubespray variables go under openpai_kubespray_extra_var"
                                : "did you mean \"" + guess + "\"?");
    }
  }

  if (const Node* n = ctx.required(root, "user", "config.yaml"))
    if (auto v = ctx.string_value(n, "user", true)) c.user = *v;
  // password is optional: OpenPAI's inventory template reads it as an empty
  // ansible_ssh_pass, and key-only SSH as root is the common case. It is
  // needed for password SSH, or for sudo when `user` is not root and sudo asks.
  if (const Node* n = root->get("password")) {
    // The value is a secret: check its type without ever echoing it.
    if (n->is_scalar() && !n->is_null()) {
      c.password = n->scalar();
      c.has_password = true;
      if (!n->is_quoted() && (n->as_int() || n->as_float() || is_yaml11_bool(n)))
        ctx.error("F005", ctx.at(n),
                  "password must be a string; YAML reads this value as a number or boolean",
                  "quote the password");
    } else {
      ctx.error("F005", ctx.at(n),
                "password must be a string, found " + std::string(n->is_null() ? "an empty value"
                                                                  : n->is_mapping() ? "a mapping"
                                                                                    : "a list"),
                "the SSH and sudo password of `user` on every host, as a quoted string");
    }
  }
  if (!root->get("password") && !c.user.empty() && c.user != "root")
    ctx.warning("C008", ctx.key_at(root, "user"),
                "config.yaml has no password, so the installer runs sudo as \"" + c.user +
                    "\" without one; it fails on hosts where sudo asks for a password",
                "give password, or allow passwordless sudo for " + c.user +
                    "; paictl check hosts shows whether sudo asks (Privileges)");
  if (const Node* n = ctx.required(root, "docker_image_tag", "config.yaml"))
    if (auto v = ctx.string_value(n, "docker_image_tag", true)) c.docker_image_tag = *v;

  if (const Node* n = root->get("ssh_key_file_path"))
    if (auto v = ctx.string_value(n, "ssh_key_file_path")) c.ssh_key_file_path = *v;
  for (auto [key, field] :
       {std::pair{"ssh_config", &c.ssh_config}, std::pair{"known_hosts", &c.known_hosts}})
    if (const Node* n = root->get(key))
      if (auto v = ctx.string_value(n, key)) *field = *v;
  cluster_config_load_settings(root, ctx, check_files, c);
  if (const Node* n = root->get("docker_data_root")) {
    if (auto v = ctx.string_value(n, "docker_data_root")) {
      c.docker_data_root = *v;
      if (v->empty() || (*v)[0] != '/')
        ctx.error("C003", ctx.at(n),
                  "docker_data_root must be an absolute path, found \"" + *v + "\"",
                  "e.g. docker_data_root: /mnt/docker");
    }
  }

  c.enable_hived_scheduler_mark = ctx.key_at(root, "enable_hived_scheduler");
  if (auto b = strict_bool(root->get("enable_hived_scheduler"), "enable_hived_scheduler", true,
                           ", so the HiveD scheduler stays enabled", ctx))
    c.enable_hived_scheduler = *b;
  if (auto b = strict_bool(root->get("enable_docker_cache"), "enable_docker_cache", false,
                           ", so the docker cache stays disabled", ctx))
    c.enable_docker_cache = *b;
  for (const char* k : {"docker_check", "resource_check", "docker_iptables_enabled"})
    if (const Node* n = root->get(k)) ctx.bool_value(n, k);
  // enable_marketplace and qos-switch are rendered as strings into services-configuration.yaml.
  for (const char* k : {"enable_marketplace", "qos-switch"}) {
    if (const Node* n = root->get(k)) {
      if (!n->is_scalar() || (n->scalar() != "true" && n->scalar() != "false"))
        ctx.error("C003", ctx.at(n),
                  std::string(k) + " must be \"true\" or \"false\", found " + n->describe(),
                  "the installer copies it into services-configuration.yaml as a string");
    }
  }

  if (c.enable_docker_cache) {
    const Node* backend = root->get("docker_cache_storage_backend");
    if (!backend) {
      ctx.error(
          "C005", ctx.key_at(root, "enable_docker_cache"),
          "enable_docker_cache is true but docker_cache_storage_backend is not set",
          "set docker_cache_storage_backend: azure (with the azure account keys) or filesystem");
    } else if (auto v = ctx.string_value(backend, "docker_cache_storage_backend")) {
      if (*v == "azure") {
        for (const char* k :
             {"docker_cache_azure_account_name", "docker_cache_azure_account_key"}) {
          const Node* n = root->get(k);
          if (!n || n->is_null() || (n->is_scalar() && n->scalar().empty()))
            ctx.error("C005", ctx.at(backend),
                      std::string("the azure docker cache backend needs ") + k,
                      std::string("set ") + k + " (the storage account the cache writes to)");
        }
      } else if (*v == "filesystem") {
        const Node* n = root->get("docker_cache_fs_mount_path");
        if (!n || n->is_null() || (n->is_scalar() && n->scalar().empty()))
          ctx.error("C005", ctx.at(backend),
                    "the filesystem docker cache backend needs docker_cache_fs_mount_path",
                    "set docker_cache_fs_mount_path, e.g. /var/lib/registry");
      } else {
        ctx.error("C003", ctx.at(backend),
                  "docker_cache_storage_backend must be \"azure\" or \"filesystem\", found \"" +
                      *v + "\"",
                  "OpenPAI's docker cache stores images in an Azure blob container or on a local "
                  "filesystem");
      }
    }
  }

  // paictl install's own settings.
  if (const Node* n = root->get("kube_version")) {
    if (auto v = ctx.string_value(n, "kube_version")) {
      std::string t = *v;
      if (!t.empty() && t[0] == 'v') t = t.substr(1);
      auto parts = util::split(t, '.');
      bool ok = parts.size() == 3;
      for (auto part : parts) ok = ok && !part.empty() && util::parse_int(part).has_value();
      if (ok) {
        c.kube_version = t;
        c.kube_version_mark = ctx.at(n);
      } else {
        ctx.error(
            "C003", ctx.at(n),
            "kube_version must be a Kubernetes release MAJOR.MINOR.PATCH, found \"" + *v + "\"",
            "e.g. kube_version: 1.30.10 (kubeadm, kubelet and kubectl of that release)");
      }
    }
  }
  for (auto [key, field] :
       {std::pair{"kube_package_repo", &c.kube_package_repo},
        std::pair{"kube_offline_bundle", &c.kube_offline_bundle},
        std::pair{"kube_pods_subnet", &c.kube_pods_subnet},
        std::pair{"kube_service_addresses", &c.kube_service_addresses},
        std::pair{"kube_control_plane_endpoint", &c.kube_control_plane_endpoint},
        std::pair{"nvidia_package_repo", &c.nvidia_package_repo}})
    if (const Node* n = root->get(key))
      if (auto v = ctx.string_value(n, key)) *field = *v;
  if (const Node* n = root->get("kube_control_plane_endpoint")) {
    c.kube_control_plane_endpoint_mark = ctx.at(n);
    if (!c.kube_control_plane_endpoint.empty() && !valid_endpoint(c.kube_control_plane_endpoint))
      ctx.error("L063", ctx.at(n),
                "kube_control_plane_endpoint must be HOST:PORT, found \"" +
                    c.kube_control_plane_endpoint + "\"",
                "the load balancer in front of the masters' API servers, e.g. "
                "kube_control_plane_endpoint: \"10.0.0.250:6443\"");
  }
  if (const Node* n = root->get("kube_vip")) load_kube_vip(n, c, ctx);
  for (auto [key, value] : {std::pair{"kube_pods_subnet", &c.kube_pods_subnet},
                            std::pair{"kube_service_addresses", &c.kube_service_addresses}}) {
    const std::string& v = *value;
    auto slash = v.find('/');
    auto bits = slash == std::string::npos ? std::nullopt : util::parse_int(v.substr(slash + 1));
    if (!bits || *bits < 8 || *bits > 30 || util::split(v.substr(0, slash), '.').size() != 4)
      ctx.error(
          "C003", ctx.at(root->get(key)),
          std::string(key) + " must be an IPv4 CIDR such as 10.244.0.0/16, found \"" + v + "\"",
          "the pods' and the services' address ranges must not overlap the hosts' network");
  }

  cluster_config_load_network(root, ctx, c);

  if (const Node* n = root->get("azure"))
    c.azure = load_azure_config(n, ctx, c.kube_pods_subnet, c.kube_service_addresses,
                                c.ssh_key_file_path);

  if (const Node* n = root->get("openpai_kube_network_plugin")) {
    if (auto v = ctx.string_value(n, "openpai_kube_network_plugin")) {
      c.network_plugin = *v;
      if (*v != "calico" && *v != "weave")
        ctx.warning("C003", ctx.at(n),
                    "openpai_kube_network_plugin \"" + *v +
                        "\" is neither calico nor weave, the two plugins OpenPAI tests",
                    "use calico on premises and weave on Azure");
    }
  }

  for (const char* k : {"gcr_image_repo", "kube_image_repo", "quay_image_repo", "docker_image_repo",
                        "etcd_image_repo", "pod_infra_image_repo", "docker_registry_domain"}) {
    if (const Node* n = root->get(k)) {
      if (auto v = ctx.string_value(n, k)) {
        std::string host = registry_host(*v);
        if (!host.empty() && host.find("{{") == std::string::npos) {
          bool dup = false;
          for (const auto& r : c.registries) dup |= (r == host);
          if (!dup) c.registries.push_back(host);
        }
      }
    }
  }
  for (const char* k : {"openpai_docker_insecure_registries", "openpai_docker_registry_mirrors"}) {
    if (const Node* n = root->get(k)) {
      if (!ctx.is_sequence(n, k)) continue;
      auto& dst = std::string(k) == "openpai_docker_registry_mirrors" ? c.registry_mirrors
                                                                      : c.insecure_registries;
      size_t i = 0;
      for (const Node* item : n->items())
        if (auto v = ctx.string_value(item, std::string(k) + "[" + std::to_string(i++) + "]"))
          dst.push_back(*v);
    }
  }
  if (const Node* n = root->get("openpai_kubespray_extra_var"))
    ctx.is_mapping(n, "openpai_kubespray_extra_var");
  if (const Node* n = root->get("kubelet_custom_flags")) {
    if (ctx.is_mapping(n, "kubelet_custom_flags"))
      ctx.warning("C006", ctx.key_at(root, "kubelet_custom_flags"),
                  "kubelet_custom_flags replaces OpenPAI's default kubelet flags, including "
                  "--image-pull-progress-deadline=10m",
                  "add image-pull-progress-deadline: 10m to kubelet_custom_flags to keep it");
  }

  const Node* ps = root->get("host_daemon_port_start");
  const Node* pe = root->get("host_daemon_port_end");
  if (ps)
    if (auto v = ctx.int_value(ps, "host_daemon_port_start")) c.host_daemon_port_start = *v;
  if (pe)
    if (auto v = ctx.int_value(pe, "host_daemon_port_end")) c.host_daemon_port_end = *v;
  if (ps || pe) {
    Mark m = ctx.at(ps ? ps : pe);
    if (c.host_daemon_port_start < 1 || c.host_daemon_port_end > 65535 ||
        c.host_daemon_port_start >= c.host_daemon_port_end)
      ctx.error("C007", m,
                "host daemon port range " + std::to_string(c.host_daemon_port_start) + "-" +
                    std::to_string(c.host_daemon_port_end) + " is not a valid range within 1-65535",
                "the default is 40000-65535");
    else if (c.host_daemon_port_start < 40000 && c.host_daemon_port_end >= 15000)
      ctx.error("C007", m,
                "host daemon port range " + std::to_string(c.host_daemon_port_start) + "-" +
                    std::to_string(c.host_daemon_port_end) +
                    " overlaps the job port range 15000-40000 that the rest-server hands out",
                "start it at 40000 or above, or move rest-server schedule-port-start/end");
  }
  return c;
}

}  // namespace pai::config
