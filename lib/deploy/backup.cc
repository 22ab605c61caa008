#include "deploy/backup.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <utility>

#include "deploy/cluster_files.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/sha256.h"
#include "util/strings.h"
#include "util/time.h"

namespace pai::deploy {

namespace {

double backup_now(const BackupDeps& d) {
  if (d.now) return d.now();
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void backup_progress(const BackupDeps& d, const std::string& step, const std::string& detail) {
  if (d.on_progress) d.on_progress(step, detail);
}

// The sections of the inspect script's output.
std::map<std::string, std::string> backup_sections(const std::string& out) {
  std::map<std::string, std::string> s;
  std::string current;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t end = out.find('\n', pos);
    if (end == std::string::npos) end = out.size();
    std::string_view line(out.data() + pos, end - pos);
    if (line.rfind("@@paictl ", 0) == 0 && line.size() > 11 &&
        line.substr(line.size() - 2) == "@@") {
      current = std::string(line.substr(9, line.size() - 11));
      s[current];
    } else if (!current.empty())
      s[current].append(line).append("\n");
    pos = end + 1;
  }
  return s;
}

std::vector<std::string> backup_lines(const std::string& text) {
  std::vector<std::string> out;
  for (auto l : util::split(text, '\n'))
    if (auto t = util::trim(l); !t.empty()) out.emplace_back(t);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

UseCaseError backup_remote(const std::string& what, const HostSpec& master,
                           const remote::ExecResult& x) {
  std::string why = x.ok() ? std::string(util::trim(x.err)) : x.error;
  if (why.size() > 2000) why = why.substr(0, 2000) + "...";
  return remote_error("backup: " + what + " on " + master.name + " failed: " +
                      (why.empty() ? "exit status " + std::to_string(x.exit_status) : why));
}

std::string backup_abs(const std::string& p) {
  std::error_code ec;
  auto a = std::filesystem::absolute(p, ec);
  return ec ? p : a.lexically_normal().string();
}

}  // namespace

std::string etcdctl_prelude(const std::string& endpoint, int timeout_s) {
  return "export ETCDCTL_API=3\n"
         "P=/etc/kubernetes/pki\n"
         "if [ -f $P/etcd/healthcheck-client.crt ]; then C=$P/etcd/healthcheck-client; "
         "else C=$P/apiserver-etcd-client; fi\n"
         "E=\"etcdctl --endpoints=" +
         endpoint + " --cacert=$P/etcd/ca.crt --cert=$C.crt --key=$C.key --dial-timeout=" +
         std::to_string(std::min(timeout_s, 5)) +
         "s --command-timeout=" + std::to_string(timeout_s) + "s\"\n";
}

std::string inspect_script(const std::string& ns) {
  std::string q = util::shell_quote(ns);
  return "K='kubectl --kubeconfig /etc/kubernetes/admin.conf'\n"
         "echo '@@paictl etcd-manifest@@'; cat /etc/kubernetes/manifests/etcd.yaml 2>/dev/null\n"
         "echo '@@paictl version@@'; $K get --raw /version || exit 3\n"
         "echo; echo '@@paictl namespaces@@'\n"
         "$K get namespaces -o jsonpath='{range .items[*]}{.metadata.name}{\"\\n\"}{end}' || exit "
         "3\n"
         "echo '@@paictl configmaps@@'\n"
         "$K get configmaps -A -o "
         "jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{\"\\n\"}{end}' || exit "
         "3\n"
         "echo '@@paictl hived@@'; $K -n " +
         q +
         " get configmap hivedscheduler-config -o json 2>/dev/null\n"
         "echo '@@paictl database@@'; $K -n " +
         q +
         " get daemonset postgresql -o name 2>/dev/null\n"
         "echo '@@paictl end@@'\n";
}

EtcdSettings parse_etcd_manifest(const std::string& yaml, const HostSpec& master) {
  EtcdSettings e;
  std::map<std::string, std::string> flags;
  for (auto l : util::split(yaml, '\n')) {
    auto t = util::trim(l);
    if (t.rfind("- --", 0) != 0) continue;
    t.remove_prefix(4);
    size_t eq = t.find('=');
    if (eq == std::string_view::npos) continue;
    std::string v(util::trim(t.substr(eq + 1)));
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
      v = v.substr(1, v.size() - 2);
    flags.emplace(std::string(t.substr(0, eq)), v);
  }
  auto get = [&](const char* k, std::string fallback) {
    auto it = flags.find(k);
    return it == flags.end() || it->second.empty() ? fallback : it->second;
  };
  e.name = get("name", master.name);
  e.data_dir = get("data-dir", "/var/lib/etcd");
  e.peer_urls = get("initial-advertise-peer-urls", "https://" + master.address + ":2380");
  e.initial_cluster = get("initial-cluster", e.name + "=" + e.peer_urls);
  std::string client = get("advertise-client-urls", "https://" + master.address + ":2379");
  e.endpoint = std::string(util::trim(util::split(client, ',')[0]));
  return e;
}

util::Result<ClusterInspection> parse_inspection(const std::string& out, const HostSpec& master) {
  auto s = backup_sections(out);
  if (!s.count("end")) return util::Error{"the master's answer was cut short (no end marker)", {}};
  ClusterInspection c;
  c.etcd = parse_etcd_manifest(s["etcd-manifest"], master);
  auto v = util::parse_json_or_discarded(s["version"]);
  if (v.is_object() && v.contains("gitVersion") && v["gitVersion"].is_string())
    c.kubernetes_version = v["gitVersion"].get<std::string>();
  c.namespaces = backup_lines(s["namespaces"]);
  c.configmaps = backup_lines(s["configmaps"]);
  c.hived_configmap = std::string(util::trim(s["hived"]));
  if (!c.hived_configmap.empty()) c.hived_configmap += "\n";
  c.database = std::string(util::trim(s["database"]));
  return c;
}

std::string backup_record_line(double time, const std::string& path, const std::string& sha256,
                               uint64_t bytes, const std::string& cluster) {
  nlohmann::json j;
  j["time"] = static_cast<long long>(time);
  j["path"] = path;
  j["sha256"] = sha256;
  j["bytes"] = bytes;
  j["cluster"] = cluster;
  return util::dump_json(j);
}

UseCaseResult<BackupPlan> plan_backup(const BackupRequest& r, const BackupDeps& deps) {
  PrepareRequest pr;
  pr.cluster_dir = r.cluster_dir;
  pr.wait_s = r.wait_s;
  pr.templates_dir = r.templates_dir;
  auto p = prepare_cluster(pr, deps.install.load_hosts);
  if (!p.ok()) return std::move(p).error();
  BackupPlan plan;
  plan.request = r;
  plan.deps = deps;
  plan.cluster = std::make_shared<const PreparedCluster>(std::move(p).value());
  plan.cluster_name = plan.cluster->settings.cluster_name;
  plan.time = backup_now(deps);
  std::string stamp = util::format_utc(static_cast<std::time_t>(plan.time), "%Y%m%dT%H%M%SZ");
  plan.out = backup_abs(r.out.empty() ? plan.cluster->cluster_dir + "/backups/" +
                                            plan.cluster_name + "-" + stamp + ".tar.gz"
                                      : r.out);
  if (util::is_directory(plan.out))
    return input_error("backup: the archive " + plan.out + " is a directory",
                       "name the archive's file, e.g. " + plan.out + "/" + plan.cluster_name + "-" +
                           stamp + ".tar.gz");
  const HostSpec& master = *plan.cluster->master();
  auto transport = make_transport(deps.install.transport, plan.cluster->hosts.ssh_password);
  backup_progress(deps, "inspect", master.name);
  auto x = run_on_master(*transport, master, inspect_script(plan.cluster->settings.openpai.ns));
  if (!x.ok() || x.exit_status != 0)
    return backup_remote("reading the cluster (kubectl)", master, x);
  auto ins = parse_inspection(x.out, master);
  if (!ins.ok()) return remote_error("backup: " + ins.error().message);
  plan.inspection = std::move(ins).value();
  const auto& i = plan.inspection;
  plan.contents = {
      "etcd snapshot of " + master.name + " (" + i.etcd.endpoint + ", data dir " + i.etcd.data_dir +
          ")",
      "PKI: " + master.name + ":/etc/kubernetes/pki (keys included)",
      "cluster files: layout.yaml, config.yaml, services-configuration.yaml of " +
          plan.cluster->cluster_dir,
      i.hived_configmap.empty() ? "HiveD config: none found (no ConfigMap " +
                                      plan.cluster->settings.openpai.ns + "/hivedscheduler-config)"
                                : "HiveD config: ConfigMap " + plan.cluster->settings.openpai.ns +
                                      "/hivedscheduler-config",
      i.database.empty()
          ? "database: none found (no " + plan.cluster->settings.openpai.ns + "/postgresql)"
          : "database: pg_dumpall of " + plan.cluster->settings.openpai.ns + "/" + i.database,
      "objects recorded for the restore's check: " + std::to_string(i.namespaces.size()) +
          " namespaces, " + std::to_string(i.configmaps.size()) + " ConfigMaps",
  };
  return plan;
}

BackupOutcome apply_backup(const BackupPlan& plan) {
  BackupOutcome o;
  const PreparedCluster& c = *plan.cluster;
  const HostSpec& master = *c.master();
  const ClusterInspection& i = plan.inspection;
  const auto& deps = plan.deps;
  auto transport = make_transport(deps.install.transport, c.hosts.ssh_password);
  std::vector<std::pair<std::string, std::string>> members;

  // etcd: the snapshot is made in a private temporary directory on the master and
  // streamed back on stdout; nothing of it stays there.
  backup_progress(deps, "etcd-snapshot", i.etcd.endpoint);
  remote::ExecRequest req;
  std::string snap_script = "set -e; umask 077\n" + etcdctl_prelude(i.etcd.endpoint) +
                            "d=$(mktemp -d); trap 'rm -rf \"$d\"' EXIT\n"
                            "$E snapshot save \"$d/s.db\" >\"$d/log\" 2>&1 || "
                            "{ cat \"$d/log\" >&2; exit 1; }\n"
                            "cat \"$d/s.db\"\n";
  req.command = master.target.endpoint.user == "root" || master.target.endpoint.user.empty()
                    ? "sh -c " + util::shell_quote(snap_script)
                    : "sudo -n sh -c " + util::shell_quote(snap_script);
  req.timeout_ms = 1800000;
  req.max_output = static_cast<size_t>(ArchiveLimits{}.max_snapshot_bytes);
  auto snap = transport->exec(master.target, req);
  if (!snap.ok() || snap.exit_status != 0 || snap.out.empty()) {
    o.error = backup_remote("etcdctl snapshot save", master, snap);
    return o;
  }
  backup_progress(deps, "etcd-snapshot", util::format_bytes(static_cast<double>(snap.out.size())));
  members.emplace_back(kSnapshotMember, std::move(snap.out));

  // etcd's own version, from the server.
  std::string etcd_version;
  {
    auto st = run_on_master(*transport, master,
                            etcdctl_prelude(i.etcd.endpoint) + "$E endpoint status -w json\n");
    auto j = util::parse_json_or_discarded(st.out);
    if (st.ok() && st.exit_status == 0 && j.is_array() && !j.empty() && j[0].contains("Status") &&
        j[0]["Status"].contains("version") && j[0]["Status"]["version"].is_string())
      etcd_version = j[0]["Status"]["version"].get<std::string>();
  }

  backup_progress(deps, "pki", "/etc/kubernetes/pki");
  auto pki = run_on_master(*transport, master, "tar -C /etc/kubernetes -cf - pki\n");
  if (!pki.ok() || pki.exit_status != 0) {
    o.error = backup_remote("reading /etc/kubernetes/pki", master, pki);
    return o;
  }
  auto files = read_plain_tar(pki.out);
  std::fill(pki.out.begin(), pki.out.end(), '\0');
  if (!files.ok()) {
    o.error = remote_error("backup: /etc/kubernetes/pki of " + master.name + ": " +
                           files.error().message);
    return o;
  }
  for (auto& [name, data] : *files) members.emplace_back(name, std::move(data));
  backup_progress(deps, "pki", std::to_string(files->size()) + " files");

  auto local = read_cluster_files(c.cluster_dir);
  if (!local.ok()) {
    o.error = UseCaseError{std::move(local).error()};
    return o;
  }
  for (const auto& [name, content] : *local) members.emplace_back("cluster/" + name, content);
  backup_progress(deps, "cluster-files", std::to_string(local->size()) + " files");

  if (!i.hived_configmap.empty()) {
    members.emplace_back(kHivedMember, i.hived_configmap);
    backup_progress(deps, "hived", "ConfigMap hivedscheduler-config");
  }

  std::string database = "none found";
  if (!i.database.empty()) {
    backup_progress(deps, "database", i.database);
    auto dump = run_on_master(*transport, master,
                              "kubectl --kubeconfig /etc/kubernetes/admin.conf -n " +
                                  util::shell_quote(c.settings.openpai.ns) + " exec " +
                                  util::shell_quote(i.database) +
                                  " -- pg_dumpall --clean --if-exists -U postgres\n");
    if (!dump.ok() || dump.exit_status != 0) {
      o.error = backup_remote("pg_dumpall in " + i.database, master, dump);
      return o;
    }
    members.emplace_back("database/postgresql.sql", std::move(dump.out));
    database = "pg_dumpall of " + c.settings.openpai.ns + "/" + i.database;
  }

  BackupManifest m;
  m.cluster = plan.cluster_name;
  for (const auto& s : c.specs) {
    if (s.master) m.masters.push_back({s.name, s.address});
    if (!s.master || s.worker) m.nodes.push_back({s.name, s.address});
  }
  m.kubernetes_version = i.kubernetes_version;
  m.etcd_version = etcd_version;
  m.time = static_cast<double>(static_cast<long long>(plan.time));
  m.time_utc = util::rfc3339_utc(static_cast<std::time_t>(plan.time));
  m.database = database;
  m.etcd = i.etcd;
  m.namespaces = i.namespaces;
  m.configmaps = i.configmaps;
  auto bytes = write_backup_archive(m, members);
  for (auto& [n, d] : members) std::fill(d.begin(), d.end(), '\0');
  if (!bytes.ok()) {
    o.error = UseCaseError{std::move(bytes).error()};
    return o;
  }
  std::string dir = std::filesystem::path(plan.out).parent_path().string();
  if (!dir.empty() && !util::is_directory(dir))
    if (auto d = util::make_directories(dir, 0700); !d.ok()) {
      o.error = input_error("backup: " + d.error().message);
      return o;
    }
  if (auto w = util::write_file_atomic(plan.out, *bytes, 0600); !w.ok()) {
    o.error = input_error("backup: " + w.error().message);
    return o;
  }
  o.path = plan.out;
  o.bytes = bytes->size();
  o.sha256 = util::sha256_hex(*bytes);
  std::fill(bytes->begin(), bytes->end(), '\0');
  o.manifest = m;
  o.record = backup_record_line(plan.time, o.path, o.sha256, o.bytes, plan.cluster_name);
  std::string state = c.cluster_dir + "/.paictl";
  if (auto d = util::make_directories(state, 0700); !d.ok()) {
    o.error = input_error("backup: the archive is written (" + o.path +
                          "), but its record could not be: " + d.error().message);
    return o;
  }
  std::string jsonl = state + "/backups.jsonl";
  int fd = ::open(jsonl.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  std::string line = o.record + "\n";
  if (fd < 0 || ::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    o.error = input_error("backup: the archive is written (" + o.path + "), but " + jsonl +
                          " could not be appended to: " + why);
    return o;
  }
  ::close(fd);
  backup_progress(deps, "written", o.path);
  return o;
}

}  // namespace pai::deploy
