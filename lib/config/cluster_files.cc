#include "config/cluster_files.h"

#include <algorithm>

#include "config/cross_check.h"
#include "util/fs.h"
#include "util/strings.h"
#include "yaml/yaml.h"

namespace pai::config {

std::string_view to_string(FileKind k) {
  switch (k) {
    case FileKind::Layout:
      return "layout.yaml";
    case FileKind::ClusterConfig:
      return "config.yaml";
    case FileKind::ServicesConfig:
      return "services-configuration.yaml";
    case FileKind::Hived:
      return "hivedscheduler.yaml";
    case FileKind::Unknown:
      return "unknown";
  }
  return "unknown";
}

const std::vector<std::pair<std::string, FileKind>>& known_file_names() {
  static const std::vector<std::pair<std::string, FileKind>> names = {
      {"layout.yaml", FileKind::Layout},
      {"layout.yml", FileKind::Layout},
      {"config.yaml", FileKind::ClusterConfig},
      {"config.yml", FileKind::ClusterConfig},
      {"services-configuration.yaml", FileKind::ServicesConfig},
      {"services-configuration.yml", FileKind::ServicesConfig},
      {"hivedscheduler.yaml", FileKind::Hived},
      {"hivedscheduler.yml", FileKind::Hived},
      {"hived-config.yaml", FileKind::Hived},
  };
  return names;
}

namespace {

std::string basename(const std::string& path) {
  auto p = path.find_last_of('/');
  return p == std::string::npos ? path : path.substr(p + 1);
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

}  // namespace

FileKind detect_kind(const std::string& path, const std::string& content) {
  std::string base = basename(path);
  for (const auto& [name, kind] : known_file_names())
    if (base == name) return kind;
  // By content: the top-level keys of the first document.
  yaml::Stream s = yaml::load(content);
  if (!s.documents.empty() && s.documents[0]->is_mapping()) {
    const yaml::Node* r = s.documents[0];
    if (r->get("machine-list") || r->get("machine-sku")) return FileKind::Layout;
    if (r->get("physicalCluster") || r->get("virtualClusters")) return FileKind::Hived;
    if (r->get("hivedscheduler") || r->get("rest-server") || r->get("cluster") ||
        r->get("webportal"))
      return FileKind::ServicesConfig;
    if (r->get("docker_image_tag") || r->get("user")) return FileKind::ClusterConfig;
  }
  // By name fragments, for files such as prod-layout.yaml.
  if (base.find("layout") != std::string::npos) return FileKind::Layout;
  if (base.find("services-configuration") != std::string::npos) return FileKind::ServicesConfig;
  if (base.find("hived") != std::string::npos) return FileKind::Hived;
  return FileKind::Unknown;
}

namespace {

struct PendingFile {
  std::string path;
  FileKind kind;
};

// The master on Azure (a pool with role: master): layout.yaml has no master
// until install writes the pool's VM into it (load_cluster leaves L006 out);
// an on-prem master as well would be a second one.
void cross_check_azure_master(Layout& layout, const AzureConfig& azure, CheckOutcome& out,
                              Context& cctx) {
  auto pools = azure_pools_in_layout(out.sources[layout.file]);
  for (auto& m : layout.machines)
    if (auto it = pools.find(m.hostname); it != pools.end()) m.azure_pool = it->second;
  const AzurePool* mp = azure.master_pool();
  if (!mp) return;
  for (const auto& m : layout.machines)
    if (m.master && m.azure_pool != mp->name) {
      Context lctx(layout.file, out.diagnostics);
      lctx.error("A006", m.mark,
                 "\"" + m.hostname + "\" has pai-master: \"true\" but azure pool \"" + mp->name +
                     "\" (" + cctx.file().substr(cctx.file().find_last_of('/') + 1) + " line " +
                     std::to_string(mp->mark.line) + ") has role: master",
                 "one master: set pai-master: \"false\" here, or drop role: master from the pool");
    }
}

// Several masters (a highly available control plane, docs/install.md): the
// endpoint in front of them, on premises only, and kube-vip's address no host's.
void cross_check_masters(const Layout& layout, const ClusterConfig& config, Context& lctx,
                         Context& cctx) {
  std::vector<const Machine*> masters;
  for (const auto& m : layout.machines)
    if (m.master) masters.push_back(&m);
  if (config.kube_vip)
    for (const auto& m : layout.machines)
      if (!m.hostip.empty() && m.hostip == config.kube_vip->address)
        cctx.error("L065", config.kube_vip->mark,
                   "kube_vip.address " + m.hostip + " is the hostip of \"" + m.hostname + "\" (" +
                       layout.file.substr(layout.file.find_last_of('/') + 1) + " line " +
                       std::to_string(m.hostip_mark.line) + ")",
                   "kube-vip needs an address of its own that it moves between the masters: "
                   "pick a free one on their network");
  // An even count or more than 5 is L007's (load_layout): no more about it here.
  if (masters.size() < 2 || masters.size() % 2 == 0 || masters.size() > 5) return;
  const Machine& second = *masters[1];
  if (config.azure) {
    lctx.error("L064", second.mark,
               std::to_string(masters.size()) +
                   " masters in a cluster with an Azure part: paictl installs a highly "
                   "available control plane on premises only",
               "keep one pai-master: \"true\" (Azure and hybrid clusters have one master), "
               "or install the Azure part as a cluster of its own");
    return;
  }
  if (control_plane_endpoint(config).empty())
    lctx.error("L060", second.mark,
               std::to_string(masters.size()) + " masters but no control-plane endpoint: " +
                   config.file.substr(config.file.find_last_of('/') + 1) +
                   " sets neither kube_control_plane_endpoint nor kube_vip",
               "put a load balancer in front of the masters' port 6443 and set "
               "kube_control_plane_endpoint: \"HOST:PORT\", or let kube-vip hold an address: "
               "kube_vip: {address: 10.0.0.250, interface: eth0}");
}

void load_cluster(const std::vector<PendingFile>& files, const std::string& origin,
                  CheckOutcome& out, bool on_disk) {
  Cluster cluster;
  cluster.origin = origin;
  std::string layout_file, config_file, hived_file;
  for (const auto& f : files) {
    const std::string& content = out.sources[f.path];
    diag::List& dl = out.diagnostics;
    Context ctx(f.path, dl);
    yaml::Stream stream = yaml::load(content);
    const Node* root = single_document(stream, ctx, std::string(to_string(f.kind)));
    if (!root) continue;
    switch (f.kind) {
      case FileKind::Layout:
        if (cluster.layout) {
          ctx.error("F009", Mark{1, 1},
                    "a second layout.yaml for the same cluster (the first is " + layout_file + ")",
                    "check one cluster directory at a time, or pass only one layout file");
          break;
        }
        cluster.layout = load_layout(root, ctx);
        layout_file = f.path;
        break;
      case FileKind::ClusterConfig:
        if (cluster.config) {
          ctx.error("F009", Mark{1, 1},
                    "a second config.yaml for the same cluster (the first is " + config_file + ")");
          break;
        }
        cluster.config = load_cluster_config(root, ctx, on_disk);
        config_file = f.path;
        break;
      case FileKind::ServicesConfig:
        cluster.services = load_services_config(root, ctx);
        break;
      case FileKind::Hived:
        cluster.hived = load_hived_config(root, ctx);
        hived_file = f.path;
        break;
      case FileKind::Unknown:
        break;
    }
  }
  // Build HiveD models; the embedded config is the one OpenPAI deploys.
  auto build = [&](const HivedConfig& hc) {
    Context ctx(hc.file, out.diagnostics);
    auto model = std::make_shared<HivedModel>(build_hived_model(hc, ctx));
    if (cluster.layout) {
      Context layout_ctx(cluster.layout->file, out.diagnostics);
      cross_check_hived(*cluster.layout, hc, *model, ctx, layout_ctx);
    }
    return model;
  };
  if (cluster.hived && cluster.hived->valid) cluster.model = build(*cluster.hived);
  if (cluster.services && cluster.services->has_hived && cluster.services->hived.valid)
    cluster.model = build(cluster.services->hived);
  if (cluster.layout && cluster.config) {
    Context cctx(config_file, out.diagnostics);
    cross_check_devices(*cluster.layout, *cluster.config, cctx);
    if (cluster.config->azure)
      cross_check_azure_master(*cluster.layout, *cluster.config->azure, out, cctx);
    Context lctx(cluster.layout->file, out.diagnostics);
    cross_check_masters(*cluster.layout, *cluster.config, lctx, cctx);
  }
  if (cluster.layout) {
    Context lctx(cluster.layout->file, out.diagnostics);
    bool azure_master =
        cluster.config && cluster.config->azure && cluster.config->azure->master_pool();
    check_master_present(*cluster.layout, azure_master, lctx);
  }
  out.clusters.push_back(std::move(cluster));
}

}  // namespace

CheckOutcome check_paths(const std::vector<std::string>& paths) {
  CheckOutcome out;
  std::vector<PendingFile> loose;
  auto read = [&](const std::string& path) -> bool {
    if (out.sources.count(path)) return true;
    auto r = util::read_file(path);
    if (!r.ok()) {
      out.diagnostics.add("F008", diag::Severity::Error, path, 0, 0,
                          "cannot read " + path + ": " + r.error().message,
                          "check the path and its permissions");
      out.input_error = true;
      return false;
    }
    out.sources[path] = std::move(*r);
    out.files.push_back(path);
    return true;
  };

  for (const auto& path : paths) {
    if (util::is_directory(path)) {
      std::vector<PendingFile> found;
      for (const auto& [name, kind] : known_file_names()) {
        std::string p = join_path(path, name);
        // Only an absent name is skipped: a directory, a FIFO or a broken
        // symbolic link named layout.yaml is an error of read(), not "no file".
        if (!util::path_entry_exists(p)) continue;
        bool dup = false;
        for (const auto& f : found) dup |= (f.kind == kind);
        if (dup) continue;  // layout.yaml wins over layout.yml
        if (read(p)) found.push_back({p, kind});
      }
      if (found.empty()) {
        std::vector<std::string> names;
        for (const auto& [name, kind] : known_file_names()) names.push_back(name);
        out.diagnostics.add("F010", diag::Severity::Error, path, 0, 0,
                            "no cluster files in directory " + path,
                            "paictl looks for " + util::join(names, ", "));
        out.input_error = true;
        continue;
      }
      load_cluster(found, path, out, true);
    } else {
      if (!read(path)) continue;
      FileKind kind = detect_kind(path, out.sources[path]);
      if (kind == FileKind::Unknown) {
        out.diagnostics.add(
            "F009", diag::Severity::Error, path, 0, 0,
            "cannot tell which kind of cluster file " + path + " is",
            "name it layout.yaml, config.yaml, services-configuration.yaml or hivedscheduler.yaml, "
            "or give it the top-level keys of one of them");
        out.input_error = true;  // not a cluster file at all: bad input (exit 2), not a finding
        continue;
      }
      loose.push_back({path, kind});
    }
  }
  if (!loose.empty()) load_cluster(loose, "", out, true);
  out.diagnostics.sort(out.files);
  return out;
}

CheckOutcome check_sources(const std::vector<std::pair<std::string, std::string>>& files) {
  CheckOutcome out;
  std::vector<PendingFile> pending;
  for (const auto& [name, content] : files) {
    if (out.sources.count(name)) continue;
    out.sources[name] = content;
    out.files.push_back(name);
    FileKind kind = detect_kind(name, content);
    if (kind == FileKind::Unknown) {
      out.diagnostics.add(
          "F009", diag::Severity::Error, name, 0, 0,
          "cannot tell which kind of cluster file " + name + " is",
          "name it layout.yaml, config.yaml, services-configuration.yaml or hivedscheduler.yaml");
      continue;
    }
    pending.push_back({name, kind});
  }
  if (!pending.empty()) load_cluster(pending, "", out, false);
  out.diagnostics.sort(out.files);
  return out;
}

diag::List install_readiness(const CheckOutcome& out, const std::vector<std::string>& paths) {
  diag::List found;
  for (const auto& path : paths) {
    if (!util::is_directory(path)) continue;
    auto clean = [](std::string p) {
      while (p.size() > 1 && p.back() == '/') p.pop_back();
      return p;
    };
    const std::string dir = clean(path);
    for (const auto& c : out.clusters) {
      if (c.origin.empty() || clean(c.origin) != dir || (!c.layout && !c.config)) continue;
      if (!c.config)
        found.add("F012", diag::Severity::Warning, dir, 0, 0,
                  "paictl install cannot use " + dir +
                      ": it has no config.yaml (the SSH user, the OpenPAI release, paictl's "
                      "settings)",
                  "add " + dir +
                      "/config.yaml with at least user: root and docker_image_tag: v1.8.0, or "
                      "let paictl init write the directory (docs/init.md)");
      if (!c.layout)
        found.add("F012", diag::Severity::Warning, dir, 0, 0,
                  "paictl install cannot use " + dir + ": it has no layout.yaml (the hosts)",
                  "paictl init " + dir + " --facts FACTS_DIR, or paictl plan --out " + dir +
                      ", writes it");
    }
  }
  return found;
}

std::optional<ClusterConfig> read_cluster_settings(const std::string& dir) {
  std::string path = join_path(dir, "config.yaml");
  if (!util::is_regular_file(path)) return std::nullopt;
  auto text = util::read_file(path);
  if (!text.ok()) return std::nullopt;
  diag::List ignored;
  Context ctx(path, ignored);
  yaml::Stream stream = yaml::load(*text);
  const Node* root = single_document(stream, ctx, "config.yaml");
  if (!root) return std::nullopt;
  return load_cluster_config(root, ctx, false);
}

}  // namespace pai::config
