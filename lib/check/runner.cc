#include "check/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <mutex>

#include "facts/gpu_findings.h"
#include "remote/executor.h"
#include "util/strings.h"
#include "util/time.h"

namespace pai::check {

namespace {

std::string gib(int64_t bytes) {
  return util::format_bytes(static_cast<double>(bytes));
}

// "18.09.7" -> {18, 9, 7}; stops at the first non-digit run.
std::vector<int> version_parts(std::string_view v) {
  std::vector<int> out;
  int cur = -1;
  for (char c : v) {
    if (c >= '0' && c <= '9') {
      cur = (cur < 0 ? 0 : cur) * 10 + (c - '0');
      if (cur > 1000000) return out;
    } else {
      if (cur >= 0) out.push_back(cur);
      cur = -1;
      if (c != '.') break;
    }
  }
  if (cur >= 0) out.push_back(cur);
  return out;
}

bool version_less(std::string_view a, std::vector<int> b) {
  std::vector<int> pa = version_parts(a);
  return std::lexicographical_compare(pa.begin(), pa.end(), b.begin(), b.end());
}

// IPv4 "a.b.c.d" -> 32-bit value.
std::optional<uint32_t> ipv4_value(std::string_view s) {
  if (!util::is_ipv4(s)) return std::nullopt;
  uint32_t v = 0;
  for (auto p : util::split(s, '.')) v = (v << 8) | static_cast<uint32_t>(*util::parse_int(p));
  return v;
}

std::string replace_prefix(const std::string& s, std::string_view from, std::string_view to) {
  return s.rfind(from, 0) == 0 ? std::string(to) + s.substr(from.size()) : s;
}

std::string v4_of_mapped(const std::string& a) {
  return a.rfind("::ffff:", 0) == 0 ? a.substr(7) : a;
}

class Emitter {
 public:
  Emitter(std::vector<CheckResult>& out, const std::string& host) : out_(out), host_(host) {}
  void pass(const std::string& check, std::string msg) {
    add(check, Status::Pass, std::move(msg), {});
  }
  void skip(const std::string& check, std::string msg) {
    add(check, Status::Skip, std::move(msg), {});
  }
  // A violation: a failure or a warning by the check's severity (or `sev`).
  void violated(const std::string& check, std::string msg, std::string hint,
                std::optional<diag::Severity> sev = std::nullopt) {
    const CheckInfo* info = find_check(check);
    diag::Severity s = sev ? *sev : info ? info->severity : diag::Severity::Error;
    add(check, s == diag::Severity::Error ? Status::Fail : Status::Warn, std::move(msg),
        std::move(hint));
  }

 private:
  void add(const std::string& check, Status st, std::string msg, std::string hint) {
    out_.push_back({host_, check, st, std::move(msg), std::move(hint), false});
  }
  std::vector<CheckResult>& out_;
  const std::string& host_;
};

const char* kNoSection = "not collected: the fact script was cut off before this step";

bool gpu_sku(const inventory::HostPlan& p) {
  return p.sku && p.sku->device && p.sku->device->type == "nvidia.com/gpu" &&
         p.sku->device->count > 0;
}

// What a host check sees.
struct HostCheckContext {
  const HostOutcome& h;
  const inventory::HostPlan& p;
  const facts::HostFacts& f;
  const EvalOptions& o;
  Emitter& e;
  // False, with the check skipped and why, when the fact script did not report a section.
  bool need(const char* check, const std::vector<const char*>& sections) const {
    for (const char* s : sections) {
      if (!f.has(s)) {
        e.skip(check, f.stuck_in.empty()
                          ? std::string(kNoSection)
                          : "not collected: the fact script was cut off while running " +
                                facts::step_description(f.stuck_in));
        return false;
      }
    }
    return true;
  }
};

struct HostCheck {
  const char* name;                   // as in catalogue(); a family's first check
  std::vector<const char*> sections;  // fact-script sections it needs
  void (*run)(const HostCheckContext&);
};

// Reachable gates the rest: an unreachable host has every other check skipped.
bool check_reachable(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  // Reachable
  if (!h.reached) {
    e.violated("Reachable", h.exec.error.empty() ? "the host could not be reached" : h.exec.error,
               h.exec.hint);
    for (const auto& c : catalogue()) {
      if (c.scope != "host" || c.name == "Reachable") continue;
      if (c.name == "Port-<N>") {
        for (int port : p.master ? master_ports() : worker_ports())
          e.skip("Port-" + std::to_string(port), "host not reachable");
        continue;
      }
      e.skip(std::string(c.name), "host not reachable");
    }
    return false;
  }
  if (h.exec.failure == remote::Failure::CommandTimeout) {
    std::string step = f.stuck_in.empty() ? std::string() : facts::step_description(f.stuck_in);
    e.violated("Reachable",
               "logged in, but " +
                   replace_prefix(h.exec.error, "the command ", "the fact script ") +
                   (step.empty() ? std::string() : "; it was still running " + step),
               "a hung tool is the usual cause (nvidia-smi on a failing GPU, docker info with a "
               "wedged daemon, DNS "
               "timeouts, a dead NFS mount); raise --command-timeout if the host is only slow");
  } else if (!h.exec.ok()) {
    e.violated("Reachable", "logged in, but " + h.exec.error, h.exec.hint);
  } else if (!f.complete) {
    std::string why = h.exec.exit_status == 127
                          ? "/bin/sh is missing"
                          : "exit status " + std::to_string(h.exec.exit_status);
    std::string err = util::trim(h.exec.err).empty()
                          ? ""
                          : ": " + std::string(util::trim(h.exec.err.substr(0, 300)));
    e.violated("Reachable", "logged in, but the fact script stopped early (" + why + err + ")",
               "run 'sh -s' on the host by hand to see why; the script needs only POSIX sh");
  } else {
    e.pass(
        "Reachable",
        "logged in as " + p.target.endpoint.user + " with " + h.exec.auth_method +
            (h.exec.host_key_added ? "; host key added to known_hosts" : "") +
            (h.exec.host_key_unchecked ? "; host key NOT verified (--host-key-policy off)" : ""));
  }

  return true;
}

// Privileges
void check_privileges(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (f.privilege == "root")
    e.pass("Privileges", "logged in as root");
  else if (f.privilege == "sudo")
    e.pass("Privileges", "root through sudo -n");
  else if (f.privilege == "sudo-password")
    e.pass("Privileges", "root through sudo with the password");
  else if (f.privilege.empty())
    e.skip("Privileges", kNoSection);
  else
    e.violated(
        "Privileges",
        "checked as " + p.target.endpoint.user +
            " without root: sudo -n failed and no working sudo password was given, so unreadable "
            "paths and Docker may be reported as unknown",
        "give the user passwordless sudo, or the password in config.yaml, --password-stdin or "
        "PAICTL_SUDO_PASSWORD");
}

// OS
void check_os(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (f.os.id.empty()) {
    e.violated("OS", "cannot tell the OS: /etc/os-release is missing or has no ID", "");
  } else if (f.os.id == "ubuntu") {
    if (version_less(f.os.version_id, {16, 4}))
      e.violated("OS",
                 f.os.pretty_name + " is older than Ubuntu 16.04, the oldest OpenPAI supports",
                 "upgrade the host to a supported Ubuntu release", diag::Severity::Error);
    else
      e.pass("OS", f.os.pretty_name.empty() ? "Ubuntu " + f.os.version_id : f.os.pretty_name);
  } else {
    e.violated("OS",
               (f.os.pretty_name.empty() ? f.os.id : f.os.pretty_name) +
                   " is not Ubuntu, the only OS OpenPAI's installer is tested on",
               "expect to adapt the installer's package steps for this distribution");
  }
}

// KernelVersion
void check_kernel_version(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (f.kernel.empty())
    e.skip("KernelVersion", "the kernel release was not readable");
  else if (version_less(f.kernel, {3, 10}))
    e.violated("KernelVersion", "kernel " + f.kernel + " is older than 3.10", "upgrade the kernel");
  else
    e.pass("KernelVersion", "kernel " + f.kernel);
}

// Cgroups
void check_cgroups(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  std::vector<std::string> required = {"cpu", "cpuset", "memory", "pids"};
  if (f.cgroup_version == 1) {
    required.push_back("cpuacct");
    required.push_back("devices");
    required.push_back("freezer");
  }
  std::vector<std::string> missing;
  for (const auto& r : required)
    if (std::find(f.cgroup_controllers.begin(), f.cgroup_controllers.end(), r) ==
        f.cgroup_controllers.end())
      missing.push_back(r);
  if (f.cgroup_version == 0) {
    e.violated("Cgroups", "no cgroup hierarchy found at /sys/fs/cgroup",
               "mount the cgroup file systems (systemd does)");
  } else if (!missing.empty()) {
    e.violated("Cgroups",
               "cgroup v" + std::to_string(f.cgroup_version) + " without the controllers " +
                   util::join(missing, ", "),
               "enable them on the kernel command line (e.g. cgroup_enable=memory) and reboot");
  } else if (f.cgroup_version == 2) {
    e.violated("Cgroups",
               "cgroup v2: Kubernetes 1.16, which OpenPAI v1.x's installer deploys, needs cgroup "
               "v1 (v2 support came "
               "with Kubernetes 1.25)",
               "boot with systemd.unified_cgroup_hierarchy=0, or deploy a Kubernetes that "
               "supports cgroup v2",
               diag::Severity::Warning);
  } else {
    e.pass("Cgroups", "cgroup v1 with " + util::join(required, ", "));
  }
}

// CPU
void check_cpu(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  int need_cpus = p.sku ? static_cast<int>(p.sku->vcore) : 0;
  if (p.master) need_cpus = std::max(need_cpus, 2);
  if (f.cpu.logical <= 0)
    e.violated("CPU", "lscpu did not report the CPU count", "install util-linux (lscpu)");
  else if (f.cpu.logical < need_cpus)
    e.violated(
        "CPU",
        std::to_string(f.cpu.logical) + " logical CPUs, fewer than the " +
            std::to_string(need_cpus) +
            (p.sku && p.sku->vcore >= need_cpus ? " the SKU " + p.sku->name + " declares (vcore)"
                                                : " a Kubernetes master needs"),
        "fix machine-type in layout.yaml, or the SKU's cpu.vcore");
  else
    e.pass("CPU", std::to_string(f.cpu.logical) + " logical CPUs" +
                      (need_cpus ? " (needs " + std::to_string(need_cpus) + ")" : ""));
}

// Memory
void check_memory(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (f.memory.total_bytes <= 0) {
    e.violated("Memory", "/proc/meminfo has no MemTotal", "");
  } else if (p.sku && p.sku->mem_bytes > 0 &&
             static_cast<double>(f.memory.total_bytes) < p.sku->mem_bytes) {
    e.violated("Memory",
               gib(f.memory.total_bytes) + " of memory, less than the " +
                   util::format_bytes(p.sku->mem_bytes) + " the SKU " + p.sku->name + " declares",
               "lower the SKU's mem to what the machines have (the kernel keeps some), or fix "
               "machine-type");
  } else {
    e.pass("Memory", gib(f.memory.total_bytes) + " total" +
                         (p.sku && p.sku->mem_bytes > 0
                              ? " (SKU needs " + util::format_bytes(p.sku->mem_bytes) + ")"
                              : ""));
  }
}

// MemoryAvailable: OpenPAI's thresholds (MB = 10^6 bytes in its Ansible checks' `free -m` sense,
// MiB here).
void check_memory_available(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  int64_t want = (p.master ? int64_t{40000} : int64_t{16000}) << 20;
  if (f.memory.available_bytes <= 0)
    e.skip("MemoryAvailable", "/proc/meminfo has no MemAvailable");
  else if (f.memory.available_bytes < want)
    e.violated("MemoryAvailable",
               gib(f.memory.available_bytes) + " available, less than the " + gib(want) +
                   " OpenPAI needs on a " + (p.master ? "master" : "worker"),
               "stop what uses the memory, or use a larger machine");
  else
    e.pass("MemoryAvailable", gib(f.memory.available_bytes) + " available");
}

// Swap
void check_swap(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (!f.swap.devices.empty() || f.swap.total_bytes > 0) {
    std::string devs;
    for (const auto& d : f.swap.devices) devs += (devs.empty() ? "" : ", ") + d.name;
    e.violated("Swap",
               "swap is on (" + (devs.empty() ? gib(f.swap.total_bytes) : devs) +
                   "); the kubelet refuses to start",
               "swapoff -a, and remove the swap entries from /etc/fstab");
  } else {
    e.pass("Swap", "no swap");
  }
}

// DiskFree / DiskRoot
void check_disks(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (c.need("DiskFree", {"df"})) {
    const facts::DiskFacts* root = nullptr;
    const facts::DiskFacts* data = nullptr;
    for (const auto& d : f.disks) {
      if (d.path == "/" && !root)
        root = &d;
      else if (d.path != "/")
        data = &d;
    }
    if (!data && !o.docker_data_root.empty() && o.docker_data_root == "/") data = root;
    if (!data) {
      e.violated("DiskFree", "df did not report the Docker data root " + o.docker_data_root, "");
    } else {
      std::string where =
          data->checked == data->path
              ? data->path
              : data->path + " (not created yet; measured at " + data->checked + ")";
      if (data->available_bytes < o.min_disk_free_bytes)
        e.violated("DiskFree",
                   gib(data->available_bytes) + " free at the Docker data root " + where +
                       ", less than " + gib(o.min_disk_free_bytes),
                   "free space on " + data->mount_point +
                       ", or set docker_data_root in config.yaml to a larger disk");
      else
        e.pass("DiskFree", gib(data->available_bytes) + " free at " + where);
    }
    if (root) {
      if (root->available_bytes < (int64_t{10} << 30))
        e.violated("DiskRoot", gib(root->available_bytes) + " free on /",
                   "free space on /: logs and images fill it");
      else
        e.pass("DiskRoot", gib(root->available_bytes) + " free on /");
    } else {
      e.skip("DiskRoot", "df did not report /");
    }
  } else {
    e.skip("DiskRoot", kNoSection);
  }
}

// Ports
void check_ports(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  {
    std::vector<int> ports = p.master ? master_ports() : worker_ports();
    if (!f.has("tcp")) {
      for (int port : ports) e.skip("Port-" + std::to_string(port), kNoSection);
    } else {
      // A listener blocks a port when it is bound to the wildcard, to one of the
      // host's own addresses, to loopback's 127.0.0.1/::1, or to the address the
      // SSH connection came in on.
      std::vector<std::string> own = {"0.0.0.0", "::", "127.0.0.1", "::1"};
      for (const auto& i : f.interfaces) own.push_back(i.address);
      if (!f.ssh_server_address.empty()) own.push_back(f.ssh_server_address);
      if (!p.hostip.empty()) own.push_back(p.hostip);
      for (int port : ports) {
        std::string check = "Port-" + std::to_string(port);
        std::vector<std::string> by;
        for (const auto& l : f.listening) {
          if (l.port != port) continue;
          std::string a = v4_of_mapped(l.address);
          if (std::find(own.begin(), own.end(), a) != own.end())
            by.push_back((l.v6 && a.find(':') != std::string::npos ? "[" + a + "]" : a) + ":" +
                         std::to_string(port));
        }
        std::string purpose(port_purpose(port));
        if (!by.empty())
          e.violated(check,
                     "port " + std::to_string(port) + " (" + purpose +
                         ") is in use: something listens on " + util::join(by, ", "),
                     "find it with 'ss -ltnp sport = :" + std::to_string(port) + "' and stop it");
        else
          e.pass(check, "port " + std::to_string(port) + " (" + purpose + ") is free");
      }
    }
  }
}

// Sysctls and modules
void check_ip_forward(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (f.ip_forward == 1)
    e.pass("IPForward", "net.ipv4.ip_forward = 1");
  else if (f.ip_forward < 0)
    e.skip("IPForward", "/proc/sys/net/ipv4/ip_forward was not readable");
  else
    e.violated(
        "IPForward",
        "net.ipv4.ip_forward = " + std::to_string(f.ip_forward) + ": pods cannot reach other hosts",
        "the installer sets it; if a host policy resets it, add net.ipv4.ip_forward = 1 "
        "to /etc/sysctl.d/");
}

void check_bridge_netfilter(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (f.bridge_nf_call_iptables == 1)
    e.pass("BridgeNetfilter", "net.bridge.bridge-nf-call-iptables = 1");
  else if (f.bridge_nf_call_iptables < 0)
    e.violated("BridgeNetfilter",
               "net.bridge.bridge-nf-call-iptables is not there (br_netfilter not loaded)",
               "modprobe br_netfilter; the installer loads it, a host policy may unload it");
  else
    e.violated(
        "BridgeNetfilter",
        "net.bridge.bridge-nf-call-iptables = 0: service traffic between pods bypasses iptables",
        "sysctl -w net.bridge.bridge-nf-call-iptables=1 and persist it in /etc/sysctl.d/");
}

void check_kernel_modules(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  std::vector<std::string> missing;
  for (const char* m : {"br_netfilter", "overlay"}) {
    auto it = f.kernel_modules.find(m);
    if (it == f.kernel_modules.end() || !it->second) missing.push_back(m);
  }
  if (missing.empty())
    e.pass("KernelModules", "br_netfilter and overlay are loaded");
  else
    e.violated(
        "KernelModules",
        util::join(missing, " and ") + (missing.size() == 1 ? " is" : " are") + " not loaded",
        "modprobe " + util::join(missing, " ") + ", and list them in /etc/modules-load.d/");
}

// Binaries
void check_binaries(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  std::vector<std::string> err_missing, warn_missing;
  // Structured bindings cannot be captured by clang before 16: name the facts.
  const auto& facts = f;
  auto missing = [&facts](const char* b) {
    auto it = facts.binaries.find(b);
    return it == facts.binaries.end() || it->second.empty();
  };
  for (const char* b : {"ip", "mount", "nsenter"})
    if (missing(b)) err_missing.push_back(b);
  for (const char* b : {"iptables", "conntrack", "ebtables", "ethtool", "socat", "tc", "touch"})
    if (missing(b)) warn_missing.push_back(b);
  if (!err_missing.empty())
    e.violated(
        "Binaries",
        "not on PATH: " + util::join(err_missing, ", ") +
            (warn_missing.empty() ? "" : " (also missing: " + util::join(warn_missing, ", ") + ")"),
        "install iproute2 and util-linux");
  else if (!warn_missing.empty())
    e.violated("Binaries", "not on PATH: " + util::join(warn_missing, ", "),
               "the installer installs them from the OS package repositories, which must then be "
               "reachable",
               diag::Severity::Warning);
  else
    e.pass("Binaries", "every binary kubeadm looks for is on PATH");
}

// Hostname
void check_hostname_valid(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (f.hostname.empty())
    e.violated("HostnameValid", "the host name is empty", "set it with hostnamectl set-hostname");
  else if (!util::is_dns1123_subdomain(f.hostname))
    e.violated("HostnameValid",
               "host name \"" + f.hostname + "\" is not a lower-case DNS-1123 name",
               "use lower-case letters, digits, '-' and '.' (hostnamectl set-hostname)");
  else
    e.pass("HostnameValid", "host name " + f.hostname);
}

void check_hostname_matches(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (p.from_layout) {
    if (c.need("HostnameMatches", {"files"})) {
      if (f.hostname == p.name)
        e.pass("HostnameMatches", "the host calls itself " + f.hostname);
      else
        e.violated(
            "HostnameMatches",
            "the host calls itself \"" + f.hostname + "\", layout.yaml calls it \"" + p.name + "\"",
            "the installer renames hosts to their layout name; make them agree to avoid surprises");
    }
  } else {
    e.skip("HostnameMatches", "no layout.yaml hostname to compare with");
  }
}

void check_hostname_resolves(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (f.hostname_resolves)
    e.pass("HostnameResolves", f.hostname + " resolves");
  else
    e.violated("HostnameResolves", "\"" + f.hostname + "\" does not resolve on the host",
               "add it to /etc/hosts or DNS");
}

// HostIP
void check_host_ip(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (!p.hostip.empty()) {
    if (c.need("HostIP", {"ip"})) {
      bool owned = false;
      auto target = ipv4_value(p.hostip);
      for (const auto& i : f.interfaces) {
        if (i.address == p.hostip) owned = true;
        // Loopback owns its whole network (127.0.0.1/8 answers for 127.x.y.z).
        if (!owned && target && i.interface == "lo" && !i.v6 && i.prefix > 0 && i.prefix <= 32)
          if (auto a = ipv4_value(i.address)) {
            uint32_t mask = i.prefix == 32 ? 0xffffffffu : ~((1u << (32 - i.prefix)) - 1);
            owned = (*a & mask) == (*target & mask);
          }
      }
      if (owned)
        e.pass("HostIP", p.hostip + " is one of the host's addresses");
      else if (f.interfaces.empty())
        e.skip("HostIP", "the host's addresses could not be read (no ip command)");
      else {
        std::vector<std::string> addrs;
        for (const auto& i : f.interfaces)
          if (i.address.rfind("127.", 0) != 0 && i.address != "::1") addrs.push_back(i.address);
        e.violated(
            "HostIP",
            "layout.yaml's hostip " + p.hostip + " is not an address of this host (it has " +
                (addrs.empty() ? std::string("none but loopback") : util::join(addrs, ", ")) + ")",
            "use the host's own address in layout.yaml; behind NAT, Kubernetes needs the internal "
            "one");
      }
    }
  } else {
    e.skip("HostIP", "no layout.yaml hostip to compare with");
  }
}

void check_firewalld(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (f.running("firewalld"))
    e.violated("Firewalld", "firewalld is running",
               "open 6443, 10250, 2379-2380 and OpenPAI's ports, or stop firewalld (systemctl "
               "disable --now firewalld)");
  else
    e.pass("Firewalld", "firewalld is not running");
}

// The host runs containerd with its CRI plugin and no Docker: the runtime
// paictl install sets up, which the kubelet talks to directly. A host with a
// Docker client is judged by Docker, as before.
bool runner_containerd_runtime(const facts::HostFacts& f) {
  return !f.docker.client_present && f.containerd_present && f.containerd_active &&
         f.containerd_cri;
}

// Docker
void check_docker(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (c.need("Docker", {"docker"})) {
    if (runner_containerd_runtime(f)) {
      e.pass("Docker", "no Docker: containerd " +
                           (f.containerd_version.empty() ? std::string("(version unknown)")
                                                         : f.containerd_version) +
                           " runs with its CRI plugin, the kubelet's container runtime");
      e.skip("DockerVersion", "no Docker: containerd is the container runtime");
      return;
    }
    if (!f.docker.client_present) {
      e.violated("Docker", "docker is not installed",
                 "install Docker (OpenPAI requires it on every host)");
    } else if (!f.docker.daemon_reachable) {
      e.violated("Docker", "docker is installed but its daemon does not answer: " + f.docker.error,
                 f.docker.error.find("permission denied") != std::string::npos
                     ? "run the checks as root (sudo) or add the user to the docker group"
                     : "systemctl start docker, and look at journalctl -u docker");
    } else {
      e.pass("Docker", "Docker " + f.docker.server_version);
    }
    if (f.docker.daemon_reachable && !f.docker.server_version.empty()) {
      const std::string& v = f.docker.server_version;
      if (version_less(v, {17, 3}))
        e.violated("DockerVersion",
                   "Docker " + v + " is older than any version Kubernetes 1.16 supports",
                   "upgrade Docker to 19.03 or later", diag::Severity::Error);
      else if (version_less(v, {19, 3}))
        e.violated("DockerVersion",
                   "Docker " + v +
                       " is older than 19.03: the installer would replace it and restart "
                       "the daemon, stopping every container on the host (OpenPAI #4641)",
                   "upgrade Docker to 19.03 or later before installing, or plan for the restart");
      else
        e.pass("DockerVersion", "Docker " + v);
    } else {
      e.skip("DockerVersion", "Docker's version is unknown (its daemon did not answer)");
    }
  } else {
    e.skip("DockerVersion", kNoSection);
  }
}

void check_daemon_json(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (!f.daemon_json.present)
    e.pass("DaemonJson", "no /etc/docker/daemon.json");
  else if (!f.daemon_json.valid)
    e.violated("DaemonJson", f.daemon_json.error + ": Docker will not start with it",
               "fix the file (python3 -m json.tool)");
  else
    e.pass("DaemonJson", "/etc/docker/daemon.json is valid");
}

// The default runtime's binary (OpenPAI #4522: etcd could not start because daemon.json
// made nvidia the default on a host without nvidia-container-runtime).
void check_default_runtime_binary(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  std::string def = !f.docker.default_runtime.empty()        ? f.docker.default_runtime
                    : !f.daemon_json.default_runtime.empty() ? f.daemon_json.default_runtime
                                                             : std::string("runc");
  const facts::RuntimeBinary* rb = nullptr;
  for (const auto& r : f.runtime_binaries)
    if (r.runtime == def) rb = &r;
  if (!f.docker.client_present && !f.daemon_json.present) {
    e.skip("DefaultRuntimeBinary", "no Docker on the host");
  } else if (!rb) {
    if (def != "runc" && f.daemon_json.runtimes.find(def) == f.daemon_json.runtimes.end() &&
        f.docker.runtimes.find(def) == f.docker.runtimes.end())
      e.violated(
          "DefaultRuntimeBinary",
          "the default runtime \"" + def + "\" is not defined under \"runtimes\" in daemon.json",
          "add it to \"runtimes\" with its path, or remove \"default-runtime\"");
    else
      e.skip("DefaultRuntimeBinary", "the default runtime's path is unknown");
  } else if (rb->resolved.empty()) {
    e.violated(
        "DefaultRuntimeBinary",
        "Docker's default runtime \"" + def + "\" points to " + rb->path +
            ", which is not on this host: every container, etcd's too, would fail to start",
        def == "nvidia"
            ? "install nvidia-container-runtime (NVIDIA container toolkit), or remove "
              "\"default-runtime\": \"nvidia\" from /etc/docker/daemon.json on hosts without GPUs"
            : "install the runtime, or change \"default-runtime\" in /etc/docker/daemon.json");
  } else {
    e.pass("DefaultRuntimeBinary", "default runtime " + def + " is " + rb->resolved);
  }
}

// GPUs
// A finding's message with its code in front, as the GPU checks write it: "[N001] ...".
std::string runner_coded(const char* code, const std::string& message) {
  return std::string("[") + code + "] " + message;
}

void check_gpus(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  bool gpu = gpu_sku(p) || (!p.sku && f.is_gpu_host());
  const char* gpu_checks[] = {"NvidiaSmi",       "GPUCount", "GPUModel",      "GPUEcc",
                              "GPURetiredPages", "GPUXid",   "NvidiaRuntime", "DefaultRuntime"};
  if (!gpu) {
    std::string why =
        p.sku ? "the SKU " + p.sku->name + " has no NVIDIA GPUs" : "no NVIDIA GPU on this host";
    for (const char* c : gpu_checks) e.skip(c, why);
  } else {
    bool smi_ok = false;
    if (c.need("NvidiaSmi", {"nvidia"})) {
      std::string pci = f.nvidia.pci_gpus > 0 ? " (" + std::to_string(f.nvidia.pci_gpus) +
                                                    " NVIDIA GPUs on the PCI bus)"
                                              : "";
      if (!f.nvidia.smi_present)
        e.violated("NvidiaSmi", "nvidia-smi is not installed" + pci, "install the NVIDIA driver");
      else if (f.nvidia.smi_exit != 0)
        e.violated("NvidiaSmi",
                   "nvidia-smi failed (exit " + std::to_string(f.nvidia.smi_exit) +
                       "): " + f.nvidia.smi_error + pci,
                   "check that the driver is loaded (lsmod | grep nvidia) and matches the kernel; "
                   "reboot after a driver update");
      else {
        smi_ok = true;
        e.pass("NvidiaSmi",
               "nvidia-smi lists " + std::to_string(f.gpus.size()) + " GPUs, driver " +
                   (f.nvidia.driver_version.empty() ? "unknown" : f.nvidia.driver_version));
      }
    }
    if (!f.has("nvidia")) {
      e.skip("GPUCount", kNoSection);
      e.skip("GPUModel", kNoSection);
    } else if (!smi_ok) {
      e.skip("GPUCount", "nvidia-smi did not list the GPUs");
      e.skip("GPUModel", "nvidia-smi did not list the GPUs");
    } else if (!gpu_sku(p)) {
      e.skip("GPUCount", "no SKU to compare with (--hosts)");
      e.skip("GPUModel", "no SKU to compare with (--hosts)");
    } else {
      int64_t want = p.sku->device->count;
      std::string model = f.gpus.empty() ? "" : f.gpus[0].name;
      if (static_cast<int64_t>(f.gpus.size()) != want)
        e.violated("GPUCount",
                   "nvidia-smi lists " + std::to_string(f.gpus.size()) + " GPUs" +
                       (model.empty() ? "" : " (" + model + ")") + ", the SKU " + p.sku->name +
                       " says " + std::to_string(want),
                   "fix computing-device.count or machine-type in layout.yaml, or look for a GPU "
                   "that fell off the bus "
                   "(nvidia-smi -q, dmesg | grep -i xid)");
      else
        e.pass("GPUCount", std::to_string(want) + " GPUs, as the SKU says");
      const std::string& sku_model = p.sku->device->model;
      bool all_match = !sku_model.empty();
      for (const auto& g : f.gpus)
        all_match &= util::to_lower(g.name).find(util::to_lower(sku_model)) != std::string::npos;
      if (sku_model.empty())
        e.skip("GPUModel", "the SKU has no model");
      else if (all_match)
        e.pass("GPUModel", model + " matches the SKU model " + sku_model);
      else
        e.violated("GPUModel",
                   "GPU \"" + model + "\" does not match the SKU model \"" + sku_model + "\"",
                   "fix computing-device.model or machine-type in layout.yaml");
    }
    // The GPUs' health (facts/gpu_findings.h): one finding per kind, with its code.
    std::vector<facts::GpuFinding> health;
    if (smi_ok) health = facts::gpu_health_findings(f);
    // clang before 16 cannot capture a structured binding: the emitter goes in
    // through an init-capture.
    auto health_check = [&, &em = e](const char* check, const char* kind, const std::string& ok) {
      if (!smi_ok) {
        em.skip(check, "nvidia-smi did not list the GPUs");
        return;
      }
      for (const auto& h : health)
        if (h.kind == kind) {
          em.violated(check, runner_coded(h.code.c_str(), h.message), h.hint);
          return;
        }
      em.pass(check, ok);
    };
    if (!f.has("gpuhealth") && smi_ok) {
      e.skip("GPUEcc", kNoSection);
      e.skip("GPURetiredPages", kNoSection);
    } else {
      health_check(
          "GPUEcc", "eccUncorrectable",
          "no uncorrectable ECC error on " + std::to_string(f.nvidia.health.size()) + " GPUs");
      health_check("GPURetiredPages", "retiredPages",
                   "no retirement pending, at most " + std::to_string(facts::kRetiredPagesLimit) +
                       " retired pages a GPU");
    }
    if (f.nvidia.kernel_log.empty() && smi_ok)
      e.skip("GPUXid", "the kernel log could not be read (dmesg, journalctl -k)");
    else
      health_check("GPUXid", "xid",
                   "no hardware XID in the kernel log (" + f.nvidia.kernel_log + ")");
    if (c.need("NvidiaRuntime", {"bins"})) {
      if (f.nvidia.container_runtime_present)
        e.pass("NvidiaRuntime",
               "nvidia-container-runtime " + (f.nvidia.container_runtime_version.empty()
                                                  ? std::string("present")
                                                  : f.nvidia.container_runtime_version));
      else
        e.violated("NvidiaRuntime", "nvidia-container-runtime is not installed",
                   "install the NVIDIA container toolkit (nvidia-container-runtime)");
    }
    bool runtime_facts = c.need("DefaultRuntime", {"files"});
    if (runtime_facts && !f.docker.daemon_reachable && runner_containerd_runtime(f)) {
      const std::string& def = f.containerd_default_runtime;
      if (def == "nvidia")
        e.pass("DefaultRuntime", "nvidia is containerd's default runtime (containerd config dump)");
      else
        e.violated("DefaultRuntime",
                   "containerd's default runtime is \"" +
                       (def.empty() ? std::string("runc") : def) +
                       "\": pods that do not ask for the nvidia runtime see no GPU",
                   "nvidia-ctk runtime configure --runtime=containerd --set-as-default, then "
                   "systemctl restart containerd (paictl install does both)");
    } else if (runtime_facts) {
      std::string def =
          f.docker.daemon_reachable ? f.docker.default_runtime : f.daemon_json.default_runtime;
      std::string from = f.docker.daemon_reachable ? "docker info" : "daemon.json";
      bool registered = f.daemon_json.runtimes.count("nvidia") || f.docker.runtimes.count("nvidia");
      if (!f.docker.daemon_reachable && !f.daemon_json.present)
        e.violated("DefaultRuntime",
                   "Docker's default runtime is unknown: its daemon does not answer and there is "
                   "no daemon.json",
                   "set \"default-runtime\": \"nvidia\" in /etc/docker/daemon.json");
      else if (def == "nvidia")
        e.pass("DefaultRuntime", "nvidia is Docker's default runtime (" + from + ")");
      else if (registered)
        e.violated(
            "DefaultRuntime",
            "the nvidia runtime is registered in daemon.json but the default is \"" +
                (def.empty() ? std::string("runc") : def) +
                "\": containers started without --gpus see no GPU (OpenPAI #5622)",
            "add \"default-runtime\": \"nvidia\" to /etc/docker/daemon.json and restart Docker");
      else
        e.violated("DefaultRuntime",
                   "Docker's default runtime is \"" + (def.empty() ? std::string("runc") : def) +
                       "\" and no nvidia runtime is registered",
                   "register nvidia-container-runtime as \"runtimes\".\"nvidia\" and make it "
                   "\"default-runtime\" in "
                   "/etc/docker/daemon.json, then restart Docker");
    }
  }
}

// DNS
void check_dns(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  std::vector<std::string> bad, good;
  for (const auto& d : f.dns) (d.resolved ? good : bad).push_back(d.name);
  if (f.dns.empty())
    e.skip("DNS", "no registry names to resolve");
  else if (!bad.empty())
    e.violated("DNS", "cannot resolve " + util::join(bad, ", ") + " on the host",
               "fix /etc/resolv.conf or the DNS server; behind a firewall set registry mirrors "
               "in config.yaml");
  else
    e.pass("DNS", "resolves " + util::join(good, ", "));
}

// NTP (an error on the master: OpenPAI's installer requires it there)
void check_ntp(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  std::optional<diag::Severity> sev;
  if (p.master) sev = diag::Severity::Error;
  if (!f.clock.ntp_known)
    e.violated("NTP",
               "cannot tell whether the clock is synchronised (no timedatectl, chronyc or ntpq "
               "answered)",
               "install and enable chrony or systemd-timesyncd", diag::Severity::Warning);
  else if (!f.clock.ntp_synchronized)
    e.violated("NTP", "the clock is not NTP-synchronised (" + f.clock.ntp_source + ")",
               "enable chrony or systemd-timesyncd (timedatectl set-ntp true)", sev);
  else
    e.pass("NTP", "synchronised (" + f.clock.ntp_source + ")");
}

// Leftovers
void check_leftover_etcd(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  std::vector<std::string> found;
  bool unreadable = false;
  for (const char* d : {"/var/lib/etcd", "/var/etcd/data"}) {
    const facts::PathFacts* pf = f.path(d);
    if (!pf || !pf->exists) continue;
    if (!pf->readable)
      unreadable = true;
    else if (pf->entries > 0)
      found.push_back(std::string(d) + " (" + util::join(pf->sample, ", ") + ")");
  }
  if (!found.empty())
    e.violated("LeftoverEtcd",
               "etcd data from an earlier install: " + util::join(found, "; ") +
                   "; a new etcd would refuse to start or rejoin the old cluster",
               "make sure no etcd uses it, then remove it (kubespray's reset.yml does), e.g. rm "
               "-rf /var/lib/etcd/*");
  else if (unreadable)
    e.violated("LeftoverEtcd", "/var/lib/etcd exists but is not readable without root",
               "run the checks with sudo", diag::Severity::Warning);
  else
    e.pass("LeftoverEtcd", "no etcd data");
}

void check_running_kubernetes(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  std::vector<std::string> running;
  for (const char* pn :
       {"kubelet", "etcd", "kube-apiserver", "kube-controller", "kube-scheduler", "kube-proxy"})
    if (f.running(pn)) running.push_back(pn);
  if (!running.empty())
    e.violated("RunningKubernetes",
               util::join(running, ", ") + (running.size() == 1 ? " is" : " are") +
                   " running: this host is already part of a cluster",
               "drain and reset it first (kubeadm reset, or kubespray's remove-node.yml)");
  else
    e.pass("RunningKubernetes", "no Kubernetes process running");
}

void check_running_containers(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (!f.docker.daemon_reachable)
    e.skip("RunningContainers", "Docker's daemon did not answer");
  else if (f.docker.containers_running > 0)
    e.violated("RunningContainers",
               std::to_string(f.docker.containers_running) +
                   " containers are running; the installer restarts Docker, which stops them",
               "stop them or plan the restart (docker ps)");
  else
    e.pass("RunningContainers", "no containers running");
}

// The Leftover* directory checks: a non-empty (or unreadable) directory is a leftover.
void leftover(const HostCheckContext& c, const char* check, std::initializer_list<const char*> dirs,
              const std::string& why, const std::string& hint) {
  const facts::HostFacts& f = c.f;
  std::vector<std::string> found;
  for (const char* d : dirs) {
    const facts::PathFacts* pf = f.path(d);
    if (pf && pf->exists && pf->directory && (pf->entries > 0 || !pf->readable))
      found.push_back(std::string(d) + (pf->readable ? " (" + util::join(pf->sample, ", ") + ")"
                                                     : " (not readable)"));
  }
  if (!found.empty())
    c.e.violated(check, util::join(found, "; ") + ": " + why, hint);
  else
    c.e.pass(check, "clean");
}

void check_leftover_kubernetes(const HostCheckContext& c) {
  leftover(c, "LeftoverKubernetes", {"/etc/kubernetes"},
           "Kubernetes configuration from an earlier install",
           "run kubeadm reset (or kubespray's reset.yml) and remove /etc/kubernetes");
}

void check_leftover_kubelet(const HostCheckContext& c) {
  leftover(c, "LeftoverKubelet", {"/var/lib/kubelet"}, "kubelet state from an earlier install",
           "stop the kubelet, unmount what is mounted under /var/lib/kubelet, then remove it");
}

void check_leftover_cni(const HostCheckContext& c) {
  leftover(c, "LeftoverCNI", {"/etc/cni/net.d", "/var/lib/cni"},
           "network plugin configuration from an earlier install",
           "remove it before installing, or the old plugin's configuration may win");
}

// OfflineBundle (only with a bundle): N001 the host's OS and architecture
// among the bundle's platforms; N002 a GPU host's driver of the bundle's branch.
void check_offline_bundle(const HostCheckContext& c) {
  [[maybe_unused]] const auto& [h, p, f, o, e] = c;
  if (o.bundle_platforms.empty()) return;
  if (!c.need("OfflineBundle", {"files", "lscpu"})) return;
  std::string arch = f.cpu.architecture == "x86_64"    ? "amd64"
                     : f.cpu.architecture == "aarch64" ? "arm64"
                                                       : f.cpu.architecture;
  std::string platform = f.os.id + "-" + f.os.version_id + "-" + arch;
  bool fits = false;
  for (const auto& b : o.bundle_platforms) fits |= b == platform;
  if (!fits) {
    e.violated("OfflineBundle",
               runner_coded("N001", "the offline bundle carries ") +
                   util::join(o.bundle_platforms, ", ") + ", not this host's " + platform,
               "build a bundle for " + platform +
                   " (paictl bundle build on a connected machine, with this host in layout.yaml)");
    return;
  }
  const std::string& dv = f.nvidia.driver_version;
  if (gpu_sku(p) && !o.bundle_driver.empty() && !dv.empty() &&
      dv.rfind(o.bundle_driver + ".", 0) != 0) {
    e.violated("OfflineBundle",
               runner_coded("N002", "the host runs NVIDIA driver ") + dv +
                   ", the offline bundle was built for "
                   "branch " +
                   o.bundle_driver,
               "build the bundle for the hosts' driver branch, or move the host to " +
                   o.bundle_driver + " (paictl node maintain)");
    return;
  }
  e.pass("OfflineBundle", "the offline bundle carries " + platform +
                              (o.bundle_driver.empty() ? "" : " (driver " + o.bundle_driver + ")"));
}

// The host checks, kubeadm preflight's shape: each a small function with its
// name (its severity and summary are in catalogue()), the fact-script sections
// it needs (without them it is skipped, with the reason) and its hints where it
// reports a violation. Entries that are one family (Port-<N>, the GPU checks)
// emit every check of it.
const std::vector<HostCheck>& host_checks() {
  static const std::vector<HostCheck> k = {
      {"Privileges", {}, check_privileges},
      {"OS", {"files"}, check_os},
      {"KernelVersion", {"files"}, check_kernel_version},
      {"Cgroups", {"files", "cgroup"}, check_cgroups},
      {"CPU", {"lscpu"}, check_cpu},
      {"Memory", {"files"}, check_memory},
      {"MemoryAvailable", {"files"}, check_memory_available},
      {"Swap", {"files"}, check_swap},
      {"DiskFree", {}, check_disks},
      {"Port-<N>", {}, check_ports},
      {"IPForward", {"files"}, check_ip_forward},
      {"BridgeNetfilter", {"files", "modules"}, check_bridge_netfilter},
      {"KernelModules", {"modules"}, check_kernel_modules},
      {"Binaries", {"bins"}, check_binaries},
      {"HostnameValid", {"files"}, check_hostname_valid},
      {"HostnameMatches", {}, check_hostname_matches},
      {"HostnameResolves", {"dns"}, check_hostname_resolves},
      {"HostIP", {}, check_host_ip},
      {"Firewalld", {"processes"}, check_firewalld},
      {"Docker", {}, check_docker},
      {"DaemonJson", {"files"}, check_daemon_json},
      {"DefaultRuntimeBinary", {"runtimes", "files"}, check_default_runtime_binary},
      {"NvidiaSmi", {}, check_gpus},
      {"DNS", {"dns"}, check_dns},
      {"NTP", {"ntp"}, check_ntp},
      {"LeftoverEtcd", {"paths"}, check_leftover_etcd},
      {"LeftoverKubernetes", {"paths"}, check_leftover_kubernetes},
      {"LeftoverKubelet", {"paths"}, check_leftover_kubelet},
      {"LeftoverCNI", {"paths"}, check_leftover_cni},
      {"RunningKubernetes", {"processes"}, check_running_kubernetes},
      {"RunningContainers", {"docker"}, check_running_containers},
      {"OfflineBundle", {}, check_offline_bundle},
  };
  return k;
}

void check_host(const HostOutcome& h, const EvalOptions& o, std::vector<CheckResult>& out) {
  Emitter e(out, h.plan.name);
  const HostCheckContext c{h, h.plan, h.facts, o, e};
  if (!check_reachable(c)) return;
  for (const HostCheck& check : host_checks())
    if (check.sections.empty() || c.need(check.name, check.sections)) check.run(c);
}

// Groups of hosts sharing a value, for cross-host checks: value -> host
// indexes.
template <class F>
std::map<std::string, std::vector<size_t>> group_by(const std::vector<HostOutcome>& hosts,
                                                    F value) {
  std::map<std::string, std::vector<size_t>> g;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (!hosts[i].reached) continue;
    std::string v = value(hosts[i]);
    if (!v.empty()) g[v].push_back(i);
  }
  return g;
}

void check_cluster(const std::vector<HostOutcome>& hosts, const EvalOptions& o,
                   std::vector<CheckResult>& out) {
  auto names_of = [&](const std::vector<size_t>& idx, size_t except) {
    std::vector<std::string> n;
    for (size_t i : idx)
      if (i != except) n.push_back(hosts[i].plan.name);
    return util::join(n, ", ");
  };
  auto skip_unreached = [&](const char* check) {
    for (const auto& h : hosts)
      if (!h.reached)
        out.push_back({h.plan.name, check, Status::Skip, "host not reachable", {}, false});
  };
  auto unique = [&](const char* check, auto value, const std::string& what,
                    const std::string& hint) {
    auto g = group_by(hosts, value);
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (!hosts[i].reached) continue;
      Emitter e(out, hosts[i].plan.name);
      std::string v = value(hosts[i]);
      if (v.empty()) {
        e.skip(check, what + " unknown");
        continue;
      }
      const auto& same = g[v];
      if (same.size() > 1)
        e.violated(check, what + " \"" + v + "\" is also the " + what + " of " + names_of(same, i),
                   hint);
      else
        e.pass(check, what + " " + v + " is unique");
    }
    skip_unreached(check);
  };
  unique(
      "UniqueHostname",
      [](const HostOutcome& h) { return h.facts.has("files") ? h.facts.hostname : std::string(); },
      "host name", "give every host its own name (hostnamectl set-hostname)");
  unique(
      "UniqueMachine",
      [](const HostOutcome& h) {
        return h.facts.has("files") ? h.facts.machine_id : std::string();
      },
      "machine id",
      "two entries reach the same machine, or the hosts were cloned from one "
      "image: check "
      "layout.yaml's hostip, or "
      "regenerate /etc/machine-id on clones (rm /etc/machine-id && "
      "systemd-machine-id-setup)");

  // UniqueIP: the address a host is known by must not be configured on another
  // machine.
  {
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (!hosts[i].reached) continue;
      Emitter e(out, hosts[i].plan.name);
      const std::string ip =
          !hosts[i].plan.hostip.empty() ? hosts[i].plan.hostip : hosts[i].facts.ssh_server_address;
      if (ip.empty() || !hosts[i].facts.has("ip")) {
        e.skip("UniqueIP", "the host's address or the other hosts' interfaces are unknown");
        continue;
      }
      std::vector<size_t> others;
      for (size_t j = 0; j < hosts.size(); ++j) {
        if (j == i || !hosts[j].reached) continue;
        // The same machine reached twice is UniqueMachine's finding, not a
        // conflict.
        if (!hosts[j].facts.machine_id.empty() &&
            hosts[j].facts.machine_id == hosts[i].facts.machine_id)
          continue;
        for (const auto& a : hosts[j].facts.interfaces)
          if (a.address == ip) {
            others.push_back(j);
            break;
          }
      }
      if (!others.empty())
        e.violated("UniqueIP",
                   ip + " is also configured on " + names_of(others, i) + ": an IP conflict",
                   "give every machine its own address; check for a cloned "
                   "network configuration");
      else
        e.pass("UniqueIP", ip + " is on no other host");
    }
    skip_unreached("UniqueIP");
  }

  // ClockSkew: against the median of the hosts' offsets from this machine.
  {
    std::vector<std::pair<double, size_t>> skews;
    for (size_t i = 0; i < hosts.size(); ++i)
      if (hosts[i].reached && hosts[i].facts.has("clock") && hosts[i].facts.clock.epoch > 0)
        skews.push_back({hosts[i].facts.clock.skew_s, i});
    std::vector<double> sorted;
    for (auto& s : skews) sorted.push_back(s.first);
    std::sort(sorted.begin(), sorted.end());
    double median = sorted.empty() ? 0 : sorted[sorted.size() / 2];
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (!hosts[i].reached) continue;
      Emitter e(out, hosts[i].plan.name);
      const auto& f = hosts[i].facts;
      if (!f.has("clock") || f.clock.epoch <= 0) {
        e.skip("ClockSkew", "the host's clock was not read");
        continue;
      }
      double d = f.clock.skew_s - median;
      char buf[96];
      std::snprintf(buf, sizeof buf, "%+.2f s from the other hosts (%+.2f s from this machine)", d,
                    f.clock.skew_s);
      if (skews.size() < 2)
        e.pass("ClockSkew", std::string("only one host: ") + buf + "");
      else if (std::fabs(d) > o.max_clock_skew_s)
        e.violated("ClockSkew", std::string("clock is ") + buf + ", more than 1 s",
                   "synchronise the clocks with NTP: etcd and certificate "
                   "checks need them within "
                   "a second");
      else
        e.pass("ClockSkew", std::string("clock is ") + buf);
    }
    skip_unreached("ClockSkew");
  }

  // DriverVersion: within each GPU SKU, the majority version is the reference.
  {
    std::map<std::string, std::map<std::string, std::vector<size_t>>> by_sku;
    for (size_t i = 0; i < hosts.size(); ++i) {
      const auto& h = hosts[i];
      if (!h.reached || h.facts.nvidia.driver_version.empty()) continue;
      std::string sku = h.plan.sku ? h.plan.sku->name : std::string("(no SKU)");
      by_sku[sku][h.facts.nvidia.driver_version].push_back(i);
    }
    for (size_t i = 0; i < hosts.size(); ++i) {
      const auto& h = hosts[i];
      if (!h.reached) continue;
      Emitter e(out, h.plan.name);
      if (h.facts.nvidia.driver_version.empty()) {
        e.skip("DriverVersion", "no NVIDIA driver version on this host");
        continue;
      }
      std::string sku = h.plan.sku ? h.plan.sku->name : std::string("(no SKU)");
      const auto& versions = by_sku[sku];
      std::string major;
      size_t best = 0;
      for (const auto& [v, idx] : versions)
        if (idx.size() > best) best = idx.size(), major = v;
      const std::string& mine = h.facts.nvidia.driver_version;
      if (versions.size() <= 1)
        e.pass("DriverVersion", "driver " + mine);
      else if (mine != major)
        e.violated("DriverVersion",
                   "driver " + mine + ", but the other " + sku + " hosts run " + major + " (" +
                       names_of(versions.at(major), i) + ")",
                   "install one driver version on every host of a SKU: jobs "
                   "scheduled to any of "
                   "them must behave the same");
      else {
        std::vector<std::string> others;
        for (const auto& [v, idx] : versions)
          if (v != major) others.push_back(v + " on " + names_of(idx, i));
        e.pass("DriverVersion", "driver " + mine + " (the SKU's majority; differing: " +
                                    util::join(others, "; ") + ")");
      }
    }
    skip_unreached("DriverVersion");
  }

  // OSFamily: the majority OS id is the reference.
  {
    auto g = group_by(hosts, [](const HostOutcome& h) {
      return h.facts.has("files") ? h.facts.os.id : std::string();
    });
    std::string major;
    size_t best = 0;
    for (const auto& [v, idx] : g)
      if (idx.size() > best) best = idx.size(), major = v;
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (!hosts[i].reached) continue;
      Emitter e(out, hosts[i].plan.name);
      const std::string& id = hosts[i].facts.os.id;
      if (id.empty())
        e.skip("OSFamily", "OS unknown");
      else if (g.size() > 1 && id != major)
        e.violated("OSFamily",
                   "runs " + id + ", the other hosts " + major + " (" + names_of(g[major], i) + ")",
                   "one OS family keeps the installer's package steps and the "
                   "hosts' behaviour the same");
      else
        e.pass("OSFamily", "runs " + id);
    }
    skip_unreached("OSFamily");
  }
}

}  // namespace

std::vector<HostOutcome> collect(remote::Transport& transport,
                                 const std::vector<inventory::HostPlan>& plans,
                                 const CollectOptions& opts, size_t* parallelism_used) {
  std::vector<HostOutcome> out(plans.size());
  const std::string script = facts::fact_script(opts.script);
  const std::string command = facts::bootstrap_command();
  size_t fds = 4;
  for (const auto& p : plans) fds = std::max(fds, transport.fds_per_exec(p.target));
  remote::ExecutorOptions eo;
  eo.parallel = opts.parallel;
  eo.fds_per_task = fds;
  eo.progress = opts.progress;
  // Which hosts run now, for on_progress: 0 waiting, 1 running, 2 done.
  std::mutex progress_mu;
  std::vector<char> state(plans.size(), 0);
  size_t done = 0;
  auto mark = [&](size_t i, char st) {
    if (!opts.on_progress) return;
    std::lock_guard lock(progress_mu);
    state[i] = st;
    if (st == 2) ++done;
    CollectProgress p;
    p.done = done;
    p.total = plans.size();
    for (size_t k = 0; k < plans.size(); ++k)
      if (state[k] == 1) p.running.push_back(plans[k].name);
    opts.on_progress(p);
  };
  size_t used = remote::run_parallel(plans.size(), eo, [&](size_t i) {
    mark(i, 1);
    struct EndMark {
      std::function<void()> f;
      ~EndMark() { f(); }
    } end_mark{[&] { mark(i, 2); }};
    HostOutcome& h = out[i];
    h.plan = plans[i];
    remote::ExecRequest req;
    req.command = command;
    // The sudo password goes only to hosts where we do not log in as root.
    std::string first =
        h.plan.target.endpoint.user == "root" ? std::string() : opts.sudo_password.reveal();
    if (first.find('\n') != std::string::npos) first.clear();
    req.input = first + "\n" + script;
    req.timeout_ms = opts.command_timeout_ms;
    h.exec = transport.exec(h.plan.target, req);
    std::fill(req.input.begin(), req.input.end(), '\0');
    std::fill(first.begin(), first.end(), '\0');
    h.reached = h.exec.ok() || h.exec.failure == remote::Failure::CommandTimeout ||
                h.exec.failure == remote::Failure::OutputTooLarge ||
                h.exec.failure == remote::Failure::Protocol;
    facts::HostFacts& f = h.facts;
    f.name = h.plan.name;
    f.address = h.plan.address;
    if (h.plan.master) f.roles.push_back("master");
    if (h.plan.worker) f.roles.push_back("worker");
    if (h.plan.sku) f.machine_type = h.plan.sku->name;
    f.collected_at = util::now_rfc3339();
    if (h.reached) facts::parse_fact_output(h.exec.out, h.exec.first_output_epoch, f);
    // A connection that broke before the script printed anything did not really reach the host.
    if (h.reached && !h.exec.ok() && f.sections.empty())
      h.reached = h.exec.failure == remote::Failure::CommandTimeout;
  });
  if (parallelism_used) *parallelism_used = used;
  return out;
}

std::vector<CheckResult> evaluate(const std::vector<HostOutcome>& hosts, const EvalOptions& opts) {
  std::vector<CheckResult> out;
  for (const auto& h : hosts) check_host(h, opts, out);
  check_cluster(hosts, opts, out);
  // Per host, in catalogue order (ports in numeric order).
  std::map<std::string, size_t> host_order;
  for (size_t i = 0; i < hosts.size(); ++i) host_order.emplace(hosts[i].plan.name, i);
  auto rank = [](const std::string& check) -> std::pair<size_t, int> {
    const auto& cat = catalogue();
    for (size_t i = 0; i < cat.size(); ++i) {
      if (cat[i].name == check) return {i, 0};
      if (cat[i].name == "Port-<N>" && check.rfind("Port-", 0) == 0)
        return {i, static_cast<int>(util::parse_int(check.substr(5)).value_or(0))};
    }
    return {cat.size(), 0};
  };
  std::stable_sort(out.begin(), out.end(), [&](const CheckResult& a, const CheckResult& b) {
    size_t ha = host_order[a.host], hb = host_order[b.host];
    if (ha != hb) return ha < hb;
    return rank(a.check) < rank(b.check);
  });
  return out;
}

std::vector<std::string> unknown_check_names(const std::vector<std::string>& names) {
  std::vector<std::string> bad;
  for (const auto& n : names) {
    if (util::to_lower(n) == "all") continue;
    if (util::to_lower(n).rfind("port-", 0) == 0 && n.size() > 5) {
      auto p = util::parse_int(n.substr(5));
      if (p && *p > 0 && *p < 65536) continue;
      if (util::to_lower(n) == "port-<n>") continue;
      bad.push_back(n);
      continue;
    }
    if (!find_check(n)) bad.push_back(n);
  }
  return bad;
}

void demote(std::vector<CheckResult>& results, const std::vector<std::string>& names) {
  bool all = false;
  std::vector<std::string> lower;
  for (const auto& n : names) {
    lower.push_back(util::to_lower(n));
    all |= lower.back() == "all";
  }
  for (auto& r : results) {
    if (r.status != Status::Fail) continue;
    std::string c = util::to_lower(r.check);
    bool hit = all || std::find(lower.begin(), lower.end(), c) != lower.end() ||
               (c.rfind("port-", 0) == 0 &&
                std::find(lower.begin(), lower.end(), "port-<n>") != lower.end());
    if (hit) {
      r.status = Status::Warn;
      r.demoted = true;
    }
  }
}

Summary summarize(const std::vector<CheckResult>& results, size_t hosts) {
  Summary s;
  s.hosts = hosts;
  for (const auto& r : results) {
    switch (r.status) {
      case Status::Pass:
        ++s.pass;
        break;
      case Status::Warn:
        ++s.warn;
        break;
      case Status::Fail:
        ++s.fail;
        break;
      case Status::Skip:
        ++s.skip;
        break;
      case Status::Install:
        ++s.install;
        break;
    }
    if (r.check == "Reachable" && r.status == Status::Fail) ++s.unreachable;
  }
  return s;
}

int exit_code(const Summary& s, bool fail_on_warn) {
  if (s.unreachable > 0) return 3;
  if (s.fail > 0) return 1;
  if (fail_on_warn && s.warn > 0) return 1;
  return 0;
}

}  // namespace pai::check
