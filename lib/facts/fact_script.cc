#include "facts/fact_script.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "facts/parsers.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::facts {

namespace {

// Steps run cheapest first, the ones that may hang (df on a stale mount, docker,
// nvidia-smi, DNS) last, so that a timed-out host still reports most facts and
// the step it was stuck in. Only built-ins where a loop would otherwise fork.
const char* kScript = R"SH(
LC_ALL=C; export LC_ALL
PATH="$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"; export PATH
b() { echo "@@begin $1"; }
e() { r=$?; [ -n "${2:-}" ] && r=$2; echo; echo "@@end $1 $r"; }
have() { command -v "$1" >/dev/null 2>&1; }
# The clock first, and printed at once: the client times the first byte it gets.
# bash 5 (the /bin/sh of RHEL-like hosts) has it without a process.
t=${EPOCHREALTIME:-}
[ -n "$t" ] || t=$(date +%s.%N)
echo "@@paictl-facts 1"
b clock; echo "$t"; e clock 0
echo "@@privilege ${1:-unknown}"
echo "@@ssh ${2:-}"

b files
# Every line as FILE:LINE (what grep -Has '' prints), read with built-ins.
for f in /etc/os-release /etc/machine-id /proc/sys/kernel/osrelease /proc/sys/kernel/hostname \
  /proc/meminfo /proc/swaps /proc/sys/net/ipv4/ip_forward /proc/sys/net/bridge/bridge-nf-call-iptables \
  /sys/fs/cgroup/cgroup.controllers /proc/cgroups /etc/docker/daemon.json /proc/driver/nvidia/version; do
  [ -f "$f" ] && [ -r "$f" ] || continue
  while IFS= read -r l || [ -n "$l" ]; do printf '%s:%s\n' "$f" "$l"; done < "$f"
done
e files 0

b tcp
# The listeners from the kernel's socket diagnostics, else from /proc/net/tcp and
# tcp6, whose reading walks every bucket of the kernel's connection table twice
# (milliseconds on a host with much memory). Asked for the listening state alone,
# the kernel leaves that table out (ss -l asks for closed sockets too, and walks it).
if have ss && o=$(ss -Htn state listening 2>/dev/null); then echo "@@ss"; [ -z "$o" ] || printf '%s\n' "$o"
else grep -Hs ' 0A ' /proc/net/tcp /proc/net/tcp6; fi
e tcp 0

b modules
for m in br_netfilter overlay; do if [ -d "/sys/module/$m" ]; then echo "$m 1"; else echo "$m 0"; fi; done
e modules 0

b cgroup
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then echo 2; elif [ -d /sys/fs/cgroup/memory ] || [ -d /sys/fs/cgroup/cpu ]; then echo 1; else echo 0; fi
e cgroup 0

b paths
for d in /etc/kubernetes /etc/kubernetes/manifests /var/lib/etcd /var/etcd/data /var/lib/kubelet /etc/cni/net.d /var/lib/cni "$DATA_ROOT" /etc/paictl/cluster /etc/kubernetes/kubelet.conf; do
  if [ -d "$d" ]; then
    if [ -r "$d" ] && [ -x "$d" ]; then
      n=0
      for f in "$d"/* "$d"/.[!.]* "$d"/..?*; do
        [ -e "$f" ] || [ -L "$f" ] || continue
        n=$((n + 1))
      done
      echo "dir $n $d"
      n=0
      for f in "$d"/* "$d"/.[!.]* "$d"/..?*; do
        [ -e "$f" ] || [ -L "$f" ] || continue
        n=$((n + 1)); [ $n -le 5 ] || break
        echo "entry ${f##*/}"
      done
    else
      echo "unreadable 0 $d"
    fi
  elif [ -e "$d" ]; then echo "file 0 $d"
  else echo "absent 0 $d"; fi
done
e paths 0

b bins
for x in ip iptables mount nsenter conntrack ebtables ethtool socat tc touch docker dockerd containerd runc \
  kubelet kubeadm kubectl nvidia-smi nvidia-container-runtime nvidia-container-toolkit nvidia-ctk \
  nvidia-container-cli nvidia-container-runtime-hook lspci timedatectl chronyc ntpq firewall-cmd sudo; do
  printf '%s ' "$x"; command -v "$x" || echo
done
e bins 0

b runtimes
if [ -r /etc/docker/daemon.json ]; then
  j=""
  while IFS= read -r l || [ -n "$l" ]; do j="$j $l"; done < /etc/docker/daemon.json
  k=0
  while [ $k -lt 32 ]; do
    case $j in
      *'"path"'*)
        j=${j#*\"path\"}; j=${j#*\"}; p=${j%%\"*}; j=${j#*\"}
        printf 'path %s\n' "$p"
        command -v "$p" || echo "@@notfound" ;;
      *) break ;;
    esac
    k=$((k + 1))
  done
fi
for p in runc nvidia-container-runtime; do printf 'path %s\n' "$p"; command -v "$p" || echo "@@notfound"; done
e runtimes 0

b pci
n=0
for d in /sys/bus/pci/devices/*; do
  [ -r "$d/vendor" ] || continue
  read -r v < "$d/vendor"
  [ "$v" = 0x10de ] || continue
  read -r c < "$d/class"
  case $c in 0x0300* | 0x0302*) n=$((n + 1)) ;; esac
done
[ -d /sys/bus/pci/devices ] && echo "$n"
e pci 0

b lscpu; lscpu 2>&1; e lscpu
b ip; if have ip; then ip -o addr show 2>&1; else hostname -I 2>&1; fi; e ip
b processes
# Names of running processes from their /proc/PID/comm (ps would read far more of
# /proc): one grep for them all, where the shell's byte-at-a-time read would make
# a dozen system calls a process. comm keeps 15 characters (systemd-timesyn).
pr=2
have grep && { grep -hsxF -e kubelet -e etcd -e kube-apiserver -e kube-controller -e kube-scheduler \
  -e kube-proxy -e dockerd -e containerd -e ntpd -e chronyd -e systemd-timesyn -e firewalld \
  -e hivedscheduler -e calico-node -e weaver /proc/[0-9]*/comm; pr=$?; }
# A process gone between the listing and its read makes grep say 2: the loop then
# (the parser drops repeated names).
if [ "$pr" -gt 1 ]; then
  for p in /proc/[0-9]*/comm; do
    { read -r c < "$p"; } 2>/dev/null || continue
    case $c in
      kubelet | etcd | kube-apiserver | kube-controller | kube-scheduler | kube-proxy | dockerd | containerd | ntpd | \
        chronyd | firewalld | hivedscheduler | calico-node | weaver | systemd-timesyn*) echo "$c" ;;
    esac
  done
fi
e processes 0

b ntp
# timedatectl asks timedated over the system bus: where there is none it fails.
if have timedatectl && { [ -n "${DBUS_SYSTEM_BUS_ADDRESS:-}" ] || [ -S /run/dbus/system_bus_socket ] ||
  [ -S /var/run/dbus/system_bus_socket ]; } && timedatectl status 2>/dev/null; then echo "@@via timedatectl"
elif have chronyc && chronyc -n tracking 2>/dev/null; then echo "@@via chronyc"
elif have ntpq && ntpq -pn 2>/dev/null; then echo "@@via ntpq"
fi
e ntp 0

b df
d=$DATA_ROOT
while [ -n "$d" ] && [ ! -e "$d" ]; do d=${d%/*}; done
[ -n "$d" ] || d=/
echo "@@dataroot $DATA_ROOT"
echo "@@measured $d"
df -Pk / "$d" 2>&1
e df

b containerd
if have containerd; then
  containerd --version 2>&1; s=$?
  echo "@@active $(systemctl is-active containerd 2>/dev/null)"
  containerd config dump 2>/dev/null | grep -E '^[[:space:]]*(default_runtime_name|disabled_plugins)[[:space:]]*=' | sed 's/^[[:space:]]*/@@cfg /'
else
  echo "@@missing"; s=127
fi
e containerd "$s"
b docker; if have docker; then docker info --format '{{json .}}' 2>&1; else echo "@@missing"; fi; e docker

b nvidia
if have nvidia-smi; then
  nvidia-smi --query-gpu=index,name,memory.total,pci.bus_id,uuid,driver_version --format=csv 2>&1; s=$?
else
  echo "@@missing"; s=127
fi
e nvidia "$s"
if [ "$s" = 0 ]; then b topo; nvidia-smi topo -m 2>&1; e topo; fi
if [ "$s" = 0 ]; then b gpuhealth; nvidia-smi -q -d ECC,PAGE_RETIREMENT 2>&1; e gpuhealth; fi
b xid
# The kernel log's XID lines (the driver's GPU errors), the last 50: dmesg, else
# the journal's kernel messages of this boot (dmesg may be restricted to root).
if have dmesg && dmesg >/dev/null 2>&1; then echo "@@via dmesg"; dmesg 2>/dev/null | grep -F 'NVRM: Xid' | tail -n 50
elif have journalctl && journalctl -k -b -q --no-pager -n 1 >/dev/null 2>&1; then
  echo "@@via journalctl"; journalctl -k -b -q --no-pager 2>/dev/null | grep -F 'NVRM: Xid' | tail -n 50
else echo "@@unreadable"; fi
e xid 0
b nvidia-runtime; if have nvidia-container-runtime; then nvidia-container-runtime --version 2>&1; else echo "@@missing"; fi; e nvidia-runtime

b dns
# One resolver wait bounds them all: a dead DNS server costs 10 s, not 10 s per name
# (and the host name's own lookup after it, which /etc/hosts usually answers at once).
to=""; have timeout && to="timeout 10"
h=""; read -r h < /proc/sys/kernel/hostname
dns_each() {
  $to /bin/sh -c 'h=$1; shift
    if [ -n "$h" ] && getent hosts "$h" >/dev/null 2>&1; then echo "hostname ok $h"; else echo "hostname fail $h"; fi
    for n; do if getent hosts "$n" >/dev/null 2>&1; then echo "ok $n"; else echo "fail $n"; fi; done' sh "$h" $DNS_NAMES
}
# One getent for every name: it prints the addresses of the names that resolve,
# one line each, in the names' order, and exits 2 when one did not. Its lines are
# mapped back to the names (each name's answer names it or its address); where
# they do not map back exactly, the names are looked up one by one.
dns_map() {
  dg=""; cn=""; ca=""; ng=0
  while read -r a n; do
    [ -n "$a" ] || continue
    case "$ca" in *" $a "*) r=1 ;; *) r=0 ;; esac
    if [ $ng = 0 ] || [ $r = 1 ] || [ "$n" != "$cn" ]; then
      [ $ng = 0 ] || dg="$dg $cn$ca|"
      cn=$n; ca=" $a "; ng=$((ng + 1))
    else
      ca="$ca$a "
    fi
  done <<EOF
$1
EOF
  [ $ng = 0 ] || dg="$dg $cn$ca|"
  dv=""
  if [ -n "$h" ]; then
    case "${dg%%|*} " in *" $h "*) dg=${dg#*|}; dv="hostname ok $h" ;; *) dv="hostname fail $h" ;; esac
  else
    dv="hostname fail "
  fi
  for n in $DNS_NAMES; do
    case "${dg%%|*} " in *" $n "*) dg=${dg#*|}; dv="$dv
ok $n" ;; *) dv="$dv
fail $n" ;; esac
  done
  [ -z "$dg" ]
}
if [ -z "$h$DNS_NAMES" ]; then
  echo "hostname fail "
else
  o=$($to getent hosts ${h:+"$h"} $DNS_NAMES 2>/dev/null); s=$?
  if [ $s = 0 ]; then
    if [ -n "$h" ]; then echo "hostname ok $h"; else echo "hostname fail "; fi
    for n in $DNS_NAMES; do echo "ok $n"; done
  elif [ $s = 2 ] && dns_map "$o"; then
    printf '%s\n' "$dv"
  elif [ $s = 124 ]; then
    # Timed out (its buffered answers are lost): no name resolved within the bound,
    # as when the lookups one by one ran out of it; only the host name is asked again.
    if [ -n "$h" ] && $to getent hosts "$h" >/dev/null 2>&1; then echo "hostname ok $h"; else echo "hostname fail $h"; fi
    for n in $DNS_NAMES; do echo "fail $n"; done
  else
    dns_each
  fi
fi
e dns 0
echo "@@done"
)SH";

void note(HostFacts& f, std::string s) {
  if (f.notes.size() < 50) f.notes.push_back(std::move(s));
}

std::vector<std::string_view> lines_of(std::string_view s) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find('\n', pos);
    if (end == std::string_view::npos) end = s.size();
    std::string_view l = s.substr(pos, end - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    out.push_back(l);
    pos = end + 1;
  }
  return out;
}

std::string first_line(std::string_view s) {
  s = util::trim(s);
  size_t nl = s.find('\n');
  std::string l(s.substr(0, nl));
  if (!l.empty() && l.back() == '\r') l.pop_back();
  if (l.size() > 300) l = l.substr(0, 300) + "...";
  return l;
}

// os-release values may be "quoted" or 'quoted'.
std::string unquote(std::string_view v) {
  v = util::trim(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    v = v.substr(1, v.size() - 2);
  return std::string(v);
}

std::optional<int64_t> kb_value(std::string_view line) {
  // "MemTotal:       67108864 kB"
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view rest = util::trim(line.substr(colon + 1));
  size_t sp = rest.find(' ');
  std::string_view num = sp == std::string_view::npos ? rest : rest.substr(0, sp);
  auto n = util::parse_int(num);
  if (!n || *n < 0 || *n > (int64_t{1} << 52)) return std::nullopt;
  return *n;
}

// /proc/net/tcp addresses: little-endian hex per 32-bit word.
std::string decode_proc_address(std::string_view hex, bool& ok) {
  ok = false;
  auto byte_at = [&](size_t i) -> int {
    auto h = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    int a = h(hex[i]), b = h(hex[i + 1]);
    return a < 0 || b < 0 ? -1 : a * 16 + b;
  };
  if (hex.size() == 8) {
    int b[4];
    for (int i = 0; i < 4; ++i) b[i] = byte_at(static_cast<size_t>(i) * 2);
    for (int v : b)
      if (v < 0) return {};
    ok = true;
    return std::to_string(b[3]) + "." + std::to_string(b[2]) + "." + std::to_string(b[1]) + "." +
           std::to_string(b[0]);
  }
  if (hex.size() == 32) {
    unsigned char bytes[16];
    for (int w = 0; w < 4; ++w)
      for (int i = 0; i < 4; ++i) {
        int v = byte_at(static_cast<size_t>(w * 8 + i * 2));
        if (v < 0) return {};
        bytes[w * 4 + (3 - i)] = static_cast<unsigned char>(v);
      }
    // IPv4-mapped ::ffff:a.b.c.d
    bool mapped = true;
    for (int i = 0; i < 10; ++i) mapped &= bytes[i] == 0;
    mapped &= bytes[10] == 0xff && bytes[11] == 0xff;
    ok = true;
    if (mapped)
      return "::ffff:" + std::to_string(bytes[12]) + "." + std::to_string(bytes[13]) + "." +
             std::to_string(bytes[14]) + "." + std::to_string(bytes[15]);
    bool all_zero = true;
    for (unsigned char c : bytes) all_zero &= c == 0;
    if (all_zero) return "::";
    // Compact form without zero compression beyond the all-zero and loopback cases.
    bool loop = true;
    for (int i = 0; i < 15; ++i) loop &= bytes[i] == 0;
    if (loop && bytes[15] == 1) return "::1";
    std::string out;
    static const char* d = "0123456789abcdef";
    for (int i = 0; i < 16; i += 2) {
      if (i) out += ':';
      unsigned v = (static_cast<unsigned>(bytes[i]) << 8) | bytes[i + 1];
      std::string g;
      for (int s = 12; s >= 0; s -= 4) g += d[(v >> s) & 0xf];
      size_t nz = g.find_first_not_of('0');
      out += nz == std::string::npos ? "0" : g.substr(nz);
    }
    return out;
  }
  return {};
}

void parse_files(std::string_view body, HostFacts& f) {
  std::map<std::string, std::string> files;
  static const char* kNames[] = {"/etc/os-release",
                                 "/etc/machine-id",
                                 "/proc/sys/kernel/osrelease",
                                 "/proc/sys/kernel/hostname",
                                 "/proc/meminfo",
                                 "/proc/swaps",
                                 "/proc/sys/net/ipv4/ip_forward",
                                 "/proc/sys/net/bridge/bridge-nf-call-iptables",
                                 "/sys/fs/cgroup/cgroup.controllers",
                                 "/proc/cgroups",
                                 "/etc/docker/daemon.json",
                                 "/proc/driver/nvidia/version"};
  for (auto line : lines_of(body)) {
    for (const char* n : kNames) {
      std::string_view name(n);
      if (line.size() > name.size() && line.substr(0, name.size()) == name &&
          line[name.size()] == ':') {
        std::string& dst = files[std::string(name)];
        dst.append(line.substr(name.size() + 1));
        dst += '\n';
        break;
      }
    }
  }
  auto get = [&](const char* n) -> const std::string* {
    auto it = files.find(n);
    return it == files.end() ? nullptr : &it->second;
  };
  if (auto* s = get("/etc/os-release")) {
    for (auto l : lines_of(*s)) {
      size_t eq = l.find('=');
      if (eq == std::string_view::npos) continue;
      std::string_view k = l.substr(0, eq);
      std::string v = unquote(l.substr(eq + 1));
      if (k == "ID")
        f.os.id = v;
      else if (k == "ID_LIKE")
        f.os.id_like = v;
      else if (k == "VERSION_ID")
        f.os.version_id = v;
      else if (k == "PRETTY_NAME")
        f.os.pretty_name = v;
    }
  }
  if (auto* s = get("/etc/machine-id")) f.machine_id = std::string(util::trim(*s));
  if (auto* s = get("/proc/sys/kernel/osrelease")) f.kernel = std::string(util::trim(*s));
  if (auto* s = get("/proc/sys/kernel/hostname")) f.hostname = std::string(util::trim(*s));
  if (auto* s = get("/proc/meminfo")) f.meminfo = *s;
  if (auto* s = get("/proc/swaps")) {
    bool header = true;
    for (auto l : lines_of(*s)) {
      if (header) {
        header = false;
        if (l.rfind("Filename", 0) == 0) continue;
      }
      std::vector<std::string> w;
      for (auto part : util::split(l, ' '))
        for (auto p2 : util::split(part, '\t'))
          if (!p2.empty()) w.emplace_back(p2);
      if (w.size() < 3) continue;
      SwapDevice d;
      d.name = w[0];
      d.type = w[1];
      if (auto n = util::parse_int(w[2]); n && *n >= 0) d.size_bytes = *n * 1024;
      f.swap.devices.push_back(std::move(d));
    }
  }
  if (auto* s = get("/proc/sys/net/ipv4/ip_forward"))
    if (auto n = util::parse_int(util::trim(*s))) f.ip_forward = static_cast<int>(*n);
  if (auto* s = get("/proc/sys/net/bridge/bridge-nf-call-iptables"))
    if (auto n = util::parse_int(util::trim(*s))) f.bridge_nf_call_iptables = static_cast<int>(*n);
  if (auto* s = get("/sys/fs/cgroup/cgroup.controllers")) {
    for (auto c : util::split(util::trim(*s), ' '))
      if (!c.empty()) f.cgroup_controllers.emplace_back(c);
  } else if (auto* s2 = get("/proc/cgroups")) {
    // cgroup v1: "#subsys_name hierarchy num_cgroups enabled"
    for (auto l : lines_of(*s2)) {
      if (l.empty() || l[0] == '#') continue;
      std::vector<std::string_view> w;
      for (auto p : util::split(l, '\t'))
        if (!p.empty()) w.push_back(p);
      if (w.size() >= 4 && util::trim(w[3]) == "1")
        f.cgroup_controllers.emplace_back(util::trim(w[0]));
    }
  }
  if (auto* s = get("/etc/docker/daemon.json")) {
    f.daemon_json.present = true;
    nlohmann::json j = util::parse_json_or_discarded(*s);
    if (j.is_discarded() || !j.is_object()) {
      f.daemon_json.valid = false;
      f.daemon_json.error = "/etc/docker/daemon.json is not a JSON object";
    } else {
      if (auto it = j.find("default-runtime"); it != j.end() && it->is_string())
        f.daemon_json.default_runtime = it->get<std::string>();
      if (auto it = j.find("data-root"); it != j.end() && it->is_string())
        f.daemon_json.data_root = it->get<std::string>();
      else if (auto g = j.find("graph"); g != j.end() && g->is_string())
        f.daemon_json.data_root = g->get<std::string>();
      if (auto it = j.find("runtimes"); it != j.end() && it->is_object())
        for (auto& [name, v] : it->items())
          if (v.is_object())
            if (auto p = v.find("path"); p != v.end() && p->is_string())
              f.daemon_json.runtimes[name] = p->get<std::string>();
    }
  }
  if (auto* s = get("/proc/driver/nvidia/version")) {
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ..."
    std::string l = first_line(*s);
    size_t k = l.find("Kernel Module");
    if (k != std::string::npos) {
      std::string_view rest = util::trim(std::string_view(l).substr(k + 13));
      size_t sp = rest.find(' ');
      f.nvidia.driver_version = std::string(rest.substr(0, sp));
    }
  }
}

// `ss -Htn state listening`: "0 4096 0.0.0.0:22 0.0.0.0:*" (one state asked for,
// its column left out; "LISTEN 0 4096 ..." where an ss prints it), the local
// address one of 127.0.0.53%lo:53, [::]:22 (IPv6 only), *:80 (IPv6 and IPv4),
// [::ffff:10.0.0.1]:80.
bool parse_ss_listener(std::string_view l, Listener& out) {
  std::vector<std::string_view> w;
  for (auto p : util::split(l, ' '))
    for (auto q : util::split(p, '\t'))
      if (!q.empty()) w.push_back(q);
  if (!w.empty() && w[0] == "LISTEN") w.erase(w.begin());
  if (w.size() < 4 || !util::parse_int(w[0]) || !util::parse_int(w[1])) return false;
  std::string_view local = w[2];
  size_t c = local.rfind(':');
  if (c == std::string_view::npos || c == 0) return false;
  auto port = util::parse_int(local.substr(c + 1));
  if (!port || *port < 0 || *port > 65535) return false;
  std::string_view addr = local.substr(0, c);
  if (size_t pct = addr.find('%'); pct != std::string_view::npos) addr = addr.substr(0, pct);
  bool v6 = false;
  if (addr == "*") {
    addr = "::";
    v6 = true;
  } else if (addr.size() >= 2 && addr.front() == '[' && addr.back() == ']') {
    addr = addr.substr(1, addr.size() - 2);
    v6 = true;
  } else if (addr.find(':') != std::string_view::npos) {
    v6 = true;
  }
  if (addr.empty()) return false;
  for (char ch : addr)
    if (!(std::isxdigit(static_cast<unsigned char>(ch)) || ch == '.' || ch == ':')) return false;
  out = Listener{std::string(addr), static_cast<int>(*port), v6};
  return true;
}

void parse_tcp(std::string_view body, HostFacts& f) {
  // Each address and port once (ss and /proc/net/tcp may list a socket twice),
  // looked up in a set: a host with thousands of listeners costs no more a line.
  std::set<std::pair<std::string, int>> seen;
  for (const auto& x : f.listening) seen.emplace(x.address, x.port);
  auto add = [&f, &seen](Listener li) {
    if (f.listening.size() >= 10000 || !seen.emplace(li.address, li.port).second) return;
    f.listening.push_back(std::move(li));
  };
  bool ss = false;
  for (auto l : lines_of(body)) {
    if (l == "@@ss") {
      ss = true;
      continue;
    }
    if (ss) {
      if (Listener li; parse_ss_listener(l, li)) add(std::move(li));
      continue;
    }
    // "/proc/net/tcp:   0: 0100007F:1F90 00000000:0000 0A ..."
    size_t colon = l.find(':');
    if (colon == std::string_view::npos) continue;
    bool v6 = l.substr(0, colon) == "/proc/net/tcp6";
    std::vector<std::string_view> w;
    for (auto p : util::split(l.substr(colon + 1), ' '))
      if (!p.empty()) w.push_back(p);
    if (w.size() < 4 || w[3] != "0A") continue;
    std::string_view local = w[1];
    size_t c = local.find(':');
    if (c == std::string_view::npos) continue;
    bool ok = false;
    std::string addr = decode_proc_address(local.substr(0, c), ok);
    if (!ok) continue;
    std::string port_hex(local.substr(c + 1));
    if (port_hex.empty() || port_hex.size() > 4) continue;
    char* end = nullptr;
    long port = std::strtol(port_hex.c_str(), &end, 16);
    if (*end) continue;
    add(Listener{addr, static_cast<int>(port), v6});
  }
  std::sort(f.listening.begin(), f.listening.end(), [](const Listener& a, const Listener& b) {
    return a.port != b.port ? a.port < b.port : a.address < b.address;
  });
}

void parse_paths(std::string_view body, HostFacts& f) {
  PathFacts* cur = nullptr;
  for (auto l : lines_of(body)) {
    if (l.rfind("entry ", 0) == 0) {
      if (cur && cur->sample.size() < 5) cur->sample.emplace_back(l.substr(6));
      continue;
    }
    // "KIND N PATH"
    size_t s1 = l.find(' ');
    if (s1 == std::string_view::npos) continue;
    size_t s2 = l.find(' ', s1 + 1);
    if (s2 == std::string_view::npos) continue;
    std::string_view kind = l.substr(0, s1);
    PathFacts p;
    p.path = std::string(l.substr(s2 + 1));
    auto n = util::parse_int(l.substr(s1 + 1, s2 - s1 - 1));
    p.entries = n ? static_cast<int>(std::clamp<int64_t>(*n, 0, 1 << 30)) : 0;
    if (kind == "dir") {
      p.exists = p.directory = true;
    } else if (kind == "unreadable") {
      p.exists = p.directory = true;
      p.readable = false;
    } else if (kind == "file") {
      p.exists = true;
    } else if (kind != "absent") {
      continue;
    }
    bool dup = false;
    for (const auto& x : f.paths) dup |= x.path == p.path;
    if (dup) {
      cur = nullptr;
      continue;
    }
    f.paths.push_back(std::move(p));
    cur = &f.paths.back();
  }
}

void parse_bins(std::string_view body, HostFacts& f) {
  for (auto l : lines_of(body)) {
    size_t sp = l.find(' ');
    if (sp == std::string_view::npos || sp == 0) continue;
    std::string name(l.substr(0, sp));
    std::string path(util::trim(l.substr(sp + 1)));
    if (name.find('/') != std::string::npos) continue;
    f.binaries[name] = path;
  }
}

void parse_runtimes(std::string_view body, HostFacts& f) {
  auto ls = lines_of(body);
  std::map<std::string, std::string> resolved;  // configured path -> where it is ("" = missing)
  for (size_t i = 0; i + 1 < ls.size(); ++i) {
    if (ls[i].rfind("path ", 0) != 0) continue;
    std::string p(ls[i].substr(5));
    std::string r(util::trim(ls[i + 1]));
    if (r == "@@notfound") r.clear();
    if (!resolved.count(p)) resolved[p] = r;
    ++i;
  }
  auto lookup = [&](const std::string& path) -> std::string {
    auto it = resolved.find(path);
    return it == resolved.end() ? std::string() : it->second;
  };
  std::map<std::string, std::string> configured = f.daemon_json.runtimes;
  for (const auto& [name, path] : f.docker.runtimes)
    if (!configured.count(name)) configured[name] = path;
  for (const auto& [name, path] : configured) {
    if (name == "io.containerd.runc.v2" || name == "io.containerd.runtime.v1.linux") continue;
    f.runtime_binaries.push_back({name, path, lookup(path)});
  }
  if (!configured.count("runc")) f.runtime_binaries.push_back({"runc", "runc", lookup("runc")});
  f.nvidia.container_runtime_present = !lookup("nvidia-container-runtime").empty();
}

void parse_ip(std::string_view body, HostFacts& f) {
  for (auto l : lines_of(body)) {
    // "2: eth0    inet 10.0.0.5/24 brd 10.0.0.255 scope global eth0\       valid_lft ..."
    std::vector<std::string_view> w;
    for (auto p : util::split(l, ' '))
      if (!p.empty()) w.push_back(p);
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      if (w[i] != "inet" && w[i] != "inet6") continue;
      InterfaceAddress a;
      a.v6 = w[i] == "inet6";
      a.interface = w.size() > 1 ? std::string(w[1]) : "";
      std::string_view cidr = w[i + 1];
      size_t slash = cidr.find('/');
      a.address = std::string(cidr.substr(0, slash));
      if (slash != std::string_view::npos)
        if (auto p = util::parse_int(cidr.substr(slash + 1)); p && *p >= 0 && *p <= 128)
          a.prefix = static_cast<int>(*p);
      if (f.interfaces.size() < 1000) f.interfaces.push_back(std::move(a));
      break;
    }
    // `hostname -I` fallback: bare addresses.
    if (w.size() >= 1 && l.find("inet") == std::string_view::npos) {
      for (auto a : w) {
        if (util::is_ipv4(a) || a.find(':') != std::string_view::npos) {
          InterfaceAddress ia;
          ia.address = std::string(a);
          ia.v6 = a.find(':') != std::string_view::npos;
          if (f.interfaces.size() < 1000) f.interfaces.push_back(std::move(ia));
        }
      }
    }
  }
}

void parse_processes(std::string_view body, HostFacts& f) {
  static const char* kInteresting[] = {"kubelet",
                                       "etcd",
                                       "kube-apiserver",
                                       "kube-controller",
                                       "kube-scheduler",
                                       "kube-proxy",
                                       "dockerd",
                                       "containerd",
                                       "ntpd",
                                       "chronyd",
                                       "systemd-timesyncd",
                                       "firewalld",
                                       "hivedscheduler",
                                       "calico-node",
                                       "weaver"};
  for (auto l : lines_of(body)) {
    std::string_view name = util::trim(l);
    // /proc/PID/comm keeps 15 characters of a name.
    if (name.starts_with("systemd-timesyn")) name = "systemd-timesyncd";
    for (const char* k : kInteresting) {
      if (name == k) {
        if (std::find(f.processes.begin(), f.processes.end(), name) == f.processes.end())
          f.processes.emplace_back(name);
        break;
      }
    }
  }
  std::sort(f.processes.begin(), f.processes.end());
}

void parse_ntp(std::string_view body, HostFacts& f) {
  std::string_view via;
  for (auto l : lines_of(body))
    if (l.rfind("@@via ", 0) == 0) via = l.substr(6);
  if (via.empty()) return;
  f.clock.ntp_source = std::string(via);
  f.clock.ntp_known = true;
  for (auto l : lines_of(body)) {
    std::string_view t = util::trim(l);
    if (via == "timedatectl") {
      // "System clock synchronized: yes" (systemd >= 239) or "NTP synchronized: yes"
      if (t.rfind("System clock synchronized:", 0) == 0 || t.rfind("NTP synchronized:", 0) == 0)
        f.clock.ntp_synchronized = util::trim(t.substr(t.find(':') + 1)) == "yes";
    } else if (via == "chronyc") {
      if (t.rfind("Leap status", 0) == 0)
        f.clock.ntp_synchronized = t.find("Not synchronised") == std::string_view::npos;
    } else if (via == "ntpq") {
      if (!t.empty() && t[0] == '*') f.clock.ntp_synchronized = true;
    }
  }
}

void parse_df(std::string_view body, HostFacts& f) {
  std::string asked, measured;
  std::vector<std::vector<std::string_view>> rows;
  for (auto l : lines_of(body)) {
    if (l.rfind("@@dataroot ", 0) == 0) {
      asked = std::string(l.substr(11));
      continue;
    }
    if (l.rfind("@@measured ", 0) == 0) {
      measured = std::string(l.substr(11));
      continue;
    }
    if (l.rfind("Filesystem", 0) == 0) continue;
    std::vector<std::string_view> w;
    for (auto p : util::split(l, ' '))
      if (!p.empty()) w.push_back(p);
    if (w.size() >= 6) rows.push_back(std::move(w));
  }
  // Rows follow the arguments: "/" then the data root (df prints both even when equal).
  std::vector<std::pair<std::string, std::string>> wanted = {{"/", "/"}};
  if (!asked.empty()) wanted.push_back({asked, measured.empty() ? asked : measured});
  for (size_t i = 0; i < rows.size() && i < wanted.size(); ++i) {
    const auto& w = rows[i];
    DiskFacts d;
    d.path = wanted[i].first;
    d.checked = wanted[i].second;
    d.mount_point = std::string(w[5]);
    auto total = util::parse_int(w[1]);
    auto avail = util::parse_int(w[3]);
    if (!total || !avail || *total < 0 || *avail < 0 || *total > (int64_t{1} << 50)) {
      note(f, "df: cannot read the line for " + d.path);
      continue;
    }
    d.total_bytes = *total * 1024;
    d.available_bytes = *avail * 1024;
    f.disks.push_back(std::move(d));
  }
}

void parse_docker(std::string_view body, int status, HostFacts& f) {
  std::string text(util::trim(body));
  if (text == "@@missing") return;
  f.docker.client_present = true;
  // `docker info --format '{{json .}}'` prints the JSON even when the daemon is down
  // (with ServerErrors) on new clients, and an error line on old ones.
  size_t brace = text.find('{');
  nlohmann::json j = brace == std::string::npos ? nlohmann::json()
                                                : util::parse_json_or_discarded(text.substr(brace));
  if (status != 0 || !j.is_object()) {
    f.docker.daemon_reachable = false;
    f.docker.error = first_line(text);
    if (f.docker.error.empty())
      f.docker.error = "docker info failed with status " + std::to_string(status);
    return;
  }
  if (auto it = j.find("ServerErrors"); it != j.end() && it->is_array() && !it->empty()) {
    f.docker.daemon_reachable = false;
    f.docker.error =
        (*it)[0].is_string() ? (*it)[0].get<std::string>() : "docker info reported server errors";
    return;
  }
  f.docker.daemon_reachable = true;
  auto str = [&](const char* k) {
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  f.docker.server_version = str("ServerVersion");
  f.docker.default_runtime = str("DefaultRuntime");
  f.docker.root_dir = str("DockerRootDir");
  f.docker.cgroup_driver = str("CgroupDriver");
  if (auto it = j.find("ContainersRunning"); it != j.end() && it->is_number_integer())
    f.docker.containers_running =
        static_cast<int>(std::clamp<int64_t>(it->get<int64_t>(), 0, 1 << 30));
  if (auto it = j.find("Runtimes"); it != j.end() && it->is_object())
    for (auto& [name, v] : it->items()) {
      std::string path = name;
      if (v.is_object())
        if (auto p = v.find("path"); p != v.end() && p->is_string()) path = p->get<std::string>();
      f.docker.runtimes[name] = path;
    }
}

void parse_nvidia(std::string_view body, int status, HostFacts& f) {
  std::string text(body);
  if (util::trim(text) == "@@missing") return;
  f.nvidia.smi_present = true;
  f.nvidia.smi_exit = status;
  if (status != 0) {
    f.nvidia.smi_error = first_line(text);
    return;
  }
  auto parsed = parse_gpu_query(text, "nvidia-smi --query-gpu");
  for (const auto& g : parsed.value)
    f.gpus.push_back({g.index, g.name, g.memory_mib, g.bus_id, g.uuid});
  for (const auto& d : parsed.diagnostics.items())
    if (d.severity == diag::Severity::Error) note(f, "nvidia-smi --query-gpu: " + d.message);
  // The driver version column (the shared parser ignores columns it does not know).
  auto ls = lines_of(text);
  if (!ls.empty()) {
    std::vector<std::string> header;
    for (auto c : util::split(ls[0], ',')) header.emplace_back(util::trim(c));
    auto col = std::find(header.begin(), header.end(), "driver_version");
    if (col != header.end()) {
      size_t k = static_cast<size_t>(col - header.begin());
      for (size_t i = 1; i < ls.size(); ++i) {
        auto cells = util::split(ls[i], ',');
        if (cells.size() > k) {
          std::string v(util::trim(cells[k]));
          if (!v.empty() && v != "[N/A]") {
            f.nvidia.driver_version = v;
            break;
          }
        }
      }
    }
  }
}

}  // namespace

std::string fact_script(const ScriptOptions& opts) {
  std::string names;
  for (const auto& n : opts.dns_names)
    if (is_safe_dns_name(n)) names += (names.empty() ? "" : " ") + n;
  std::string root = opts.docker_data_root.empty() ? "/var/lib/docker" : opts.docker_data_root;
  return "# paictl fact script (paictl.facts/v1): reads facts, changes nothing.\n"
         "DATA_ROOT=" +
         util::shell_quote(root) + "\nDNS_NAMES=" + util::shell_quote(names) + "\n" + kScript;
}

std::string bootstrap_command() {
  // Single quotes only around the whole: the login shell may be sh, bash, zsh or fish.
  return "/bin/sh -c '"
         "IFS= read -r pw; c=$SSH_CONNECTION; "
         // The effective uid from /proc/self/status with built-ins, else from id.
         "u=; while read -r k a b r; do [ \"$k\" = Uid: ] && { u=$b; break; }; done "
         "2>/dev/null < /proc/self/status; [ -n \"$u\" ] || u=$(id -u); "
         "if [ \"$u\" = 0 ]; then pw=; exec /bin/sh -s root \"$c\"; fi; "
         "if command -v sudo >/dev/null 2>&1; then "
         "if sudo -n true 2>/dev/null; then pw=; sudo -n /bin/sh -s sudo \"$c\"; exit $?; fi; "
         "if [ -n \"$pw\" ] && printf \"%s\\n\" \"$pw\" | sudo -S -p \"\" -v 2>/dev/null; then "
         "pw=; sudo -n /bin/sh -s sudo-password \"$c\"; exit $?; fi; "
         "fi; "
         "pw=; exec /bin/sh -s user \"$c\"'";
}

bool is_safe_dns_name(const std::string& name) {
  if (name.empty() || name.size() > 253 || name[0] == '-') return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'))
      return false;
  return true;
}

std::string step_description(const std::string& section) {
  static const std::map<std::string, std::string> k = {
      {"clock", "date"},
      {"files", "reading /etc and /proc files"},
      {"tcp", "listing TCP listeners (ss, /proc/net/tcp)"},
      {"paths", "listing the Kubernetes and etcd directories"},
      {"lscpu", "lscpu"},
      {"ip", "ip addr"},
      {"processes", "ps"},
      {"ntp", "timedatectl/chronyc/ntpq"},
      {"df", "df (a hung mount?)"},
      {"containerd", "containerd --version"},
      {"docker", "docker info"},
      {"nvidia", "nvidia-smi --query-gpu"},
      {"topo", "nvidia-smi topo -m"},
      {"gpuhealth", "nvidia-smi -q -d ECC,PAGE_RETIREMENT"},
      {"xid", "dmesg (the kernel log's XID lines)"},
      {"nvidia-runtime", "nvidia-container-runtime --version"},
      {"dns", "getent hosts (DNS lookups)"},
  };
  auto it = k.find(section);
  return it == k.end() ? section : it->second;
}

ParsedOutput split_sections(const std::string& out) {
  ParsedOutput p;
  Section* open = nullptr;
  size_t pos = 0;
  std::string body;
  while (pos < out.size()) {
    size_t end = out.find('\n', pos);
    bool last = end == std::string::npos;
    if (last) end = out.size();
    std::string_view line(out.data() + pos, end - pos);
    pos = end + 1;
    std::string_view l = line;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.rfind("@@", 0) == 0 && !open) {
      if (l == "@@paictl-facts 1") {
        p.header = true;
      } else if (l.rfind("@@begin ", 0) == 0) {
        if (p.sections.size() < 200) {
          p.sections.push_back({std::string(l.substr(8)), {}, -1, false});
          open = &p.sections.back();
          body.clear();
        }
      } else if (l == "@@done") {
        p.done = true;
      } else {
        size_t sp = l.find(' ');
        p.markers.emplace_back(
            std::string(
                l.substr(2, sp == std::string_view::npos ? std::string_view::npos : sp - 2)),
            sp == std::string_view::npos ? std::string() : std::string(l.substr(sp + 1)));
      }
      continue;
    }
    if (open) {
      std::string end_marker = "@@end " + open->name + " ";
      if (l.rfind(end_marker, 0) == 0) {
        auto st = util::parse_int(l.substr(end_marker.size()));
        open->status = st ? static_cast<int>(*st) : -1;
        open->ended = true;
        // The script prints one newline before the end marker.
        if (!body.empty() && body.back() == '\n') body.pop_back();
        open->body = std::move(body);
        body.clear();
        open = nullptr;
        continue;
      }
      body.append(line);
      if (!last) body += '\n';
    }
  }
  if (open) open->body = std::move(body);  // cut off: keep what came
  return p;
}

void parse_fact_output(const std::string& out, double first_byte_epoch, HostFacts& f) {
  ParsedOutput p = split_sections(out);
  if (!p.header) {
    note(f, "the host did not run the fact script (no header in its output)");
    return;
  }
  for (const auto& [k, v] : p.markers) {
    if (k == "privilege") f.privilege = v;
    if (k == "ssh") {
      // SSH_CONNECTION: "client_ip client_port server_ip server_port"
      std::vector<std::string_view> w;
      for (auto x : util::split(v, ' '))
        if (!x.empty()) w.push_back(x);
      if (w.size() >= 3) f.ssh_server_address = std::string(w[2]);
    }
  }
  // Complete: the script said so and no step was left open after it.
  f.complete = p.done && std::all_of(p.sections.begin(), p.sections.end(),
                                     [](const Section& x) { return x.ended; });
  for (const auto& s : p.sections) {
    f.sections.push_back(s.name);
    if (!s.ended) {
      f.stuck_in = s.name;
      break;  // a cut-off step: its output may be partial
    }
    const std::string& b = s.body;
    if (s.name == "clock") {
      std::string_view t = util::trim(b);
      auto v = util::parse_double(t);
      // A date without %N (busybox builds) prints "1796024589.%N" or "1796024589.N".
      if (!v) v = util::parse_double(t.substr(0, t.find('.')));
      if (v && std::isfinite(*v) && *v > 0) {
        f.clock.epoch = *v;
        if (first_byte_epoch > 0) f.clock.skew_s = *v - first_byte_epoch;
      } else {
        note(f, "date: cannot read '" + first_line(b) + "'");
      }
    } else if (s.name == "files") {
      parse_files(b, f);
      if (!f.meminfo.empty()) {
        auto m = parse_meminfo(f.meminfo, "meminfo");
        f.memory.total_bytes = m.value.total_bytes;
        f.memory.available_bytes = m.value.available_bytes;
        for (auto l : lines_of(f.meminfo))
          if (l.rfind("SwapTotal:", 0) == 0)
            if (auto kb = kb_value(l)) f.swap.total_bytes = *kb * 1024;
      }
    } else if (s.name == "tcp") {
      parse_tcp(b, f);
    } else if (s.name == "modules") {
      for (auto l : lines_of(b)) {
        size_t sp = l.find(' ');
        if (sp != std::string_view::npos)
          f.kernel_modules[std::string(l.substr(0, sp))] = l.substr(sp + 1) == "1";
      }
    } else if (s.name == "cgroup") {
      if (auto n = util::parse_int(util::trim(b)); n && *n >= 0 && *n <= 2)
        f.cgroup_version = static_cast<int>(*n);
    } else if (s.name == "paths") {
      parse_paths(b, f);
    } else if (s.name == "bins") {
      parse_bins(b, f);
    } else if (s.name == "runtimes") {
      // Needs docker's runtimes too: parsed after the docker section (below).
    } else if (s.name == "pci") {
      if (auto n = util::parse_int(util::trim(b)); n && *n >= 0)
        f.nvidia.pci_gpus = static_cast<int>(*n);
    } else if (s.name == "lscpu") {
      f.lscpu = b;
      auto c = parse_lscpu(b, "lscpu");
      f.cpu.logical = c.value.logical;
      f.cpu.sockets = c.value.sockets;
      f.cpu.cores_per_socket = c.value.cores_per_socket;
      f.cpu.threads_per_core = c.value.threads_per_core;
      f.cpu.numa_nodes = c.value.numa_nodes;
      f.cpu.model = c.value.model_name;
      f.cpu.architecture = c.value.architecture;
      if (s.status != 0) note(f, "lscpu failed: " + first_line(b));
    } else if (s.name == "ip") {
      parse_ip(b, f);
    } else if (s.name == "processes") {
      parse_processes(b, f);
    } else if (s.name == "ntp") {
      parse_ntp(b, f);
    } else if (s.name == "df") {
      parse_df(b, f);
    } else if (s.name == "containerd") {
      std::string t(util::trim(b));
      if (t != "@@missing") f.containerd_present = true;
      bool first = true;
      for (auto raw : util::split(t, '\n')) {
        std::string_view line = util::trim(raw);
        if (line.starts_with("@@active ")) {
          f.containerd_active = util::trim(line.substr(9)) == "active";
        } else if (line.starts_with("@@cfg ")) {
          // `default_runtime_name = "nvidia"`, `disabled_plugins = ["cri"]`
          std::string_view kv = line.substr(6);
          auto eq = kv.find('=');
          if (eq == std::string_view::npos) continue;
          std::string_view key = util::trim(kv.substr(0, eq)),
                           value = util::trim(kv.substr(eq + 1));
          if (key == "default_runtime_name") {
            std::string v(value);
            std::erase(v, '"');
            f.containerd_default_runtime = v;
          } else if (key == "disabled_plugins") {
            f.containerd_cri = value.find("\"cri\"") == std::string_view::npos &&
                               value.find("io.containerd.grpc.v1.cri") == std::string_view::npos;
          }
        } else if (first && s.status == 0 && line != "@@missing") {
          // "containerd containerd.io 1.6.24 61f9fd88..."
          std::vector<std::string_view> w;
          for (auto x : util::split(line, ' '))
            if (!x.empty()) w.push_back(x);
          if (w.size() >= 3) f.containerd_version = std::string(w[2]);
        }
        first = false;
      }
    } else if (s.name == "docker") {
      parse_docker(b, s.status, f);
    } else if (s.name == "nvidia") {
      parse_nvidia(b, s.status, f);
    } else if (s.name == "topo") {
      f.nvidia.topo_matrix = b;
    } else if (s.name == "gpuhealth" && s.status == 0) {
      auto h = parse_gpu_health(b, "nvidia-smi -q -d ECC,PAGE_RETIREMENT");
      f.nvidia.health_read = true;
      f.nvidia.health = std::move(h.value.gpus);
      for (const auto& d : h.diagnostics.items())
        if (d.severity == diag::Severity::Error) note(f, "nvidia-smi -q: " + d.message);
    } else if (s.name == "xid") {
      if (b.find("@@via dmesg") != std::string::npos)
        f.nvidia.kernel_log = "dmesg";
      else if (b.find("@@via journalctl") != std::string::npos)
        f.nvidia.kernel_log = "journalctl";
      f.nvidia.xids = parse_xid_events(b);
    } else if (s.name == "nvidia-runtime") {
      std::string t(util::trim(b));
      if (t != "@@missing") f.nvidia.container_runtime_version = first_line(t);
    } else if (s.name == "dns") {
      for (auto l : lines_of(b)) {
        std::vector<std::string_view> w;
        for (auto x : util::split(l, ' '))
          if (!x.empty()) w.push_back(x);
        if (w.size() >= 2 && w[0] == "hostname") {
          f.hostname_resolves = w[1] == "ok";
        } else if (w.size() >= 2 && (w[0] == "ok" || w[0] == "fail")) {
          f.dns.push_back({std::string(w[1]), w[0] == "ok"});
        }
      }
    }
  }
  for (const auto& s : p.sections)
    if (s.name == "runtimes" && s.ended) parse_runtimes(s.body, f);
  for (const auto& s : p.sections) {
    if (s.name == "bins" && s.ended) {
      for (const char* t : {"nvidia-ctk", "nvidia-container-toolkit", "nvidia-container-cli",
                            "nvidia-container-runtime-hook"})
        if (auto it = f.binaries.find(t); it != f.binaries.end() && !it->second.empty())
          f.nvidia.toolkit_binaries.emplace_back(t);
      if (auto it = f.binaries.find("nvidia-container-runtime");
          it != f.binaries.end() && !it->second.empty())
        f.nvidia.container_runtime_present = true;
    }
  }
  // ip_addresses: the address the connection arrived on first, then the rest, no loopback.
  auto loopback = [](const std::string& a) { return a.rfind("127.", 0) == 0 || a == "::1"; };
  auto link_local = [](const std::string& a) {
    return a.rfind("fe80:", 0) == 0 || a.rfind("169.254.", 0) == 0;
  };
  if (!f.ssh_server_address.empty()) f.ip_addresses.push_back(f.ssh_server_address);
  for (const auto& i : f.interfaces)
    if (!loopback(i.address) && !link_local(i.address) &&
        std::find(f.ip_addresses.begin(), f.ip_addresses.end(), i.address) == f.ip_addresses.end())
      f.ip_addresses.push_back(i.address);
}

}  // namespace pai::facts
