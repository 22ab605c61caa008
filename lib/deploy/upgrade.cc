#include "deploy/upgrade.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <regex>
#include <set>
#include <sstream>

#include <unistd.h>

#include "api/client.h"
#include "api/signin.h"
#include "deploy/cluster_files.h"
#include "deploy/config_push.h"
#include "deploy/credentials.h"
#include "deploy/etcd_members.h"
#include "deploy/journal.h"
#include "deploy/node_batches.h"
#include "deploy/phases/common.h"
#include "deploy/prepare.h"
#include "hived/inspect.h"
#include "http/client.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy {

namespace {

using util::shell_quote;

constexpr const char* kUpgradeKubectl =
    "kubectl --kubeconfig=/etc/kubernetes/admin.conf --cache-dir=/etc/paictl/kube-cache";

double upgrade_wall_now(const UpgradeDeps& d) {
  if (d.wall_now) return d.wall_now();
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The script that reads the cluster on the master: the API server's version and the Nodes.
// The API server's version and the Nodes. An API server that is restarting (kubeadm
// upgrade apply replaces its static pod, and a run killed there leaves the restart
// going on) is waited for, up to 60 s, before the read fails.
std::string upgrade_read_script() {
  std::string k = kUpgradeKubectl;
  return "for i in $(seq 120); do " + k +
         " get --raw /readyz >/dev/null 2>&1 && break; sleep 0.5; done\n"
         "set -e\necho '--- version'\n" +
         k + " get --raw /version\necho\necho '--- nodes'\n" + k + " get nodes -o json\n";
}

std::map<std::string, std::string> upgrade_sections(const std::string& out) {
  std::map<std::string, std::string> s;
  std::string cur;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("--- ", 0) == 0) {
      cur = line.substr(4);
      continue;
    }
    s[cur] += line + "\n";
  }
  return s;
}

}  // namespace

std::string kube_repo_for(const std::string& configured, int minor) {
  std::string m = "v1." + std::to_string(minor);
  if (configured.empty()) return "https://pkgs.k8s.io/core:/stable:/" + m + "/deb/";
  static const std::regex re("v1\\.[0-9]+");
  return std::regex_replace(configured, re, m, std::regex_constants::format_first_only);
}

std::vector<int> parse_madison(const std::string& text, int minor) {
  std::vector<int> out;
  std::istringstream in(text);
  std::string line;
  std::string prefix = "1." + std::to_string(minor) + ".";
  while (std::getline(in, line)) {
    auto parts = util::split(line, '|');
    if (parts.size() < 2 || util::trim(parts[0]) != "kubeadm") continue;
    std::string v(util::trim(parts[1]));
    if (v.rfind(prefix, 0) != 0) continue;
    auto parsed = parse_kube_version(v);
    if (parsed.ok() && parsed->has_patch()) out.push_back(parsed->patch);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string with_kube_version(const std::string& text, const std::string& version) {
  std::istringstream in(text);
  std::string line, out;
  bool done = false;
  while (std::getline(in, line)) {
    if (!done && line.rfind("kube_version:", 0) == 0) {
      // Keep a trailing comment.
      std::string comment;
      auto hash = line.find(" #");
      while (hash != std::string::npos && hash > 0 && line[hash - 1] == ' ') --hash;
      if (hash != std::string::npos) comment = line.substr(hash);
      line = "kube_version: \"" + version + "\"" + comment;
      done = true;
    }
    out += line + "\n";
  }
  if (!text.empty() && text.back() != '\n' && !out.empty()) out.pop_back();
  if (!done) {
    if (!out.empty() && out.back() != '\n') out += "\n";
    out += "kube_version: \"" + version + "\"\n";
  }
  return out;
}

namespace {

util::Result<UpgradeNode> upgrade_node_of(const nlohmann::json& n) {
  UpgradeNode u;
  u.name = n.value("/metadata/name"_json_pointer, std::string());
  auto labels = n.value("/metadata/labels"_json_pointer, nlohmann::json::object());
  u.master = labels.contains("node-role.kubernetes.io/control-plane");
  auto ann = n.value("/metadata/annotations"_json_pointer, nlohmann::json::object());
  if (ann.contains(std::string(kMaintenanceAnnotation)) && ann[kMaintenanceAnnotation].is_string())
    u.maintenance = ann[kMaintenanceAnnotation].get<std::string>();
  u.unschedulable = n.value("/spec/unschedulable"_json_pointer, false);
  std::string kv = n.value("/status/nodeInfo/kubeletVersion"_json_pointer, std::string());
  if (!kv.empty() && kv[0] == 'v') kv.erase(0, 1);
  u.kubelet = kv;
  for (const auto& c : n.value("/status/conditions"_json_pointer, nlohmann::json::array()))
    if (c.value("type", "") == "Ready") u.ready = c.value("status", "") == "True";
  std::string g = n.value("/status/allocatable/nvidia.com~1gpu"_json_pointer, std::string("0"));
  u.gpus_allocatable = std::atoi(g.c_str());
  return u;
}

struct UpgradeClusterRead {
  KubeVersion control_plane;
  std::vector<UpgradeNode> nodes;
};

UseCaseResult<UpgradeClusterRead> upgrade_read_cluster(remote::Transport& t,
                                                       const HostSpec& master) {
  auto x = run_on_master(t, master, upgrade_read_script());
  if (!x.ok() || x.exit_status != 0)
    return remote_error("upgrade: reading the cluster on " + master.name +
                            " failed: " + (x.ok() ? std::string(util::trim(x.err)) : x.error),
                        "the control plane must be up: kubectl get nodes on the master");
  auto sec = upgrade_sections(x.out);
  auto version = util::parse_json(sec["version"]);
  auto nodes = util::parse_json(sec["nodes"]);
  if (!version.ok() || !nodes.ok())
    return remote_error("upgrade: the master's kubectl answered what is not JSON");
  UpgradeClusterRead r;
  auto cp = parse_kube_version(version->value("gitVersion", std::string()));
  if (!cp.ok() || !cp->has_patch())
    return remote_error("upgrade: the API server's version is not a Kubernetes version: " +
                        version->value("gitVersion", std::string()));
  r.control_plane = *cp;
  for (const auto& n : nodes->value("items", nlohmann::json::array())) {
    auto u = upgrade_node_of(n);
    if (u.ok()) r.nodes.push_back(*u);
  }
  return r;
}

// The repository's patches of each minor, asked of apt on the master with only
// that minor's source, in a temporary directory (the host's sources, lists and
// caches stay as they were).
UseCaseResult<RepoPatches> upgrade_probe_repo(remote::Transport& t, const HostSpec& master,
                                              const std::string& configured,
                                              const std::vector<int>& minors) {
  std::string s = "set -e\n";
  for (int m : minors) {
    std::string line = "deb [signed-by=" + std::string(phases::kKubeKeyring) + "] " +
                       kube_repo_for(configured, m) + " /";
    s += "d=$(mktemp -d /tmp/paictl-upgrade.XXXXXX)\nmkdir -p \"$d/lists/partial\" \"$d/cache\"\n"
         "printf '%s\\n' " +
         shell_quote(line) +
         " > \"$d/sources.list\"\n"
         "O=\"-o Dir::Etc::sourcelist=$d/sources.list -o Dir::Etc::sourceparts=- "
         "-o Dir::State::Lists=$d/lists -o Dir::Cache=$d/cache\"\n"
         "apt-get $O update >/dev/null 2>&1 || true\n"
         "v=$(apt-cache $O madison kubeadm 2>/dev/null || true)\nrm -rf \"$d\"\n"
         "echo '--- " +
         std::to_string(m) + "'\nprintf '%s\\n' \"$v\"\n[ -n \"$v\" ] || exit 0\n";
  }
  auto x = run_on_master(t, master, s);
  if (!x.ok() || x.exit_status != 0)
    return remote_error("upgrade: asking the master's apt for the Kubernetes packages failed: " +
                        (x.ok() ? std::string(util::trim(x.err)) : x.error));
  auto sec = upgrade_sections(x.out);
  RepoPatches r;
  for (int m : minors) {
    auto p = parse_madison(sec[std::to_string(m)], m);
    if (!p.empty()) r[m] = p;
  }
  return r;
}

std::string upgrade_run_id(double now) {
  char b[32];
  std::time_t t = static_cast<std::time_t>(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(b, sizeof b, "%Y%m%dT%H%M%SZ", &tm);
  return std::string(b) + "-" + std::to_string(::getpid());
}

// HiveD's live state and the running jobs' expected ends (the gateway, as the admin).
hived::MaintenanceInput upgrade_read_groups(UpgradePlan& p) {
  hived::MaintenanceInput in;
  if (p.hived_url.empty()) return in;
  std::unique_ptr<http::Client> own_h, own_r;
  http::Client* hh = p.deps.hived_http;
  http::Options o;
  o.timeout_s = 30;
  o.connect_timeout_s = 10;
  if (!hh) {
    own_h = std::make_unique<http::CurlClient>(o);
    hh = own_h.get();
  }
  http::Client* rh = p.deps.rest_http;
  if (!rh) {
    own_r = std::make_unique<http::CurlClient>(o);
    rh = own_r.get();
  }
  hived::Client hc(*hh, p.hived_url);
  std::optional<api::Client> rest;
  ClusterAccess acc = cluster_access(*p.cluster);
  auto pw = read_admin_password(acc.services_file);
  if (!acc.gateway.empty() && pw.ok() && !pw->reveal().empty()) {
    auto probe = api::probe(*rh, acc.gateway);
    if (probe.ok()) {
      api::Client c(*rh, probe->rest_base);
      auto login = c.login(acc.user, pw->reveal(), 3600);
      if (login.ok()) rest.emplace(*rh, probe->rest_base, login->token);
    }
  }
  if (!rest)
    p.warnings.push_back("the running jobs' expected ends were not read (no sign-in to " +
                         (acc.gateway.empty() ? std::string("the gateway") : acc.gateway) +
                         "): groups are taken as never ending");
  auto r = hived::read_maintenance_input(&hc, rest ? &*rest : nullptr);
  if (!r.ok()) {
    p.warnings.push_back("HiveD at " + http::redact_url(p.hived_url) +
                         " did not answer: " + r.error().message + "; plain order");
    return in;
  }
  return std::move(r).value();
}

}  // namespace

UseCaseResult<UpgradePlan> plan_upgrade(const UpgradeRequest& r, const UpgradeDeps& deps) {
  auto target = parse_kube_version(r.to);
  if (!target.ok()) return UseCaseError(target.error());
  auto maxu = hived::parse_max_unavailable(r.max_unavailable);
  if (!maxu.ok()) return input_error("max unavailable: " + maxu.error().message, maxu.error().hint);
  PrepareRequest pr;
  pr.cluster_dir = r.cluster_dir;
  pr.limit = r.limit;
  auto prepared = prepare_cluster(pr, deps.install.load_hosts);
  if (!prepared.ok()) return std::move(prepared).error();
  UpgradePlan p;
  p.request = r;
  p.deps = deps;
  p.target = *target;
  p.cluster = std::make_shared<const PreparedCluster>(std::move(prepared).value());
  const InstallSettings& s = p.cluster->settings;
  p.config_version = s.kube_version;
  if (!s.offline_bundle.empty())
    return input_error(
        "upgrade: the cluster was installed from an offline bundle (" + s.offline_bundle + ")",
        "upgrade needs the package repository of each minor; set kube_package_repo");
  std::set<std::string> limit;
  for (const auto& h : p.cluster->specs)
    if (h.selected && !h.master) limit.insert(h.name);
  auto transport = make_transport(deps.install.transport, p.cluster->hosts.ssh_password);
  const HostSpec* master = p.cluster->master();
  auto read = upgrade_read_cluster(*transport, *master);
  if (!read.ok()) return std::move(read).error();
  p.control_plane = read->control_plane;
  p.nodes = read->nodes;
  std::map<std::string, KubeVersion> kubelets;
  for (auto& n : p.nodes) {
    for (const auto& h : p.cluster->specs)
      if (h.name == n.name) n.gpus_expected = h.gpu_type == "nvidia.com/gpu" ? h.gpus : 0;
    auto v = parse_kube_version(n.kubelet);
    if (v.ok() && v->has_patch()) kubelets[n.name] = *v;
  }
  // A newer patch of the running minor, or the minors up to the target.
  if (compare_versions(p.target, p.control_plane) < 0 &&
      !(p.target.minor == p.control_plane.minor && !p.target.has_patch())) {
    return input_error(
        "upgrade to " + p.target.str() + " is a downgrade: the control plane runs " +
            p.control_plane.str(),
        "kubeadm does not downgrade; pass --to " + p.control_plane.minor_str() + " or later");
  }
  // The target's minor first: a minor the repository does not have stops the probe.
  std::vector<int> minors = {p.target.minor};
  for (int m : minors_to_probe(p.control_plane, p.target))
    if (m != p.target.minor) minors.push_back(m);
  auto repo = upgrade_probe_repo(*transport, *master, s.package_repo, minors);
  if (!repo.ok()) return std::move(repo).error();
  if (!repo->count(p.target.minor))
    return input_error("the package repository has no Kubernetes " + p.target.minor_str() + " (" +
                           kube_repo_for(s.package_repo, p.target.minor) + " serves no kubeadm)",
                       "pass a released minor (apt-cache madison kubeadm on the master lists "
                       "what the configured repository has)");
  auto steps = plan_version_steps(p.control_plane, p.target, *repo, kubelets);
  if (!steps.ok()) return UseCaseError(steps.error());
  // A control plane of several masters moves one master at a time, each waited
  // for until every etcd member is healthy: a member that does not answer now
  // (a lost master) would stop the run half way, so it is refused before.
  size_t masters = 0;
  for (const auto& h : p.cluster->specs) masters += h.master;
  if (masters > 1 && !steps->empty()) {
    auto x = run_on_master(*transport, *master,
                           etcd_members_script("https://" + master->address + ":2379"));
    const std::string hint = "every master's etcd must answer before an upgrade";
    if (!x.ok() || x.exit_status != 0)
      return remote_error("upgrade: etcd's members could not be read on " + master->name + ": " +
                              (x.ok() ? std::string(util::trim(x.err)) : x.error),
                          hint);
    auto members = parse_etcd_members(x.out);
    if (!members.ok())
      return remote_error("upgrade: etcd's members could not be read on " + master->name + ": " +
                              members.error().message,
                          hint);
    std::vector<std::string> sick = unhealthy_etcd_members(*members);
    if (!sick.empty())
      return input_error("upgrade: etcd member" + std::string(sick.size() == 1 ? " " : "s ") +
                             util::join(sick, ", ") +
                             " not healthy: the masters are upgraded one at a time, "
                             "each with every member healthy",
                         "bring " + util::join(sick, ", ") +
                             " back, or remove the lost master first "
                             "(paictl node remove CLUSTER_DIR " +
                             util::join(sick, " ") + ")");
  }
  // A run killed after its last node's uncordon, before its annotation went or
  // before config.yaml was written, leaves every version at the target: one more
  // step at the control plane's version finishes those nodes (the runner
  // releases them) and writes kube_version, so nothing is forgotten.
  if (steps->empty()) {
    bool unfinished = p.config_version != p.control_plane.str();
    for (const auto& n : p.nodes)
      if (!n.master && limit.count(n.name) && n.maintenance.rfind("upgrade ", 0) == 0)
        unfinished = true;
    if (unfinished) steps->push_back(VersionStep{p.control_plane, false});
  }
  p.hived_url = r.hived;
  p.run_id = upgrade_run_id(upgrade_wall_now(deps));
  hived::MaintenanceInput groups;
  bool read_groups = false;
  for (const auto& vs : *steps) {
    UpgradeStep st;
    st.to = vs.to;
    st.latest = vs.latest;
    st.repo = kube_repo_for(s.package_repo, vs.to.minor);
    st.control_plane_done = compare_versions(p.control_plane, vs.to) >= 0;
    for (const auto& n : p.nodes) {
      auto v = parse_kube_version(n.kubelet);
      bool behind = !v.ok() || compare_versions(*v, vs.to) < 0;
      bool left = !n.maintenance.empty() && n.maintenance.rfind("upgrade ", 0) == 0;
      if (n.master) {
        if (n.name == master->name)
          st.master_kubelet_done = !behind;
        else if (behind)
          st.other_masters.push_back(n.name);
        continue;
      }
      if (!limit.count(n.name)) continue;
      if (behind || left) st.nodes.push_back(n.name);
    }
    if (!st.nodes.empty()) {
      if (!read_groups) {
        groups = upgrade_read_groups(p);
        read_groups = true;
      }
      hived::MaintenanceRequest mr;
      mr.nodes = st.nodes;
      mr.max_unavailable = *maxu;
      mr.wait_for_groups_s = r.wait_for_groups_s;
      mr.evict = r.evict;
      mr.now_s = upgrade_wall_now(deps);
      mr.expected_ends = groups.expected_ends;
      auto mp = hived::plan_maintenance(mr, groups.live ? &*groups.live : nullptr,
                                        p.hived_url.empty()
                                            ? "no --hived URL and no hived_url in config.yaml"
                                            : "HiveD did not answer");
      if (!mp.ok())
        return other_error("upgrade: planning the batches: " + mp.error().message, mp.error().hint);
      st.batches = std::move(mp).value();
      if (!st.batches.blocked.empty()) {
        std::vector<std::string> names;
        for (const auto& g : st.batches.blocking) names.push_back(g.name);
        return other_error("upgrade: running groups block " +
                               std::to_string(st.batches.blocked.size()) +
                               " node(s): " + util::join(names, ", "),
                           "they cannot be waited for within --wait-for-groups; pass --evict "
                           "to evict them, or a longer --wait-for-groups");
      }
    }
    p.steps.push_back(std::move(st));
  }
  // A run cut short after its last node: config.yaml still names the old version.
  if (p.steps.empty() && p.config_version != p.control_plane.str() &&
      compare_versions(p.control_plane, p.target) <= 0) {
    UpgradeStep st;
    st.to = p.control_plane;
    st.latest = false;
    st.repo = kube_repo_for(s.package_repo, p.control_plane.minor);
    st.control_plane_done = true;
    st.master_kubelet_done = true;
    p.steps.push_back(std::move(st));
  }
  return p;
}

namespace {

std::string upgrade_packages_script(const UpgradeStep& st, const std::vector<std::string>& names) {
  std::string want = st.to.str() + "-1.1";
  std::string line = "deb [signed-by=" + std::string(phases::kKubeKeyring) + "] " + st.repo + " /";
  std::string list = phases::kKubeList;
  std::string n = util::join(names, " ");
  std::string s =
      "set -e\nexport DEBIAN_FRONTEND=noninteractive\nneed=''\nfor p in " + n +
      "; do\n  [ \"$(dpkg-query -W -f '${Version}' \"$p\" 2>/dev/null)\" = " + shell_quote(want) +
      " ] || need=\"$need $p=" + want +
      "\"\ndone\n"
      "if [ -n \"$need\" ]; then\n"
      "  if [ \"$(cat " +
      list + " 2>/dev/null)\" != " + shell_quote(line) + " ]; then\n    printf '%s\\n' " +
      shell_quote(line) + " > " + list + ".paictl-tmp && mv " + list + ".paictl-tmp " + list +
      "\n  fi\n"
      "  apt-get update -qq >/dev/null\n"
      "  apt-mark unhold " +
      n +
      " >/dev/null\n"
      "  apt-get install -y -qq --allow-change-held-packages $need >/dev/null\n"
      "fi\n"
      "apt-mark hold " +
      n + " >/dev/null\n";
  return s;
}

// What changes a host runs under one lock of the host's: a run killed while a
// step ran leaves that step running on the host (its session lost), and the next
// run's step waits for it to end instead of racing it (a second kubeadm upgrade
// apply, two apt-gets).
constexpr const char* kUpgradeHostLock =
    "exec 9>/run/lock/paictl-upgrade.lock\nflock 9 2>/dev/null || true\n";

remote::ExecResult upgrade_on(remote::Transport& t, const HostSpec& h, const std::string& script,
                              int timeout_ms = 600000) {
  remote::ExecRequest req;
  std::string q = shell_quote(kUpgradeHostLock + script);
  req.command = h.target.endpoint.user == "root" || h.target.endpoint.user.empty()
                    ? "sh -c " + q
                    : "sudo -n sh -c " + q;
  req.timeout_ms = timeout_ms;
  return t.exec(h.target, req);
}

std::string upgrade_failure(const remote::ExecResult& x) {
  if (!x.ok()) return x.error;
  std::string e(util::trim(x.err));
  if (e.empty()) e = std::string(util::trim(x.out));
  if (e.size() > 2000) e = "..." + e.substr(e.size() - 2000);
  return e;
}

const HostSpec* upgrade_spec(const PreparedCluster& c, const std::string& name) {
  for (const auto& h : c.specs)
    if (h.name == name) return &h;
  return nullptr;
}

std::string upgrade_as_root(const remote::Target& t, const std::string& script) {
  std::string q = shell_quote(script);
  return t.endpoint.user == "root" || t.endpoint.user.empty() ? "sh -c " + q : "sudo -n sh -c " + q;
}

// Polls the master's kubectl until the node is Ready, its kubelet at `version`
// and at least `gpus` GPUs allocatable, up to `wait_s`.
util::Result<void> upgrade_wait_node(
    const std::function<remote::ExecResult(const std::string&)>& on_master,
    const util::Clock& clock, const std::string& node, const std::string& version, int gpus,
    double wait_s, double poll_s) {
  double deadline = clock.now() + wait_s;
  std::string last = "not read";
  for (;;) {
    auto x = on_master(master_kubectl() + " get node " + shell_quote(node) + " -o json");
    if (x.ok() && x.exit_status == 0) {
      auto j = util::parse_json_or_discarded(x.out);
      if (!j.is_discarded()) {
        auto u = upgrade_node_of(j);
        if (u.ok()) {
          if (u->ready && u->kubelet == version && u->gpus_allocatable >= gpus) return {};
          last = std::string(u->ready ? "Ready" : "not Ready") + ", kubelet " + u->kubelet + ", " +
                 std::to_string(u->gpus_allocatable) + " GPUs allocatable";
        }
      }
    } else {
      last = x.ok() ? std::string(util::trim(x.err)) : x.error;
    }
    if (clock.now() >= deadline)
      return util::Error{node + " is not Ready at v" + version +
                             (gpus ? " with " + std::to_string(gpus) + " GPUs allocatable" : "") +
                             " after " + std::to_string(static_cast<int>(wait_s)) + " s (" + last +
                             ")",
                         "kubectl describe node " + node + "; the kubelet's log on the node",
                         util::Error::Kind::Remote};
    clock.sleep(poll_s);
  }
}

// Polls the first master's etcd until every member is healthy, up to `wait_s`.
util::Result<void> upgrade_wait_etcd(
    const std::function<remote::ExecResult(const std::string&)>& on_master, const HostSpec& master,
    const util::Clock& clock, double wait_s, double poll_s) {
  double deadline = clock.now() + wait_s;
  std::string last = "etcdctl did not answer";
  for (;;) {
    auto x = on_master(etcd_members_script("https://" + master.address + ":2379"));
    if (x.ok() && x.exit_status == 0) {
      auto members = parse_etcd_members(x.out);
      if (members.ok()) {
        std::vector<std::string> sick = unhealthy_etcd_members(*members);
        if (sick.empty() && !members->empty()) return {};
        last = std::to_string(members->size() - sick.size()) + " of " +
               std::to_string(members->size()) +
               " members healthy (not: " + util::join(sick, ", ") + ")";
      } else {
        last = members.error().message;
      }
    }
    if (clock.now() >= deadline)
      return util::Error{
          "etcd is not healthy after " + std::to_string(static_cast<int>(wait_s)) + " s: " + last,
          "look at the masters' etcd static pods (crictl ps --name etcd; crictl "
          "logs); a re-run goes on from the master that is behind",
          util::Error::Kind::Remote};
    clock.sleep(poll_s);
  }
}

}  // namespace

UpgradeOutcome apply_upgrade(UpgradePlan& p,
                             const std::function<void(const UpgradeEvent&)>& on_event) {
  UpgradeOutcome o;
  o.config_version = p.config_version;
  auto emit = [&](UpgradeEvent::Kind k, std::string version, std::string node = {},
                  std::string msg = {}) {
    if (on_event) on_event(UpgradeEvent{k, std::move(version), std::move(node), std::move(msg)});
  };
  if (p.request.dry_run) {
    o.ok = true;
    return o;
  }
  // One run changes the cluster at a time: not beside an install, a node
  // maintain or another upgrade of it.
  LocalLock lock;
  if (auto locked = lock.acquire(p.cluster->cluster_dir + "/.paictl/install.lock", "upgrade");
      !locked) {
    o.error = input_error("upgrade: " + locked.error().message, locked.error().hint);
    return o;
  }
  util::Clock clock = p.deps.clock.now ? p.deps.clock : util::Clock::real();
  Journal journal;
  (void)journal.open(p.cluster->cluster_dir + "/.paictl/upgrade-versions.journal");
  auto transport = make_transport(p.deps.install.transport, p.cluster->hosts.ssh_password);
  const HostSpec& master = *p.cluster->master();
  auto fail = [&](UseCaseError e) {
    o.error = std::move(e);
    (void)journal.append(
        {{"run", p.run_id}, {"event", "failed"}, {"error", o.error->error.message}});
    return o;
  };
  auto on_master = [&](const std::string& script) {
    return run_on_master(*transport, master, script);
  };
  // HiveD, for the nodes' running groups while the runner waits for them.
  std::unique_ptr<http::Client> own_hived;
  std::shared_ptr<hived::Client> hived_client;
  if (!p.hived_url.empty()) {
    http::Client* h = p.deps.hived_http;
    if (!h) {
      http::Options ho;
      ho.timeout_s = 30;
      ho.connect_timeout_s = 10;
      own_hived = std::make_unique<http::CurlClient>(ho);
      h = own_hived.get();
    }
    hived_client = std::make_shared<hived::Client>(*h, p.hived_url);
  }
  for (const auto& st : p.steps) {
    std::string v = st.to.str();
    emit(UpgradeEvent::Kind::Step, v);
    (void)journal.append({{"run", p.run_id}, {"event", "step"}, {"version", v}});
    // The control plane: the kubeadm package, plan, apply (unless the API server runs v).
    if (!st.control_plane_done) {
      emit(UpgradeEvent::Kind::ControlPlane, v, master.name,
           "kubeadm " + v + ", kubeadm upgrade plan, kubeadm upgrade apply v" + v);
      auto x = upgrade_on(*transport, master, upgrade_packages_script(st, {"kubeadm"}));
      if (!x.ok() || x.exit_status != 0)
        return fail(remote_error("upgrade: installing kubeadm " + v + " on " + master.name +
                                 " failed: " + upgrade_failure(x)));
      x = upgrade_on(*transport, master, "kubeadm upgrade plan v" + v + " >/dev/null\n");
      if (!x.ok() || x.exit_status != 0)
        return fail(remote_error("upgrade: kubeadm upgrade plan v" + v + " on " + master.name +
                                 " failed: " + upgrade_failure(x)));
      std::string apply = "cur=$(" + master_kubectl() +
                          " get --raw /version | sed -n "
                          "'s/.*\"gitVersion\": *\"\\([^\"]*\\)\".*/\\1/p')\n"
                          "if [ \"$cur\" = v" +
                          v + " ]; then echo skipped; exit 0; fi\nkubeadm upgrade apply v" + v +
                          " -y >/dev/null\necho applied\n";
      x = upgrade_on(*transport, master, apply);
      if (!x.ok() || x.exit_status != 0)
        return fail(remote_error("upgrade: kubeadm upgrade apply v" + v + " on " + master.name +
                                 " failed: " + upgrade_failure(x)));
      if (x.out.find("applied") != std::string::npos) {
        o.applied.push_back(v);
        emit(UpgradeEvent::Kind::Applied, v, master.name);
        (void)journal.append({{"run", p.run_id}, {"event", "applied"}, {"version", v}});
      } else {
        emit(UpgradeEvent::Kind::ApplySkipped, v, master.name);
      }
    } else {
      emit(UpgradeEvent::Kind::ApplySkipped, v, master.name);
    }
    // The master's kubelet and kubectl.
    if (!st.master_kubelet_done) {
      auto x = upgrade_on(*transport, master,
                          upgrade_packages_script(st, {"kubelet", "kubectl"}) +
                              "systemctl daemon-reload\nsystemctl restart kubelet\n");
      if (!x.ok() || x.exit_status != 0)
        return fail(remote_error("upgrade: the kubelet " + v + " on " + master.name +
                                 " failed: " + upgrade_failure(x)));
      auto w = upgrade_wait_node(on_master, clock, master.name, v, 0, p.request.node_wait_s,
                                 p.request.poll_s);
      if (!w.ok()) return fail(remote_error(w.error().message, w.error().hint));
      o.upgraded.push_back(master.name + " " + v);
      emit(UpgradeEvent::Kind::NodeDone, v, master.name);
    }
    // The other masters, one at a time: each a member of etcd and a replica of
    // the API server, so the next waits until this one is Ready at `v` and every
    // etcd member is healthy again.
    for (const auto& name : st.other_masters) {
      const HostSpec* h = upgrade_spec(*p.cluster, name);
      if (!h) return fail(input_error("upgrade: " + name + " is not a host of layout.yaml"));
      emit(UpgradeEvent::Kind::ControlPlane, v, name,
           "kubeadm " + v + ", kubeadm upgrade node, kubelet and kubectl " + v);
      auto x = upgrade_on(*transport, *h,
                          upgrade_packages_script(st, {"kubeadm"}) +
                              "kubeadm upgrade node >/dev/null\n" +
                              upgrade_packages_script(st, {"kubelet", "kubectl"}) +
                              "systemctl daemon-reload\nsystemctl restart kubelet\n");
      if (!x.ok() || x.exit_status != 0)
        return fail(remote_error("upgrade: kubeadm upgrade node " + v + " on " + name +
                                 " failed: " + upgrade_failure(x)));
      auto w =
          upgrade_wait_node(on_master, clock, name, v, 0, p.request.node_wait_s, p.request.poll_s);
      if (!w.ok()) return fail(remote_error(w.error().message, w.error().hint));
      if (auto e =
              upgrade_wait_etcd(on_master, master, clock, p.request.node_wait_s, p.request.poll_s);
          !e.ok())
        return fail(
            remote_error("upgrade: after " + name + ": " + e.error().message, e.error().hint));
      o.upgraded.push_back(name + " " + v);
      emit(UpgradeEvent::Kind::NodeDone, v, name);
    }
    // The workers, in the planner's batches, through the node batch runner.
    if (!st.nodes.empty()) {
      NodeBatchRequest br;
      br.operation = "upgrade";
      br.run_id = p.run_id;
      br.wait_for_groups_s = p.request.wait_for_groups_s;
      br.drain_timeout_s = static_cast<int>(std::max(60.0, p.request.node_wait_s));
      br.poll_s = p.request.poll_s;
      br.state_dir = p.cluster->cluster_dir + "/.paictl";
      br.batches = node_batches_of(st.batches);
      NodeBatchDeps bd;
      bd.transport = transport.get();
      bd.master = master;
      for (const auto& h : p.cluster->specs) bd.nodes[h.name] = h.target;
      bd.clock = clock;
      if (hived_client) bd.groups_on_node = hived_groups_on_node(hived_client);
      std::string script = upgrade_packages_script(st, {"kubeadm"}) +
                           "kubeadm upgrade node >/dev/null\n" +
                           upgrade_packages_script(st, {"kubelet", "kubectl"}) +
                           "systemctl daemon-reload\nsystemctl restart kubelet\n";
      bd.action = [&](const std::string& node, remote::Connection& host) -> util::Result<void> {
        const HostSpec* h = upgrade_spec(*p.cluster, node);
        if (!h) return util::Error{node + " is not a host of layout.yaml", {}};
        remote::ExecRequest req;
        req.command = upgrade_as_root(h->target, kUpgradeHostLock + script);
        req.timeout_ms = 600000;
        auto x = host.exec(req);
        if (!x.ok() || x.exit_status != 0)
          return util::Error{"upgrading " + node + " to " + v + " failed: " + upgrade_failure(x),
                             {},
                             util::Error::Kind::Remote};
        return {};
      };
      bd.verify = [&](const std::string& node, remote::Connection&,
                      remote::Connection& m) -> util::Result<void> {
        const HostSpec* h = upgrade_spec(*p.cluster, node);
        int gpus = h && h->gpu_type == "nvidia.com/gpu" ? h->gpus : 0;
        auto via = [&](const std::string& s) {
          remote::ExecRequest req;
          req.command = upgrade_as_root(master.target, s);
          req.timeout_ms = 120000;
          return m.exec(req);
        };
        return upgrade_wait_node(via, clock, node, v, gpus, p.request.node_wait_s,
                                 p.request.poll_s);
      };
      Callbacks cb;
      cb.on_event = [&](const UseCaseEvent& e) {
        if (e.kind != UseCaseEvent::Kind::NodeStep || !e.node_step) return;
        const NodeStepEvent& ne = *e.node_step;
        using S = NodeStepEvent::State;
        if (ne.step == NodeStep::Cordon && ne.state == S::Done)
          emit(UpgradeEvent::Kind::NodeStart, v, ne.node);
        else if (ne.step == NodeStep::Wait && ne.state == S::Started)
          emit(UpgradeEvent::Kind::NodeWaiting, v, ne.node, ne.message);
        else if (ne.step == NodeStep::Uncordon && ne.state == S::Done)
          emit(UpgradeEvent::Kind::NodeDone, v, ne.node);
      };
      auto out = run_node_batches(br, bd, cb);
      for (const auto& r : out.nodes)
        if (r.end == NodeResult::End::Done) o.upgraded.push_back(r.node + " " + v);
      if (!out.ok) {
        if (out.error) return fail(*out.error);
        return fail(remote_error("upgrade: the workers' batches stopped"));
      }
    }
    // config.yaml follows the finished minor.
    std::string cfg = p.cluster->cluster_dir + "/config.yaml";
    auto text = util::read_file(cfg);
    if (!text.ok())
      return fail(input_error("upgrade: reading " + cfg + ": " + text.error().message));
    std::string updated = with_kube_version(*text, v);
    if (updated != *text) {
      auto w = util::write_file_atomic(cfg, updated);
      if (!w.ok()) return fail(input_error("upgrade: writing " + cfg + ": " + w.error().message));
    }
    o.config_version = v;
    emit(UpgradeEvent::Kind::ConfigUpdated, v);
  }
  // The cluster's copy of the cluster files follows config.yaml: a config push
  // (only what differs) to the master, so `config diff` and `check cluster` see
  // no drift. At the end of every apply; a run killed before it leaves the
  // drift that `check cluster` reports (K040) and `paictl config push` mends.
  if (p.request.push_cluster_files) {
    ConfigPushRequest cr;
    cr.cluster_dir = p.cluster->cluster_dir;
    cr.yes = true;
    cr.limit = {master.name};
    cr.parallel = 1;
    cr.templates_dir = p.request.templates_dir;
    cr.lock_held = true;
    Callbacks quiet;
    auto cp = plan_config_push(cr, p.deps.install, quiet);
    if (!cp.ok()) return fail(std::move(cp).error());
    HostStage st = apply_config_push(*cp, true, quiet);
    if (st.end == HostStage::End::Failed ||
        (st.end == HostStage::End::Applied && !st.result.ok())) {
      std::string why = st.result.error;
      for (const auto& h : st.result.hosts) {
        if (!h.error.empty()) why = h.error;
        for (const auto& ph : h.phases)
          if (ph.state == PhaseResult::State::Failed && !ph.error.empty()) why = ph.error;
      }
      return fail(remote_error(
          "upgrade: pushing the cluster files (config.yaml's kube_version) to " + master.name +
          " failed" + (why.empty() ? "" : ": " + why) + "; `paictl config push` retries it"));
    }
    if (st.end == HostStage::End::Applied)
      emit(UpgradeEvent::Kind::ConfigUpdated, o.config_version, "", "pushed to the cluster");
  }
  (void)journal.append({{"run", p.run_id}, {"event", "done"}, {"version", o.config_version}});
  o.ok = true;
  return o;
}

}  // namespace pai::deploy
