#include "deploy/maintain.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "deploy/journal.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "util/strings.h"

namespace pai::deploy {

bool HostChange::changes() const {
  if (reboot) return true;
  for (const auto& p : packages)
    if (p.from != p.to || !p.removes.empty()) return true;
  return false;
}

bool MaintainPlan::changes() const {
  for (const auto& h : hosts)
    if (h.changes()) return true;
  return false;
}

std::string MaintainPlan::change_script(const HostChange& h, const std::string& run_id) {
  std::string s = "set -e\nexport DEBIAN_FRONTEND=noninteractive\n";
  std::vector<std::string> unhold, hold, install;
  for (const auto& p : h.packages) {
    if (p.held) {
      if (!p.from.empty()) unhold.push_back(p.name);  // else the hold is a replaced package's
      hold.push_back(p.name);
    }
    for (const auto& r : p.removes) unhold.push_back(r);
    install.push_back(util::shell_quote(p.name + "=" + p.to));
  }
  auto quoted = [](const std::vector<std::string>& v) {
    std::vector<std::string> q;
    for (const auto& x : v) q.push_back(util::shell_quote(x));
    return util::join(q, " ");
  };
  if (!unhold.empty()) s += "apt-mark unhold " + quoted(unhold) + " >/dev/null\n";
  if (!install.empty())
    s += "apt-get install -y -q --allow-downgrades " + util::join(install, " ") + "\n";
  if (!hold.empty()) s += "apt-mark hold " + quoted(hold) + " >/dev/null\n";
  if (h.reboot) {
    // A mark on /run (a tmpfs, emptied by the boot) says whether the host rebooted.
    s += "echo " + util::shell_quote(run_id) + " > /run/lock/paictl-maintain.boot\n";
    s += "systemctl reboot\n";
  }
  return s;
}

namespace {

// What a host's one read says: its OS, installed and held packages, what apt
// offers of the packages asked, what nvidia-smi reports.
struct MaintainHostRead {
  std::string os_id, os_version;
  std::map<std::string, std::string> installed;
  std::set<std::string> held;
  std::map<std::string, std::vector<std::string>> offered;  // newest first (madison's order)
  std::vector<std::string> smi;                             // one line per GPU
  bool smi_ok = false;
};

std::string maintain_read_script(const std::vector<std::string>& names) {
  std::string s =
      ". /etc/os-release 2>/dev/null; echo \"os ${ID:-unknown} ${VERSION_ID:-}\"\n"
      "dpkg-query -W --showformat='pkg ${Package} ${Version}\\n' 2>/dev/null || true\n"
      "apt-mark showhold 2>/dev/null | sed 's/^/hold /' || true\n"
      "if smi=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null); then "
      "echo \"smi-ok\"; printf '%s\\n' \"$smi\" | sed 's/^/smi /'; fi\n";
  for (const auto& n : names)
    s += "apt-cache madison " + util::shell_quote(n) +
         " 2>/dev/null | awk -v p=" + util::shell_quote(n) +
         " '{ print \"avail\", p, $3 }' || true\n";
  return s;
}

MaintainHostRead maintain_parse_read(const std::string& out) {
  MaintainHostRead r;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream w(line);
    std::string k, a, b;
    w >> k >> a >> b;
    if (k == "os") {
      r.os_id = a;
      r.os_version = b;
    } else if (k == "pkg" && !a.empty()) {
      r.installed[a] = b;
    } else if (k == "hold" && !a.empty()) {
      r.held.insert(a);
    } else if (k == "smi-ok") {
      r.smi_ok = true;
    } else if (k == "smi" && !a.empty()) {
      r.smi.push_back(a);
    } else if (k == "avail" && !a.empty() && !b.empty()) {
      r.offered[a].push_back(b);
    }
  }
  return r;
}

std::string maintain_upstream(const std::string& v) {
  std::string u = v;
  if (auto c = u.find(':'); c != std::string::npos) u = u.substr(c + 1);
  return u.substr(0, u.find('-'));
}

// The driver package of an OS for `version` ("550" or "550.127.05").
std::string maintain_driver_package(const std::string& os_id, const std::string& version) {
  if (os_id == "debian") return "nvidia-driver";
  return "nvidia-driver-" + version.substr(0, version.find('.'));
}

remote::ExecResult maintain_exec(remote::Transport& t, const remote::Target& target,
                                 const std::string& script, int timeout_ms = 120000) {
  remote::ExecRequest req;
  std::string q = util::shell_quote(script);
  req.command = target.endpoint.user == "root" || target.endpoint.user.empty()
                    ? "sh -c " + q
                    : "sudo -n sh -c " + q;
  req.timeout_ms = timeout_ms;
  return t.exec(target, req);
}

// One host's change, from what it has and what was asked.
UseCaseResult<HostChange> maintain_host_change(const MaintainRequest& r, const HostSpec& h,
                                               const MaintainHostRead& rd) {
  HostChange c;
  c.host = h.name;
  c.os = rd.os_id + (rd.os_version.empty() ? "" : " " + rd.os_version);
  c.gpus = h.gpu_type == "nvidia.com/gpu" ? h.gpus : 0;
  if (rd.smi_ok && !rd.smi.empty()) c.driver_now = rd.smi.front();
  c.reboot = r.reboot;
  // `any_of_branch`: `want` may be a driver branch ("550"), the newest of it taken.
  auto add = [&](const std::string& name, const std::string& want, const std::string& what,
                 bool any_of_branch) -> UseCaseResult<void> {
    auto off = rd.offered.find(name);
    if (off == rd.offered.end() || off->second.empty())
      return input_error(
          h.name + ": apt offers no " + name + " (" + what + ")",
          "apt-cache policy " + name + " on " + h.name + " (its repositories, and apt-get update)");
    std::string to;
    for (const auto& v : off->second)  // newest first
      if (v == want || maintain_upstream(v) == want ||
          (want.find('.') == std::string::npos && any_of_branch)) {
        to = v;
        break;
      }
    if (to.empty())
      return input_error(
          h.name + ": apt offers " + name + " " + util::join(off->second, ", ") + ", not " + want,
          "apt-cache madison " + name + " on " + h.name);
    PackageChange p;
    p.name = name;
    if (auto i = rd.installed.find(name); i != rd.installed.end()) p.from = i->second;
    p.to = to;
    p.held = rd.held.count(name) > 0;
    c.packages.push_back(std::move(p));
    return {};
  };
  if (!r.driver.empty()) {
    if (c.gpus == 0)
      return input_error(h.name + " has no NVIDIA GPUs (its SKU " + h.sku +
                         "): a driver change is for GPU nodes only");
    std::string pkg = maintain_driver_package(rd.os_id, r.driver);
    auto a = add(pkg, r.driver, "the driver asked", true);
    if (!a.ok()) return std::move(a).error();
    PackageChange& p = c.packages.back();
    // The other driver packages installed go (another branch), their hold
    // passing to the new one.
    for (const auto& [name, ver] : rd.installed)
      if (name != pkg && name.rfind("nvidia-driver", 0) == 0) {
        p.removes.push_back(name);
        if (rd.held.count(name)) p.held = true;
      }
    c.driver_expected = maintain_upstream(p.to);
    if (maintain_upstream(p.to) != c.driver_now || p.from != p.to) c.reboot = true;
  }
  for (const auto& spec : r.packages) {
    auto eq = spec.find('=');
    auto a = add(spec.substr(0, eq), spec.substr(eq + 1), "a package asked", false);
    if (!a.ok()) return std::move(a).error();
  }
  return c;
}

// The running groups' expected ends the planner gets: paictl does not know
// them, so each group on a node to maintain is taken as ending within the wait.
std::map<std::string, double> maintain_expected_ends(const hived::LiveState& live, double now,
                                                     double wait_s) {
  std::map<std::string, double> ends;
  if (wait_s <= 0) return ends;
  for (const auto& g : live.groups) ends[g.name] = now + wait_s;
  return ends;
}

UseCaseError maintain_hived_error(const std::string& where, const hived::Error& e) {
  UseCaseError u = remote_error("HiveD at " + where + ": " +
                                (e.doing.empty() ? std::string() : e.doing + ": ") + e.summary());
  if (e.kind == hived::Error::Kind::Transport) u.about = UseCaseError::About::HivedUnreachable;
  return u;
}

}  // namespace

UseCaseResult<MaintainPlan> plan_maintain(const MaintainRequest& request, const MaintainDeps& deps,
                                          const Callbacks& cb) {
  MaintainPlan p;
  p.request = request;
  p.deps = deps;
  int asked = (request.driver.empty() ? 0 : 1) + (request.packages.empty() ? 0 : 1);
  if (asked == 0 && !request.reboot)
    return input_error("node maintain: nothing to change",
                       "ask for a driver, packages or a reboot");
  if (request.hosts.empty()) return input_error("node maintain: no host named");
  for (const auto& spec : request.packages) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return input_error("package " + spec + ": expected PKG=VERSION",
                         "e.g. nvidia-container-toolkit=1.17.3-1");
  }
  auto mu = hived::parse_max_unavailable(request.max_unavailable);
  if (!mu.ok()) return input_error("max unavailable: " + mu.error().message, mu.error().hint);

  PrepareRequest pr;
  pr.cluster_dir = request.cluster_dir;
  pr.limit = request.hosts;
  auto prepared = prepare_cluster(pr, deps.install.load_hosts);
  if (!prepared.ok()) return std::move(prepared).error();
  p.cluster = std::make_shared<const PreparedCluster>(std::move(prepared).value());
  if (!p.cluster->master()) return input_error("node maintain: layout.yaml has no master");

  // The hosts, read at once.
  std::vector<const HostSpec*> specs;
  for (const auto& name : request.hosts) {
    const HostSpec* s = nullptr;
    for (const auto& h : p.cluster->specs)
      if (h.name == name || h.address == name) s = &h;
    if (!s)
      return UseCaseError(
          input_error(name + " is not a host of " + request.cluster_dir + "/layout.yaml").error,
          UseCaseError::About::UnknownHost);
    specs.push_back(s);
  }
  auto transport = make_transport(deps.install.transport, p.cluster->hosts.ssh_password);
  std::vector<std::future<remote::ExecResult>> reads;
  for (const HostSpec* s : specs) {
    std::vector<std::string> names;
    if (!request.driver.empty()) {
      names.push_back("nvidia-driver-" + request.driver.substr(0, request.driver.find('.')));
      names.push_back("nvidia-driver");
    }
    for (const auto& spec : request.packages) names.push_back(spec.substr(0, spec.find('=')));
    reads.push_back(std::async(std::launch::async, [&transport, s, names] {
      return maintain_exec(*transport, s->target, maintain_read_script(names));
    }));
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    auto x = reads[i].get();
    if (!x.ok() || x.exit_status != 0)
      return remote_error("reading " + specs[i]->name + ": " + exec_failure(x));
    auto c = maintain_host_change(request, *specs[i], maintain_parse_read(x.out));
    if (!c.ok()) return std::move(c).error();
    p.hosts.push_back(std::move(c).value());
  }

  // The batches, around HiveD's running groups when it is known.
  double now = deps.epoch ? deps.epoch() : static_cast<double>(std::time(nullptr));
  // Only the hosts that change are taken out of service.
  hived::MaintenanceRequest mr;
  for (const auto& h : p.hosts)
    if (h.changes()) mr.nodes.push_back(h.host);
  if (mr.nodes.empty()) return p;  // nothing to do: no batch
  mr.max_unavailable = *mu;
  mr.wait_for_groups_s = request.wait_for_groups_s;
  mr.evict = request.evict;
  mr.now_s = now;
  std::optional<hived::LiveState> live;
  std::string fallback;
  if (!request.hived.empty()) {
    auto http = hived_http_client(deps.hived_http, &cb);
    hived::Client client(*http, request.hived);
    std::string where = http::redact_url(request.hived);
    auto l = hived::read_live(client);
    if (!l.ok()) return maintain_hived_error(where, l.error());
    live = std::move(l).value();
    mr.expected_ends = maintain_expected_ends(*live, now, request.wait_for_groups_s);
    p.hived_source = "the live HiveD at " + where;
  } else {
    fallback = "no --hived URL and no hived_url in config.yaml: the running groups are not known";
    p.hived_source = fallback;
  }
  auto plan = hived::plan_maintenance(mr, live ? &*live : nullptr, fallback);
  if (!plan.ok()) return input_error("node maintain: " + plan.error().message, plan.error().hint);
  p.maintenance = std::move(plan).value();
  for (const auto& w : p.maintenance.warnings) {
    UseCaseEvent e;
    e.kind = UseCaseEvent::Kind::Warning;
    e.message = w;
    cb.emit(e);
  }
  return p;
}

namespace {

// Whether `h` shows the change: the host came back from its reboot, nvidia-smi
// reports the driver on the SKU's GPU count, the packages are at their
// versions, the Node is Ready with its GPUs allocatable. "" when it does, else
// what is still missing.
std::string maintain_check(remote::Transport& t, const remote::Target& host, const HostSpec& master,
                           const HostChange& h, const std::string& run_id) {
  std::string s;
  if (h.reboot)
    s += "if [ \"$(cat /run/lock/paictl-maintain.boot 2>/dev/null)\" = " +
         util::shell_quote(run_id) + " ]; then echo 'not rebooted yet'; exit 0; fi\n";
  if (h.gpus > 0) {
    s += "smi=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1) || "
         "{ echo \"nvidia-smi: $smi\" | head -1; exit 0; }\n";
    s += "n=$(printf '%s\\n' \"$smi\" | grep -c .)\n";
    s += "[ \"$n\" = " + std::to_string(h.gpus) + " ] || { echo \"nvidia-smi shows $n GPUs, not " +
         std::to_string(h.gpus) + "\"; exit 0; }\n";
    if (!h.driver_expected.empty())
      s += "printf '%s\\n' \"$smi\" | grep -vqx " + util::shell_quote(h.driver_expected) +
           " && { echo \"nvidia-smi reports driver $(printf '%s\\n' \"$smi\" | head -1), not " +
           h.driver_expected + "\"; exit 0; }\n";
  }
  for (const auto& p : h.packages)
    s += "v=$(dpkg-query -W --showformat='${Version}' " + util::shell_quote(p.name) +
         " 2>/dev/null || true); [ \"$v\" = " + util::shell_quote(p.to) + " ] || { echo \"" +
         p.name + " is at ${v:-nothing}, not " + p.to + "\"; exit 0; }\n";
  auto x = maintain_exec(t, host, s, 60000);
  if (!x.ok()) return "unreachable: " + x.error;
  if (x.exit_status != 0) return exec_failure(x);
  std::string said(util::trim(x.out));
  if (!said.empty()) return said;
  std::string k = master_kubectl() + " get node " + util::shell_quote(h.host) + " -o jsonpath=";
  std::string m = k + "'{.status.conditions[?(@.type==\"Ready\")].status} " +
                  "{.status.allocatable.nvidia\\.com/gpu}'";
  auto y = maintain_exec(t, master.target, m, 60000);
  if (!y.ok() || y.exit_status != 0) return "kubectl get node: " + exec_failure(y);
  std::istringstream in(y.out);
  std::string ready, gpus;
  in >> ready >> gpus;
  if (ready != "True") return "the Node is not Ready";
  if (h.gpus > 0 && gpus != std::to_string(h.gpus))
    return "the Node has " + (gpus.empty() ? std::string("no") : gpus) + " GPUs allocatable, not " +
           std::to_string(h.gpus);
  return {};
}

}  // namespace

MaintainOutcome apply_maintain(MaintainPlan& p, const Callbacks& cb) {
  MaintainOutcome o;
  const MaintainRequest& r = p.request;
  if (r.dry_run) {
    o.end = MaintainOutcome::End::DryRun;
    return o;
  }
  if (p.blocked()) {
    std::vector<std::string> why;
    for (const auto& g : p.maintenance.blocking)
      why.push_back(g.name + " on " + util::join(g.nodes, ", "));
    std::vector<std::string> nodes;
    for (const auto& b : p.maintenance.blocked) nodes.push_back(b.node);
    o.end = MaintainOutcome::End::Blocked;
    o.error = other_error("node maintain: running groups block " + util::join(nodes, ", ") + ": " +
                              util::join(why, "; "),
                          "--wait-for-groups DURATION waits for them; --evict drains their nodes");
    return o;
  }
  if (!p.changes()) {
    o.end = MaintainOutcome::End::UpToDate;
    return o;
  }
  if (!r.yes) {
    Question q;
    q.kind = Question::Kind::ApplyHosts;
    q.nodes = r.hosts;
    if (cb.ask(q) != Answer::Yes) {
      o.end = MaintainOutcome::End::Declined;
      return o;
    }
  }
  // One run changes the cluster at a time: not beside an install, an upgrade
  // or another node maintain of it.
  LocalLock lock;
  if (auto locked = lock.acquire(p.cluster->cluster_dir + "/.paictl/install.lock", "node maintain");
      !locked) {
    o.end = MaintainOutcome::End::Busy;
    o.error = input_error("node maintain: " + locked.error().message, locked.error().hint);
    return o;
  }
  std::shared_ptr<remote::Transport> transport =
      make_transport(p.deps.install.transport, p.cluster->hosts.ssh_password);
  NodeBatchRequest br;
  br.operation = "maintain";
  br.batches = node_batches_of(p.maintenance);
  br.wait_for_groups_s = r.wait_for_groups_s;
  br.drain_timeout_s = r.drain_timeout_s;
  br.poll_s = r.poll_s;
  br.state_dir = p.cluster->cluster_dir + "/.paictl";
  NodeBatchDeps bd;
  bd.transport = transport.get();
  bd.master = *p.cluster->master();
  bd.clock = p.deps.clock;
  std::map<std::string, const HostChange*> changes;
  std::map<std::string, const HostSpec*> specs;
  for (const auto& h : p.hosts) changes[h.host] = &h;
  for (const auto& s : p.cluster->specs) {
    if (!changes.count(s.name)) continue;
    bd.nodes[s.name] = s.target;
    specs[s.name] = &s;
  }
  if (!r.hived.empty()) {
    auto http = hived_http_client(p.deps.hived_http, nullptr);
    auto client = std::shared_ptr<hived::Client>(new hived::Client(*http, r.hived),
                                                 [http](hived::Client* c) { delete c; });
    bd.groups_on_node = hived_groups_on_node(client);
  }
  // The run id is the runner's; the scripts need it: make it here.
  br.run_id = "m" + std::to_string(static_cast<long long>(std::time(nullptr))) + "-" +
              std::to_string(static_cast<long long>(::getpid()));
  std::string run_id = br.run_id;
  bd.action = [&changes, run_id](const std::string& node,
                                 remote::Connection& host) -> util::Result<void> {
    const HostChange& h = *changes.at(node);
    remote::ExecRequest req;
    req.command = "sh -c " + util::shell_quote(MaintainPlan::change_script(h, run_id));
    req.timeout_ms = 900000;
    auto x = host.exec(req);
    // A reboot may end the session before it answers.
    bool rebooting = h.reboot && x.failure == remote::Failure::Protocol;
    if (!rebooting && (!x.ok() || x.exit_status != 0))
      return util::Error{"changing the packages: " + exec_failure(x), {}};
    return {};
  };
  auto* tp = transport.get();
  const HostSpec* master = p.cluster->master();
  util::Clock clock = p.deps.clock;
  int timeout = r.verify_timeout_s;
  double poll = r.poll_s;
  bd.verify = [&changes, &specs, tp, master, clock, timeout, poll, run_id](
                  const std::string& node, remote::Connection&,
                  remote::Connection&) -> util::Result<void> {
    const HostChange& h = *changes.at(node);
    double deadline = clock.now() + timeout;
    std::string missing;
    for (;;) {
      missing = maintain_check(*tp, specs.at(node)->target, *master, h, run_id);
      if (missing.empty()) return {};
      if (clock.now() >= deadline) break;
      clock.sleep(std::max(0.1, poll));
    }
    return util::Error{"not verified after " + std::to_string(timeout) + " s: " + missing, {}};
  };
  o.run = run_node_batches(br, bd, cb);
  o.end = MaintainOutcome::End::Applied;
  if (o.run->error) o.error = o.run->error;
  return o;
}

}  // namespace pai::deploy
