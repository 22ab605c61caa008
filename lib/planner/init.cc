#include "planner/init.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "config/cluster_files.h"
#include "planner/plan_output.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/strings.h"
#include "util/yaml_emit.h"
#include "yaml/yaml.h"

namespace pai::planner {

namespace {

const char* const kInitPasswordShown = "(generated: a random password, written at mode 0600)";

// A key: value line, or the key commented out with an example when not set.
std::string init_setting(const std::string& key, const std::string& value,
                         const std::string& example) {
  if (value.empty()) return "# " + key + ": " + example + "\n";
  return key + ": " + util::yaml_scalar(value) + "\n";
}

// The cluster-id OpenPAI accepts (a lower-case Kubernetes name) from the directory's name.
std::string init_cluster_id(const std::string& dir) {
  std::string base = std::filesystem::path(dir).filename().string();
  std::string id;
  for (char c : util::to_lower(base)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (ok)
      id += c;
    else if (!id.empty() && id.back() != '-')
      id += '-';
  }
  while (!id.empty() && id.back() == '-') id.pop_back();
  if (id.empty() || !(id[0] >= 'a' && id[0] <= 'z')) id = "pai" + (id.empty() ? "" : "-" + id);
  if (id.size() > 40) id.resize(40);
  while (!id.empty() && id.back() == '-') id.pop_back();
  return id;
}

// The admin password of an existing services-configuration.yaml (--force keeps it), or "".
std::string init_existing_password(const std::string& path) {
  auto text = util::read_file(path);
  if (!text.ok()) return {};
  yaml::Stream s = yaml::load(*text);
  if (s.error || s.documents.empty() || !s.documents[0]->is_mapping()) return {};
  const yaml::Node* rs = s.documents[0]->get("rest-server");
  if (!rs || !rs->is_mapping()) return {};
  const yaml::Node* pw = rs->get("default-pai-admin-password");
  return pw && pw->is_scalar() && !pw->is_null() ? pw->scalar() : std::string();
}

std::string init_services_head(const std::string& dir, const std::string& facts,
                               const std::string& tag, const std::string& password) {
  return "# services-configuration.yaml, written by paictl init for the cluster directory " + dir +
         ".\n"
         "# Edit: cluster-id, where OpenPAI's images come from (docker-registry), the admin's\n"
         "# name. The admin password below was generated for this cluster: keep this file\n"
         "# private (mode 0600); paictl install hands it to the REST server. hivedscheduler\n"
         "# is planned from the hosts; this re-plans it and keeps the rest of the file:\n"
         "#   paictl plan --facts " +
         facts + " --out " + dir +
         "\n"
         "cluster:\n"
         "  common:\n"
         "    cluster-id: " +
         init_cluster_id(dir) +
         "\n"
         "    cluster-type: k8s\n"
         "    k8s-rbac: \"true\"\n"
         "    job-history: \"true\"\n"
         "    data-path: \"/datastorage\"\n"
         "    qos-switch: \"false\"\n"
         "  docker-registry:\n"
         "    namespace: openpai\n"
         "    domain: docker.io\n"
         "    tag: " +
         util::yaml_scalar(tag) +
         "\n"
         "    secret-name: pai-secret\n"
         "\n"
         "rest-server:\n"
         "  default-pai-admin-username: admin\n"
         "  default-pai-admin-password: " +
         util::yaml_double_quoted(password) + "\n\n";
}

std::string init_layout_head(const std::string& dir, const std::string& facts) {
  return "# layout.yaml, written by paictl init for the cluster directory " + dir +
         ":\n"
         "# the hosts (machine-list) and their SKUs (machine-sku). Edit a host's hostip if it\n"
         "# is reached at another address. After a hardware change, re-plan with\n"
         "#   paictl plan --facts " +
         facts + " --out " + dir + "\n";
}

}  // namespace

util::Result<std::string> random_password(size_t length) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  constexpr unsigned kSize = sizeof kAlphabet - 1;  // 62
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return util::Error{"cannot read /dev/urandom to make a password", {}};
  std::string out;
  unsigned char buf[64];
  while (out.size() < length) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) {
      ::close(fd);
      return util::Error{"cannot read /dev/urandom to make a password", {}};
    }
    // 248 = 4 * 62: bytes above it are dropped, so every character is equally likely.
    for (ssize_t i = 0; i < n && out.size() < length; ++i)
      if (buf[i] < 4 * kSize) out += kAlphabet[buf[i] % kSize];
  }
  ::close(fd);
  return out;
}

std::string render_cluster_config(const ClusterSettings& s, const std::string& master_ip) {
  std::string out =
      "# config.yaml: OpenPAI's settings (user, docker_image_tag: the release) and paictl's\n"
      "# settings of this cluster directory. install, reset, node add|remove, config\n"
      "# push|pull|diff, check hosts and facts collect take them as defaults when given\n"
      "# this directory; their flags override them. Paths are absolute or relative to this\n"
      "# directory. Edit: the SSH settings if the hosts are reached otherwise (docs/init.md).\n";
  out += "user: " + util::yaml_scalar(s.user) + "\n";
  out += "docker_image_tag: " + util::yaml_scalar(s.docker_image_tag) + "\n";
  out += init_setting("ssh_config", s.ssh_config, "~/.ssh/config");
  out += init_setting("ssh_user", s.ssh_user, s.user);
  out += init_setting("ssh_key_file_path", s.ssh_key_file_path, "~/.ssh/id_ed25519");
  out += init_setting("known_hosts", s.known_hosts, "~/.ssh/known_hosts");
  if (s.ignore_check_errors.empty()) {
    out += "# ignore_check_errors: [CPU, DNS]\n";
  } else {
    std::vector<std::string> names;
    for (const auto& n : s.ignore_check_errors) names.push_back(util::yaml_scalar(n));
    out += "ignore_check_errors: [" + util::join(names, ", ") + "]\n";
  }
  out +=
      init_setting("hived_url", s.hived_url,
                   "http://" + (master_ip.empty() ? std::string("MASTER") : master_ip) + ":30096");
  return out;
}

util::Result<InitPlan> plan_init(const InitRequest& r) {
  InitPlan p;
  p.cluster_dir = r.cluster_dir;
  while (p.cluster_dir.size() > 1 && p.cluster_dir.back() == '/') p.cluster_dir.pop_back();
  const std::string& dir = p.cluster_dir;
  if (dir.empty())
    return util::Error{"no cluster directory given", "paictl init CLUSTER_DIR --facts FACTS_DIR",
                       util::Error::Kind::Input};
  if (util::path_exists(dir) && !util::is_directory(dir))
    return util::Error{dir + " exists and is not a directory",
                       "init writes a cluster directory: give a new path",
                       util::Error::Kind::Input};
  if (util::is_directory(dir) && !r.force) {
    std::error_code ec;
    if (!std::filesystem::is_empty(dir, ec) || ec)
      return util::Error{dir + " exists and is not empty",
                         "give a new directory, or --force to replace its cluster files (the "
                         "admin password is kept); paictl plan --out " +
                             dir + " re-plans an existing cluster and keeps its config.yaml",
                         util::Error::Kind::Input};
  }

  p.run = plan_from_inputs(r.inputs);
  if (!p.run.ok()) return p;

  std::string master_ip;
  if (int m = p.run.plan.master_host(); m >= 0)
    master_ip = p.run.plan.hosts[static_cast<size_t>(m)].facts.hostip;

  std::string password = init_existing_password(dir + "/services-configuration.yaml");
  if (password.empty()) {
    auto made = random_password();
    if (!made.ok()) return std::move(made).error();
    password = std::move(*made);
  }
  // Where the facts are for a later re-plan: the directory's own facts/ when init
  // collected them, else the first facts directory given.
  std::string facts = !r.inputs.collected.empty()    ? dir + "/facts"
                      : !r.inputs.facts_dirs.empty() ? r.inputs.facts_dirs[0]
                                                     : std::string("FACTS_DIR");
  std::string head = init_services_head(dir, facts, r.settings.docker_image_tag, password);
  PlanFiles planned = render_files(p.run.plan, head);
  std::string services = planned.services;
  std::string shown = services;
  if (auto at = shown.find(util::yaml_double_quoted(password)); at != std::string::npos)
    shown.replace(at, util::yaml_double_quoted(password).size(), kInitPasswordShown);

  auto add = [&](std::string name, std::string content, unsigned mode, std::string show) {
    InitFile f;
    f.exists = util::path_exists(dir + "/" + name);
    f.name = std::move(name);
    f.shown = show.empty() ? content : std::move(show);
    f.content = std::move(content);
    f.mode = mode;
    p.files.push_back(std::move(f));
  };
  add("layout.yaml", init_layout_head(dir, facts) + planned.layout, 0644, "");
  add("config.yaml", render_cluster_config(r.settings, master_ip), 0644, "");
  add("services-configuration.yaml", services, 0600, shown);
  for (const auto& f : r.inputs.collected)
    add("facts/" + f.name + ".json", util::dump_json(facts::to_json(f), 2) + "\n", 0644, "");

  // The files as check config reads them (their paths checked on disk are the
  // front end's: it gives existing files).
  std::vector<std::pair<std::string, std::string>> check;
  for (const auto& f : p.files)
    if (f.name.find('/') == std::string::npos) check.push_back({f.name, f.content});
  config::CheckOutcome c = config::check_sources(check);
  p.checks = c.diagnostics;
  return p;
}

util::Result<std::vector<std::string>> apply_init(const InitPlan& p) {
  std::vector<std::string> written;
  if (!p.ok())
    return util::Error{"the plan of " + p.cluster_dir + " has errors; nothing written", {}};
  for (const auto& f : p.files) {
    std::string path = p.cluster_dir + "/" + f.name;
    std::string parent = std::filesystem::path(path).parent_path().string();
    if (auto d = util::make_directories(parent); !d.ok()) return std::move(d).error();
    if (auto w = util::write_file_atomic(path, f.content, f.mode); !w.ok())
      return std::move(w).error();
    written.push_back(path);
  }
  return written;
}

}  // namespace pai::planner
