#include "check/cluster.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>

#include <nlohmann/json.hpp>

#include "check/certs.h"
#include "config/cluster_files.h"
#include "hived/drift.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "kube/cluster_files.h"
#include "kube/master.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::check {

namespace {

using diag::Severity;

constexpr const char* kClusterNoAdmin = "@@paictl-no-admin-conf";
constexpr const char* kClusterApiUnavailable = "@@paictl-api-unavailable";
constexpr const char* kClusterApiStatus = "@@paictl-api ";
constexpr const char* kClusterEtcdMark = "@@paictl-etcd";
constexpr const char* kClusterEtcdRc = "@@paictl-etcd-rc ";
constexpr const char* kClusterMaintenance = "paictl.io/maintenance";
// The rc etcd_health_script gives when it did not run etcdctl.
constexpr int kClusterEtcdUncheckedRc = 127;

std::vector<std::string> cluster_api_paths(const std::string& ns) {
  std::vector<std::string> p = {"/version", "/api/v1/nodes"};
  for (const auto& f : kube::cluster_files_paths()) p.push_back("/api/v1/namespaces/" + ns + f);
  return p;
}

void cluster_add(diag::List& out, const char* code, Severity sev, std::string location,
                 std::string message, std::string hint, std::string file = {}, uint32_t line = 0) {
  diag::Diagnostic d;
  d.code = code;
  d.severity = sev;
  d.file = std::move(file);
  d.line = line;
  d.message = std::move(message);
  d.hint = std::move(hint);
  d.location = std::move(location);
  out.add(std::move(d));
}

struct ClusterVersion {
  int major = 0, minor = 0, patch = 0;
};

// "v1.30.10", "1.30.10", "v1.30.10+k3s1" -> 1, 30, 10.
std::optional<ClusterVersion> cluster_parse_version(std::string_view v) {
  if (!v.empty() && (v[0] == 'v' || v[0] == 'V')) v.remove_prefix(1);
  auto cut = v.find_first_of("-+");
  if (cut != std::string_view::npos) v = v.substr(0, cut);
  auto parts = util::split(v, '.');
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  ClusterVersion out;
  int* fields[] = {&out.major, &out.minor, &out.patch};
  for (size_t i = 0; i < parts.size(); ++i) {
    auto n = util::parse_int(parts[i]);
    if (!n || *n < 0) return std::nullopt;
    *fields[i] = static_cast<int>(*n);
  }
  return out;
}

bool cluster_same_release(const ClusterVersion& a, const ClusterVersion& b) {
  return a.major == b.major && a.minor == b.minor && a.patch == b.patch;
}

std::string cluster_days_text(int64_t d) {
  return std::to_string(d) + (d == 1 ? " day" : " days");
}

std::string cluster_utc_text(double epoch, const char* format) {
  std::time_t t = static_cast<std::time_t>(epoch);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

// The API answers: each body followed by "\n@@paictl-api CODE\n".
struct ClusterApiAnswer {
  std::string code;
  std::string body;
};
std::optional<std::vector<ClusterApiAnswer>> cluster_split_answers(std::string_view all) {
  std::vector<ClusterApiAnswer> out;
  const std::string status = std::string("\n") + kClusterApiStatus;
  size_t pos = 0;
  while (pos < all.size()) {
    size_t at = all.find(status, pos);
    if (at == std::string_view::npos) {
      if (!util::trim(all.substr(pos)).empty()) return std::nullopt;  // a cut answer
      break;
    }
    size_t code_at = at + status.size();
    size_t eol = all.find('\n', code_at);
    ClusterApiAnswer a;
    a.body = std::string(all.substr(pos, at - pos));
    a.code = std::string(util::trim(all.substr(
        code_at, eol == std::string_view::npos ? std::string_view::npos : eol - code_at)));
    out.push_back(std::move(a));
    pos = eol == std::string_view::npos ? all.size() : eol + 1;
  }
  return out;
}

std::vector<NodeStatus> cluster_parse_nodes(const nlohmann::json& list) {
  std::vector<NodeStatus> out;
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) return out;
  for (const auto& n : list["items"]) {
    if (!n.is_object()) continue;
    NodeStatus s;
    const auto& meta = n.value("metadata", nlohmann::json::object());
    s.name = meta.value("name", "");
    if (meta.contains("annotations") && meta["annotations"].is_object())
      s.maintenance = meta["annotations"].value(kClusterMaintenance, "");
    const auto& spec = n.value("spec", nlohmann::json::object());
    s.unschedulable = spec.is_object() && spec.value("unschedulable", false);
    const auto& st = n.value("status", nlohmann::json::object());
    if (st.contains("nodeInfo") && st["nodeInfo"].is_object())
      s.kubelet_version = st["nodeInfo"].value("kubeletVersion", "");
    if (st.contains("conditions") && st["conditions"].is_array())
      for (const auto& c : st["conditions"]) {
        if (!c.is_object() || c.value("type", "") != "Ready") continue;
        s.ready = c.value("status", "");
        std::string reason = c.value("reason", ""), message = c.value("message", "");
        s.ready_reason = reason + (!reason.empty() && !message.empty() ? ": " : "") + message;
      }
    if (st.contains("allocatable") && st["allocatable"].is_object()) {
      const auto& g = st["allocatable"].value("nvidia.com/gpu", nlohmann::json());
      if (g.is_string()) {
        if (auto v = util::parse_int(g.get<std::string>())) s.allocatable_gpus = *v;
      } else if (g.is_number_integer()) {
        s.allocatable_gpus = g.get<int64_t>();
      }
    }
    if (!s.name.empty()) out.push_back(std::move(s));
  }
  return out;
}

// The etcd part of a script's output: "...text...\n@@paictl-etcd-rc N".
EtcdHealth cluster_parse_etcd(const std::string& host, std::string_view text) {
  EtcdHealth h;
  h.host = host;
  size_t at = text.rfind(kClusterEtcdRc);
  if (at == std::string_view::npos) {
    h.state = EtcdHealth::State::Unchecked;
    h.message = "etcdctl's result is missing from the master's answer";
    return h;
  }
  auto rc = util::parse_int(util::trim(text.substr(at + std::string_view(kClusterEtcdRc).size())));
  std::string said(util::trim(text.substr(0, at)));
  // etcdctl's own log lines ({"level":...}) are noise next to its verdict.
  std::string kept;
  for (auto line : util::split(said, '\n')) {
    auto t = util::trim(line);
    if (t.empty() || t.front() == '{') continue;
    kept += (kept.empty() ? "" : "; ") + std::string(t);
  }
  h.message = kept.empty() ? said : kept;
  if (!rc)
    h.state = EtcdHealth::State::Unchecked;
  else if (*rc == 0)
    h.state = EtcdHealth::State::Healthy;
  else if (*rc == kClusterEtcdUncheckedRc)
    h.state = EtcdHealth::State::Unchecked;
  else
    h.state = EtcdHealth::State::Unhealthy;
  return h;
}

void cluster_etcd_findings(const std::vector<EtcdHealth>& etcd, diag::List& out) {
  for (const auto& e : etcd) {
    if (e.state == EtcdHealth::State::Unhealthy)
      cluster_add(out, "K020", Severity::Error, e.host,
                  "etcd on " + e.host + " is not healthy: " + e.message,
                  "look at etcd's log on " + e.host +
                      " (its static pod); paictl restore CLUSTER_DIR --from ARCHIVE when its data "
                      "is lost");
    else if (e.state == EtcdHealth::State::Unchecked)
      cluster_add(out, "K021", Severity::Warning, e.host,
                  "etcd's health on " + e.host + " could not be checked: " + e.message,
                  "etcdctl (Debian and Ubuntu: etcd-client) and etcd's certificates under "
                  "/etc/kubernetes/pki/etcd on the master");
  }
}

void cluster_node_findings(const std::vector<NodeStatus>& nodes,
                           const std::vector<inventory::HostSpec>& specs,
                           const std::string& cluster_dir, diag::List& out) {
  std::map<std::string, const NodeStatus*> by_name;
  for (const auto& n : nodes) by_name[n.name] = &n;
  for (const auto& s : specs)
    if (!by_name.count(s.name))
      cluster_add(out, "K005", Severity::Error, s.name,
                  s.name + " of layout.yaml is not a node of the cluster",
                  "paictl node add " + cluster_dir + " " + s.name +
                      " joins it (paictl node remove takes it out of layout.yaml)");
  for (const auto& n : nodes) {
    bool ready = n.ready == "True";
    if (!ready)
      cluster_add(out, "K003", Severity::Error, n.name,
                  "node " + n.name + " is not Ready (" +
                      (n.ready.empty() ? std::string("no Ready condition") : n.ready) +
                      (n.ready_reason.empty() ? "" : ": " + n.ready_reason) + ")",
                  "on " + n.name + ": systemctl status kubelet containerd; journalctl -u kubelet");
    if (n.unschedulable) {
      if (!n.maintenance.empty()) {
        auto words = util::split(n.maintenance, ' ');
        std::string op(words.empty() ? std::string_view("paictl") : words.front());
        std::string run = words.size() > 1 ? std::string(words.back()) : std::string();
        // "node maintain RUN" names a two-word operation.
        if (words.size() > 2) {
          op.clear();
          for (size_t i = 0; i + 1 < words.size(); ++i)
            op += (i ? " " : "") + std::string(words[i]);
        }
        cluster_add(out, "K004", Severity::Warning, n.name,
                    "node " + n.name + " is cordoned by paictl " + op +
                        (run.empty() ? "" : " (run " + run + ")") +
                        ": a maintenance in progress, or left by a killed run; HiveD counts its "
                        "cells as bad",
                    "when no paictl " + op + " runs: paictl " + op + " " + cluster_dir +
                        " again finishes it and uncordons the node (kubectl uncordon " + n.name +
                        " only uncordons it)");
      } else {
        cluster_add(out, "K004", Severity::Warning, n.name,
                    "node " + n.name + " is cordoned: HiveD counts its cells as bad",
                    "kubectl uncordon " + n.name + " when its maintenance is over");
      }
    }
  }
  for (const auto& s : specs) {
    auto it = by_name.find(s.name);
    if (it == by_name.end() || s.gpu_type != "nvidia.com/gpu" || s.gpus <= 0) continue;
    const NodeStatus& n = *it->second;
    if (n.ready != "True") continue;  // its allocatable is stale; K003 says why
    if (n.allocatable_gpus < s.gpus)
      cluster_add(out, "K006", Severity::Error, n.name,
                  "node " + n.name + " has " + std::to_string(n.allocatable_gpus) +
                      " GPUs allocatable, its SKU " + s.sku + " has " + std::to_string(s.gpus),
                  "nvidia-smi on " + n.name +
                      ", and the device plugin's pod there; cordon it until it is repaired "
                      "(HiveD then counts its cells as bad)");
  }
}

void cluster_drift_findings(const std::string& cluster_dir,
                            const std::optional<std::map<std::string, std::string>>& remote,
                            const std::string& ns, diag::List& out) {
  if (!remote || remote->empty()) {
    cluster_add(out, "K041", Severity::Warning, ns + "/pai-configuration",
                "the cluster holds no cluster files: config drift is not checked",
                "paictl config push " + cluster_dir);
    return;
  }
  auto local = kube::read_cluster_files(cluster_dir);
  if (!local.ok()) {
    cluster_add(out, "K040", Severity::Warning, "cluster files", local.error().message,
                "paictl config diff " + cluster_dir);
    return;
  }
  std::set<std::string> names;
  for (const auto& [n, c] : *remote) names.insert(n);
  for (const auto& [n, c] : *local) names.insert(n);
  for (const auto& n : names) {
    auto r = remote->find(n);
    auto l = local->find(n);
    if (r != remote->end() && l != local->end() && r->second == l->second) continue;
    std::string what = l == local->end()    ? "the cluster holds " + n + ", the directory has none"
                       : r == remote->end() ? n + " is not on the cluster"
                                            : n + " differs from the cluster's copy";
    cluster_add(out, "K040", Severity::Warning, n, what,
                "paictl config diff " + cluster_dir + " shows how; paictl config push " +
                    cluster_dir +
                    " makes the cluster's copy yours (config pull --force takes "
                    "the cluster's)",
                l == local->end() ? std::string() : cluster_dir + "/" + n);
  }
  for (auto& [n, c] : *local) std::fill(c.begin(), c.end(), '\0');
}

// The HiveD URL: the request's, config.yaml's hived_url, else the master's HiveD port.
std::string cluster_hived_url(const ClusterCheckRequest& r, const ClusterUnderCheck& cluster) {
  if (!r.hived.empty()) return r.hived;
  if (auto cfg = config::read_cluster_settings(cluster.cluster_dir); cfg && !cfg->hived_url.empty())
    return cfg->hived_url;
  return cluster.hived;
}

void cluster_hived_findings(const ClusterCheckRequest& r, const ClusterCheckDeps& deps,
                            const std::string& url, const std::vector<NodeStatus>* nodes,
                            diag::List& out) {
  hived::Client client(*deps.hived_http, url);
  auto live = hived::read_live(client);
  if (!live.ok()) {
    const auto& e = live.error();
    cluster_add(out, "K050", Severity::Warning, "hived",
                "HiveD could not be read at " + http::redact_url(url) + ": " +
                    (e.doing.empty() ? "" : e.doing + ": ") + e.summary(),
                "--hived URL names HiveD's inspect API (default: config.yaml's hived_url, else "
                "the master's port 30096); the other checks ran");
    return;
  }
  config::CheckOutcome cfg = config::check_paths({r.cluster_dir});
  const config::Cluster* cl = nullptr;
  for (const auto& c : cfg.clusters)
    if (c.model) cl = &c;
  if (cl) {
    std::map<std::string, const NodeStatus*> k8s;
    if (nodes)
      for (const auto& n : *nodes) k8s[n.name] = &n;
    for (const auto& f :
         hived::physical_drift(*live, *cl->model, cl->layout ? &*cl->layout : nullptr)) {
      if (f.kind == "missing") {
        cluster_add(out, "K051", Severity::Warning, f.node, f.message, f.hint);
      } else if (f.kind == "unexpected") {
        cluster_add(out, "K052", Severity::Warning, f.node, f.message, f.hint);
      } else if (f.kind == "bad") {
        // Not Ready or cordoned: K003/K004 already say so.
        auto it = k8s.find(f.node);
        if (it != k8s.end() && (it->second->ready != "True" || it->second->unschedulable)) continue;
        cluster_add(out, "K053", Severity::Warning, f.node,
                    it == k8s.end() ? "HiveD sees it bad"
                                    : "HiveD sees it bad, but the node is "
                                      "Ready and schedulable",
                    f.hint);
      } else if (f.kind == "notInHived") {
        cluster_add(out, "K054", Severity::Warning, f.node, f.message, f.hint);
      }
    }
  }
  for (const auto& v : hived::summarize(*live).vcs) {
    if (v.bad <= 0) continue;
    cluster_add(out, "K055", Severity::Warning, v.vc,
                "VC " + v.vc + " has " + std::to_string(v.bad) + " of its " +
                    std::to_string(v.guaranteed) + " guaranteed " + v.sku +
                    " cells bound to bad cells",
                "repair or uncordon the bad nodes (paictl hived status --hived " +
                    http::redact_url(url) + " shows the cells)");
  }
}

}  // namespace

std::string etcd_health_script(const std::string& endpoint) {
  return "pai_p=/etc/kubernetes/pki\n"
         "if ! command -v etcdctl >/dev/null 2>&1; then echo 'no etcdctl on the host'; "
         "echo '@@paictl-etcd-rc 127'\n"
         "elif [ ! -f $pai_p/etcd/ca.crt ]; then echo \"no etcd CA ($pai_p/etcd/ca.crt)\"; "
         "echo '@@paictl-etcd-rc 127'\n"
         "else\n"
         "  pai_c=$pai_p/etcd/healthcheck-client\n"
         "  [ -f $pai_c.crt ] || pai_c=$pai_p/apiserver-etcd-client\n"
         "  ETCDCTL_API=3 etcdctl --endpoints=" +
         util::shell_quote(endpoint) +
         " --cacert=$pai_p/etcd/ca.crt --cert=$pai_c.crt --key=$pai_c.key"
         " --dial-timeout=3s --command-timeout=5s endpoint health 2>&1\n"
         "  echo \"@@paictl-etcd-rc $?\"\n"
         "fi\n";
}

std::string master_read_script(const std::string& ns, const std::string& etcd_endpoint) {
  std::string urls, raw;
  for (const auto& p : cluster_api_paths(ns)) {
    urls += " \"$pai_s\"" + util::shell_quote(p);
    raw += std::string("  ") + kube::kKubectl + " get --raw " + util::shell_quote(p) +
           " --request-timeout=20s 2>/dev/null && printf '\\n" + kClusterApiStatus +
           "200\\n' || printf '\\n" + kClusterApiStatus + "000\\n'\n";
  }
  return std::string("if [ ! -f /etc/kubernetes/admin.conf ]; then echo '") + kClusterNoAdmin +
         "'; else\n" + kube::api_access_script() +
         "if [ -n \"$pai_api\" ]; then\n"
         "{\n" +
         kube::api_curl("-w '\\n" + std::string(kClusterApiStatus) + "%{http_code}\\n'" + urls) +
         "} || echo '" + kClusterApiUnavailable +
         "'\n"
         "else\n" +
         raw + "fi\nfi\necho '" + kClusterEtcdMark + "'\n" + etcd_health_script(etcd_endpoint);
}

void version_skew_findings(const std::string& api, const std::vector<NodeStatus>& nodes,
                           const std::string& kube_version, diag::List& out) {
  auto a = cluster_parse_version(api);
  auto want = cluster_parse_version(kube_version);
  if (a && want && !cluster_same_release(*a, *want))
    cluster_add(out, "K012", Severity::Warning, "api-server",
                "the API server is " + api + ", config.yaml's kube_version is " + kube_version,
                "paictl upgrade CLUSTER_DIR --to " + kube_version +
                    " (or set kube_version to the release the cluster runs)");
  for (const auto& n : nodes) {
    auto k = cluster_parse_version(n.kubelet_version);
    if (!k) continue;
    if (a && k->major == a->major && k->minor > a->minor)
      cluster_add(out, "K010", Severity::Error, n.name,
                  "the kubelet of " + n.name + " is " + n.kubelet_version +
                      ", newer than the API server's " + api,
                  "paictl upgrade CLUSTER_DIR --to " + std::to_string(k->major) + "." +
                      std::to_string(k->minor) + " upgrades the control plane first");
    else if (a && k->major == a->major && a->minor - k->minor > 3)
      cluster_add(out, "K011", Severity::Error, n.name,
                  "the kubelet of " + n.name + " is " + n.kubelet_version + ", " +
                      std::to_string(a->minor - k->minor) +
                      " minor versions older than the API server's " + api +
                      " (at most 3 are supported)",
                  "paictl upgrade CLUSTER_DIR --to " + std::to_string(a->major) + "." +
                      std::to_string(a->minor) + " brings the nodes to the control plane's");
    if (want && !cluster_same_release(*k, *want))
      cluster_add(out, "K012", Severity::Warning, n.name,
                  "the kubelet of " + n.name + " is " + n.kubelet_version +
                      ", config.yaml's kube_version is " + kube_version,
                  "paictl upgrade CLUSTER_DIR --to " + kube_version +
                      " (or set kube_version to the release the cluster runs)");
  }
}

void backup_findings(const std::string& cluster_dir, double now, int max_age_days,
                     diag::List& out) {
  std::string path = cluster_dir + "/.paictl/backups.jsonl";
  auto r = util::read_file_if_present(path, 64u << 20);
  if (!r.ok()) {
    cluster_add(out, "K032", Severity::Warning, "backups",
                "cannot read the backups record: " + r.error().message,
                "paictl backup " + cluster_dir + " writes it", path);
    return;
  }
  // The last line that holds anything.
  std::string last;
  uint32_t last_no = 0, no = 0;
  if (*r)
    for (auto line : util::split(**r, '\n')) {
      ++no;
      if (!util::trim(line).empty()) {
        last = std::string(util::trim(line));
        last_no = no;
      }
    }
  if (last.empty()) {
    cluster_add(
        out, "K030", Severity::Warning, "backups",
        "no backup of this cluster yet (" + std::string(*r ? "an empty " : "no ") + path + ")",
        "paictl backup " + cluster_dir);
    return;
  }
  auto j = util::parse_json_or_discarded(last);
  if (!j.is_object() || !j.contains("time") || !j["time"].is_number()) {
    cluster_add(out, "K032", Severity::Warning, "backups",
                "the last line is not a backup record: no numeric \"time\"",
                "paictl backup " + cluster_dir + " appends a good one", path, last_no);
    return;
  }
  double t = j["time"].get<double>();
  double age = now - t;
  if (age > static_cast<double>(max_age_days) * 86400.0) {
    std::string where = j.value("path", "");
    cluster_add(out, "K031", Severity::Warning, "backups",
                "the last backup is " +
                    cluster_days_text(static_cast<int64_t>(std::floor(age / 86400))) + " old (" +
                    cluster_utc_text(t, "%Y-%m-%d %H:%M UTC") +
                    (where.empty() ? "" : ", " + where) + "), more than --backup-max-age " +
                    cluster_days_text(max_age_days),
                "paictl backup " + cluster_dir);
  }
}

const inventory::HostSpec* ClusterUnderCheck::master() const {
  for (const auto& h : hosts)
    if (h.master && !h.other_master) return &h;
  return nullptr;
}

ClusterCheck check_cluster(const ClusterCheckRequest& r, const ClusterUnderCheck& cluster,
                           const ClusterCheckDeps& deps) {
  ClusterCheck c;
  c.cluster_dir = cluster.cluster_dir;
  const inventory::HostSpec& master = *cluster.master();
  c.master = master.name;
  const std::string& ns = cluster.ns;
  double now = deps.now_epoch ? deps.now_epoch() : static_cast<double>(std::time(nullptr));
  auto etcd_at = [](const inventory::HostSpec& h) { return "https://" + h.address + ":2379"; };

  remote::Transport* transport = deps.transport;
  auto x = kube::run_on_master(*transport, master, master_read_script(ns, etcd_at(master)));
  if (!x.ok()) {
    cluster_add(
        c.findings, "K001", Severity::Error, master.name,
        "the master " + master.name + " (" + master.address + ") could not be reached: " + x.error,
        x.hint.empty() ? "check the SSH settings (--ssh-config, --user, config.yaml's "
                         "ssh_* keys); paictl check hosts " +
                             c.cluster_dir + " says more"
                       : x.hint);
    c.master_unreachable = true;
    return c;
  }

  MasterReads reads;
  std::string_view all(x.out);
  size_t etcd_at_pos = all.rfind(std::string(kClusterEtcdMark) + "\n");
  std::string_view api =
      all.substr(0, etcd_at_pos == std::string_view::npos ? all.size() : etcd_at_pos);
  bool api_ok = false;
  std::string api_problem;
  if (util::trim(api) == kClusterNoAdmin) {
    api_problem = "no /etc/kubernetes/admin.conf on " + master.name;
  } else if (api.find(kClusterApiUnavailable) != std::string_view::npos) {
    api_problem = "the API server did not answer on " + master.name + ": " +
                  std::string(util::trim(x.err).empty() ? "curl failed" : util::trim(x.err));
  } else if (auto answers = cluster_split_answers(api); !answers || answers->size() != 4) {
    api_problem = "the API server's answers on " + master.name + " were cut short";
  } else {
    const auto paths = cluster_api_paths(ns);
    for (size_t i = 0; i < 2 && api_problem.empty(); ++i)
      if ((*answers)[i].code != "200")
        api_problem = "the API server did not answer on " + master.name + ": " + paths[i] +
                      ": HTTP " + (*answers)[i].code;
    if (api_problem.empty()) {
      auto v = util::parse_json_or_discarded((*answers)[0].body);
      auto nodes = util::parse_json_or_discarded((*answers)[1].body);
      if (!v.is_object() || !nodes.is_object()) {
        api_problem = "the API server's answers on " + master.name + " are not JSON";
      } else {
        api_ok = true;
        reads.api_version = v.value("gitVersion", "");
        reads.nodes = cluster_parse_nodes(nodes);
        nlohmann::json items = nlohmann::json::array();
        for (size_t i = 2; i < 4; ++i)
          if ((*answers)[i].code == "200")
            if (auto o = util::parse_json_or_discarded((*answers)[i].body); o.is_object())
              items.push_back(std::move(o));
        reads.cluster_files = kube::parse_cluster_files(
            util::dump_json(nlohmann::json{{"kind", "List"}, {"items", std::move(items)}}));
      }
    }
    for (auto& a : *answers) std::fill(a.body.begin(), a.body.end(), '\0');
  }
  reads.etcd.push_back(cluster_parse_etcd(
      master.name, etcd_at_pos == std::string_view::npos
                       ? std::string_view()
                       : all.substr(etcd_at_pos + std::string_view(kClusterEtcdMark).size())));
  std::fill(x.out.begin(), x.out.end(), '\0');
  for (const auto& h : cluster.hosts) {
    if (!h.master || h.name == master.name) continue;
    auto e = kube::run_on_master(*transport, h, etcd_health_script(etcd_at(h)));
    if (!e.ok())
      reads.etcd.push_back({h.name, EtcdHealth::State::Unchecked, e.error});
    else
      reads.etcd.push_back(cluster_parse_etcd(h.name, e.out));
  }

  if (!api_ok) {
    cluster_add(c.findings, "K002", Severity::Error, master.name, api_problem,
                "kubectl get --raw=/readyz on " + master.name +
                    " and the kubelet's log there; paictl install " + c.cluster_dir +
                    " repairs a control plane it set up");
  } else {
    cluster_node_findings(reads.nodes, cluster.hosts, c.cluster_dir, c.findings);
    version_skew_findings(reads.api_version, reads.nodes, cluster.kube_version, c.findings);
    cluster_drift_findings(c.cluster_dir, reads.cluster_files, ns, c.findings);
    if (reads.cluster_files)
      for (auto& [n, content] : *reads.cluster_files)
        std::fill(content.begin(), content.end(), '\0');
  }
  cluster_etcd_findings(reads.etcd, c.findings);
  // The certificates of every host (the master's PKI and kubeconfigs, each
  // kubelet's), as certs check reads and judges them (K100-K149).
  auto certs = read_certs(cluster.hosts, *transport, static_cast<int64_t>(now));
  c.findings.append(certs_findings(certs, r.warn_within_days));
  backup_findings(c.cluster_dir, now, r.backup_max_age_days, c.findings);
  c.hived = cluster_hived_url(r, cluster);
  if (!c.hived.empty())
    cluster_hived_findings(r, deps, c.hived, api_ok ? &reads.nodes : nullptr, c.findings);
  c.findings.sort();
  return c;
}

}  // namespace pai::check
