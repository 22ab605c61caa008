#include "inventory/inventory.h"

#include <algorithm>

#include "config/cluster_files.h"
#include "util/fs.h"
#include "util/strings.h"

namespace pai::inventory {

const std::vector<std::string>& default_registries() {
  static const std::vector<std::string> k = {"docker.io", "gcr.io", "quay.io"};
  return k;
}

std::vector<std::string> parse_hosts_file(const std::string& text, const std::string& file,
                                          diag::List& diags) {
  std::vector<std::string> out;
  uint32_t lineno = 0;
  for (auto raw : util::split(text, '\n')) {
    ++lineno;
    std::string_view l = raw;
    if (size_t hash = l.find('#'); hash != std::string_view::npos) l = l.substr(0, hash);
    l = util::trim(l);
    if (l.empty()) continue;
    // One host per line; a line may also list several, separated by spaces or commas.
    for (auto part : util::split(l, ' ')) {
      for (auto item : util::split(part, ',')) {
        item = util::trim(item);
        if (item.empty()) continue;
        auto spec = remote::parse_host_spec(item);
        if (!spec) {
          diags.add("I001", diag::Severity::Error, file, lineno, 0,
                    "bad host \"" + std::string(item) + "\": " + spec.error().message,
                    "write one host per line as [user@]host[:port]");
          continue;
        }
        out.emplace_back(item);
      }
    }
  }
  return out;
}

Inventory build_inventory(const InventoryOptions& o) {
  Inventory inv;
  remote::SshConfigEnv env = remote::default_ssh_config_env();
  remote::SshConfig ssh;
  // The SSH client config: --ssh-config, else the cluster directory's ssh_config
  // (read once the cluster files are), else ~/.ssh/config.
  auto load_ssh = [&](const std::string& path) {
    ssh = remote::load_user_ssh_config(path, env);
    for (const auto& d : ssh.diagnostics.items()) {
      inv.diagnostics.add(d);
      if (d.severity == diag::Severity::Error) inv.input_error = true;
    }
  };

  remote::TargetDefaults defaults;
  defaults.host_key_policy = o.host_key_policy;
  defaults.known_hosts_file = o.known_hosts;
  defaults.connect_timeout_ms = o.connect_timeout_ms;
  defaults.keepalive_interval_s = o.keepalive_s;
  defaults.use_agent = o.use_agent;

  const bool from_cluster = !o.paths.empty();
  if (from_cluster && (!o.hosts.empty() || !o.hosts_file.empty())) {
    inv.diagnostics.add(
        "I002", diag::Severity::Error, "", 0, 0,
        "give either cluster files (PATH) or --hosts/--hosts-file, not both",
        "the cluster's layout.yaml already lists its hosts; use --limit to check some of them");
    inv.input_error = true;
    return inv;
  }
  if (!from_cluster && o.hosts.empty() && o.hosts_file.empty()) {
    inv.diagnostics.add("I002", diag::Severity::Error, "", 0, 0, "no hosts to check",
                        "give a cluster directory (layout.yaml, config.yaml), or --hosts a,b,c, or "
                        "--hosts-file FILE");
    inv.input_error = true;
    return inv;
  }

  if (from_cluster) {
    config::CheckOutcome out = config::check_paths(o.paths);
    inv.files = out.files;
    bool errors = false;
    for (auto d : out.diagnostics.items()) {
      if (d.severity != diag::Severity::Error) continue;
      if (std::find(o.accept_codes.begin(), o.accept_codes.end(), d.code) != o.accept_codes.end())
        d.severity = diag::Severity::Warning;
      else
        errors = true;
      inv.diagnostics.add(d);
    }
    if (out.input_error || errors) {
      inv.input_error = true;
      inv.cluster_files_invalid = true;
      return inv;
    }
    const config::Cluster* cluster = nullptr;
    size_t with_layout = 0;
    for (const auto& c : out.clusters)
      if (c.layout) {
        ++with_layout;
        if (!cluster) cluster = &c;
      }
    if (!cluster) {
      inv.diagnostics.add("I003", diag::Severity::Error, o.paths[0], 0, 0,
                          "no layout.yaml among the cluster files",
                          "check hosts needs layout.yaml for the host list and the SKUs");
      inv.input_error = true;
      return inv;
    }
    if (with_layout > 1) {
      inv.diagnostics.add("I003", diag::Severity::Error, "", 0, 0,
                          "several clusters given; check one cluster at a time", "");
      inv.input_error = true;
      return inv;
    }
    const config::Layout& layout = *cluster->layout;
    inv.layout_file = layout.file;
    std::string ssh_config = o.ssh_config;
    if (cluster->config) {
      const config::ClusterConfig& cc = *cluster->config;
      inv.has_cluster_config = true;
      inv.config_file = cc.file;
      // paictl's settings of the directory are the defaults; the flags override them.
      defaults.user = cc.ssh_user.empty() ? cc.user : cc.ssh_user;
      if (!cc.ssh_key_file_path.empty())
        defaults.identity_files.push_back(
            config::resolve_setting_path(cc.file, cc.ssh_key_file_path));
      if (ssh_config.empty()) ssh_config = config::resolve_setting_path(cc.file, cc.ssh_config);
      if (o.known_hosts.empty() && !cc.known_hosts.empty())
        defaults.known_hosts_file = config::resolve_setting_path(cc.file, cc.known_hosts);
      if (cc.has_password) inv.config_password = remote::Secret(cc.password);
      inv.registries = cc.registries;
      inv.docker_data_root = cc.docker_data_root;
    }
    load_ssh(ssh_config);
    if (inv.input_error) return inv;
    if (!o.user.empty()) defaults.user = o.user;
    for (auto it = o.identities.rbegin(); it != o.identities.rend(); ++it)
      defaults.identity_files.insert(defaults.identity_files.begin(), *it);
    for (const auto& m : layout.machines) {
      if (!o.limit.empty() &&
          std::find(o.limit.begin(), o.limit.end(), m.hostname) == o.limit.end() &&
          std::find(o.limit.begin(), o.limit.end(), m.hostip) == o.limit.end())
        continue;
      HostPlan p;
      p.name = m.hostname;
      p.address = m.hostip.empty() ? m.hostname : m.hostip;
      p.hostip = m.hostip;
      p.master = m.master;
      p.worker = m.worker || !m.master;
      p.from_layout = true;
      if (const config::MachineSku* sku = layout.find_sku(m.machine_type)) p.sku = *sku;
      p.target = remote::resolve_target(p.name, p.address, {m.hostname, m.hostip}, nullptr, ssh,
                                        env, defaults);
      inv.layout_lines[p.name] = m.mark.line;
      inv.hosts.push_back(std::move(p));
    }
    std::vector<std::string> known;
    for (const auto& m : layout.machines) {
      known.push_back(m.hostname);
      if (!m.hostip.empty()) known.push_back(m.hostip);
    }
    for (const auto& l : o.limit) {
      if (std::find(known.begin(), known.end(), l) != known.end()) continue;
      std::string guess = util::did_you_mean(l, known);
      std::vector<std::string> names;
      for (const auto& m : layout.machines) names.push_back(m.hostname);
      inv.diagnostics.add(
          "I004", diag::Severity::Error, "--limit", 0, 0,
          "--limit names \"" + l + "\", which is neither a hostname nor a hostip in " + layout.file,
          guess.empty() ? "the hosts of machine-list: " + util::join(names, ", ")
                        : "did you mean \"" + guess + "\"?");
      inv.input_error = true;
    }
  } else {
    load_ssh(o.ssh_config);
    if (inv.input_error) return inv;
    std::vector<std::string> entries;
    for (const auto& h : o.hosts)
      for (auto part : util::split(h, ','))
        if (!util::trim(part).empty()) entries.emplace_back(util::trim(part));
    if (!o.hosts_file.empty()) {
      util::Result<std::string> r = o.hosts_file == "-"
                                        ? util::Result<std::string>(o.hosts_file_content)
                                        : util::read_file(o.hosts_file, 4u << 20);
      if (!r.ok()) {
        inv.diagnostics.add("I001", diag::Severity::Error, o.hosts_file, 0, 0,
                            "cannot read the hosts file: " + r.error().message, "");
        inv.input_error = true;
        return inv;
      }
      if (o.hosts_file != "-") inv.files.push_back(o.hosts_file);
      for (auto& e :
           parse_hosts_file(*r, o.hosts_file == "-" ? "<stdin>" : o.hosts_file, inv.diagnostics))
        entries.push_back(std::move(e));
    }
    if (!o.user.empty()) defaults.user = o.user;
    defaults.identity_files = o.identities;
    std::vector<std::string> seen;
    for (const auto& entry : entries) {
      auto parsed = remote::parse_host_spec(entry);
      if (!parsed) {
        inv.diagnostics.add("I001", diag::Severity::Error, "--hosts", 0, 0,
                            "bad host \"" + entry + "\": " + parsed.error().message,
                            "write hosts as [user@]host[:port], separated by commas");
        continue;
      }
      remote::HostSpec spec = std::move(*parsed);
      std::string name = spec.host + (spec.port ? ":" + std::to_string(*spec.port) : "");
      if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
        inv.diagnostics.add("I005", diag::Severity::Warning, "--hosts", 0, 0,
                            "host " + name + " is listed twice; checked once", "");
        continue;
      }
      seen.push_back(name);
      HostPlan p;
      p.name = name;
      p.address = spec.host;
      p.target = remote::resolve_target(name, spec.host, {spec.host}, &spec, ssh, env, defaults);
      inv.hosts.push_back(std::move(p));
    }
    if (inv.diagnostics.has_errors()) inv.input_error = true;
  }
  if (inv.hosts.empty() && !inv.input_error) {
    inv.diagnostics.add("I002", diag::Severity::Error, "", 0, 0, "no hosts to check", "");
    inv.input_error = true;
  }
  return inv;
}

}  // namespace pai::inventory
