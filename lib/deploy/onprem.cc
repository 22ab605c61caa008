#include "deploy/onprem.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <list>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <kainjow/mustache.hpp>

#include "check/catalogue.h"
#include "check/hybrid.h"
#include "deploy/engine.h"
#include "facts/fact_script.h"
#include "util/fs.h"
#include "util/strings.h"

namespace pai::deploy {

namespace {

// The description paictl gives kubeadm init's own bootstrap token
// (templates/install/kubeadm-init.yaml).
constexpr const char* kInitTokenMark = "paictl install: kubeadm init's token";

using util::shell_quote;

// The bootstrap tokens on the master: "token=ID" and the rest of kubeadm token
// list's line (TTL, expiry, usages, description); never the token's secret half.
constexpr const char* kTokenList =
    "[ -f /etc/kubernetes/admin.conf ] || exit 0\n"
    "kubeadm token list 2>/dev/null | awk 'NR>1 {split($1, a, \".\"); $1=\"\"; print \"token=\" "
    "a[1] "
    "$0}'\n";

// kubeadm init, join and reset on a host hold an flock on /run/lock/paictl-kubeadm
// (fd 9, inherited by kubeadm) for as long as they run: a run of paictl killed
// during one of them leaves it running on the host, and the next run must not
// decide from what it has half written. The steps wait for the lock before they
// start, and remove the file when they end (no lock is left on a host); the
// control plane's observation waits for it, where the file is there, before it
// reads. Where flock or the directory is missing, nothing waits.
const std::string kKubeadmLock = "/run/lock/paictl-kubeadm";
const std::string kKubeadmLockElsewhere = "/tmp/paictl-kubeadm.lock";  // no /run/lock
const std::string kKubeadmLockPath =
    "pai_kl=" + kKubeadmLock + "; [ -d /run/lock ] || pai_kl=" + kKubeadmLockElsewhere + "\n";
const std::string kKubeadmLockOpen =
    kKubeadmLockPath +
    "if command -v flock >/dev/null 2>&1 && [ -w \"${pai_kl%/*}\" ]; then exec 9>>\"$pai_kl\"; "
    "flock -w 900 9 || true; trap 'rm -f \"$pai_kl\"' EXIT; fi\n";
std::string holding_kubeadm_lock(const std::string& step) {
  return kKubeadmLockOpen + step;
}
// The observation's wait: only where a step made the file (a read changes nothing).
const std::string kKubeadmSettled =
    kKubeadmLockPath +
    "if [ -f \"$pai_kl\" ] && command -v flock >/dev/null 2>&1; then exec 9<\"$pai_kl\"; "
    "flock -w 900 9 || true; exec 9<&-; fi\n";

constexpr const char* kModulesFile = "/etc/modules-load.d/paictl-kubernetes.conf";
constexpr const char* kSysctlFile = "/etc/sysctl.d/99-paictl-kubernetes.conf";
constexpr const char* kKubeList = "/etc/apt/sources.list.d/paictl-kubernetes.list";
constexpr const char* kNvidiaList = "/etc/apt/sources.list.d/paictl-nvidia-container-toolkit.list";
constexpr const char* kBundleList = "/etc/apt/sources.list.d/paictl-bundle.list";
constexpr const char* kBundleDir = "/var/cache/paictl/bundle";
constexpr const char* kKubeKeyring = "/etc/apt/keyrings/paictl-kubernetes.gpg";
constexpr const char* kNvidiaKeyring = "/etc/apt/keyrings/paictl-nvidia-container-toolkit.gpg";
// What paictl records on a host (the cluster it belongs to, its state before
// install): in /etc, which is the host's own on every system and on the testbed.
constexpr const char* kStateDir = "/etc/paictl";
const std::string kModules = "overlay\nbr_netfilter\n";
const std::string kSysctls =
    "net.bridge.bridge-nf-call-iptables = 1\nnet.bridge.bridge-nf-call-ip6tables = 1\n"
    "net.ipv4.ip_forward = 1\n";

std::string minor_of(const std::string& v) {
  auto parts = util::split(v, '.');
  return parts.size() >= 2 ? std::string(parts[0]) + "." + std::string(parts[1]) : v;
}
int minor_number(const std::string& v) {
  std::string t = !v.empty() && v[0] == 'v' ? v.substr(1) : v;
  auto parts = util::split(t, '.');
  return parts.size() >= 2 ? static_cast<int>(util::parse_int(parts[1]).value_or(0)) : 0;
}

// FNV-1a: a stable fingerprint of a rendered manifest, kept in an annotation.
std::string content_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

bool has_gpu(const HostSpec& h) {
  return h.gpus > 0 && h.gpu_type == "nvidia.com/gpu";
}

// Whether kubeadm is on the PATH (a built-in: no process), for the phases that
// run it.
constexpr const char* kKubeadmPresent = "command -v kubeadm >/dev/null && echo kubeadm_present=1\n";

// The version of the kubeadm a kubeadm init or join runs ("v1.30.10"), for the
// configuration it is given: the kubeadm package's upstream version, which the
// packages phase read on this host in this run (dpkg-query's "1.30.10-1.1"),
// so that no observation runs `kubeadm version` only in case it joins. A
// kubeadm not installed as a package is asked; none at all: the one install
// puts there.
std::string kubeadm_version(HostRun& h, std::map<std::string, std::string>& kv,
                            const InstallSettings& s) {
  std::string pkg = h.facts().value("kubeadm_package", "");
  if (!pkg.empty()) {
    if (size_t colon = pkg.find(':'); colon != std::string::npos) pkg.erase(0, colon + 1);
    if (size_t dash = pkg.rfind('-'); dash != std::string::npos) pkg.resize(dash);
    return "v" + pkg;
  }
  if (kv.count("kubeadm_present")) {
    auto r = h.observe_sh("kubeadm version -o short 2>/dev/null");
    std::string v(util::trim(r.out));
    if (r.ok() && r.exit_status == 0 && !v.empty()) return v;
  }
  return "v" + s.kube_version;
}

// A phase that observes its host with one read-only script printing "key=value"
// lines (a failed script is a failed observation) and computes its needs from
// them. The script is listed for reading ahead and run by observe() from the
// same text, which Phase::observation_reads requires.
class KeyValuePhase : public Phase, public ReadsAhead {
 public:
  using Phase::Phase;
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, observation(h)});
    more_reads(h, out);
  }
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    auto r = h.observe_sh(observation(h));
    if (!r.ok() || r.exit_status != 0) return command_failure("observing " + what(), r);
    auto kv = parse_key_values(r.out);
    return needs_from(h, kv, needs);
  }

 protected:
  // What is observed, for the error: "observing the OS".
  virtual std::string what() const = 0;
  virtual std::string observation(const HostRun& h) const = 0;
  // Other scripts needs_from() reads (with observe_sh), on this host or another.
  virtual void more_reads(HostRun&, std::vector<ObservationRead>&) {}
  virtual util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                        std::vector<std::string>& needs) = 0;
};

// Sets the shell variable v to a file's content without its trailing newlines
// (what "$(cat FILE)" gives), "" when it is not a readable file, with the
// shell's built-ins only: no process for a small file.
std::string read_into_v(const std::string& path) {
  std::string q = shell_quote(path);
  return "v=; nl='\n'\nif [ -f " + q + " ] && [ -r " + q +
         " ]; then while IFS= read -r l || [ -n \"$l\" ]; do v=\"$v$l$nl\"; done < " + q +
         "; fi\n"
         "while :; do case $v in *\"$nl\") v=${v%\"$nl\"} ;; *) break ;; esac; done\n";
}

// A file's content compared on the host: prints KEY=1 when it matches.
std::string same_file_test(const std::string& key, const std::string& path, std::string content) {
  // As $(cat) would, the file is compared without its trailing newlines.
  while (!content.empty() && content.back() == '\n') content.pop_back();
  return read_into_v(path) + "[ \"$v\" = " + shell_quote(content) + " ] && echo " + key + "=1\n";
}

std::string remote_parent_dir(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

std::string write_file(const std::string& path, const std::string& content, int mode = 0644) {
  char m[8];
  std::snprintf(m, sizeof m, "%o", mode);
  const std::string dir = shell_quote(remote_parent_dir(path));
  // mkdir only where the directory is not there (a process fewer a file, mostly).
  return "[ -d " + dir + " ] || mkdir -p " + dir + "\nprintf '%s' " + shell_quote(content) + " > " +
         shell_quote(path) + ".paictl-new\nchmod " + m + " " + shell_quote(path) +
         ".paictl-new\nmv " + shell_quote(path) + ".paictl-new " + shell_quote(path) + "\n";
}

// Waits for `done` to say true, for at most wait_s: it asks at once, then
// after 0.1 s, 0.2 s, ... up to every `every_ms` (what is waited for is often
// there within a fraction of a second).
template <typename F>
bool poll(int wait_s, int every_ms, F done) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
  int pause_ms = std::min(100, every_ms);
  while (true) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    pause_ms = std::min(pause_ms * 2, every_ms);
  }
}

// ------------------------------------------------------------------ phases

// Connect and detect the OS: every later phase depends on it; unsupported
// systems are refused here, before anything changes.
class DetectOs : public KeyValuePhase {
 public:
  DetectOs() : KeyValuePhase("os", {.cluster_scope = true, .read_only = true}) {}
  static constexpr const char* kScript =
      ". /etc/os-release 2>/dev/null\n"
      "echo \"os_id=$ID\"; echo \"os_version=$VERSION_ID\"; echo "
      "\"os_name=$PRETTY_NAME\"\n"
      // The default route's device: the first route of the main table to
      // 0.0.0.0/0 in /proc/net/route (what `ip route show default` lists, read
      // without a process); where that file cannot be read, the word after
      // the first "dev" of ip's lines that is not a line's last word.
      "i=\n"
      "if [ -r /proc/net/route ]; then\n"
      "while read -r f d g x x x x k x; do [ \"$d\" = 00000000 ] && [ \"$k\" = 00000000 ] && "
      "{ i=$f; break; }; done < /proc/net/route\n"
      "else\n"
      "r=$(ip route show default 2>/dev/null)\n"
      "set -f\n"
      "while IFS= read -r l; do set -- $l; while [ $# -gt 1 ]; do [ \"$1\" = dev ] && { "
      "i=$2; break 2; }; shift; done; done <<EOF\n"
      "$r\n"
      "EOF\n"
      "set +f\n"
      "fi\n"
      "if [ -n \"$i\" ]; then m=; [ -r \"/sys/class/net/$i/mtu\" ] && read -r m < "
      "\"/sys/class/net/$i/mtu\"; echo \"mtu=$m\"; fi\n"
      "[ -e /etc/paictl/cluster ] && echo ours=1\n"
      "[ -e /etc/kubernetes/kubelet.conf ] && echo joined=1\n"
      "L=/run/lock/paictl-install; [ -d /run/lock ] || L=/tmp/paictl-install.lock\n"
      "if [ -f \"$L\" ]; then h=; [ -r \"$L\" ] && IFS= read -r h < \"$L\"; echo \"lock=$h\"; fi\n"
      "true\n";
  std::string what() const override { return "the OS"; }
  std::string observation(const HostRun&) const override { return kScript; }
  util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    // A lock left by an install killed on this machine: the next apply takes
    // it over and removes it at its end, so the plan must not say "up to date".
    if (kv.count("lock") && holder_is_dead_here(kv["lock"]))
      needs.push_back("remove the install lock of a run that is gone (" + kv["lock"] + ")");
    auto& f = h.facts();
    f["os_id"] = kv["os_id"];
    f["os_version"] = kv["os_version"];
    f["mtu"] = util::parse_int(kv["mtu"]).value_or(1500);
    f["ours"] = kv.count("ours") > 0 || kv.count("joined") > 0;
    if (auto supported = supported_os(kv["os_id"], kv["os_version"]); !supported)
      return util::Error{supported.error().message,
                         "paictl install supports Ubuntu 20.04, 22.04, 24.04 and Debian 12; "
                         "reinstall the host or leave it out of layout.yaml (or --limit)"};
    return {};
  }
  util::Result<void> apply(HostRun&, const std::vector<std::string>&) override { return {}; }
};

// The routed transport of the pre-install checks: each host's commands go over
// the connection the engine keeps for it.
// When the run has read the fact script's output already (the read ahead
// `prefetch_key`), that is served instead.
class KeptConnections : public remote::Transport {
 public:
  KeptConnections(const std::vector<HostRun*>& hosts, std::string prefetch_key)
      : key_(std::move(prefetch_key)) {
    for (auto* h : hosts) by_name_[h->spec().target.endpoint.name] = h;
  }
  remote::ExecResult exec(const remote::Target& target, const remote::ExecRequest& req) override {
    auto it = by_name_.find(target.endpoint.name);
    // Only the fact script's own request (check::collect's) is served from it.
    if (it != by_name_.end() && req.command == facts::bootstrap_command()) {
      remote::ExecResult r;
      if (it->second->observations().find(key_, r) && r.exit_status == 0) return r;
    }
    if (it == by_name_.end() || !it->second->connection) {
      remote::ExecResult r;
      r.failure = remote::Failure::Channel;
      r.error = "no connection to " + target.endpoint.name;
      return r;
    }
    return it->second->connection->exec(req);
  }

 private:
  std::string key_;
  std::map<std::string, HostRun*> by_name_;
};

// The pre-install checks of `check hosts`. Errors stop the install unless
// ignored (--ignore-check-errors, kubeadm's semantics: they still run). What
// install itself sets up (swap, runtime, modules) is not held against a host,
// nor, on hosts this cluster's install already reached, what it left there.
class PreInstallChecks : public ClusterWidePhase, public ReadsAhead {
 public:
  explicit PreInstallChecks(const InstallSettings& s)
      : ClusterWidePhase("checks", {.read_only = true}), s_(s) {}
  // The fact script as `check hosts` runs it (as root: $1 the privilege, $2
  // the SSH connection), for a dry run's one session. Logged in as another user
  // (sudo: the SSH connection is not passed on) the checks read it themselves.
  std::string read_script() const {
    return "set -- root \"${SSH_CONNECTION:-}\"\n" + facts::fact_script(s_.script);
  }
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    if (h.spec().target.endpoint.user == "root") out.push_back({&h, read_script()});
  }
  void observe_all(std::vector<HostRun*>& hosts, std::vector<util::Result<void>>& status,
                   std::vector<std::vector<std::string>>&) override {
    KeptConnections transport(hosts, read_script());
    std::vector<inventory::HostPlan> plans;
    for (auto* h : hosts) plans.push_back(h->spec().plan);
    check::CollectOptions co;
    co.parallel = hosts.size();
    co.script = s_.script;
    co.sudo_password = s_.sudo_password;
    auto outcomes = check::collect(transport, plans, co);
    auto results = check::evaluate(outcomes, s_.eval);
    if (s_.hybrid) {
      auto exec = [&](size_t i, const std::string& script, int timeout_ms) {
        remote::ExecRequest req;
        req.command = "sh -c " + util::shell_quote(script);
        req.timeout_ms = timeout_ms;
        return transport.exec(outcomes[i].plan.target, req);
      };
      check::HybridOptions ho;
      ho.parallel = hosts.size();
      auto more = check::hybrid_checks(*s_.hybrid, outcomes, exec, ho);
      results.insert(results.end(), more.begin(), more.end());
    }
    check::demote(results, s_.ignore_checks);
    static const std::set<std::string> kInstallFixes = {"Swap",
                                                        "IPForward",
                                                        "BridgeNetfilter",
                                                        "KernelModules",
                                                        "Docker",
                                                        "DockerVersion",
                                                        "DefaultRuntimeBinary",
                                                        "NvidiaRuntime",
                                                        "DefaultRuntime",
                                                        "Binaries",
                                                        "DaemonJson"};
    static const std::set<std::string> kOwnLeftovers = {"LeftoverEtcd",      "LeftoverKubernetes",
                                                        "LeftoverKubelet",   "LeftoverCNI",
                                                        "RunningKubernetes", "RunningContainers"};
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < hosts.size(); ++i) index[hosts[i]->spec().name] = i;
    std::vector<std::vector<std::string>> errors(hosts.size());
    std::vector<std::vector<std::string>> names(hosts.size());
    for (auto& r : results) {
      auto it = index.find(r.host);
      if (it == index.end()) continue;
      HostRun& h = *hosts[it->second];
      bool ours = h.facts().value("ours", false);
      bool own = kInstallFixes.count(r.check) ||
                 (ours && (kOwnLeftovers.count(r.check) || r.check.rfind("Port-", 0) == 0));
      if (r.status == check::Status::Fail && own) r.status = check::Status::Warn;
      if (r.status == check::Status::Fail) {
        errors[it->second].push_back(r.check + " (" + r.message + ")");
        names[it->second].push_back(r.check);
      }
      if (r.status == check::Status::Fail || r.status == check::Status::Warn)
        h.log("check " + r.check + ": " + std::string(check::to_string(r.status)) + ": " +
              r.message + (own ? " (install sets this up)" : ""));
    }
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (!outcomes[i].reached) {
        status[i] = util::Error{"the pre-install checks did not run: " + outcomes[i].exec.error,
                                outcomes[i].exec.hint};
      } else if (!errors[i].empty()) {
        status[i] =
            util::Error{"pre-install checks failed: " + util::join(errors[i], "; "),
                        "fix them, or pass --ignore-check-errors " + util::join(names[i], ",") +
                            " to go on anyway (they still run and are reported)"};
      }
    }
  }

 private:
  const InstallSettings& s_;
};

// Records on the host which cluster installed it, so a re-run knows what it left.
class MarkHost : public KeyValuePhase {
 public:
  explicit MarkHost(const InstallSettings& s) : KeyValuePhase("mark"), s_(s) {}
  std::string script() const {
    return same_file_test("marked", std::string(kStateDir) + "/cluster", s_.cluster_name + "\n") +
           "true\n";
  }
  std::string what() const override { return "the install marker"; }
  std::string observation(const HostRun&) const override { return script(); }
  util::Result<void> needs_from(HostRun&, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    if (!kv.count("marked"))
      needs.push_back("record the host as part of cluster " + s_.cluster_name + " (" +
                      std::string(kStateDir) + "/cluster)");
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    // What was there before install, so that reset puts back exactly that.
    std::string d = kStateDir;
    return run_last_step(
        h, "recording the host's state before install",
        "mkdir -p " + d + "\n" + "[ -f " + d +
            "/packages.before ] || dpkg-query -W -f '${Package}\\n' > " + d +
            "/packages.before 2>/dev/null || true\n" + "[ -f " + d +
            "/modules.before ] || { lsmod | awk 'NR>1{print $1}' > " + d + "/modules.before; }\n" +
            "[ -f " + d +
            "/sysctl.before ] || { for k in net.ipv4.ip_forward; do echo \"$k=$(sysctl -n $k)\"; "
            "done > " +
            d + "/sysctl.before; }\n" + write_file(d + "/cluster", s_.cluster_name + "\n"));
  }

 private:
  const InstallSettings& s_;
};

class Swap : public KeyValuePhase {
 public:
  Swap() : KeyValuePhase("swap") {}
  // Built-ins only: the lines of /proc/swaps after its header, and the lines of
  // /etc/fstab that grep -E '^[^#].*[[:space:]]swap[[:space:]]' counts.
  static constexpr const char* kScript =
      "n=0; if [ -r /proc/swaps ]; then n=-1; while IFS= read -r l; do n=$((n + 1)); done < "
      "/proc/swaps; [ $n -ge 0 ] || n=0; fi; echo \"active=$n\"\n"
      "n=; if [ -f /etc/fstab ] && [ -r /etc/fstab ]; then n=0; while IFS= read -r l || [ -n "
      "\"$l\" ]; do case $l in [!#]*[[:space:]]swap[[:space:]]*) n=$((n + 1)) ;; esac; done < "
      "/etc/fstab; fi; echo \"fstab=$n\"\n";
  std::string what() const override { return "swap"; }
  std::string observation(const HostRun&) const override { return kScript; }
  util::Result<void> needs_from(HostRun&, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    int64_t active = util::parse_int(kv["active"]).value_or(0);
    int64_t fstab = util::parse_int(kv["fstab"]).value_or(0);
    if (active > 0) needs.push_back("turn swap off (" + std::to_string(active) + " active)");
    if (fstab > 0)
      needs.push_back("comment out " + std::to_string(fstab) + " swap line(s) in /etc/fstab");
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    // Commented with a marker, so that reset can put them back.
    return run_last_step(h, "turning swap off",
                         "swapoff -a\n"
                         "sed -i -E 's/^([^#].*[[:space:]]swap[[:space:]].*)$/# paictl: \\1/' "
                         "/etc/fstab\n");
  }
};

class Kernel : public KeyValuePhase {
 public:
  Kernel() : KeyValuePhase("kernel") {}
  static std::string script() {
    // One sysctl call for the three keys ("key = value" lines; a key the
    // kernel lacks is left out).
    // The loaded modules from /proc/modules, which lsmod prints.
    return std::string(
               "if [ -r /proc/modules ]; then while read -r m rest; do case $m in overlay | "
               "br_netfilter) echo \"mod_$m=1\" ;; esac; done < /proc/modules\n"
               // Without /proc/modules, the directories of /sys/module (a loaded or
               // built-in module's), then lsmod.
               "elif [ -d /sys/module ]; then for m in overlay br_netfilter; do [ -d "
               "\"/sys/module/$m\" ] && echo \"mod_$m=1\"; done\n"
               "else lsmod | awk 'NR>1 && ($1==\"overlay\" || $1==\"br_netfilter\") {print "
               "\"mod_\"$1\"=1\"}'; fi\n") +
           same_file_test("modules_file", kModulesFile, kModules) +
           same_file_test("sysctl_file", kSysctlFile, kSysctls) +
           "sysctl net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables "
           "net.bridge.bridge-nf-call-ip6tables 2>/dev/null\n"
           "true\n";
  }
  std::string what() const override { return "kernel modules and sysctls"; }
  std::string observation(const HostRun&) const override { return script(); }
  util::Result<void> needs_from(HostRun&, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    std::vector<std::string> mods;
    for (const char* m : {"overlay", "br_netfilter"})
      if (!kv.count(std::string("mod_") + m)) mods.push_back(m);
    if (!mods.empty()) needs.push_back("load kernel modules " + util::join(mods, ", "));
    if (!kv.count("modules_file")) needs.push_back(std::string("write ") + kModulesFile);
    if (!kv.count("sysctl_file")) needs.push_back(std::string("write ") + kSysctlFile);
    std::vector<std::string> bad;
    for (const char* k : {"net.ipv4.ip_forward", "net.bridge.bridge-nf-call-iptables",
                          "net.bridge.bridge-nf-call-ip6tables"})
      if (kv[k] != "1") bad.push_back(k);
    if (!bad.empty()) needs.push_back("set " + util::join(bad, ", ") + " to 1");
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    return run_last_step(
        h, "loading modules and setting sysctls",
        write_file(kModulesFile, kModules) + "modprobe overlay\nmodprobe br_netfilter\n" +
            write_file(kSysctlFile, kSysctls) + "sysctl -p " + kSysctlFile + " >/dev/null\n");
  }
};

class Packages : public KeyValuePhase {
 public:
  explicit Packages(const InstallSettings& s) : KeyValuePhase("packages"), s_(s) {}

  std::string version() const { return s_.kube_version + "-1.1"; }
  std::string kube_repo() const {
    return s_.package_repo.empty()
               ? "https://pkgs.k8s.io/core:/stable:/v" + minor_of(s_.kube_version) + "/deb/"
               : s_.package_repo;
  }
  std::string nvidia_repo() const {
    return s_.nvidia_repo.empty()
               ? "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH)"
               : s_.nvidia_repo;
  }
  std::string kube_line() const {
    return "deb [signed-by=" + std::string(kKubeKeyring) + "] " + kube_repo() + " /\n";
  }
  std::string nvidia_line() const {
    return "deb [signed-by=" + std::string(kNvidiaKeyring) + "] " + nvidia_repo() + " /\n";
  }
  std::string bundle_line() const {
    return "deb [trusted=yes] file:" + std::string(kBundleDir) + " ./\n";
  }
  bool bundle() const { return !s_.offline_bundle.empty(); }
  std::vector<std::string> wanted(const HostSpec& h) const {
    std::vector<std::string> w = {"kubeadm=" + version(), "kubelet=" + version(),
                                  "kubectl=" + version(),
                                  bundle() ? "containerd.io" : "containerd"};
    if (has_gpu(h)) w.push_back("nvidia-container-toolkit");
    return w;
  }
  std::vector<std::string> bundle_files() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(s_.offline_bundle, ec)) {
      std::string n = e.path().filename().string();
      if (n.size() > 4 && n.substr(n.size() - 4) == ".deb" && e.is_regular_file()) out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string script(const HostSpec& spec) const {
    std::string script =
        "dpkg-query -W -f 'pkg_${Package}=${Version}=${db:Status-Abbrev}\\n' kubeadm kubelet "
        "kubectl containerd containerd.io nvidia-container-toolkit 2>/dev/null\n";
    if (bundle()) {
      script += same_file_test("source_bundle", kBundleList, bundle_line());
      for (const auto& f : bundle_files())
        script += "[ -f " + shell_quote(std::string(kBundleDir) + "/" + f) +
                  " ] || echo missing_file=1\n";
    } else {
      script += same_file_test("source_kube", kKubeList, kube_line());
      if (has_gpu(spec)) script += same_file_test("source_nvidia", kNvidiaList, nvidia_line());
    }
    return script + "true\n";
  }
  std::string what() const override { return "packages"; }
  std::string observation(const HostRun& h) const override { return script(h.spec()); }
  util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    if (bundle()) {
      if (kv.count("missing_file"))
        needs.push_back("copy the offline bundle (" + std::to_string(bundle_files().size()) +
                        " packages) to " + kBundleDir);
      if (!kv.count("source_bundle")) needs.push_back(std::string("add ") + kBundleList);
    } else {
      if (!kv.count("source_kube"))
        needs.push_back("add the Kubernetes v" + minor_of(s_.kube_version) +
                        " package repository (" + kube_repo() + ")");
      if (has_gpu(h.spec()) && !kv.count("source_nvidia"))
        needs.push_back("add the NVIDIA Container Toolkit package repository");
    }
    std::vector<std::string> missing;
    for (const auto& w : wanted(h.spec())) {
      auto eq = w.find('=');
      std::string name = w.substr(0, eq);
      auto it = kv.find("pkg_" + name);
      // ${db:Status-Abbrev}: desired state (i, or h when held) then "i" when installed.
      std::string st = it == kv.end() ? "" : it->second.substr(it->second.rfind('=') + 1);
      bool ok = st.size() >= 2 && st[1] == 'i';
      if (ok && eq != std::string::npos) ok = it->second.rfind(w.substr(eq + 1) + "=", 0) == 0;
      if (!ok) missing.push_back(w);
    }
    if (!missing.empty()) needs.push_back("install " + util::join(missing, " "));
    // The installed kubeadm's version, for the control plane's and the join's
    // configuration (kubeadm_version).
    {
      auto it = kv.find("pkg_kubeadm");
      std::string v;
      if (it != kv.end()) {
        std::string st = it->second.substr(it->second.rfind('=') + 1);
        if (st.size() >= 2 && st[1] == 'i') v = it->second.substr(0, it->second.rfind('='));
      }
      h.facts()["kubeadm_package"] = v;
    }
    // A hold is dpkg's selection (what `apt-mark hold` sets): "h" first in
    // ${db:Status-Abbrev}, so the same query answers it.
    std::vector<std::string> unheld;
    for (const char* p : {"kubeadm", "kubelet", "kubectl"}) {
      auto it = kv.find(std::string("pkg_") + p);
      std::string st = it == kv.end() ? "" : it->second.substr(it->second.rfind('=') + 1);
      if (st.empty() || st[0] != 'h') unheld.push_back(p);
    }
    if (!unheld.empty()) needs.push_back("hold " + util::join(unheld, " "));
    return {};
  }

  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    std::string script = "export DEBIAN_FRONTEND=noninteractive\nmkdir -p /etc/apt/keyrings\n";
    if (bundle()) {
      std::string mk = "mkdir -p " + std::string(kBundleDir) + "\n";
      if (util::Result<void> s = run_step(h, "creating " + std::string(kBundleDir), mk); !s.ok())
        return s;
      for (const auto& f : bundle_files()) {
        std::ifstream in(s_.offline_bundle + "/" + f, std::ios::binary);
        std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::string dst = std::string(kBundleDir) + "/" + f;
        if (util::Result<void> s =
                run_step(h, "copying " + f,
                         "cat > " + shell_quote(dst + ".part") + "\nmv " +
                             shell_quote(dst + ".part") + " " + shell_quote(dst) + "\n",
                         content);
            !s.ok())
          return s;
      }
      script += write_file(kBundleList, bundle_line());
    } else {
      // The repositories' signing keys, when this host can fetch them; without
      // one apt refuses the repository and says so.
      script += "[ -s " + std::string(kKubeKeyring) + " ] || { curl -fsSL --max-time 20 " +
                shell_quote(kube_repo() + "Release.key") + " | gpg --dearmor -o " + kKubeKeyring +
                " 2>/dev/null || rm -f " + kKubeKeyring +
                "; echo 'paictl: could not fetch the Kubernetes repository key' >&2; } || true\n";
      script += write_file(kKubeList, kube_line());
      if (has_gpu(h.spec())) {
        script += "[ -s " + std::string(kNvidiaKeyring) +
                  " ] || { curl -fsSL --max-time 20 "
                  "https://nvidia.github.io/libnvidia-container/gpgkey | gpg --dearmor -o " +
                  kNvidiaKeyring + " 2>/dev/null || rm -f " + kNvidiaKeyring + "; } || true\n";
        script += write_file(kNvidiaList, nvidia_line());
      }
    }
    script += "apt-get update -q\n";
    script += "apt-get install -y -q --allow-change-held-packages " +
              util::join(wanted(h.spec()), " ") + "\n";
    script += "apt-mark hold kubeadm kubelet kubectl\n";
    return run_last_step(h, "installing packages", script, {}, 1800000);
  }

 private:
  const InstallSettings& s_;
};

class Containerd : public KeyValuePhase {
 public:
  Containerd() : KeyValuePhase("containerd") {}
  inline static const std::string kScript =
      std::string(
          "C=/etc/containerd/config.toml\n"
          // Without a config file nothing more is read: the phase writes one and
          // restarts containerd whatever it runs now (no stamp without a config).
          "if [ -f $C ]; then\n"
          "echo config=1\n"
          // One grep for both settings; each matched line told apart without its
          // leading blanks.
          "g=$(grep -E '^[[:space:]]*(SystemdCgroup = true|default_runtime_name = \"nvidia\")' $C "
          "2>/dev/null)\n"
          "s=; n=\n"
          "while IFS= read -r l; do l=${l#\"${l%%[![:space:]]*}\"}; case $l in 'SystemdCgroup = "
          "true'*) s=1 ;; 'default_runtime_name = \"nvidia\"'*) n=1 ;; esac; done <<EOF\n"
          "$g\n"
          "EOF\n"
          "[ -n \"$s\" ] && echo systemd=1\n"
          "[ -n \"$n\" ] && echo nvidia=1\n") +
      read_into_v("/etc/containerd/paictl.stamp") +
      "h=$(sha256sum $C); [ \"$v\" = \"${h%% *}\" ] && echo stamp=1\n"
      "echo \"active=$(systemctl is-active containerd 2>/dev/null)\"\n"
      "fi\n";
  std::string what() const override { return "containerd"; }
  std::string observation(const HostRun&) const override { return kScript; }
  util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    bool gpu = has_gpu(h.spec());
    if (!kv.count("config") || !kv.count("systemd") || (gpu && !kv.count("nvidia")))
      needs.push_back(std::string("write /etc/containerd/config.toml (SystemdCgroup = true") +
                      (gpu ? ", nvidia the default runtime)" : ")"));
    if (!kv.count("stamp") || kv["active"] != "active")
      needs.push_back("restart containerd with that configuration");
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>& needs) override {
    std::string script;
    bool rewrite = !needs.empty() && needs[0].rfind("write", 0) == 0;
    if (rewrite) {
      script +=
          "mkdir -p /etc/containerd\n"
          "containerd config default > /etc/containerd/config.toml.paictl-new\n"
          "sed -i 's/SystemdCgroup = false/SystemdCgroup = true/' "
          "/etc/containerd/config.toml.paictl-new\n"
          "mv /etc/containerd/config.toml.paictl-new /etc/containerd/config.toml\n";
      if (has_gpu(h.spec()))
        script += "nvidia-ctk runtime configure --runtime=containerd --set-as-default\n";
    }
    script +=
        "systemctl restart containerd\n"
        "sha256sum /etc/containerd/config.toml | cut -d' ' -f1 > /etc/containerd/paictl.stamp\n"
        "systemctl enable kubelet\n";
    return run_last_step(h, "configuring containerd", script);
  }
};

std::string endpoint_of(const InstallSettings& s, const HostSpec& master) {
  return s.control_plane_endpoint.empty() ? master.address + ":6443" : s.control_plane_endpoint;
}

class ControlPlane : public KeyValuePhase {
 public:
  explicit ControlPlane(const InstallSettings& s)
      : KeyValuePhase(
            "control-plane",
            {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = true}),
        s_(s) {}

  static std::string script() {
    return kKubeadmSettled +
           std::string(
               "[ -f /etc/kubernetes/admin.conf ] && echo admin=1\n"
               "[ -f /etc/kubernetes/manifests/kube-apiserver.yaml ] && echo manifest=1\n"
               "[ -f /var/lib/kubelet/config.yaml ] && echo kubelet_config=1\n"
               "[ -d /etc/kubernetes/pki ] && echo pki=1\n") +
           kKubeadmPresent + "true\n";
  }
  std::string what() const override { return "the control plane"; }
  std::string observation(const HostRun&) const override { return script(); }
  void more_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, cluster_objects_script()});
    out.push_back({&h, kTokenList});
  }
  util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    // The API server answers when the read of the cluster's objects, which the
    // later phases make anyway, lists them: a kubectl run fewer than asking
    // /readyz first (about 0.1 s of the master's CPU).
    bool ready = false;
    if (kv.count("admin")) {
      auto r = h.observe_sh(cluster_objects_script());
      auto list = r.ok() ? nlohmann::json::parse(r.out, nullptr, false) : nlohmann::json();
      ready = list.is_object() && list.contains("items") && list["items"].is_array();
    }
    if (ready) {
      // A run killed between kubeadm init and deleting init's token left it.
      auto t = h.observe_sh(kTokenList);
      if (t.ok() && t.out.find(kInitTokenMark) != std::string::npos)
        needs.push_back("delete kubeadm init's bootstrap token (an interrupted run left it)");
      return {};
    }
    if (kv.count("admin")) {
      needs.push_back("wait for the API server (admin.conf is there, /readyz does not answer)");
      return {};
    }
    if (kv.count("manifest") || kv.count("kubelet_config") || kv.count("pki"))
      needs.push_back("clean up an interrupted kubeadm init (kubeadm reset -f)");
    kubeadm_version_ = kubeadm_version(h, kv, s_);
    std::string v = kubeadm_version_.substr(kubeadm_version_[0] == 'v' ? 1 : 0);
    needs.push_back("kubeadm init (Kubernetes v" + s_.kube_version + ", " + kubeadm_api_version(v) +
                    ", pods " + s_.pods_subnet + ", services " + s_.service_subnet + ", endpoint " +
                    endpoint_of(s_, h.spec()) + ")");
    return {};
  }

  util::Result<void> apply(HostRun& h, const std::vector<std::string>& needs) override {
    bool reset = false, init = false;
    for (const auto& n : needs) {
      reset |= n.find("kubeadm reset") != std::string::npos;
      init |= n.rfind("kubeadm init", 0) == 0;
    }
    bool stale_token = false;
    for (const auto& n : needs) stale_token |= n.rfind("delete kubeadm init's", 0) == 0;
    if (stale_token)
      return run_last_step(h, "deleting kubeadm init's bootstrap token",
                           std::string("kubeadm token list 2>/dev/null | grep \"") +
                               kInitTokenMark +
                               "\" | awk '{print $1}' | "
                               "while read -r t; do kubeadm token delete \"${t%%.*}\" >/dev/null; "
                               "done\n");
    if (!init) {
      bool up = poll(s_.wait_s, 1000, [&] {
        auto r = h.sh(std::string(kKubectl) + " get --raw=/readyz --request-timeout=5s");
        return r.ok() && r.exit_status == 0;
      });
      if (!up)
        return util::Error{"the API server does not answer on the master",
                           "look at the kubelet and the static pods on the master; "
                           "`kubeadm reset -f` there and a re-run start the control plane "
                           "again (its data is lost)"};
      return {};
    }
    if (reset)
      if (util::Result<void> s = run_step(h, "kubeadm reset -f (an interrupted init)",
                                          holding_kubeadm_lock("kubeadm reset -f"));
          !s.ok())
        return s;
    auto rendered = render_kubeadm_init(s_, h.spec(), kubeadm_version_);
    if (!rendered) return rendered.error();
    const std::string& config = *rendered;
    h.log("kubeadm configuration:\n" + config);
    // The configuration goes on stdin: nothing is left on the host to clean up.
    if (util::Result<void> s =
            run_step(h, "kubeadm init",
                     holding_kubeadm_lock("kubeadm init --config /dev/stdin --skip-token-print"),
                     config, 900000);
        !s.ok())
      return s;
    // kubeadm's own 24 h token (the only one right after init) is not needed:
    // workers get short-lived ones.
    return run_last_step(
        h, "deleting kubeadm init's default bootstrap token",
        "kubeadm token list 2>/dev/null | awk 'NR>1 {print $1}' | "
        "while read -r t; do kubeadm token delete \"${t%%.*}\" >/dev/null; done\n");
  }

 private:
  const InstallSettings& s_;
  std::string kubeadm_version_;
};

// A manifest applied on the master with server-side apply, recognised by the
// hash of its rendered text in an annotation of one of its objects.
class ManifestPhase : public Phase, public ReadsAhead {
 public:
  ManifestPhase(const InstallSettings& s, std::string name, bool barrier, std::string tmpl,
                std::string what, std::string ns, std::string daemonset)
      : Phase(std::move(name),
              {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = barrier}),
        s_(s),
        tmpl_(std::move(tmpl)),
        what_(std::move(what)),
        ns_(std::move(ns)),
        ds_(std::move(daemonset)) {}

  virtual std::map<std::string, std::string> values(HostRun& h) = 0;
  virtual bool wanted(HostRun&) { return true; }

  util::Result<void> render(HostRun& h, std::string& out) {
    auto v = values(h);
    auto text = render_template(s_.templates_dir, tmpl_, v);
    if (!text) return text.error();
    v["hash"] = content_hash(*text);
    auto manifest = render_template(s_.templates_dir, tmpl_, v);
    hash_ = v["hash"];
    if (!manifest) return manifest.error();
    out = std::move(*manifest);
    return {};
  }

  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, cluster_objects_script()});
  }
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    if (!wanted(h)) return {};
    std::string manifest;
    if (util::Result<void> s = render(h, manifest); !s.ok()) return s;
    auto r = h.observe_sh(cluster_objects_script());
    if (!r.ok()) return command_failure("observing " + what_, r);
    auto ds = objects_of_kind(nlohmann::json::parse(r.out, nullptr, false), "DaemonSet", ns_);
    std::string have;
    for (const auto& o : ds["items"])
      if (o["metadata"].value("name", "") == ds_ && o["metadata"].contains("annotations") &&
          o["metadata"]["annotations"].is_object())
        have = o["metadata"]["annotations"].value("paictl.io/config-hash", "");
    if (have != hash_) needs.push_back("apply " + what_);
    return {};
  }

  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    std::string manifest;
    if (util::Result<void> s = render(h, manifest); !s.ok()) return s;
    if (util::Result<void> s =
            run_step(h, "applying " + what_,
                     std::string(kKubectl) +
                         " apply --server-side --field-manager=paictl --force-conflicts -f -",
                     manifest);
        !s.ok())
      return s;
    if (!wait_for_rollouts(h, ns_, {"daemonset/" + ds_}, s_.wait_s).empty())
      return util::Error{"waiting for " + what_ + ": daemonset/" + ds_ +
                             " did not roll out within " + std::to_string(s_.wait_s) + " s",
                         "look at its pods: kubectl -n " + ns_ + " describe daemonset " + ds_};
    return {};
  }

 protected:
  const InstallSettings& s_;

 private:
  std::string tmpl_, what_, ns_, ds_;
  std::string hash_;
};

class Flannel : public ManifestPhase {
 public:
  explicit Flannel(const InstallSettings& s)
      : ManifestPhase(s, "cni", false, "kube-flannel.yaml", "flannel (VXLAN)", "kube-flannel",
                      "kube-flannel-ds") {}
  std::map<std::string, std::string> values(HostRun& h) override {
    // VXLAN adds 50 bytes: the pods' MTU is the smallest host MTU less that,
    // and in a hybrid cluster the link between the sites (a VPN's 1400) less that.
    int64_t mtu = 0;
    for (auto* other : h.run().hosts) {
      int64_t m = other->facts().value("mtu", int64_t{1500});
      mtu = mtu == 0 ? m : std::min(mtu, m);
    }
    if (mtu <= 0) mtu = 1500;
    if (s_.tunnel_mtu > 0) mtu = std::min<int64_t>(mtu, s_.tunnel_mtu);
    return {{"pods", s_.pods_subnet}, {"mtu", std::to_string(mtu - 50)}};
  }
};

class DevicePlugin : public ManifestPhase {
 public:
  explicit DevicePlugin(const InstallSettings& s)
      : ManifestPhase(s, "device-plugin", true, "nvidia-device-plugin.yaml",
                      "the NVIDIA device plugin", "kube-system", "nvidia-device-plugin-daemonset") {
  }
  bool wanted(HostRun& h) override {
    for (auto* other : h.run().hosts)
      if (has_gpu(other->spec())) return true;
    return false;
  }
  std::map<std::string, std::string> values(HostRun&) override { return {}; }
};

util::Result<void> nodes_json(HostRun& master, nlohmann::json& out) {
  auto r = master.observe_sh(cluster_objects_script());
  if (!r.ok()) return command_failure("listing the nodes", r);
  out = objects_of_kind(nlohmann::json::parse(r.out, nullptr, false), "Node");
  return {};
}

const nlohmann::json* find_node(const nlohmann::json& nodes, const std::string& name) {
  if (!nodes.contains("items") || !nodes["items"].is_array()) return nullptr;
  for (const auto& n : nodes["items"])
    if (n.contains("metadata") && n["metadata"].value("name", "") == name) return &n;
  return nullptr;
}

class Workers : public KeyValuePhase {
 public:
  // Another worker's join changes neither this worker's Node nor its tokens;
  // its own verification reads the master after its join (master_read).
  explicit Workers(const InstallSettings& s)
      : KeyValuePhase("join", {.hosts = PhaseTraits::Hosts::AllButMaster,
                               .barrier = true,
                               .apply_changes_others_reads = false}),
        s_(s) {}

  static constexpr const char* kScript =
      "[ -f /etc/kubernetes/kubelet.conf ] && echo kubelet_conf=1\n"
      "[ -f /etc/kubernetes/pki/ca.crt ] && echo ca=1\n"
      "[ -f /var/lib/kubelet/config.yaml ] && echo kubelet_config=1\n";
  std::string what() const override { return "the kubelet"; }
  std::string observation(const HostRun&) const override {
    return std::string(kScript) + kKubeadmPresent + "true\n";
  }
  void more_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    if (HostRun* master = h.run().master()) {
      out.push_back({master, cluster_objects_script()});
      out.push_back({master, kTokenList});
    }
  }
  util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    HostRun* master = h.run().master();
    bool registered = false;
    if (master) {
      auto r = master_read(h, *master, cluster_objects_script());
      if (r.ok()) registered = node_listed(r.out, h.spec().name);
    }
    // Tokens a run that was killed could not delete (they would live out their
    // TTL): only their ids are read. A join wave's (its description names the
    // run, not a host) are the first worker's to delete; "paictl join of HOST"
    // is a token of one host's join.
    std::vector<std::string> leftover;
    if (master) {
      auto r = master_read(h, *master, kTokenList);
      const std::string mark = "paictl join of " + h.spec().name;
      const bool first = first_worker(h);
      if (r.ok())
        for (auto line : util::split(r.out, '\n')) {
          if (line.rfind("token=", 0) != 0) continue;
          std::string id(line.substr(6, line.find(' ') - 6));
          size_t at = line.find(mark);
          size_t after = at + mark.size();
          if (at != std::string_view::npos && (after >= line.size() || line[after] == ' ')) {
            leftover.push_back(id);
            continue;
          }
          size_t w = line.find(kWaveMark);
          if (!first || w == std::string_view::npos) continue;
          std::string_view run = line.substr(w + std::strlen(kWaveMark));
          run = run.substr(0, run.find(' '));
          if (run != run_mark_) leftover.push_back(id);
        }
    }
    {
      std::lock_guard lock(mu_);
      leftover_[h.spec().name] = leftover;
      // The verification's reads are used once.
      verifying_.erase(h.spec().name);
      after_join_.erase(h.spec().name);
    }
    if (!leftover.empty())
      needs.push_back("delete " + std::to_string(leftover.size()) +
                      " join token(s) an interrupted run left");
    bool conf = kv.count("kubelet_conf") > 0;
    if (conf && registered) return {};
    // Only a join renders a configuration for this kubeadm's version.
    h.facts()["kubeadm_version"] = kubeadm_version(h, kv, s_);
    if (conf)
      needs.push_back("reset a join the cluster does not know (kubeadm reset -f)");
    else if (kv.count("ca") || kv.count("kubelet_config"))
      needs.push_back("clean up an interrupted kubeadm join (kubeadm reset -f)");
    needs.push_back(
        "kubeadm join " + (master ? endpoint_of(s_, master->spec()) : std::string("the master")) +
        " (a token valid " + std::to_string(s_.join_token_ttl_s / 60) + " min, sent on stdin)");
    return {};
  }

  util::Result<void> apply(HostRun& h, const std::vector<std::string>& needs) override {
    util::Result<void> s = join(h, needs);
    // What the verification reads of the master next must postdate this apply.
    std::lock_guard lock(mu_);
    verifying_.insert(h.spec().name);
    return s;
  }

 private:
  // The description of a join wave's token: kWaveMark, then this phase's run.
  static constexpr const char* kWaveMark = "paictl join wave of run ";

  // Whether h is the first worker this run joins (layout order): it deletes the
  // join waves' tokens a killed run left, so that one host, not every worker,
  // has that need.
  static bool first_worker(HostRun& h) {
    for (auto* other : h.run().hosts)
      if (!other->spec().master && other->spec().selected) return other == &h;
    return false;
  }

  // The workers that join at the same time share one bootstrap token, minted
  // by the first of them and deleted on the master by the last one to finish,
  // which also reads there, in the same session, what every worker's
  // verification needs (the nodes, the tokens): one `kubeadm token create`
  // and one session with one kubectl run on the master per wave instead of per
  // worker. The token reaches each worker only on its kubeadm's stdin; its TTL
  // is minutes, and a worker that comes when it is half gone starts a wave of
  // its own.
  struct Wave {
    int joining = 0;       // workers of this wave whose join has not finished
    bool minting = true;   // the first worker is minting the token
    bool closing = false;  // its last worker is deleting the token: no one may join it
    bool done = false;     // the token is deleted; `reads` hold what was read after
    util::Result<void> minted;
    JoinCommand jc;
    std::string id;  // the token's id (not secret)
    std::chrono::steady_clock::time_point born;
    std::map<std::string, remote::ExecResult> reads;
  };

  util::Result<void> join(HostRun& h, const std::vector<std::string>& needs) {
    HostRun* master = h.run().master();
    if (!master) return util::Error{"no master in layout.yaml to join", ""};
    std::vector<std::string> leftover;
    {
      std::lock_guard lock(mu_);
      leftover = leftover_[h.spec().name];
    }
    for (const auto& id : leftover)
      master->sh("kubeadm token delete " + shell_quote(id) + " >/dev/null 2>&1 || true");
    bool join = false;
    for (const auto& n : needs) join |= n.rfind("kubeadm join", 0) == 0;
    if (!join) return {};
    for (const auto& n : needs)
      if (n.find("kubeadm reset") != std::string::npos)
        if (util::Result<void> s =
                run_step(h, "kubeadm reset -f", holding_kubeadm_lock("kubeadm reset -f"));
            !s.ok())
          return s;
    Wave& w = enter_wave(h, *master);
    util::Result<void> s = w.minted;
    if (s.ok()) {
      auto config = render_kubeadm_join(s_, h.spec(),
                                        h.facts().value("kubeadm_version", "v" + s_.kube_version),
                                        w.jc.endpoint, w.jc.token, w.jc.ca_hash);
      // The join configuration holds the token: it goes on stdin, never to a
      // file or argv. Nothing changes here after the join.
      if (!config) {
        s = config.error();
      } else {
        s = run_last_step(h, "kubeadm join",
                          holding_kubeadm_lock("kubeadm join --config /dev/stdin"), *config,
                          900000);
        std::fill(config->begin(), config->end(), '\0');
      }
    }
    leave_wave(h, *master, w, s.ok());
    return s;
  }

  // Joins the current wave, or starts one (minting its token) when there is
  // none a worker may still join.
  Wave& enter_wave(HostRun& h, HostRun& master) {
    std::unique_lock lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    const auto half_ttl = std::chrono::seconds(std::max(1, s_.join_token_ttl_s / 2));
    Wave* w = waves_.empty() ? nullptr : &waves_.back();
    if (w && !w->closing && !w->done &&
        (w->minting || (w->minted.ok() && now - w->born < half_ttl))) {
      ++w->joining;
      cv_.wait(lock, [&] { return !w->minting; });
      return *w;
    }
    waves_.emplace_back();
    w = &waves_.back();
    w->joining = 1;
    w->born = now;
    lock.unlock();
    auto r = master.sh("kubeadm token create --ttl " + std::to_string(s_.join_token_ttl_s) +
                           "s --description " + shell_quote(kWaveMark + run_mark_) +
                           " --print-join-command",
                       {}, 120000, true);
    util::Result<void> minted;
    JoinCommand jc;
    if (!r.ok() || r.exit_status != 0) {
      minted = command_failure("minting a join token", r);
    } else {
      // What it printed even when incomplete: a token there is deleted with the wave.
      jc = parse_join_command(r.out);
      if (!jc.complete()) minted = util::Error{"kubeadm token create printed no join command", ""};
    }
    std::fill(r.out.begin(), r.out.end(), '\0');
    if (minted.ok()) h.run().masker->add(jc.token);
    lock.lock();
    w->minted = minted;
    w->jc = std::move(jc);
    w->id = w->jc.token.substr(0, w->jc.token.find('.'));
    w->minting = false;
    cv_.notify_all();
    return *w;
  }

  // The last worker of a wave to finish deletes its token and reads, in the
  // same session, the master's state after every join of the wave; the others
  // wait for that read, which their verifications use.
  void leave_wave(HostRun& h, HostRun& master, Wave& w, bool joined) {
    std::unique_lock lock(mu_);
    if (--w.joining == 0) {
      w.closing = true;
      lock.unlock();
      std::map<std::string, remote::ExecResult> got;
      if (!w.id.empty()) {
        const std::string marker = "@@paictl-join-" + std::to_string(::getpid()) + "-" + w.id;
        const std::vector<std::string> reads = {cluster_objects_script(), kTokenList};
        auto r =
            master.sh("kubeadm token delete " + shell_quote(w.id) + " >/dev/null 2>&1 || true\n" +
                      combined_observation_script(reads, marker));
        std::vector<remote::ExecResult> parts;
        if (r.ok() && r.exit_status == 0 &&
            split_combined_output(r.out, marker, reads.size(), parts))
          for (size_t k = 0; k < reads.size(); ++k) got[reads[k]] = std::move(parts[k]);
      }
      lock.lock();
      w.reads = std::move(got);
      w.done = true;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return w.done; });
    }
    if (joined) after_join_[h.spec().name] = w.reads;
  }

  // Whether `list` (the cluster objects' read) has this Node. Every worker
  // reads the same list (the read ahead, a wave's read after its joins): it is
  // parsed once, not once a worker (a 50-node list took paictl 3-5 ms each).
  bool node_listed(const std::string& list, const std::string& node) {
    std::lock_guard lock(parsed_mu_);
    if (list != parsed_list_) {
      parsed_list_ = list;
      parsed_nodes_.clear();
      auto nodes = objects_of_kind(nlohmann::json::parse(list, nullptr, false), "Node");
      for (const auto& n : nodes["items"])
        if (n.contains("metadata") && n["metadata"].is_object())
          parsed_nodes_.insert(n["metadata"].value("name", ""));
    }
    return parsed_nodes_.count(node) > 0;
  }

  // The master's reads for this worker's needs: during its verification what
  // the session that deleted its wave's token read after the joins, else a
  // read made now; before its apply, the read ahead.
  remote::ExecResult master_read(HostRun& h, HostRun& master, const std::string& script) {
    bool fresh;
    {
      std::lock_guard lock(mu_);
      fresh = verifying_.count(h.spec().name) > 0;
      if (fresh) {
        auto& got = after_join_[h.spec().name];
        auto it = got.find(script);
        if (it != got.end()) {
          remote::ExecResult r = std::move(it->second);
          got.erase(it);
          return master.finish_read(script, std::move(r));
        }
      }
    }
    return fresh ? master.finish_read(script, master.sh(script)) : master.observe_sh(script);
  }

  const InstallSettings& s_;
  // This run's join waves, told apart from a killed run's on the master.
  const std::string run_mark_ =
      std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  std::mutex mu_;
  std::condition_variable cv_;
  std::list<Wave> waves_;                                     // stable addresses
  std::map<std::string, std::vector<std::string>> leftover_;  // host -> token ids
  std::set<std::string> verifying_;  // hosts whose join applied: their next master reads are fresh
  std::map<std::string, std::map<std::string, remote::ExecResult>> after_join_;
  std::mutex parsed_mu_;
  std::string parsed_list_;  // the list node_listed parsed last, and its Nodes
  std::set<std::string> parsed_nodes_;
};

// Node labels: roles and SKU from layout.yaml; GPU nodes are marked for the
// device plugin. The master keeps kubeadm's NoSchedule taint: no jobs there.
class NodeLabels : public Phase, public ReadsAhead {
 public:
  NodeLabels()
      : Phase("labels",
              {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = true}) {}
  static std::map<std::string, std::string> wanted(const HostSpec& h) {
    std::map<std::string, std::string> w;
    if (h.master) w["pai-master"] = "true";
    if (h.worker) w["pai-worker"] = "true";
    if (!h.sku.empty()) w["paictl.io/machine-type"] = h.sku;
    if (has_gpu(h)) w["paictl.io/gpu"] = "nvidia";
    for (const auto& [k, v] : h.labels) w[k] = v;
    return w;
  }
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, cluster_objects_script()});
  }
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    nlohmann::json nodes;
    if (util::Result<void> s = nodes_json(h, nodes); !s.ok()) return s;
    missing_.clear();
    for (auto* host : h.run().hosts) {
      const nlohmann::json* n = find_node(nodes, host->spec().name);
      std::vector<std::string> m;
      for (const auto& [k, v] : wanted(host->spec())) {
        bool ok = n && n->contains("metadata") && (*n)["metadata"].contains("labels") &&
                  (*n)["metadata"]["labels"].value(k, "") == v;
        if (!ok) m.push_back(k + "=" + v);
      }
      if (!m.empty()) {
        needs.push_back("label " + host->spec().name + " " + util::join(m, " "));
        missing_[host->spec().name] = m;
      }
    }
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    // One write per set of labels, for all the nodes that miss it (the workers
    // of one SKU share theirs): a merge patch of each node's labels, sent by one
    // curl over one connection (api_curl). `kubectl label` of many nodes sends
    // its patches at client-go's 5 a second (50 nodes: 8 s), and a kubectl run
    // costs the master about 0.1 s of CPU. Where curl cannot (no curl, no
    // client certificate in admin.conf, no answer: code 000), the same set is
    // labelled with kubectl; a node the API server refused (any code but 200)
    // fails the step, naming the node and the code.
    std::map<std::vector<std::string>, std::vector<std::string>> by_labels;
    for (const auto& [node, labels] : missing_) by_labels[labels].push_back(node);
    std::string script = api_access_script();
    for (const auto& [labels, nodes] : by_labels) {
      nlohmann::json patch;
      patch["metadata"]["labels"] = nlohmann::json::object();
      for (const auto& l : labels) {
        size_t eq = l.find('=');
        patch["metadata"]["labels"][l.substr(0, eq)] =
            eq == std::string::npos ? "" : l.substr(eq + 1);
      }
      std::string urls;
      for (const auto& n : nodes)
        urls +=
            " -o /dev/null \"$pai_s\"" + shell_quote("/api/v1/nodes/" + n + "?fieldManager=paictl");
      std::string kubectl = std::string(kKubectl) + " label node";
      for (const auto& n : nodes) kubectl += " " + shell_quote(n);
      kubectl += " --overwrite";
      for (const auto& l : labels) kubectl += " " + shell_quote(l);
      script +=
          "pai_ok=\n"
          "if [ -n \"$pai_api\" ]; then\n"
          "pai_codes=$(" +
          api_curl("-X PATCH -H 'Content-Type: application/merge-patch+json' --data-binary " +
                   shell_quote(patch.dump()) + " -w '%{http_code}\\n'" + urls) +
          ") || pai_codes=\n"
          "pai_ok=1; pai_n=0; pai_bad=; pai_left=" +
          shell_quote(util::join(nodes, " ") + " ") +
          "\n"
          "for c in $pai_codes; do\n"
          "  pai_n=$((pai_n + 1)); pai_node=${pai_left%% *}; pai_left=${pai_left#* }\n"
          "  case $c in 200) ;; 000) pai_ok= ;; *) pai_bad=\"$pai_bad $pai_node ($c)\" ;; esac\n"
          "done\n"
          "[ -z \"$pai_bad\" ] || { echo \"paictl: the API server refused the labels of:$pai_bad\" "
          ">&2; exit 1; }\n"
          "[ \"$pai_n\" = " +
          std::to_string(nodes.size()) +
          " ] || pai_ok=\n"
          "fi\n"
          "[ -n \"$pai_ok\" ] || " +
          kubectl + " >/dev/null\n";
    }
    return run_last_step(h, "labelling nodes", script);
  }

 private:
  std::map<std::string, std::vector<std::string>> missing_;
};

// Every node Ready, every GPU node with its GPUs allocatable.
class VerifyNodes : public Phase, public ReadsAhead {
 public:
  explicit VerifyNodes(const InstallSettings& s)
      : Phase("verify",
              {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = true}),
        s_(s) {}
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, cluster_objects_script()});
  }
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    nlohmann::json nodes;
    if (util::Result<void> s = nodes_json(h, nodes); !s.ok()) return s;
    for (auto* host : h.run().hosts) {
      const auto& spec = host->spec();
      const nlohmann::json* n = find_node(nodes, spec.name);
      bool ready = false;
      int64_t gpus = 0;
      if (n && n->contains("status")) {
        const auto& st = (*n)["status"];
        if (st.contains("conditions") && st["conditions"].is_array())
          for (const auto& c : st["conditions"])
            if (c.value("type", "") == "Ready") ready = c.value("status", "") == "True";
        if (st.contains("allocatable") && st["allocatable"].contains("nvidia.com/gpu"))
          gpus = util::parse_int(st["allocatable"].value("nvidia.com/gpu", "0")).value_or(0);
      }
      if (!ready) needs.push_back("wait for node " + spec.name + " to be Ready");
      if (has_gpu(spec) && gpus != spec.gpus)
        needs.push_back("wait for " + std::to_string(spec.gpus) + " allocatable GPUs on " +
                        spec.name + " (now " + std::to_string(gpus) + ")");
    }
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    std::vector<std::string> left;
    poll(s_.wait_s, 1000, [&] {
      left.clear();
      return observe(h, left).ok() && left.empty();
    });
    if (!left.empty())
      return util::Error{"after " + std::to_string(s_.wait_s) + " s: " + util::join(left, "; "),
                         "look at the node's kubelet and containerd (journalctl -u kubelet) "
                         "and at the device plugin's pod on it"};
    return {};
  }

 private:
  const InstallSettings& s_;
};

// ------------------------------------------------------------------ reset

const char* kResetPackages =
    "kubeadm kubelet kubectl cri-tools kubernetes-cni containerd containerd.io runc "
    "nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools "
    "libnvidia-container1";

class ResetHost : public KeyValuePhase {
 public:
  ResetHost() : KeyValuePhase("reset") {}
  static std::string script() {
    std::string d = kStateDir;
    return "command -v kubeadm >/dev/null && { [ -e /etc/kubernetes/kubelet.conf ] || [ -e "
           "/etc/kubernetes/admin.conf ] || [ -d /etc/kubernetes/pki ] || [ -f "
           "/var/lib/kubelet/config.yaml ] || [ -n \"$(ls -A /etc/kubernetes/manifests "
           "2>/dev/null)\" "
           "]; } && echo kube=1\n"
           "before=" +
           d +
           "/packages.before\n"
           "for p in " +
           std::string(kResetPackages) +
           "; do dpkg-query -W -f '${db:Status-Abbrev}' $p 2>/dev/null | grep -q '^.i' || "
           "continue; "
           "[ -f $before ] && grep -qx \"$p\" $before && continue; echo \"pkg_$p=1\"; done\n"
           "grep -q '^# paictl: ' /etc/fstab 2>/dev/null && echo fstab=1\n"
           "for f in " +
           kModulesFile + " " + kSysctlFile + " " + kKubeList + " " + kNvidiaList + " " +
           kBundleList + " " + kKubeKeyring + " " + kNvidiaKeyring +
           " /etc/containerd/config.toml /etc/containerd/paictl.stamp " + kKubeadmLock + " " +
           kKubeadmLockElsewhere +
           "; do [ -e $f ] && echo "
           "\"file_$f=1\"; done\n"
           "[ -n \"$(ls -A /etc/cni/net.d 2>/dev/null)\" ] && echo cni=1\n"
           "[ -d " +
           d + " ] && echo state=1\n" + "true\n";
  }
  std::string what() const override { return "what install left"; }
  std::string observation(const HostRun&) const override { return script(); }
  util::Result<void> needs_from(HostRun&, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    if (kv.count("kube")) needs.push_back("kubeadm reset -f");
    std::vector<std::string> pkgs, files;
    for (const auto& [k, v] : kv) {
      if (k.rfind("pkg_", 0) == 0) pkgs.push_back(k.substr(4));
      if (k.rfind("file_", 0) == 0) files.push_back(k.substr(5));
    }
    if (!pkgs.empty()) needs.push_back("purge " + util::join(pkgs, " "));
    if (kv.count("fstab")) needs.push_back("restore the swap lines of /etc/fstab and swap on");
    if (!files.empty()) needs.push_back("remove " + util::join(files, " "));
    if (kv.count("cni")) needs.push_back("remove the CNI configuration in /etc/cni/net.d");
    if (kv.count("state"))
      needs.push_back("restore modules and sysctls, remove " + std::string(kStateDir));
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>& needs) override {
    std::string d = kStateDir;
    std::string script = "export DEBIAN_FRONTEND=noninteractive\n";
    for (const auto& n : needs)
      if (n == "kubeadm reset -f") script += holding_kubeadm_lock("kubeadm reset -f\n");
    script +=
        "before=" + d +
        "/packages.before\n"
        "P=''\nfor p in " +
        std::string(kResetPackages) +
        "; do dpkg-query -W -f '${db:Status-Abbrev}' $p 2>/dev/null | grep -q '^.i' || continue; "
        "[ -f $before ] && grep -qx \"$p\" $before && continue; P=\"$P $p\"; done\n"
        "if [ -n \"$P\" ]; then apt-mark unhold $P >/dev/null 2>&1 || true; apt-get purge -y -q "
        "$P; "
        "apt-get autoremove -y -q; fi\n"
        "rm -f " +
        std::string(kModulesFile) + " " + kSysctlFile + " " + kKubeList + " " + kNvidiaList + " " +
        kBundleList + " " + kKubeKeyring + " " + kNvidiaKeyring +
        " /etc/containerd/config.toml /etc/containerd/paictl.stamp " + kKubeadmLock + " " +
        kKubeadmLockElsewhere +
        "\n"
        "rm -rf " +
        kBundleDir +
        " /etc/cni/net.d/* /etc/kubernetes/manifests\n"
        "rmdir /var/cache/paictl 2>/dev/null || true\n"

        "if grep -q '^# paictl: ' /etc/fstab; then sed -i 's/^# paictl: //' /etc/fstab; swapon -a; "
        "fi\n"
        "if [ -d " +
        d +
        " ]; then\n"
        "  if [ -f " +
        d +
        "/modules.before ]; then for m in br_netfilter overlay bridge stp llc; do grep -qx $m " +
        d +
        "/modules.before || modprobe -r $m 2>/dev/null || true; done; fi\n"
        "  if [ -f " +
        d +
        "/sysctl.before ]; then while IFS= read -r kv; do [ -n \"$kv\" ] && "
        "sysctl -w \"$kv\" >/dev/null; done < " +
        d +
        "/sysctl.before; fi\n"
        "  rm -rf " +
        d +
        "\n"
        "fi\n";
    return run_last_step(h, "resetting the host", script, {}, 1800000);
  }
};

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
  std::ifstream in(path);
  if (!in)
    return util::Error{
        "cannot read the template " + path + " (set PAICTL_TEMPLATES to paictl's templates/)", "",
        util::Error::Kind::Input};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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

util::Result<std::string> render_kubeadm_init(const InstallSettings& s, const HostSpec& master,
                                              const std::string& kubeadm_version) {
  std::string v = kubeadm_version.substr(!kubeadm_version.empty() && kubeadm_version[0] == 'v');
  return render_template(s.templates_dir, "kubeadm-init.yaml",
                         {{"api", kubeadm_api_version(v).substr(15)},
                          {"version", s.kube_version},
                          {"advertise", master.address},
                          {"node", master.name},
                          {"cluster", s.cluster_name},
                          {"endpoint", endpoint_of(s, master)},
                          {"pods", s.pods_subnet},
                          {"services", s.service_subnet}});
}

util::Result<std::string> render_kubeadm_join(const InstallSettings& s, const HostSpec& node,
                                              const std::string& kubeadm_version,
                                              const std::string& endpoint, const std::string& token,
                                              const std::string& ca_hash) {
  std::string v = kubeadm_version.substr(!kubeadm_version.empty() && kubeadm_version[0] == 'v');
  return render_template(s.templates_dir, "kubeadm-join.yaml",
                         {{"api", kubeadm_api_version(v).substr(15)},
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
  out.emplace_back("cni", std::move(*flannel));
  auto plugin =
      render_template(s.templates_dir, "nvidia-device-plugin.yaml", {{"hash", "0000000000000000"}});
  if (!plugin) return plugin.error();
  out.emplace_back("device-plugin", std::move(*plugin));
  auto services = render_openpai_manifests(s, master);
  if (!services) return services.error();
  for (auto& m : *services) out.push_back(std::move(m));
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
  const std::string script = std::string(kKubectl) + " -n " + shell_quote(ns) +
                             " get daemonsets,statefulsets,deployments -o json "
                             "--request-timeout=20s";
  std::vector<std::string> left = workloads;
  poll(wait_s, 1000, [&] {
    auto r = master.sh(script);
    if (!r.ok() || r.exit_status != 0) return false;
    auto list = nlohmann::json::parse(r.out, nullptr, false);
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
  p.push_back(std::make_unique<DetectOs>());
  p.push_back(std::make_unique<PreInstallChecks>(s));
  p.push_back(std::make_unique<MarkHost>(s));
  p.push_back(std::make_unique<Swap>());
  p.push_back(std::make_unique<Kernel>());
  p.push_back(std::make_unique<Packages>(s));
  p.push_back(std::make_unique<Containerd>());
  p.push_back(std::make_unique<ControlPlane>(s));
  p.push_back(std::make_unique<Flannel>(s));
  p.push_back(std::make_unique<Workers>(s));
  p.push_back(std::make_unique<NodeLabels>());
  p.push_back(std::make_unique<DevicePlugin>(s));
  p.push_back(std::make_unique<VerifyNodes>(s));
  p.push_back(make_hived_phase(s));
  p.push_back(make_openpai_phase(s));
  p.push_back(make_config_phase(s));
  p.push_back(make_endpoints_phase(s));
  return p;
}

PhaseList reset_phases(const InstallSettings&) {
  PhaseList p;
  p.push_back(std::make_unique<DetectOs>());
  p.push_back(std::make_unique<ResetHost>());
  return p;
}

}  // namespace pai::deploy
