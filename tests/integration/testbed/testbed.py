#!/usr/bin/env python3
"""The testbed: N fresh sshd test hosts with stateful fakes of what an installer drives.

Run through scripts/testbed.sh (docs/testbed.md):
  up N RUNDIR [--base A.B.C] [--masters 1|3|5] [--host I:KEY=VALUE,...]... [--kubectl PATH]
               [--rollout-delay S] [--hived-server PATH]
  state RUNDIR                 one JSON document of every host and of the cluster objects
  down RUNDIR                  stop everything, by pid
  knob RUNDIR HOST 'TOOL STEP ACTION'...   |  knob RUNDIR HOST --clear
  gpu-fault RUNDIR HOST [--gpus N] [--ecc N] [--retired N] [--pending] [--xid CODE] | --clear
                               what the host's fake nvidia-smi and dmesg report: N GPUs listed,
                               N uncorrectable ECC errors and retired pages on GPU 0, a page
                               retirement pending, an NVRM Xid line in the kernel log
  log RUNDIR [HOST]            every recorded invocation, one JSON object a line
  kubeconfig RUNDIR            the master's admin.conf (after kubeadm init)
  snapshot RUNDIR NAME         save every host's state (files, the fakes' state, etcd's data) as NAME
  restore RUNDIR NAME          put it back in place (the API server and etcd are stopped first)
  stop-host RUNDIR NAME        lose a host: its sshd, API server, etcd member and kubelet loop stopped

The hosts are tests/integration/hosts/testhosts.sh hosts (real sshd processes in
their own mount and UTS namespaces); this program adds, in each host's mount
namespace, bind mounts of its own /etc/kubernetes, /etc/apt, /var/lib, ... and
of the fakes over the real package, service and kernel tools. A loop per run
directory (tbkubelet.py) is the masters' kubelet for their static pods: the
real etcd and the fake API server.
"""

import argparse
import copy
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import tbetcd  # noqa: E402
import tbfake  # noqa: E402
import tbkubelet  # noqa: E402

TESTHOSTS = os.path.join(HERE, "..", "hosts", "testhosts.sh")
LIB_FILES = ["tbfake.py", "kubeadm_fake.py", "kube_apiserver.py", "tbserver.py", "pai_doubles.py", "tbetcd.py", "tbkubelet.py",
             os.path.join("..", "rest", "pai_rest_server.py")]
# The HiveD double's program (lib/scheduler's HiveD behind HiveD's inspect API), when
# neither --hived-server nor TESTBED_HIVED_SERVER names one: the build tree's.
HIVED_SERVER = os.path.join(HERE, "..", "..", "..", "build", "tests", "integration", "hived", "hived_test_server")
# The fakes that replace real tools (first on PATH, and bind-mounted over these paths).
BASE_TOOLS = ["apt-get", "apt", "apt-cache", "apt-mark", "dpkg", "dpkg-query", "systemctl", "modprobe", "lsmod",
              "sysctl", "swapoff", "swapon", "reboot"]
# The machine's own tools a fresh testbed host must not see (shadowed by a file that is
# not executable, as kubectl is until the host installs it).
MACHINE_ONLY = ["docker", "dockerd"]
ABSOLUTE = {t: ["/usr/bin/" + t, "/usr/sbin/" + t, "/bin/" + t, "/sbin/" + t] for t in BASE_TOOLS}
OS_RELEASE = {
    "ubuntu-22.04": 'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nVERSION="22.04.4 LTS (Jammy Jellyfish)"\nVERSION_CODENAME=jammy\nID=ubuntu\nID_LIKE=debian\nUBUNTU_CODENAME=jammy\n',
    "ubuntu-20.04": 'NAME="Ubuntu"\nVERSION="20.04.6 LTS (Focal Fossa)"\nID=ubuntu\nID_LIKE=debian\nPRETTY_NAME="Ubuntu 20.04.6 LTS"\nVERSION_ID="20.04"\nVERSION_CODENAME=focal\nUBUNTU_CODENAME=focal\n',
    "ubuntu-24.04": 'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nNAME="Ubuntu"\nVERSION_ID="24.04"\nVERSION="24.04.1 LTS (Noble Numbat)"\nVERSION_CODENAME=noble\nID=ubuntu\nID_LIKE=debian\nUBUNTU_CODENAME=noble\n',
    "debian-12": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n',
    "centos-7": 'NAME="CentOS Linux"\nVERSION="7 (Core)"\nID="centos"\nID_LIKE="rhel fedora"\nVERSION_ID="7"\nPRETTY_NAME="CentOS Linux 7 (Core)"\n',
    "rocky-9": 'NAME="Rocky Linux"\nVERSION="9.4 (Blue Onyx)"\nID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.4"\nPRETTY_NAME="Rocky Linux 9.4 (Blue Onyx)"\n',
}
SOURCES_LIST = {
    "ubuntu-22.04": "deb http://archive.ubuntu.com/ubuntu jammy main restricted universe\ndeb http://security.ubuntu.com/ubuntu jammy-security main restricted universe\n",
    "ubuntu-20.04": "deb http://archive.ubuntu.com/ubuntu focal main restricted universe\ndeb http://security.ubuntu.com/ubuntu focal-security main restricted universe\n",
    "ubuntu-24.04": "deb http://archive.ubuntu.com/ubuntu noble main restricted universe\ndeb http://security.ubuntu.com/ubuntu noble-security main restricted universe\n",
    "debian-12": "deb http://deb.debian.org/debian bookworm main\ndeb http://security.debian.org/debian-security bookworm-security main\n",
}
HOST_KEYS = {"os", "gpus", "gpu_model", "swap", "mem_gib", "cpus"}
GPU_DRIVER = {"ubuntu": ("nvidia-driver-535", "535.104.05-0ubuntu1"), "debian": ("nvidia-driver", "535.104.05-1")}


def die(msg, code=2):
    sys.stderr.write("testbed: %s\n" % msg)
    sys.exit(code)


def load_run(rundir):
    try:
        with open(os.path.join(rundir, "testbed.json")) as f:
            return json.load(f)
    except FileNotFoundError:
        die("%s is not a testbed run directory (no testbed.json; start one with: scripts/testbed.sh up N %s)" % (rundir, rundir))


def can_run():
    r = subprocess.run(["sh", TESTHOSTS, "can-run"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout.replace("testhosts:", "testbed:"))
        return r.returncode
    if not shutil.which("nsenter"):
        print("testbed: skipped: 'nsenter' is not installed (util-linux)")
        return 77
    return 0


# ----------------------------------------------------------------------------- up


def addresses(base, n):
    a, b, c = [int(x) for x in base.split(".")]
    res = []
    for i in range(n):
        last = 2 + i
        res.append("%d.%d.%d.%d" % (a, b, c + last // 256, last % 256))
    return res


def parse_host_opts(specs, n):
    per = {}
    for spec in specs:
        idx, _, kvs = spec.partition(":")
        if not idx.isdigit() or not (1 <= int(idx) <= n) or not kvs:
            die("--host %s: expected I:KEY=VALUE[,KEY=VALUE...] with 1 <= I <= %d" % (spec, n))
        for kv in kvs.split(","):
            k, eq, v = kv.partition("=")
            if not eq or k not in HOST_KEYS:
                die("--host %s: unknown key '%s' (keys: %s)" % (spec, k, ", ".join(sorted(HOST_KEYS))))
            if k == "os" and v not in OS_RELEASE:
                die("--host %s: unknown os '%s' (one of: %s)" % (spec, v, ", ".join(sorted(OS_RELEASE))))
            if k in ("gpus", "mem_gib", "cpus") and not v.isdigit():
                die("--host %s: %s must be a number" % (spec, k))
            if k == "swap" and v not in ("on", "off"):
                die("--host %s: swap must be on or off" % spec)
            per.setdefault(int(idx), {})[k] = v
    return per


def up(args):
    n = args.n
    if n < 1 or n > 1000:
        die("N must be between 1 and 1000")
    if not 0 <= args.call_latency <= 60:
        die("--call-latency must be between 0 and 60 seconds")
    if not re.match(r"^127\.\d+\.\d+$", args.base):
        die("--base must be three octets of a loopback address, e.g. 127.0.30")
    rc = can_run()
    if rc:
        return rc
    rundir = os.path.abspath(args.rundir)
    if os.path.exists(os.path.join(rundir, "testbed.json")):
        down_run(rundir, quiet=True)
    m = args.masters
    if m not in (1, 3, 5):
        die("--masters must be 1, 3 or 5 (an etcd cluster of an odd size)")
    if m > n:
        die("--masters %d: only %d host%s" % (m, n, "s" if n > 1 else ""))
    if m > 1 and n > LB_INDEX - 2:
        die("--masters %d: at most %d hosts (the load balancer has the address .%d)" % (m, LB_INDEX - 2, LB_INDEX))
    per = parse_host_opts(args.host, n)
    addrs = addresses(args.base, n)
    hosts = []
    for i in range(n):
        o = per.get(i + 1, {})
        master = i < m
        h = {"index": i + 1, "name": master_name(i) if master else "tb-worker%d" % (i - m + 1), "address": addrs[i],
             "role": "master" if master else "worker", "os": o.get("os", "ubuntu-22.04"),
             "gpus": int(o.get("gpus", 0 if master else 4)), "gpu_model": o.get("gpu_model", "Tesla_V100-SXM2-16GB"),
             "swap": o.get("swap", "on"), "mem_gib": int(o.get("mem_gib", 64)), "cpus": int(o.get("cpus", 8))}
        hosts.append(h)
    # The API server's port on the master must be free (another testbed on the same base?).
    lb = lb_address(args.base) if m > 1 else None
    for a in [addrs[0]] + ([lb] if lb else []):
        if subprocess.run(["ss", "-Hltn", "src = %s and sport = :6443" % a], capture_output=True, text=True).stdout.strip():
            die("%s:6443 is in use (another testbed on --base %s?); choose another --base" % (a, args.base), 1)
    if lb and not shutil.which("haproxy"):
        die("--masters %d needs haproxy (the load balancer in front of the masters; scripts/install-deps.sh installs it)" % m, 1)
    os.makedirs(rundir, exist_ok=True)
    # sshd's LogLevel: VERBOSE also logs every session ("Starting session: command ...").
    loglevel = os.environ.get("TESTBED_SSHD_LOGLEVEL", "INFO")
    if loglevel not in ("INFO", "VERBOSE", "DEBUG"):
        die("TESTBED_SSHD_LOGLEVEL must be INFO, VERBOSE or DEBUG")
    scenario = os.path.join(rundir, "..", os.path.basename(rundir) + ".scenario")
    with open(scenario, "w") as f:
        f.write("# testbed: %d hosts from %s\n" % (n, addrs[0]))
        for h in hosts:
            f.write("host %s %s role=%s gpus=%d gpu_model=%s docker=none daemon=none nvidia_runtime=missing swap=%s mem_gib=%d avail_gib=%d loglevel=%s\n"
                    % (h["name"], h["address"], h["role"], h["gpus"], h["gpu_model"], h["swap"], h["mem_gib"], max(h["mem_gib"] - 4, 1),
                       loglevel))
    r = subprocess.run(["sh", TESTHOSTS, "start", scenario, rundir], capture_output=True, text=True)
    os.unlink(scenario)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        if r.returncode == 77:
            return 77
        die("the test hosts did not start", 1)
    lib = os.path.join(rundir, "lib")
    os.makedirs(lib, exist_ok=True)
    for f in LIB_FILES:
        shutil.copy2(os.path.join(HERE, f), os.path.join(lib, os.path.basename(f)))
    hived = args.hived_server or os.environ.get("TESTBED_HIVED_SERVER") or HIVED_SERVER
    if os.access(hived, os.X_OK):
        shutil.copy2(hived, os.path.join(lib, "hived_test_server"))
    elif args.hived_server or os.environ.get("TESTBED_HIVED_SERVER"):
        die("--hived-server %s: no such program (build the target hived_test_server)" % hived)
    elif os.path.exists(os.path.join(lib, "hived_test_server")):
        os.unlink(os.path.join(lib, "hived_test_server"))
    start_server(rundir, lib)
    kubectl = args.kubectl or os.environ.get("TESTBED_KUBECTL") or shutil.which("kubectl") or ""
    kubectl = os.path.realpath(kubectl) if kubectl else ""
    pids = {}
    with open(os.path.join(rundir, "namespaces")) as f:
        sshd_pids = [int(l.split()[0]) for l in f if l.strip()]
    with open(os.path.join(rundir, "pids")) as f:
        for l in f:
            p = l.split()
            if len(p) == 3 and p[1] == "sshd":
                pids[p[2]] = int(p[0])
    for d in tbfake.BOUND_DIRS:
        os.makedirs(d, exist_ok=True)  # a bind mount needs a mount point (empty, left in place)
    copy_etc(rundir, hosts)
    for h in hosts:
        prepare_host(rundir, h, kubectl, args)
        mount_host(rundir, h, pids[h["name"]], kubectl)
    write_cluster(rundir, hosts, lb)
    write_ssh_config(rundir, hosts)
    write_bundle(rundir)
    doc = {"n": n, "base": args.base, "port": int(open(os.path.join(rundir, "port")).read()),
           "kubectl": kubectl, "hosts": hosts}
    if m > 1:
        doc["masters"] = m
        doc["endpoint"] = "%s:6443" % lb
    with open(os.path.join(rundir, "testbed.json"), "w") as f:
        json.dump(doc, f, indent=1)
    if lb:
        start_haproxy(rundir, lb, [h for h in hosts if h["role"] == "master"])
    start_kubelet_loop(rundir)
    if m > 1:
        print("testbed: %d hosts up in %s (masters %s behind HAProxy on %s:6443; ssh -F %s/ssh_config %s)" % (
            n, rundir, ", ".join(h["address"] for h in hosts[:m]), lb, rundir, hosts[0]["name"]))
    else:
        print("testbed: %d host%s up in %s (master %s; ssh -F %s/ssh_config %s)" % (
            n, "s" if n > 1 else "", rundir, addrs[0], rundir, hosts[0]["name"]))
    return 0


# The load balancer's address with several masters: BASE.250 (a host of its own on the
# loopback network, as an operator's load balancer is a machine of its own).
LB_INDEX = 250


def master_name(i):
    """The first master is tb-master, the others tb-master2, tb-master3, ..."""
    return "tb-master" if i == 0 else "tb-master%d" % (i + 1)


def lb_address(base):
    return "%s.%d" % (base, LB_INDEX)


def start_haproxy(rundir, lb, masters):
    """A real HAProxy (Debian's haproxy) in TCP mode in front of every master's API
    server, each checked with GET /readyz over TLS (kubeadm's HA guide's check); a
    connection to a master that is down goes to another (redispatch). Its pid in
    RUNDIR/haproxy.pid, its log in RUNDIR/haproxy.log."""
    stop_haproxy(rundir)
    lines = ["# The testbed's load balancer (scripts/testbed.sh up --masters): docs/testbed.md, \"Several masters\".",
             "global", "    maxconn 4000", "", "defaults", "    mode tcp", "    option dontlognull", "    retries 3",
             "    option redispatch", "    timeout connect 2s", "    timeout client 1h", "    timeout server 1h",
             "    timeout check 2s", "", "frontend kube-apiserver", "    bind %s:6443" % lb,
             "    default_backend kube-apiserver", "", "backend kube-apiserver", "    option httpchk GET /readyz",
             "    http-check expect status 200", "    balance roundrobin",
             "    default-server inter 1s downinter 1s rise 1 fall 2 check check-ssl verify none"]
    for h in masters:
        lines.append("    server %s %s:6443" % (h["name"], h["address"]))
    cfg = os.path.join(rundir, "haproxy.cfg")
    with open(cfg, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = subprocess.run(["haproxy", "-c", "-q", "-f", cfg], capture_output=True, text=True)
    if r.returncode != 0:
        die("haproxy refuses %s: %s" % (cfg, (r.stderr or r.stdout).strip()), 1)
    log = open(os.path.join(rundir, "haproxy.log"), "a")
    p = subprocess.Popen(["haproxy", "-db", "-f", cfg], stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=True,
                         start_new_session=True, cwd="/")
    log.close()
    with open(os.path.join(rundir, "haproxy.pid"), "w") as f:
        f.write("%d\n" % p.pid)
    deadline = time.time() + 5
    while time.time() < deadline:
        if p.poll() is not None:
            die("haproxy exited with %s (%s/haproxy.log)" % (p.returncode, rundir), 1)
        if subprocess.run(["ss", "-Hltn", "src = %s and sport = :6443" % lb], capture_output=True, text=True).stdout.strip():
            return
        time.sleep(0.02)
    die("haproxy does not listen on %s:6443 after 5 s (%s/haproxy.log)" % (lb, rundir), 1)


def stop_haproxy(rundir):
    try:
        pid = int(open(os.path.join(rundir, "haproxy.pid")).read())
    except (OSError, ValueError):
        return
    try:
        if alive(pid) and "haproxy" in open("/proc/%d/cmdline" % pid).read():
            terminate(pid)
    except OSError:
        pass
    os.unlink(os.path.join(rundir, "haproxy.pid"))


def start_server(rundir, lib):
    """The fake server (tbserver.py) and its client (tbclient.c, compiled here):
    the hosts' wrappers then cost a fork of a warm Python instead of a Python
    start each. Without a C compiler the wrappers start the fakes themselves."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return
    # Compiled for this run directory, so that a host's bin/TOOL can be a hard
    # link to it (one process a call, no shell); static where the C library
    # allows it (no dynamic loading per call).
    def define(name, value):
        return '-D%s="%s"' % (name, value.replace("\\", "\\\\").replace('"', '\\"'))
    defs = [define("TB_RUN", rundir), define("TB_RUN_REAL", os.path.realpath(rundir)), define("TB_LIB", lib),
            define("TB_SOCKET", tbfake.server_name(lib))]
    for link in (["-static"], []):
        r = subprocess.run([cc, "-O2"] + link + defs + ["-o", lib + "/tbclient.tmp", os.path.join(HERE, "tbclient.c")],
                           capture_output=True, text=True)
        if r.returncode == 0:
            break
    if r.returncode != 0:
        sys.stderr.write("testbed: tbclient.c did not compile, the fakes start as programs: %s" % r.stderr)
        return
    stop_server(rundir)
    log = open(os.path.join(rundir, "tbserver.log"), "a")
    p = subprocess.Popen(["/usr/bin/python3", lib + "/tbserver.py", tbfake.server_name(lib)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=log, close_fds=True, start_new_session=True, cwd="/")
    log.close()
    if p.stdout.readline().strip() != b"ready":
        p.kill()
        p.wait()
        die("the testbed's fake server did not start (%s/tbserver.log)" % rundir, 1)
    p.stdout.close()
    with open(os.path.join(rundir, "tbserver.pid"), "w") as f:
        f.write("%d\n" % p.pid)
    os.rename(lib + "/tbclient.tmp", lib + "/tbclient")


def start_kubelet_loop(rundir):
    """The kubelet's static pods on the masters (tbkubelet.py): pid in RUNDIR/kubelet.pid."""
    stop_kubelet_loop(rundir)
    log = open(os.path.join(rundir, "kubelet.log"), "a")
    p = subprocess.Popen(["/usr/bin/python3", os.path.join(rundir, "lib", "tbkubelet.py"), rundir], stdin=subprocess.DEVNULL,
                         stdout=log, stderr=log, close_fds=True, start_new_session=True, cwd="/")
    log.close()
    with open(os.path.join(rundir, "kubelet.pid"), "w") as f:
        f.write("%d\n" % p.pid)


def stop_kubelet_loop(rundir):
    try:
        pid = int(open(os.path.join(rundir, "kubelet.pid")).read())
    except (OSError, ValueError):
        return
    if alive(pid) and "tbkubelet.py" in open("/proc/%d/cmdline" % pid).read():
        terminate(pid)
    os.unlink(os.path.join(rundir, "kubelet.pid"))


def terminate(pid, grace=5.0):
    """SIGTERM, then SIGKILL if the process still runs after `grace` seconds."""
    if not alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.time() + grace
    while alive(pid) and time.time() < deadline:
        time.sleep(0.01)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)


def stop_server(rundir):
    try:
        pid = int(open(os.path.join(rundir, "tbserver.pid")).read())
    except (OSError, ValueError):
        return
    terminate(pid)
    os.unlink(os.path.join(rundir, "tbserver.pid"))


def copy_etc(rundir, hosts):
    """Each host's own /etc: copies of the machine's, a few at a time."""
    procs = []
    for h in hosts:
        fs = os.path.join(rundir, "hosts", h["name"], "fs")
        if os.path.exists(fs + "/etc"):
            shutil.rmtree(fs + "/etc")
        os.makedirs(fs, exist_ok=True)
        procs.append((h, subprocess.Popen(["cp", "-a", "/etc", fs + "/etc"], stderr=subprocess.PIPE, text=True)))
        while sum(1 for _, p in procs if p.poll() is None) >= 8:
            time.sleep(0.01)
    for h, p in procs:
        _, e = p.communicate()
        if p.returncode != 0:
            die("copying /etc for host %s failed: %s" % (h["name"], e.strip()), 1)


def prepare_host(rundir, h, kubectl, args):
    H = os.path.join(rundir, "hosts", h["name"])
    tbfake.HOST = H
    tbfake.LIB = os.path.join(rundir, "lib")
    os.makedirs(H + "/state", exist_ok=True)
    # Its own /etc: a copy of the machine's, with the installer's directories empty and
    # the files testhosts.sh gave the host (hostname, hosts, os-release, machine-id).
    if not os.path.isdir(H + "/fs/etc"):
        die("host %s has no copy of /etc" % h["name"], 1)
    for d in tbfake.MAPPED_DIRS:
        p = H + "/fs" + d
        if os.path.lexists(p):
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            else:
                os.unlink(p)
        os.makedirs(p)
    for src, dst in (("hosts", "hosts"), ("machine-id", "machine-id")):
        shutil.copyfile(H + "/" + src, H + "/fs/etc/" + dst)
    with open(H + "/fs/etc/hostname", "w") as f:
        f.write(h["name"] + "\n")
    # root logs in to dash, not bash: each session's login shell is a process the
    # host starts for every command (docs/testbed.md, "What each host's sshd runs").
    lines = open(H + "/fs/etc/passwd").read().splitlines(True)
    with open(H + "/fs/etc/passwd", "w") as f:
        for l in lines:
            p = l.split(":")
            if p[0] == "root" and len(p) == 7 and os.path.exists("/bin/dash"):
                p[6] = "/bin/sh\n" if os.path.realpath("/bin/sh").endswith("dash") else "/bin/dash\n"
                l = ":".join(p)
            f.write(l)
    # Its own resolver: no DNS server. The machine's resolver (whatever it is) is not
    # asked, so the registries' lookups in the fact script fail at once on every run,
    # where a shared or unreachable server of the machine could make some of a hundred
    # concurrent lookups wait out its timeout (docs/testbed.md, "No DNS").
    for f in ("os-release", "resolv.conf"):
        p = H + "/fs/etc/" + f
        if os.path.lexists(p):
            os.unlink(p)
    with open(H + "/fs/etc/os-release", "w") as f:
        f.write(OS_RELEASE[h["os"]])
    with open(H + "/fs/etc/resolv.conf", "w") as f:
        f.write("# testbed host: no DNS server (nothing answers on this address)\n"
                "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
    os.chmod(H + "/fs/tmp", 0o1777)
    os.chmod(H + "/fs/root", 0o700)
    for d in ("/etc/apt/sources.list.d", "/etc/apt/keyrings", "/etc/apt/preferences.d", "/etc/apt/apt.conf.d",
              "/etc/apt/trusted.gpg.d", "/etc/cni/net.d", "/opt/cni/bin"):
        os.makedirs(H + "/fs" + d, exist_ok=True)
    with open(H + "/fs/etc/apt/sources.list", "w") as f:
        f.write(SOURCES_LIST.get(h["os"], "# no Debian-family repositories on this OS\n"))
    with open(H + "/fs/etc/fstab", "w") as f:
        f.write("# /etc/fstab: static file system information.\nLABEL=cloudimg-rootfs\t/\text4\tdiscard,errors=remount-ro\t0 1\n")
        if h["swap"] == "on":
            f.write("/swapfile\tnone\tswap\tsw\t0 0\n")
    info = dict(h, run=rundir, host=H, rollout_delay=args.rollout_delay, call_latency=getattr(args, "call_latency", 0.0))
    with open(H + "/host.json", "w") as f:
        json.dump(info, f, indent=1)
    family = h["os"].split("-")[0]
    dpkg = {p: {"version": "1.0-1", "hold": False, "auto": False} for p in tbfake.BASE_INSTALLED}
    if h["gpus"] and family in GPU_DRIVER:
        name, ver = GPU_DRIVER[family]
        dpkg[name] = {"version": ver, "hold": False, "auto": False}
    tbfake.save("dpkg", dpkg)
    tbfake.save("apt-lists", {})
    tbfake.save("systemd", copy.deepcopy(tbfake.BASE_UNITS))
    tbfake.save("kubeadm", {"init": 0, "join": 0})
    tbfake.save("containerd", {})
    mods = list(tbfake.BASE_MODULES) + (list(tbfake.GPU_MODULES) if h["gpus"] else [])
    tbfake.write_modules(mods)
    tbfake.save("sysctl", dict(tbfake.SYSCTL_DEFAULTS))
    open(H + "/knobs", "a").close()
    open(H + "/invocations.jsonl", "a").close()
    open(H + "/kubectl.real", "a").close()
    with open(H + "/kubectl-shadow", "w") as f:
        f.write("# not installed on this testbed host (apt-get install kubectl)\n")
    os.chmod(H + "/kubectl-shadow", 0o644)
    with open(H + "/absent-shadow", "w") as f:
        f.write("# not installed on this testbed host\n")
    os.chmod(H + "/absent-shadow", 0o644)
    for t in BASE_TOOLS:
        tbfake.install_program(t)
    if not h["gpus"]:
        for f in ("nvidia-smi",):
            try:
                os.unlink(H + "/bin/" + f)
            except FileNotFoundError:
                pass


def mount_host(rundir, h, pid, kubectl):
    """The host's own directories and the fakes, bind-mounted in its mount namespace.

    When RUNDIR lies under a directory the host gets its own copy of (/tmp, /root),
    RUNDIR is bind-mounted at the same path inside that copy first, so the host
    still sees its fakes and its sshd its keys."""
    H = os.path.join(rundir, "hosts", h["name"])
    lines = ["set -e"]
    if kubectl and os.path.isfile(kubectl):
        lines.append("mount --bind '%s' '%s/kubectl.real'" % (kubectl, H))
    seen = set()
    for t, paths in ABSOLUTE.items():
        for p in paths:
            if not os.path.isfile(p):
                continue
            real = os.path.realpath(p)
            if os.path.basename(real) != t or real in seen:
                continue
            seen.add(real)
            lines.append("mount --bind '%s/bin/%s' '%s'" % (H, t, real))
    # The hosts share this machine's network namespace, so the machine's ss lists
    # every testbed's sshd and API server. A host's ss lists its own sockets: those
    # on its address, the wildcards, 127.0.0.x and the machine's other addresses,
    # not another testbed host's 127.a.b.c (a real host's answer does not grow
    # with the cluster; docs/testbed.md).
    ss = os.path.realpath("/usr/bin/ss") if os.path.isfile("/usr/bin/ss") else ""
    if ss:
        with open(H + "/ss", "w") as f:
            f.write("#!/bin/sh\n"
                    "# testbed: this host's own sockets (testbed.py, mount_host)\n"
                    "'%s/ss.real' \"$@\" | awk -v own='%s' '{\n"
                    "  for (i = 1; i <= NF; i++) if (index($i, \":\") && $i !~ /^[0-9]+$/) {\n"
                    "    a = $i; sub(/:[^:]*$/, \"\", a); gsub(/[][]/, \"\", a); sub(/%%.*/, \"\", a)\n"
                    "    sub(/^::ffff:/, \"\", a)\n"
                    "    if (a ~ /^127\\./ && a !~ /^127\\.0\\.0\\./ && a != own) next\n"
                    "    break\n"
                    "  }\n"
                    "  print\n"
                    "}'\n" % (H, h["address"]))
        os.chmod(H + "/ss", 0o755)
        open(H + "/ss.real", "a").close()
        lines.append("mount --bind '%s' '%s/ss.real'" % (ss, H))
        lines.append("mount --bind '%s/ss' '%s'" % (H, ss))
    for p in ("/usr/bin/kubectl", "/usr/local/bin/kubectl"):
        if os.path.isfile(p):
            lines.append("mount --bind '%s/kubectl-shadow' '%s'" % (H, p))
    # What this machine may have and a fresh host has not (hosts.conf says docker=none):
    # a Docker CLI without a daemon would be found and run by every fact script.
    for t in MACHINE_ONLY:
        for d in ("/usr/bin/", "/usr/local/bin/", "/usr/sbin/", "/usr/local/sbin/", "/bin/", "/sbin/"):
            p = d + t
            if os.path.isfile(p) and not os.path.islink(d.rstrip("/")):
                lines.append("mount --bind '%s/absent-shadow' '%s'" % (H, p))
    if os.path.exists("/proc/modules"):
        lines.append("mount --bind '%s/proc-modules' /proc/modules" % H)
    elif os.path.isdir("/sys/module"):
        lines.append("mount --bind '%s/sys-module' /sys/module" % H)
    # Its own /var/lib: the machine's entries bind-mounted into H/fs/var/lib (but
    # etcd and kubelet, the host's own), which then replaces /var/lib. So a host
    # can make and rename directories there (an etcd data directory restored next
    # to /var/lib/etcd and swapped in) without touching the machine or the others.
    vl = H + "/fs/var/lib"
    os.makedirs(vl + "/etcd", exist_ok=True)
    os.chmod(vl + "/etcd", 0o700)
    for e in sorted(os.listdir("/var/lib")):
        if e in ("etcd", "kubelet"):
            continue
        src, dst = "/var/lib/" + e, vl + "/" + e
        if os.path.islink(src):
            if not os.path.lexists(dst):
                os.symlink(os.readlink(src), dst)
            continue
        if os.path.isdir(src):
            os.makedirs(dst, exist_ok=True)
        elif os.path.isfile(src):
            open(dst, "a").close()
        else:
            continue
        lines.append("mount --bind '%s' '%s'" % (src, dst))
    lines.append("mount --rbind '%s' /var/lib" % vl)
    recursive = set()
    for d in ["/etc"] + tbfake.BOUND_DIRS:
        if rundir.startswith(d + "/"):
            inner = H + "/fs" + d + rundir[len(d):]
            os.makedirs(inner, exist_ok=True)
            lines.append("mount --rbind '%s' '%s'" % (rundir, inner))
            recursive.add(d)
    for d in ["/etc"] + tbfake.BOUND_DIRS:
        lines.append("mount %s '%s/fs%s' '%s'" % ("--rbind" if d in recursive else "--bind", H, d, d))
    r = subprocess.run(["nsenter", "-t", str(pid), "-m", "--", "sh", "-c", "\n".join(lines)], capture_output=True, text=True)
    if r.returncode != 0:
        die("host %s: the bind mounts failed: %s" % (h["name"], r.stderr.strip()), 1)


def write_cluster(rundir, hosts, lb=None):
    d = os.path.join(rundir, "cluster")
    os.makedirs(d, exist_ok=True)
    skus = {}
    for h in hosts:
        if h["role"] == "master":
            h["sku"] = "master-machine"
        else:
            h["sku"] = "gpu-machine" if h["gpus"] == 4 else ("cpu-machine" if h["gpus"] == 0 else "gpu%d-machine" % h["gpus"])
            skus.setdefault(h["sku"], h)
    masters = sum(1 for h in hosts if h["role"] == "master")
    lines = ["# The testbed's cluster (scripts/testbed.sh up): %s, the rest GPU workers." % (
             "one master" if masters == 1 else "%d masters" % masters), "machine-sku:",
             "  master-machine:", "    mem: 32Gi", "    cpu:", "      vcore: 1"]
    for name, h in sorted(skus.items()):
        lines += ["  %s:" % name, "    mem: 32Gi", "    cpu:", "      vcore: %d" % max(h["gpus"], 1)]
        if h["gpus"]:
            lines += ["    computing-device:", "      type: nvidia.com/gpu", "      model: V100", "      count: %d" % h["gpus"]]
    lines += ["", "machine-list:"]
    for h in hosts:
        lines += ["  - hostname: %s" % h["name"], "    hostip: %s" % h["address"], "    machine-type: %s" % h["sku"],
                  "    pai-master: \"true\"" if h["role"] == "master" else "    pai-worker: \"true\""]
    with open(os.path.join(d, "layout.yaml"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(rundir, "password")) as f:
        password = f.read().strip()
    with open(os.path.join(d, "config.yaml"), "w") as f:
        f.write("# The testbed's cluster configuration (scripts/testbed.sh up).\nuser: root\npassword: \"%s\"\n"
                "docker_image_tag: v1.8.0\nssh_key_file_path: %s/id_ed25519\n" % (password, rundir))
        if lb:
            f.write("kube_control_plane_endpoint: \"%s:6443\"\n" % lb)
    os.chmod(os.path.join(d, "config.yaml"), 0o600)
    # HiveD: one pool of NODE cells per GPU SKU; the default VC has all of them.
    sku_lines, cell_lines, phys_lines, vc_lines = [], [], [], []
    for name, h in sorted(skus.items()):
        if not h["gpus"]:
            continue
        members = [x for x in hosts if x.get("sku") == name]
        sku_lines += ["        %s:" % name, "          gpu: 1", "          cpu: 1", "          memory: 4096Mi"]
        cell_lines += ["        %s-NODE:" % name, "          childCellType: %s" % name, "          childCellNumber: %d" % h["gpus"],
                       "          isNodeLevel: true", "        %s-NODE-POOL:" % name, "          childCellType: %s-NODE" % name,
                       "          childCellNumber: %d" % len(members)]
        phys_lines += ["      - cellType: %s-NODE-POOL" % name, "        cellChildren:"] + \
                      ["        - cellAddress: %s" % m["name"] for m in members]
        vc_lines += ["        - cellType: %s-NODE-POOL.%s-NODE" % (name, name), "          cellNumber: %d" % len(members)]
    svc = ["# The testbed's services configuration (scripts/testbed.sh up).", "cluster:", "  common:", "    cluster-id: testbed",
           "    cluster-type: k8s", "    k8s-rbac: \"true\"", "    job-history: \"true\"", "    data-path: \"/datastorage\"",
           "    qos-switch: \"false\"", "  docker-registry:", "    namespace: openpai", "    domain: docker.io", "    tag: v1.8.0",
           "    secret-name: pai-secret", "", "rest-server:", "  default-pai-admin-username: admin",
           "  default-pai-admin-password: \"%s\"" % hashlib.sha256(password.encode()).hexdigest()[:20], "",
           "webportal:", "  server-port: 9286", ""]
    if sku_lines:
        svc += ["hivedscheduler:", "  config: |", "    physicalCluster:", "      skuTypes:"] + sku_lines + ["      cellTypes:"] + \
               cell_lines + ["      physicalCells:"] + phys_lines + ["    virtualClusters:", "      default:", "        virtualCells:"] + vc_lines
    with open(os.path.join(d, "services-configuration.yaml"), "w") as f:
        f.write("\n".join(svc) + "\n")
    os.chmod(os.path.join(d, "services-configuration.yaml"), 0o600)


def write_ssh_config(rundir, hosts):
    port = open(os.path.join(rundir, "port")).read().strip()
    out = ["# Client settings for the testbed in %s (ssh -F, paictl --ssh-config)." % rundir]
    for h in hosts:
        out += ["Host %s %s" % (h["name"], h["address"]), "  HostName %s" % h["address"], "  Port %s" % port, "  User root",
                "  IdentityFile %s/id_ed25519" % rundir, "  IdentitiesOnly yes", "  UserKnownHostsFile %s/known_hosts" % rundir,
                "  StrictHostKeyChecking yes", "  BatchMode yes", "  ConnectTimeout 5", ""]
    with open(os.path.join(rundir, "ssh_config"), "w") as f:
        f.write("\n".join(out))


def write_bundle(rundir):
    """An offline bundle: what an air-gapped install copies to a host and installs with dpkg -i
    (or serves as `deb [trusted=yes] file:/DIR ./`). The files are placeholders the fake dpkg knows."""
    d = os.path.join(rundir, "bundle")
    os.makedirs(d, exist_ok=True)
    for name, v in [("kubeadm", "1.30.10-1.1"), ("kubelet", "1.30.10-1.1"), ("kubectl", "1.30.10-1.1"),
                    ("cri-tools", "1.30.0-1.1"), ("kubernetes-cni", "1.4.0-1.1"), ("containerd.io", "1.7.24-1"),
                    ("nvidia-container-toolkit", "1.17.3-1"), ("nvidia-container-toolkit-base", "1.17.3-1"),
                    ("libnvidia-container-tools", "1.17.3-1"), ("libnvidia-container1", "1.17.3-1")]:
        with open(os.path.join(d, "%s_%s_amd64.deb" % (name, v)), "w") as f:
            f.write("testbed placeholder package %s %s\n" % (name, v))


# ----------------------------------------------------------------------------- state


def file_modes(H, root, skip=()):
    res = {}
    base = tbfake.hp(root, H)
    if not os.path.isdir(base):
        return res
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for fn in sorted(filenames):
            p = os.path.join(dirpath, fn)
            rel = root + p[len(base):]
            if not os.path.islink(p) and not (os.path.isfile(p) or os.path.isdir(p)):
                continue  # sockets, fifos
            if any(rel.startswith(s) for s in skip):
                continue
            res[rel] = "%04o" % (os.lstat(p).st_mode & 0o7777)
    return res


def parse_conf(text):
    res = {}
    for l in (text or "").splitlines():
        l = l.strip()
        if not l or l[0] in "#;":
            continue
        k, eq, v = l.lstrip("-").partition("=")
        if eq:
            res[k.strip()] = " ".join(v.split())
    return res


def host_state(H):
    info = tbfake.host_info(H)
    dpkg = tbfake.load("dpkg", host=H)
    sd = tbfake.load("systemd", host=H)
    st = {"address": info["address"], "role": info["role"], "os": info["os"], "gpus": info["gpus"]}
    st["packages"] = {n: i["version"] for n, i in sorted(dpkg.items())}
    st["held"] = sorted(n for n, i in dpkg.items() if i.get("hold"))
    st["reboots"] = tbfake.load("boot", host=H).get("reboots", 0)
    srcs = {}
    d = H + "/fs/etc/apt/sources.list.d"
    for n in sorted(os.listdir(d)):
        with open(os.path.join(d, n)) as f:
            srcs["/etc/apt/sources.list.d/" + n] = [l for l in f.read().splitlines() if l.strip() and not l.startswith("#")]
    st["apt_sources"] = srcs
    st["apt_keyrings"] = sorted(file_modes(H, "/etc/apt/keyrings")) + sorted(file_modes(H, "/etc/apt/trusted.gpg.d"))
    st["apt_updated"] = sorted(tbfake.load("apt-lists", host=H)) != []
    st["services"] = {u: {"enabled": bool(i.get("enabled")), "active": tbfake.unit_state(u, i, H)} for u, i in sorted(sd.items())}
    st["modules"] = tbfake.modules(H)
    mld = {}
    d = H + "/fs/etc/modules-load.d"
    for n in sorted(os.listdir(d)):
        with open(os.path.join(d, n)) as f:
            mld[n] = [l.strip() for l in f.read().splitlines() if l.strip() and not l.strip().startswith("#")]
    st["modules_load_d"] = mld
    st["sysctl"] = tbfake.load("sysctl", host=H)
    sdd = {}
    d = H + "/fs/etc/sysctl.d"
    for n in sorted(os.listdir(d)):
        with open(os.path.join(d, n)) as f:
            sdd[n] = parse_conf(f.read())
    st["sysctl_d"] = sdd
    st["swap"] = {"active": tbfake.swaps(H), "fstab": tbfake.fstab_swaps(H)}
    text = tbfake.read_file("/etc/containerd/config.toml", H)
    facts = tbfake.containerd_facts(text)
    c = tbfake.load("containerd", host=H)
    st["containerd"] = {"config": facts if text is not None else None, "running": c.get("running") if sd.get("containerd", {}).get("state") == "active" else None}
    st["images"] = tbfake.images(H)
    # What the host fetched (apt's sources, image pulls) is a log, not its state:
    # only where a test asks (TESTBED_STATE_NETWORK=1), so that state comparisons
    # of runs that fetched more or less agree.
    if os.environ.get("TESTBED_STATE_NETWORK") == "1":
        st["network"] = tbfake.load("network", host=H)
    files = {}
    for root in ("/etc/kubernetes", "/var/lib/kubelet", "/etc/cni", "/etc/containerd", "/etc/systemd/system", "/etc/default",
                 "/etc/nvidia-container-runtime", "/var/lib/etcd"):
        files.update(file_modes(H, root, skip=("/var/lib/etcd/member/",)))  # etcd's own files: its "etcd" keys
    st["files"] = files
    k = tbfake.load("kubeadm", host=H)
    st["kubeadm"] = {"init": k.get("init", 0), "join": k.get("join", 0)}
    st["kubeadm"].update({c: k[c] for c in ("upgradeApply", "upgradeNode") if c in k})
    if k.get("certsRenew"):  # only once a renew completed: the documents of hosts that never renewed stay as they were
        st["kubeadm"]["certsRenew"] = k["certsRenew"]
    st["kubeadm_interrupted"] = sorted(x[:-len("_in_progress")].replace("certs_renew", "certs-renew")
                                       for x in ("init_in_progress", "join_in_progress", "certs_renew_in_progress",
                                                 "upgradeApply_in_progress", "upgradeNode_in_progress") if k.get(x))
    st["certs"] = tbfake.kubeadm_fake().cert_not_afters(H)
    if info["role"] == "master":
        pid_file = H + "/state/apiserver/pid"
        alive = False
        if os.path.exists(pid_file):
            try:
                pid = int(open(pid_file).read())
                alive = open("/proc/%d/stat" % pid).read().split()[2] != "Z"
            except (OSError, ValueError):
                alive = False
        st["apiserver"] = "running" if alive else ("stopped" if os.path.exists(H + "/state/apiserver/config.json") else None)
        st.update(etcd_state(H))
    st["locks"] = sorted(file_modes(H, "/run/lock"))
    run = info["run"]
    st["tmp"] = sorted(p for p in file_modes(H, "/tmp") if not (p + "/").startswith(run + "/"))
    st["root_home"] = sorted(p for p in file_modes(H, "/root") if not (p + "/").startswith(run + "/"))
    return st


VOLATILE_META = {"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "selfLink", "ownerReferences"}
VOLATILE_ANNOTATIONS = {"kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision"}


def clean_object(o):
    kind = o["kind"]
    meta = o["metadata"]
    res = {}
    if meta.get("labels"):
        res["labels"] = meta["labels"]
    ann = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in VOLATILE_ANNOTATIONS}
    if ann:
        res["annotations"] = ann
    for k, v in o.items():
        if k in ("apiVersion", "kind", "metadata", "status"):
            continue
        res[k] = copy.deepcopy(v)
    if kind == "Secret":
        res["data"] = sorted((o.get("data") or {}).keys())
    if kind == "ConfigMap":
        res["data"] = {k: ("<volatile: certificate data>" if "certificate-authority-data" in v or "BEGIN CERTIFICATE" in v else v)
                       for k, v in (o.get("data") or {}).items()}
    if kind == "Service":
        spec = res.get("spec", {})
        for f in ("clusterIP", "clusterIPs"):
            if f in spec and spec.get("clusterIP") != "None" and o["metadata"]["name"] not in ("kube-dns",):
                spec.pop(f)
        for p in spec.get("ports", []):
            p.pop("nodePort", None)
    st = o.get("status", {}) or {}
    if kind == "Node":
        res["ready"] = next((c.get("status") for c in st.get("conditions", []) if c.get("type") == "Ready"), "Unknown")
        res["allocatable_gpus"] = int(st.get("allocatable", {}).get("nvidia.com/gpu", "0"))
    elif kind == "Pod":
        res = {"labels": res.get("labels", {}), "node": o.get("spec", {}).get("nodeName"), "phase": st.get("phase")}
        res["labels"].pop("testbed.paictl/owner", None)
    elif kind == "Deployment":
        res["available"] = st.get("availableReplicas", 0) >= o.get("spec", {}).get("replicas", 1) and st.get("observedGeneration") == meta.get("generation")
    elif kind == "DaemonSet":
        res["available"] = st.get("numberAvailable", 0) >= st.get("desiredNumberScheduled", 0) and st.get("observedGeneration") == meta.get("generation")
    elif kind == "StatefulSet":
        res["available"] = st.get("readyReplicas", 0) >= o.get("spec", {}).get("replicas", 1) and st.get("observedGeneration") == meta.get("generation")
    elif kind == "CustomResourceDefinition":
        res["established"] = any(c.get("type") == "Established" and c.get("status") == "True" for c in st.get("conditions", []))
    return res


def etcd_data_dir(H):
    """The data directory the etcd manifest names (its etcd-data hostPath), else /var/lib/etcd."""
    _, doc = tbkubelet.load_manifest(H, "etcd")
    if doc:
        argv = tbkubelet.etcd_argv(doc)
        return tbetcd.manifest_flags(argv).get("data-dir", "/var/lib/etcd")
    return "/var/lib/etcd"


def etcd_state(H):
    """etcd: "running", "stopped" (a data directory, no process) or null; when it runs, its
    members (name and URLs) and the number of its keys under /registry but Events."""
    res = {"etcd": None, "etcd_members": None, "etcd_keys": None}
    if tbkubelet.etcd_running(H):
        res["etcd"] = "running"
        try:
            c = tbkubelet.etcd_client(H, timeout=5)
            try:
                res["etcd_members"] = sorted(({"name": m.get("name", ""), "peerURLs": sorted(m.get("peerURLs", [])),
                                               "clientURLs": sorted(m.get("clientURLs", []))} for m in c.members()),
                                             key=lambda m: m["name"])
                res["etcd_keys"] = c.range_prefix("/registry/", count_only=True) - c.range_prefix("/registry/events/", count_only=True)
            finally:
                c.close()
        except (tbetcd.EtcdError, OSError) as e:
            res["etcd_error"] = str(e)
    elif os.path.isdir(tbfake.hp(etcd_data_dir(H) + "/member", H)):
        res["etcd"] = "stopped"
    return res


def etcd_objects(H):
    """Every object under /registry, from the master's running etcd; None when it does not run."""
    if not tbkubelet.etcd_running(H):
        return None
    c = tbkubelet.etcd_client(H, user="apiserver-etcd-client", timeout=5)
    try:
        kvs = c.range_prefix("/registry/")
    finally:
        c.close()
    res = []
    for k, v in kvs:
        try:
            o = json.loads(v)
        except ValueError:
            continue
        if isinstance(o, dict) and "kind" in o and "metadata" in o:
            res.append(o)
    return res


def cluster_state(H):
    try:
        objs = etcd_objects(H)
    except (tbetcd.EtcdError, OSError) as e:
        sys.stderr.write("testbed: %s: etcd: %s\n" % (os.path.basename(H), e))
        objs = None
    if objs is None or not os.path.exists(H + "/state/apiserver/config.json"):
        return None
    objects, tokens = {}, 0
    for o in objs:
        kind, meta = o["kind"], o["metadata"]
        if kind == "Event":
            continue
        if kind == "Secret" and o.get("type") == "bootstrap.kubernetes.io/token":
            tokens += 1
            continue
        key = "%s/%s/%s" % (kind, meta["namespace"], meta["name"]) if meta.get("namespace") else "%s/%s" % (kind, meta["name"])
        objects[key] = clean_object(o)
    return {"objects": dict(sorted(objects.items())), "bootstrap_tokens": tokens}


def etcd_members(hosts):
    """The member names the etcd cluster reports (from the first master whose etcd answers;
    a member added but not started yet has no name: its peer URL instead), and those whose
    etcd does not answer (a lost master's member stays listed), or (None, None)."""
    for H in hosts:
        if not tbkubelet.etcd_running(H):
            continue
        try:
            c = tbkubelet.etcd_client(H, timeout=5)
            try:
                members = c.members()
            finally:
                c.close()
        except (tbetcd.EtcdError, OSError):
            continue
        names, unhealthy = [], []
        for m in members:
            name = m.get("name") or ",".join(m.get("peerURLs", []))
            names.append(name)
            urls = m.get("clientURLs") or []
            ok = False
            for u in urls[:1]:
                host = next((x for x in hosts if tbkubelet.etcd_running(x) and tbkubelet.etcd_client_url(x) == u), None)
                if host is None:
                    continue
                try:
                    c = tbkubelet.etcd_client(host, timeout=2)
                    try:
                        c.get("health")
                        ok = True
                    finally:
                        c.close()
                except (tbetcd.EtcdError, OSError):
                    ok = False
            if not ok:
                unhealthy.append(name)
        return sorted(names), sorted(unhealthy)
    return None, None


def state(args):
    rundir = os.path.abspath(args.rundir)
    run = load_run(rundir)
    res = {"hosts": {}, "cluster": None}
    masters = []
    for h in run["hosts"]:
        H = os.path.join(rundir, "hosts", h["name"])
        with tbfake.Lock(H):
            res["hosts"][h["name"]] = host_state(H)
            if os.path.exists(H + "/state/lost"):
                res["hosts"][h["name"]]["lost"] = True
        if h["role"] == "master":
            masters.append(H)
            # The objects from the first master whose etcd runs (with several masters, one
            # etcd cluster: any member's answer is the cluster's).
            if res["cluster"] is None:
                res["cluster"] = cluster_state(H)
    if res["cluster"] is not None:
        names, unhealthy = etcd_members(masters)
        res["cluster"]["etcdMembers"] = names
        if len(masters) > 1:
            res["cluster"]["etcdUnhealthy"] = unhealthy
    json.dump(res, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


# ----------------------------------------------------------------------------- down, knob, log


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def down_run(rundir, quiet=False):
    stop_kubelet_loop(rundir)  # first: it would start the static pods again
    stop_haproxy(rundir)
    pids = []
    for d in sorted(os.listdir(os.path.join(rundir, "hosts"))) if os.path.isdir(os.path.join(rundir, "hosts")) else []:
        H = os.path.join(rundir, "hosts", d)
        for name in ("kube-apiserver", "etcd"):
            p = tbkubelet.running_pid(H, name)
            if p:
                pids.append(p)
    for p in pids:
        if alive(p):
            try:
                os.kill(p, signal.SIGTERM)
            except ProcessLookupError:
                pass
    try:
        with open(os.path.join(rundir, "namespaces")) as f:
            namespaces = {l.split()[1] for l in f if len(l.split()) == 2}
    except FileNotFoundError:
        namespaces = set()
    r = subprocess.run(["sh", TESTHOSTS, "stop", rundir], capture_output=True, text=True)
    stop_server(rundir)
    if r.returncode != 0 and not quiet:
        sys.stderr.write(r.stderr)
    # Until nothing is left: the API server, and whatever still runs in a host's mount
    # namespace (a session that was starting while testhosts.sh swept them).
    deadline = time.time() + 5
    while True:
        left = [p for p in pids if alive(p)] + in_namespaces(namespaces, rundir)
        if not left or time.time() > deadline:
            break
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    return 0


def in_namespaces(namespaces, rundir):
    """The live processes of RUNDIR's hosts in NAMESPACES. A namespace whose sshd still runs
    in it is the host's. Once its last process is gone (a host lost with stop-host) its number
    may be reused by another run's host: then a process counts only when its /root, seen
    through its own mounts, is one of this run's hosts' home directories (fs/root, mounted
    over root-home)."""
    res = []
    if not namespaces:
        return res
    certain = set()
    try:
        with open(os.path.join(rundir, "namespaces")) as f:
            for line in f:
                p = line.split()
                if len(p) == 2 and p[1] in namespaces and alive(int(p[0])):
                    try:
                        if os.readlink("/proc/%s/ns/mnt" % p[0]) == p[1]:
                            certain.add(p[1])
                    except OSError:
                        pass
    except FileNotFoundError:
        pass
    hosts_dir = os.path.join(rundir, "hosts")
    ours = set()
    for d in os.listdir(hosts_dir) if os.path.isdir(hosts_dir) else []:
        for home in ("root-home", "fs/root"):
            try:
                st = os.stat(os.path.join(hosts_dir, d, home))
                ours.add((st.st_dev, st.st_ino))
            except OSError:
                pass
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            ns = os.readlink("/proc/%s/ns/mnt" % d)
            if ns not in namespaces or not alive(int(d)):
                continue
            if ns not in certain:
                st = os.stat("/proc/%s/root/root" % d)
                if (st.st_dev, st.st_ino) not in ours:
                    continue
            res.append(int(d))
        except OSError:
            pass
    return res


def down(args):
    rundir = os.path.abspath(args.rundir)
    if not os.path.exists(os.path.join(rundir, "testbed.json")) and not os.path.exists(os.path.join(rundir, "pids")):
        return 0
    down_run(rundir)
    if not args.quiet:
        print("testbed: stopped %s" % rundir)
    return 0


def stop_host(args):
    """A host lost, as a machine that lost its power: its sshd and every process in its
    namespaces, its API server and etcd (its member stays in the etcd cluster's list,
    unreachable), and the kubelet's loop leaves it alone (its sshd is gone). Its Node goes
    NotReady. Files stay."""
    rundir = os.path.abspath(args.rundir)
    H = host_dir(rundir, args.name)
    name = os.path.basename(H)
    sshd, ns = None, None
    with open(os.path.join(rundir, "pids")) as f:
        for line in f:
            p = line.split()
            if len(p) == 3 and p[1] == "sshd" and p[2] == name:
                sshd = int(p[0])
    try:
        ns = os.readlink("/proc/%d/ns/mnt" % sshd) if sshd else None
    except OSError:
        ns = None
    if sshd and alive(sshd):
        try:
            os.kill(sshd, signal.SIGKILL)
        except ProcessLookupError:
            pass
    with open(H + "/state/lost", "w") as f:
        f.write("stopped by testbed.sh stop-host\n")
    # The kubelet's loop skips a host whose sshd is gone; what it started there stops now.
    for pname in ("kube-apiserver", "etcd"):
        pid = tbkubelet.running_pid(H, pname)
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.time() + 5
    while time.time() < deadline:
        left = [p for p in ([tbkubelet.running_pid(H, "kube-apiserver"), tbkubelet.running_pid(H, "etcd")] +
                            (in_namespaces({ns}, rundir) if ns else [])) if p]
        if not left:
            break
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    print("testbed: %s stopped (sshd, API server, etcd, kubelet)" % name)
    return 0


# What testhosts.sh put in a host's bin/ (the rest came with what was installed since).
HOST_BIN_KEPT = ("dmesg", "nvidia-smi", "fake.env")


def start_host(args):
    """A lost host replaced: a machine of the same name, address and SSH host key whose disks
    were wiped and whose OS was installed again. Every file the host got since `up` goes
    (what apt installed, /etc, /var/lib with etcd's data, the fakes' state, the knobs); its
    sshd starts in a new namespace and the kubelet's loop sees it again. Its Node and etcd
    member, if the cluster still lists them, stay as they are."""
    rundir = os.path.abspath(args.rundir)
    H = host_dir(rundir, args.name)
    name = os.path.basename(H)
    run = load_run(rundir)
    h = next(x for x in run["hosts"] if x["name"] == name)
    if not os.path.exists(H + "/state/lost"):
        die("%s is running: lose it first (testbed.sh stop-host %s %s)" % (name, rundir, name))
    for pname in ("kube-apiserver", "etcd"):
        if tbkubelet.running_pid(H, pname):
            die("%s's %s still runs" % (name, pname), 1)
    # The disks wiped.
    for e in os.listdir(H + "/bin"):
        if e not in HOST_BIN_KEPT:
            _remove(H + "/bin/" + e)
    for d in (H + "/state", H + "/fs", H + "/etcd"):
        if os.path.lexists(d):
            _remove(d)
    os.makedirs(H + "/etcd")
    open(H + "/knobs", "w").close()
    copy_etc(rundir, [h])
    old_info = json.load(open(H + "/host.json")) if os.path.exists(H + "/host.json") else {}
    args.rollout_delay = old_info.get("rollout_delay", 0.5)
    args.call_latency = old_info.get("call_latency", 0.0)
    prepare_host(rundir, h, run.get("kubectl", ""), args)
    # Its sshd, as testhosts.sh starts it, in a namespace of its own.
    with open(H + "/sshd.log", "a") as log:
        proc = subprocess.Popen(["unshare", "--mount", "--uts", "--propagation", "private", "/bin/sh", H + "/enter.sh"],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=True)
    pid = proc.pid
    mine = os.readlink("/proc/self/ns/mnt")
    deadline = time.time() + 10
    ns = mine
    while time.time() < deadline and ns == mine:
        try:
            ns = os.readlink("/proc/%d/ns/mnt" % pid)
        except OSError:
            die("%s: its sshd exited at once (see %s/sshd.log)" % (name, H), 1)
        if ns == mine:
            time.sleep(0.02)
    port = run["port"]
    while time.time() < deadline:
        if proc.poll() is not None:
            die("%s: its sshd exited (see %s/sshd.log)" % (name, H), 1)
        with socket.socket() as c:
            c.settimeout(0.5)
            if c.connect_ex((h["address"], port)) == 0:
                break
        time.sleep(0.05)
    else:
        die("%s: its sshd does not listen on %s:%d" % (name, h["address"], port), 1)
    # The run's lists name the new sshd instead of the lost one.
    def replace(path, keep):
        with open(path) as f:
            lines = [l for l in f if keep(l.split())]
        with open(path + ".tmp", "w") as f:
            f.writelines(lines)
        os.replace(path + ".tmp", path)
    old = set()
    with open(os.path.join(rundir, "pids")) as f:
        for l in f:
            x = l.split()
            if len(x) == 3 and x[1] == "sshd" and x[2] == name:
                old.add(x[0])
    replace(os.path.join(rundir, "pids"), lambda x: not (len(x) == 3 and x[1] == "sshd" and x[2] == name))
    replace(os.path.join(rundir, "namespaces"), lambda x: not (x and x[0] in old))
    with open(os.path.join(rundir, "pids"), "a") as f:
        f.write("%d sshd %s\n" % (pid, name))
    with open(os.path.join(rundir, "namespaces"), "a") as f:
        f.write("%d %s\n" % (pid, ns))
    mount_host(rundir, h, pid, run.get("kubectl", ""))
    start_kubelet_loop(rundir)
    print("testbed: %s started again, fresh (sshd on %s:%d)" % (name, h["address"], port))
    return 0


def host_dir(rundir, name):
    run = load_run(rundir)
    for h in run["hosts"]:
        if name in (h["name"], h["address"], str(h["index"])):
            return os.path.join(rundir, "hosts", h["name"])
    die("no host %s in %s (hosts: %s)" % (name, rundir, ", ".join(h["name"] for h in run["hosts"])))


def knob(args):
    rundir = os.path.abspath(args.rundir)
    H = host_dir(rundir, args.host)
    with tbfake.Lock(H):
        if args.clear:
            open(H + "/knobs", "w").close()
        for k in args.knobs:
            parts = k.split()
            ok = (len(parts) == 3 and re.match(r"^(fail|hang)(-once)?(=\d+)?$", parts[2])) or (len(parts) == 2 and parts[0] == "unavailable")
            if not ok:
                die("knob '%s': expected 'TOOL STEP fail|hang|fail-once|fail=CODE' or 'unavailable NAMESPACE/NAME'" % k)
            with open(H + "/knobs", "a") as f:
                f.write(" ".join(parts) + "\n")
    return 0


def gpu_fault(args):
    """A GPU's faults, as the host's fake nvidia-smi (bin/fake.env) and fake dmesg
    (bin/kmsg) report them from now on; --clear takes them all back."""
    rundir = os.path.abspath(args.rundir)
    H = host_dir(rundir, args.host)
    env = H + "/bin/fake.env"
    if not os.path.exists(H + "/bin/nvidia-smi"):
        die("%s has no GPUs (no nvidia-smi)" % args.host)
    with tbfake.Lock(H):
        with open(env) as f:
            lines = [l for l in f.read().splitlines() if not re.match(r"^(SMI_GPUS|ECC_DBE|RETIRED_SBE|RETIRED_PENDING)=", l)]
        kmsg = H + "/bin/kmsg"
        if args.clear:
            if os.path.exists(kmsg):
                os.unlink(kmsg)
        else:
            if args.gpus is not None:
                lines.append("SMI_GPUS=%d" % args.gpus)
            if args.ecc:
                lines.append("ECC_DBE=%d" % args.ecc)
            if args.retired:
                lines.append("RETIRED_SBE=%d" % args.retired)
            if args.pending:
                lines.append("RETIRED_PENDING=Yes")
            if args.xid is not None:
                with open(kmsg, "a") as f:
                    f.write("[ 8811.524310] NVRM: Xid (PCI:0000:06:00): %d, pid=0, name=, %s\n"
                            % (args.xid, "GPU has fallen off the bus." if args.xid == 79 else "An uncorrectable ECC error was detected."))
        tmp = env + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.rename(tmp, env)
    return 0


def log(args):
    rundir = os.path.abspath(args.rundir)
    run = load_run(rundir)
    for h in run["hosts"]:
        if args.host and args.host not in (h["name"], h["address"]):
            continue
        recs = {}
        order = []
        with open(os.path.join(rundir, "hosts", h["name"], "invocations.jsonl")) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r["event"] == "start":
                    r = {k: v for k, v in r.items() if k != "event"}
                    r["host"] = h["name"]
                    r["rc"] = None
                    recs[r["id"]] = r
                    order.append(r["id"])
                elif r["id"] in recs:
                    cur = recs[r["id"]]
                    if r["event"] == "end":
                        cur["rc"], cur["stdin"], cur["stdin_bytes"], cur["end"] = r["rc"], r["stdin"], r["stdin_bytes"], r["time"]
                    elif r["event"] == "hang":
                        cur["hung_at"] = r["step"]
        for i in order:
            print(json.dumps(recs[i], sort_keys=True))
    return 0


def age_certs(args):
    """Re-issues a host's leaf certificates (default: every host's) with a not-after DAYS from now."""
    rundir = os.path.abspath(args.rundir)
    run = load_run(rundir)
    k = tbfake.kubeadm_fake()
    hosts = [h["name"] for h in run["hosts"]]
    if args.host and args.host != "all":
        hosts = [h["name"] for h in run["hosts"] if args.host in (h["name"], h["address"])]
        if not hosts:
            die("age-certs: %s is not a host of %s" % (args.host, rundir))
    for name in hosts:
        H = host_dir(rundir, name)
        with tbfake.Lock(H):
            done = k.age_certs(args.days, args.names, H)
        if done:
            print("%s: %s" % (name, " ".join(done)))
    return 0


def kubeconfig(args):
    rundir = os.path.abspath(args.rundir)
    run = load_run(rundir)
    p = os.path.join(rundir, "hosts", run["hosts"][0]["name"], "fs", "etc", "kubernetes", "admin.conf")
    if not os.path.exists(p):
        die("the master has no /etc/kubernetes/admin.conf yet (kubeadm init has not completed)", 1)
    print(p)
    return 0


# ----------------------------------------------------------------------------- snapshot, restore

# What a host's state is made of (hosts/NAME/...): its own directories, the fakes'
# state and programs, its swaps, modules, etcd and knobs. Not its logs, keys or
# sshd, nor kubectl.real (a bind mount of the machine's kubectl).
SNAPSHOT_PARTS = ["fs", "state", "bin", "swaps", "proc-modules", "sys-module", "meminfo", "etcd", "knobs", "kubectl-shadow", "absent-shadow"]


def _remove(p):
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p)
    else:
        os.unlink(p)


def sync_tree(src, dst):
    """Makes dst what src is, in place: existing files and directories keep their
    inodes (the hosts' bind mounts point at them), files that did not change
    (same size and mtime) are not rewritten. Sockets and fifos are left out."""
    st = os.lstat(src)
    if os.path.islink(src):
        target = os.readlink(src)
        if os.path.islink(dst) and os.readlink(dst) == target:
            return
        if os.path.lexists(dst):
            _remove(dst)
        os.symlink(target, dst)
        return
    if os.path.isdir(src):
        if os.path.lexists(dst) and (os.path.islink(dst) or not os.path.isdir(dst)):
            _remove(dst)
        if not os.path.lexists(dst):
            os.mkdir(dst)
        want = set(os.listdir(src))
        for n in os.listdir(dst):
            if n not in want:
                _remove(os.path.join(dst, n))
        for n in sorted(want):
            sync_tree(os.path.join(src, n), os.path.join(dst, n))
        os.chmod(dst, st.st_mode & 0o7777)
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
        return
    if not os.path.isfile(src):
        return  # a socket or fifo
    if os.path.lexists(dst) and (os.path.islink(dst) or not os.path.isfile(dst)):
        _remove(dst)
    if os.path.exists(dst):
        d = os.stat(dst)
        if d.st_size == st.st_size and d.st_mtime_ns == st.st_mtime_ns and (d.st_mode & 0o7777) == (st.st_mode & 0o7777):
            return
        if st.st_size >= COPY_CHUNK:
            copy_chunks(src, dst, True)
        else:
            with open(src, "rb") as f, open(dst, "r+b") as g:  # the same inode
                g.write(f.read())
                g.truncate()
    elif st.st_size >= COPY_CHUNK:
        copy_chunks(src, dst, False)
    else:
        shutil.copyfile(src, dst)
    os.chmod(dst, st.st_mode & 0o7777)
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


COPY_CHUNK = 1 << 20


def copy_chunks(src, dst, in_place):
    """Copies a large file by 1 MiB chunks: into an existing file (its inode kept) only
    the chunks that differ, and chunks of zeros as holes. etcd preallocates its WAL
    segments (64 MB each, mostly zeros), which a snapshot or restore then costs
    milliseconds instead of a write of every byte."""
    with open(src, "rb") as f, open(dst, "r+b" if in_place else "wb") as g:
        zeros = bytes(COPY_CHUNK)
        while True:
            a = f.read(COPY_CHUNK)
            if not a:
                break
            pos = g.tell()
            b = g.read(len(a)) if in_place else b""
            if a == b:
                continue
            g.seek(pos)
            if not b and a == zeros[:len(a)]:
                g.seek(len(a), os.SEEK_CUR)
            else:
                g.write(a)
        g.truncate(f.tell())


def snapshot_dir(rundir, name):
    if not re.match(r"^[A-Za-z0-9_.-]+$", name) or name.startswith("."):
        die("snapshot name '%s': letters, digits, '.', '_' and '-' only" % name)
    return os.path.join(rundir, "snapshots", name)


def snapshot(args):
    rundir = os.path.abspath(args.rundir)
    run = load_run(rundir)
    d = snapshot_dir(rundir, args.name)
    # With several masters the members of the etcd cluster are copied as one cut: every
    # member stopped before the first is copied, started again after the last (copied one
    # at a time, the others would go on committing, and the copies would disagree).
    several = sum(1 for h in run["hosts"] if h["role"] == "master") > 1
    stopped = []
    import contextlib
    with contextlib.ExitStack() as held:
        if several:  # the masters' locks for the whole copy: the kubelet's loop leaves them alone
            for h in run["hosts"]:
                if h["role"] != "master":
                    continue
                H = os.path.join(rundir, "hosts", h["name"])
                held.enter_context(tbfake.Lock(H))
                if tbkubelet.etcd_running(H):
                    tbkubelet.stop(H, "etcd")
                    stopped.append(h["name"])
        snapshot_hosts(rundir, run, d, several, stopped)
    return 0


def snapshot_hosts(rundir, run, d, several, stopped):
    for h in run["hosts"]:
        H = os.path.join(rundir, "hosts", h["name"])
        S = os.path.join(d, h["name"])
        os.makedirs(S, exist_ok=True)
        with tbfake.Lock(H):
            # etcd's files are copied while it does not run (its database and WAL as it
            # left them), then it runs again: the API server's writes meanwhile wait.
            was = h["name"] in stopped or (not several and tbkubelet.etcd_running(H))
            if was and not several:
                tbkubelet.stop(H, "etcd")
            try:
                for part in SNAPSHOT_PARTS:
                    if os.path.lexists(os.path.join(H, part)):
                        sync_tree(os.path.join(H, part), os.path.join(S, part))
                    elif os.path.lexists(os.path.join(S, part)):
                        _remove(os.path.join(S, part))
            finally:
                if was:
                    text, doc = tbkubelet.load_manifest(H, "etcd")
                    if doc:
                        tbkubelet.start_etcd(H, text, doc, enter=enter_host(rundir, h["name"]))


def enter_host(rundir, name):
    """nsenter's command line into the host's mount and UTS namespaces (its sshd's)."""
    with open(os.path.join(rundir, "pids")) as f:
        for line in f:
            p = line.split()
            if len(p) == 3 and p[1] == "sshd" and p[2] == name:
                return ["nsenter", "-t", p[0], "-m", "-u", "--"]
    die("no sshd of host %s in %s/pids" % (name, rundir), 1)


def restore(args):
    rundir = os.path.abspath(args.rundir)
    run = load_run(rundir)
    d = snapshot_dir(rundir, args.name)
    if not os.path.isdir(d):
        die("no snapshot '%s' in %s (scripts/testbed.sh snapshot %s %s makes it)" % (args.name, rundir, rundir, args.name))
    try:
        with open(os.path.join(rundir, "namespaces")) as f:
            namespaces = {l.split()[1] for l in f if len(l.split()) == 2}
    except FileNotFoundError:
        namespaces = set()
    sshd = set()
    with open(os.path.join(rundir, "pids")) as f:
        sshd = {int(l.split()[0]) for l in f if l.strip()}
    # Nothing may run on the hosts while their state is put back: the kubelet's loop,
    # the API server, etcd and whatever a killed install left running there (not the
    # sshds). The loop starts again after, and with it the static pods the restored
    # manifests name while the restored kubelet is active.
    stop_kubelet_loop(rundir)
    for h in run["hosts"]:
        tbkubelet.stop_all(os.path.join(rundir, "hosts", h["name"]))
    for p in in_namespaces(namespaces, rundir):
        if p not in sshd:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for h in run["hosts"]:
        H = os.path.join(rundir, "hosts", h["name"])
        S = os.path.join(d, h["name"])
        with tbfake.Lock(H):
            for part in SNAPSHOT_PARTS:
                if os.path.lexists(os.path.join(S, part)):
                    sync_tree(os.path.join(S, part), os.path.join(H, part))
                elif os.path.lexists(os.path.join(H, part)):
                    _remove(os.path.join(H, part))
    start_kubelet_loop(rundir)
    return 0


def main():
    ap = argparse.ArgumentParser(prog="testbed.sh", description="Fresh sshd test hosts with stateful fakes of what an installer drives.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("up")
    p.add_argument("n", type=int)
    p.add_argument("rundir")
    p.add_argument("--base", default=os.environ.get("TESTBED_BASE", "127.0.30"))
    p.add_argument("--masters", type=int, default=1, help="1, 3 or 5: the first M hosts are masters behind HAProxy")
    p.add_argument("--host", action="append", default=[], metavar="I:KEY=VALUE,...")
    p.add_argument("--kubectl")
    p.add_argument("--rollout-delay", type=float, default=float(os.environ.get("TESTBED_ROLLOUT_DELAY", "0.5")))
    p.add_argument("--hived-server", help="the HiveD double's program (tests/integration/hived/hived_test_server)")
    p.add_argument("--call-latency", type=float, default=float(os.environ.get("TESTBED_CALL_LATENCY", "0")),
                   help="seconds each call of a fake sleeps first: hosts whose work is slow and off this machine")
    p.set_defaults(fn=up)
    for name, fn in (("state", state), ("down", down), ("kubeconfig", kubeconfig)):
        p = sub.add_parser(name)
        p.add_argument("rundir")
        if name == "down":
            p.add_argument("-q", "--quiet", action="store_true")
        p.set_defaults(fn=fn)
    p = sub.add_parser("knob")
    p.add_argument("rundir")
    p.add_argument("host")
    p.add_argument("knobs", nargs="*")
    p.add_argument("--clear", action="store_true")
    p.set_defaults(fn=knob)
    p = sub.add_parser("gpu-fault")
    p.add_argument("rundir")
    p.add_argument("host")
    p.add_argument("--gpus", type=int)
    p.add_argument("--ecc", type=int, default=0)
    p.add_argument("--retired", type=int, default=0)
    p.add_argument("--pending", action="store_true")
    p.add_argument("--xid", type=int)
    p.add_argument("--clear", action="store_true")
    p.set_defaults(fn=gpu_fault)
    p = sub.add_parser("log")
    p.add_argument("rundir")
    p.add_argument("host", nargs="?")
    p.set_defaults(fn=log)
    for name, fn in (("snapshot", snapshot), ("restore", restore)):
        p = sub.add_parser(name)
        p.add_argument("rundir")
        p.add_argument("name")
        p.set_defaults(fn=fn)
    p = sub.add_parser("age-certs")
    p.add_argument("rundir")
    p.add_argument("days", type=float)
    p.add_argument("host", nargs="?", help="a host's name or address (default, or 'all': every host)")
    p.add_argument("names", nargs="*", help="kubeadm's names (apiserver, admin.conf, etcd-server, kubelet-client...)")
    p.set_defaults(fn=age_certs)
    p = sub.add_parser("stop-host")
    p.add_argument("rundir")
    p.add_argument("name")
    p.set_defaults(fn=stop_host)
    p = sub.add_parser("start-host")
    p.add_argument("rundir")
    p.add_argument("name")
    p.set_defaults(fn=start_host)
    p = sub.add_parser("can-run")
    p.set_defaults(fn=lambda a: can_run())
    a = ap.parse_args()
    return a.fn(a)


if __name__ == "__main__":
    sys.exit(main())
