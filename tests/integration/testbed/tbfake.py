#!/usr/bin/python3
"""Stateful fakes of what an installer drives on a testbed host.

One program for every tool; a host's bin/ holds small wrappers that run
`tbfake.py TOOL ARGS...` with TB_HOST set to the host's directory. Every fake
keeps its state under TB_HOST/state (JSON, one file per concern, changed under
a per-host lock) and appends two lines per invocation to
TB_HOST/invocations.jsonl: a "start" record (time, tool, argv, pid) and an
"end" record (rc, stdin bytes read). Fakes never read or print their stdin in
the log; a secret passed on stdin stays out of it.

The directories a host sees as its own (/etc/kubernetes, /etc/apt, ...) are bind
mounts of TB_HOST/fs/...; the fakes address them through hp(), which works
inside the host's mount namespace and outside it (testbed.py state, the fake
API server reading a worker's kubelet).

Knobs (TB_HOST/knobs, one per line, `TOOL STEP ACTION`):
  kubeadm init fail        exit 1 at that step (after the step's partial work)
  kubeadm join hang        sleep until killed at that step
  apt-get install fail-once  fail once, then the line is removed
  systemctl restart:containerd fail=5   exit with that code
  apt-get fetch fail       no repository but file: ones answers (a host without a network)
  containerd pull fail     no image pull succeeds (kubeadm's, the kubelet's, ctr's)
docs/testbed.md lists the steps of every tool.
"""

import fcntl
import json
import os
import re
import signal
import sys
import time

# tomllib and the kubeadm fake (PyYAML, ssl, urllib) load on first use: most fakes
# run for every step of an install and should start fast.

HOST = os.environ.get("TB_HOST", "")
LIB = os.path.dirname(os.path.abspath(__file__))

# Paths a host owns. Its /etc is a copy of the machine's (TB_HOST/fs/etc, so sed -i
# and renames work anywhere in it), with the directories below emptied; the
# others are bind mounts of TB_HOST/fs/PATH. testbed.py sets them up.
MAPPED_DIRS = [
    "/etc/kubernetes", "/etc/containerd", "/etc/modules-load.d", "/etc/sysctl.d", "/etc/apt",
    "/etc/cni", "/etc/systemd/system", "/etc/default", "/etc/nvidia-container-runtime", "/etc/docker",
    "/opt/cni", "/var/lib/kubelet", "/run/lock", "/tmp", "/root", "/var/cache/paictl",
]
BOUND_DIRS = [d for d in MAPPED_DIRS if not d.startswith("/etc/")]


def hp(path, host=None):
    """The file behind a host path, as seen from anywhere on the machine."""
    h = host or HOST
    if path == "/etc" or path.startswith("/etc/"):
        return h + "/fs" + path
    for d in BOUND_DIRS:
        if path == d or path.startswith(d + "/"):
            return h + "/fs" + path
    if path == "/proc/swaps":
        return h + "/swaps"
    if path == "/proc/meminfo":
        return h + "/meminfo"
    if path.startswith("/var/lib/"):
        # The host's own /var/lib (testbed.py mount_host): /var/lib/etcd and any
        # directory made next to it (a restored etcd's) are the host's; what the
        # machine's /var/lib holds is bind-mounted into it.
        return h + "/fs" + path
    return path


# ----------------------------------------------------------------------------- state


class Lock:
    """The host's state lock (flock); re-entrant within one process."""
    held = {}

    def __init__(self, host=None):
        self.path = (host or HOST) + "/state/.lock"

    def __enter__(self):
        fd, depth = Lock.held.get(self.path, (None, 0))
        if depth == 0:
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
        Lock.held[self.path] = (fd, depth + 1)
        return self

    def __exit__(self, *a):
        fd, depth = Lock.held[self.path]
        if depth == 1:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            del Lock.held[self.path]
        else:
            Lock.held[self.path] = (fd, depth - 1)


def load(name, default=None, host=None):
    try:
        with open((host or HOST) + "/state/" + name + ".json") as f:
            return json.load(f)
    except FileNotFoundError:
        return {} if default is None else default


def save(name, value, host=None):
    path = (host or HOST) + "/state/" + name + ".json"
    tmp = path + ".tmp.%d" % os.getpid()
    with open(tmp, "w") as f:
        json.dump(value, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)


def host_info(host=None):
    with open((host or HOST) + "/host.json") as f:
        return json.load(f)


def call_latency(host=None):
    """The seconds each call of a fake waits before its work (testbed.sh up --call-latency):
    a real host whose work is slow and off this machine, standing in as a sleep, not CPU."""
    try:
        return float(host_info(host).get("call_latency", 0) or 0)
    except (OSError, ValueError):
        return 0.0


def write_file(path, text, mode=0o644):
    real = hp(path)
    os.makedirs(os.path.dirname(real), exist_ok=True)
    tmp = real + ".tbtmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.rename(tmp, real)


def read_file(path, host=None):
    try:
        with open(hp(path, host)) as f:
            return f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def rewrite_in_place(real, text):
    """Rewrites a bind-mounted file without replacing its inode."""
    with open(real, "r+") as f:
        f.seek(0)
        f.write(text)
        f.truncate()


# ----------------------------------------------------------------------------- log and knobs

STDIN_BYTES = 0
# The caller's standard input: 0, or its descriptor when the fake server runs a
# read-only call in its own process (tbserver.py, read_only()).
STDIN_FD = 0
IN_SERVER = False
INVOCATION = None
# The pid the caller started: this process's, or the wrapper's when the fake
# server (tbserver.py) runs the fake in a worker on its behalf.
PID = None


def log_start(tool, argv):
    global INVOCATION
    pid = PID or os.getpid()
    INVOCATION = "%d-%d" % (pid, int(time.time() * 1e6))
    rec = {"event": "start", "id": INVOCATION, "time": round(time.time(), 6), "tool": tool,
           "argv": argv, "pid": pid, "stdin_tty": os.isatty(STDIN_FD) if _fd_ok(STDIN_FD) else False}
    _append(rec)


def log_end(rc):
    _append({"event": "end", "id": INVOCATION, "time": round(time.time(), 6), "rc": rc,
             "stdin": STDIN_BYTES > 0, "stdin_bytes": STDIN_BYTES})


def _fd_ok(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def _append(rec):
    line = (json.dumps(rec, sort_keys=True) + "\n").encode()
    fd = os.open(HOST + "/invocations.jsonl", os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read_stdin():
    global STDIN_BYTES
    data = sys.stdin.buffer.read() if _fd_ok(0) else b""
    STDIN_BYTES += len(data)
    return data.decode(errors="replace")


def read_stdin_line():
    global STDIN_BYTES
    line = sys.stdin.readline() if _fd_ok(0) else ""
    STDIN_BYTES += len(line.encode())
    return line


class Exit(Exception):
    def __init__(self, rc):
        self.rc = rc


def knob(tool, step):
    """Applies the host's knob for TOOL STEP, if any."""
    path = HOST + "/knobs"
    with Lock():
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return
        action = None
        keep = []
        for line in lines:
            parts = line.split()
            if action is None and len(parts) == 3 and parts[0] == tool and parts[1] == step:
                action = parts[2]
                if action.endswith("-once") or "-once=" in action:
                    continue
            keep.append(line)
        if action is None:
            return
        if len(keep) != len(lines):
            with open(path + ".tmp", "w") as f:
                f.write("".join(k + "\n" for k in keep))
            os.rename(path + ".tmp", path)
    kind, _, code = action.partition("=")
    kind = kind.replace("-once", "")
    if kind == "hang":
        _append({"event": "hang", "id": INVOCATION, "time": round(time.time(), 6), "step": step})
        # Hang like a stuck tool, but without the host's state lock: other tools and `state` go on.
        for fd, _ in list(Lock.held.values()):
            fcntl.flock(fd, fcntl.LOCK_UN)
        Lock.held.clear()
        while True:
            time.sleep(3600)
    if kind == "fail":
        err("testbed: injected failure at %s %s" % (tool, step))
        raise Exit(int(code) if code else 1)


def knob_action(tool, step, host=None):
    """The action of the host's knob for TOOL STEP, or None; the line stays (a
    standing condition, such as a host without a network, not a step's failure)."""
    try:
        with open((host or HOST) + "/knobs") as f:
            for line in f.read().splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[0] == tool and parts[1] == step:
                    return parts[2]
    except OSError:
        pass
    return None


def network_attempt(kind, what):
    """Records a fetch over the network (an apt repository, an image pull) in
    the host's state `network`, whether it succeeded or not."""
    with Lock():
        n = load("network")
        n.setdefault(kind, []).append(what)
        save("network", n)


def out(text=""):
    sys.stdout.write(text + "\n")


def err(text):
    sys.stderr.write(text + "\n")


# ----------------------------------------------------------------------------- packages

K8S_PATCHES = {"1.28": 15, "1.29": 14, "1.30": 10, "1.31": 6, "1.32": 3, "1.33": 1}
CNI_VERSION = {"1.28": "1.2.0", "1.29": "1.3.0", "1.30": "1.4.0", "1.31": "1.5.1", "1.32": "1.6.0", "1.33": "1.6.0"}
OS_PACKAGES = {
    "ubuntu-22.04": {"containerd": "1.7.12-0ubuntu2~22.04.1", "runc": "1.1.12-0ubuntu2~22.04.1"},
    "ubuntu-20.04": {"containerd": "1.7.12-0ubuntu2~20.04.1", "runc": "1.1.12-0ubuntu2~20.04.1"},
    "ubuntu-24.04": {"containerd": "1.7.12-0ubuntu4.1", "runc": "1.1.12-0ubuntu3.1"},
    "debian-12": {"containerd": "1.6.20~ds1-1+b1", "runc": "1.1.5+ds1-1+deb12u1"},
}
COMMON = ["apt-transport-https", "ca-certificates", "curl", "gpg", "gnupg", "socat", "conntrack",
          "ebtables", "ethtool", "ipset", "ipvsadm", "jq", "nfs-common", "iptables",
          "software-properties-common", "chrony", "ntp", "lsb-release"]
DEPENDS = {
    "kubeadm": ["cri-tools", "kubernetes-cni"],
    "kubelet": ["kubernetes-cni", "conntrack", "ebtables"],
    "containerd": ["runc"],
    "nvidia-container-toolkit": ["nvidia-container-toolkit-base", "libnvidia-container-tools", "libnvidia-container1"],
    "libnvidia-container-tools": ["libnvidia-container1"],
}
CONFLICTS = {"containerd": ["containerd.io"], "containerd.io": ["containerd", "runc"]}
# NVIDIA's driver packages as the OS archive serves them (Ubuntu's restricted
# nvidia-driver-BRANCH, Debian's nvidia-driver); the branches of Ubuntu conflict
# with one another. Installing one changes what nvidia-smi reports only after a
# reboot (until then: "Driver/library version mismatch", as the real tool says).
NVIDIA_DRIVERS = {
    "ubuntu": {"nvidia-driver-535": ["535.104.05-0ubuntu1", "535.183.01-0ubuntu1"],
               "nvidia-driver-550": ["550.127.05-0ubuntu1"],
               "nvidia-driver-560": ["560.35.03-0ubuntu1"]},
    "debian": {"nvidia-driver": ["535.104.05-1", "535.183.01-1~deb12u1"]},
}


def conflicts_of(name):
    if name.startswith("nvidia-driver-"):
        return [p for p in NVIDIA_DRIVERS["ubuntu"] if p != name]
    return CONFLICTS.get(name, [])
# What a package puts on the host: programs in bin/, systemd units, conffiles.
PROGRAMS = {
    "kubeadm": ["kubeadm"], "kubelet": ["kubelet"], "kubectl": ["kubectl"], "cri-tools": ["crictl"],
    "containerd": ["containerd", "ctr"], "containerd.io": ["containerd", "ctr", "runc"], "runc": ["runc"],
    "nvidia-container-toolkit": ["nvidia-container-runtime", "nvidia-container-runtime-hook"],
    "nvidia-container-toolkit-base": ["nvidia-ctk"],
}
UNITS = {"kubelet": "kubelet", "containerd": "containerd", "containerd.io": "containerd"}
BASE_INSTALLED = ["apt", "ca-certificates", "curl", "dpkg", "gpg", "iptables", "kmod", "openssh-server",
                  "procps", "systemd"]


def os_id(host=None):
    return host_info(host)["os"]


def repo_packages(url, suite, comps):
    """Packages a repository line serves: {name: [versions, oldest first]}."""
    m = re.search(r"pkgs\.k8s\.io/core:/stable:/v(1\.\d+)/deb", url)
    if m:
        minor = m.group(1)
        if minor not in K8S_PATCHES:
            return None
        vs = ["%s.%d-1.1" % (minor, p) for p in range(K8S_PATCHES[minor] + 1)]
        return {"kubeadm": vs, "kubelet": vs, "kubectl": vs, "cri-tools": ["%s.0-1.1" % minor],
                "kubernetes-cni": [CNI_VERSION[minor] + "-1.1"]}
    if "nvidia.github.io/libnvidia-container" in url:
        vs = ["1.16.2-1", "1.17.3-1"]
        return {p: vs for p in ["nvidia-container-toolkit", "nvidia-container-toolkit-base",
                                "libnvidia-container-tools", "libnvidia-container1"]}
    if "download.docker.com" in url:
        return {"containerd.io": ["1.7.22-1", "1.7.24-1"]}
    if url.startswith("file:"):
        d = url[5:].rstrip("/")
        if suite and suite not in ("./", "/", "."):
            d = d + "/" + suite.strip("/")
        return bundle_packages(d)
    if re.search(r"(archive|security)\.ubuntu\.com|deb\.debian\.org|security\.debian\.org|mirror", url):
        pk = {p: ["1.0-1"] for p in COMMON}
        for name, v in OS_PACKAGES.get(os_id(), {}).items():
            pk[name] = [v]
        pk.update(NVIDIA_DRIVERS.get(os_id().split("-")[0], {}))
        return pk
    return None


def bundle_packages(d):
    """An offline bundle: files NAME_VERSION_ARCH.deb in a directory on the host."""
    pk = {}
    real = hp(d)
    try:
        names = sorted(os.listdir(real))
    except OSError:
        return None
    for n in names:
        m = re.match(r"^([a-z0-9.+-]+)_([^_]+)_(amd64|all)\.deb$", n)
        if m:
            pk.setdefault(m.group(1), []).append(m.group(2).replace("%3a", ":"))
    return pk


def vkey(v):
    parts = re.split(r"[.\-+~:]", v)
    return [(0, int(p)) if p.isdigit() else (1, p) for p in parts]


APT_O = {}  # apt's -o Dir::... options of this call


def apt_o(opts):
    """apt's `-o KEY=VALUE` options; the testbed knows Dir::Etc::sourcelist, Dir::Etc::sourceparts
    (`-`: none) and Dir::State::Lists (where update keeps, and apt-cache reads, what it learnt)."""
    APT_O.clear()
    for v in opts.get("o", []):
        k, _, val = str(v).partition("=")
        APT_O[k] = val


def sources():
    """Every `deb` line of /etc/apt/sources.list and sources.list.d/*.list (and deb822 *.sources)."""
    lines = []
    texts = []
    main_path = APT_O.get("Dir::Etc::sourcelist", "/etc/apt/sources.list")
    main = read_file(main_path)
    if main:
        texts.append((main_path, main))
    d = hp(APT_O.get("Dir::Etc::sourceparts", "/etc/apt/sources.list.d"))
    if APT_O.get("Dir::Etc::sourceparts") == "-":
        d = ""
    for n in sorted(os.listdir(d)) if d and os.path.isdir(d) else []:
        t = read_file("/etc/apt/sources.list.d/" + n)
        if t is None:
            continue
        if n.endswith(".list"):
            texts.append(("/etc/apt/sources.list.d/" + n, t))
        elif n.endswith(".sources"):
            for stanza in t.split("\n\n"):
                f = {}
                for l in stanza.splitlines():
                    if ":" in l and not l.startswith("#"):
                        k, _, v = l.partition(":")
                        f[k.strip().lower()] = v.strip()
                if "uris" in f:
                    for uri in f["uris"].split():
                        for suite in f.get("suites", "").split() or [""]:
                            opts = {"signed-by": f["signed-by"]} if "signed-by" in f else {}
                            lines.append(("/etc/apt/sources.list.d/" + n, uri, suite, f.get("components", "").split(), opts))
    for path, t in texts:
        for l in t.splitlines():
            l = l.split("#", 1)[0].strip()
            if not l.startswith("deb "):
                continue
            rest = l[4:].strip()
            opts = {}
            if rest.startswith("["):
                o, _, rest = rest[1:].partition("]")
                for kv in o.split():
                    k, _, v = kv.partition("=")
                    opts[k] = v
            parts = rest.split()
            if not parts:
                continue
            lines.append((path, parts[0], parts[1] if len(parts) > 1 else "", parts[2:], opts))
    return lines


def apt_update():
    lists = {}
    warnings = []
    n = 0
    offline = knob_action("apt-get", "fetch") == "fail"
    failed = False
    for path, url, suite, comps, opts in sources():
        n += 1
        if not url.startswith("file:"):
            network_attempt("apt", url)
            if offline:
                out("Err:%d %s %s" % (n, url, suite))
                warnings.append("W: Failed to fetch %s/dists/%s/InRelease  Temporary failure resolving '%s'"
                                % (url.rstrip("/"), suite, url.split("/")[2] if "//" in url else url))
                failed = True
                continue
        pk = repo_packages(url, suite, comps)
        if pk is None:
            out("Err:%d %s %s" % (n, url, suite))
            warnings.append("W: Failed to fetch %s/dists/%s/InRelease  Could not resolve host (the testbed serves no such repository)" % (url.rstrip("/"), suite))
            continue
        sb = opts.get("signed-by")
        if sb and not url.startswith("file:") and not os.path.exists(hp(sb)):
            warnings.append("W: %s: signed-by key %s is missing (the testbed does not verify signatures)" % (url, sb))
        out("Get:%d %s %s InRelease" % (n, url, suite))
        for name, vs in pk.items():
            lists.setdefault(name, [])
            for v in vs:
                if v not in lists[name]:
                    lists[name].append(v)
    for name in lists:
        lists[name].sort(key=vkey)
    out("Reading package lists...")
    for w in warnings:
        err(w)
    if failed:
        err("E: Some index files failed to download. They have been ignored, or old ones used instead.")
        raise Exit(100)
    return lists


def candidates():
    d = APT_O.get("Dir::State::Lists")
    if d:
        try:
            with open(hp(d) + "/testbed-lists.json") as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}
    return load("apt-lists")


def install_effects(name, version):
    """Programs, units and conffiles a package brings."""
    for prog in PROGRAMS.get(name, []):
        install_program(prog)
    unit = UNITS.get(name)
    if unit:
        sd = load("systemd")
        u = sd.setdefault(unit, {"enabled": True, "state": "inactive"})
        u["enabled"] = True
        if unit == "containerd":
            containerd_start(sd)
        elif unit == "kubelet":
            u["state"] = "started"
        save("systemd", sd)
    conffiles = []
    if name == "containerd.io" and not os.path.exists(hp("/etc/containerd/config.toml")):
        write_file("/etc/containerd/config.toml", CONTAINERD_IO_CONFIG)
        conffiles.append("/etc/containerd/config.toml")
        sd = load("systemd")
        containerd_start(sd)
        save("systemd", sd)
    if name == "kubelet":
        write_file("/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", KUBELET_DROPIN)
        conffiles.append("/etc/systemd/system/kubelet.service.d/10-kubeadm.conf")
    if name.startswith("nvidia-driver") and host_info()["gpus"]:
        smi_env(mismatch=smi_env() != version.split("-")[0])
    return conffiles


def smi_env(**change):
    """The fake nvidia-smi's settings (bin/fake.env, shell assignments): DRIVER
    read, and with `driver` or `mismatch` given, those two rewritten in place."""
    path = HOST + "/bin/fake.env"
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    m = re.search(r"\bDRIVER=(\S+)", text)
    if not change:
        return m.group(1) if m else None
    if "driver" in change:
        text = re.sub(r"\bDRIVER=\S+", "DRIVER=" + change["driver"], text)
    flag = "SMI_MISMATCH=%d" % (1 if change.get("mismatch") else 0)
    if re.search(r"\bSMI_MISMATCH=\S+", text):
        text = re.sub(r"\bSMI_MISMATCH=\S+", flag, text)
    else:
        text = text.rstrip("\n") + "\n" + flag + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)
    return None


def installed_driver():
    """The upstream version of the NVIDIA driver package installed, or None."""
    for n, i in load("dpkg").items():
        if n.startswith("nvidia-driver"):
            return i["version"].split("-")[0]
    return None


REBOOT_DOWN_S = 1.0


def reboot(argv):
    """`reboot` / `systemctl reboot`: counted in state/boot.json; the kubelet and
    containerd stop for REBOOT_DOWN_S (the Node goes NotReady), the NVIDIA driver
    installed is loaded, /run/lock is emptied, then the enabled units start again.
    sshd is not touched:
    the host stays reachable, and the call returns once the host is up again."""
    with Lock():
        boot = load("boot")
        boot["reboots"] = boot.get("reboots", 0) + 1
        save("boot", boot)
        sd = load("systemd")
        for u in ("kubelet", "containerd"):
            if u in sd:
                sd[u]["state"] = "inactive"
        save("systemd", sd)
    time.sleep(REBOOT_DOWN_S)
    with Lock():
        # /run is a tmpfs: the boot empties it (the host's /run/lock here).
        d = hp("/run/lock")
        for n in os.listdir(d) if os.path.isdir(d) else []:
            if os.path.isfile(os.path.join(d, n)):
                os.unlink(os.path.join(d, n))
        drv = installed_driver()
        if drv and host_info()["gpus"]:
            smi_env(driver=drv, mismatch=False)
        sd = load("systemd")
        for u, info in sd.items():
            if not info.get("enabled") or info.get("masked"):
                continue
            if u == "containerd":
                containerd_start(sd)
            elif u == "kubelet":
                info["state"] = "started"
        if "kubelet" in sd and sd["kubelet"].get("enabled"):
            ensure_apiserver(sd)
        save("systemd", sd)
    return 0


def remove_effects(name, info, purge):
    others = {p for p, i in load("dpkg").items() if p != name}
    other_progs = {x for p in others for x in PROGRAMS.get(p, [])}
    for prog in PROGRAMS.get(name, []):
        if prog not in other_progs:
            try:
                os.unlink(HOST + "/bin/" + prog)
            except FileNotFoundError:
                pass
    unit = UNITS.get(name)
    if unit and not any(UNITS.get(p) == unit for p in others):
        sd = load("systemd")
        sd.pop(unit, None)
        save("systemd", sd)
    if purge:
        for f in info.get("conffiles", []):
            try:
                os.unlink(hp(f))
            except FileNotFoundError:
                pass


def install_program(prog):
    path = HOST + "/bin/" + prog
    client = prog not in ("kubectl", "nvidia-container-runtime", "runc") and os.access(LIB + "/tbclient", os.X_OK)
    if client and os.environ.get("TESTBED_FAKE_LINKS", "1") != "0":
        # The fake server runs the fake (tbserver.py, tbclient.c): no Python
        # started per call; the client runs the fake itself where no server
        # answers. A hard link to the client, which knows the host from the
        # path it was started by: one process a call. Where the link cannot be
        # made (or with TESTBED_FAKE_LINKS=0 in up's environment), a wrapper
        # that names the host.
        try:
            if os.path.lexists(path + ".tmp"):
                os.unlink(path + ".tmp")
            os.link(LIB + "/tbclient", path + ".tmp")
            os.rename(path + ".tmp", path)
            return
        except OSError:
            pass
    with open(path + ".tmp", "w") as f:
        if prog == "kubectl":
            # The kubelet's part (restart the API server's static pod) only when
            # the API server is not running: most calls skip starting Python.
            f.write("#!/bin/sh\np=$(cat %s/state/apiserver/pid 2>/dev/null) && kill -0 \"$p\" 2>/dev/null || "
                    "TB_HOST=%s /usr/bin/python3 %s/tbfake.py kubectl-ensure || true\n"
                    "exec %s/kubectl.real \"$@\"\n" % (HOST, HOST, LIB, HOST))
        elif prog in ("nvidia-container-runtime", "runc"):
            f.write("#!/bin/sh\ncase ${1:-} in --version|-v) echo \"%s version 1.17.3\"; exit 0;; esac\n"
                    "echo \"%s: the testbed's fake only answers --version\" >&2\nexit 1\n" % (prog, prog))
        elif client:
            f.write("#!/bin/sh\nTB_HOST=%s exec %s/tbclient %s %s %s \"$@\"\n" % (HOST, LIB, server_name(LIB), LIB, prog))
        else:
            # tbfake imported, not run as a script: Python then keeps its compiled
            # code (LIB/__pycache__, in the run directory) instead of compiling
            # 1,500 lines on every call, about half of what a fake costs.
            f.write("#!/bin/sh\nTB_HOST=%s exec /usr/bin/python3 %s -c 'import sys; sys.path.insert(0, \"%s\"); "
                    "import tbfake; sys.exit(tbfake.main())' %s \"$@\"\n" % (
                        HOST, "" if prog == "kubeadm" else "-S", LIB, prog))
    os.chmod(path + ".tmp", 0o755)
    os.rename(path + ".tmp", path)


def server_name(lib):
    """The abstract unix socket of the run directory's fake server (tbserver.py)."""
    import hashlib
    return "paictl-tbfake-" + hashlib.sha1(os.path.realpath(lib).encode()).hexdigest()[:16]


def parse_opts(argv, flags_with_value=()):
    opts, args = {}, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            args.extend(argv[i + 1:])
            break
        if a.startswith("--"):
            k, eq, v = a[2:].partition("=")
            if not eq and k in flags_with_value and i + 1 < len(argv):
                v = argv[i + 1]
                i += 1
            elif not eq:
                v = True
            opts.setdefault(k, [])
            opts[k].append(v)
        elif a.startswith("-") and len(a) > 1:
            chars = a[1:]
            for j, ch in enumerate(chars):
                if ch in flags_with_value:
                    v = chars[j + 1:]
                    if not v and i + 1 < len(argv):
                        v = argv[i + 1]
                        i += 1
                    opts.setdefault(ch, []).append(v or True)
                    break
                opts.setdefault(ch, []).append(True)
        else:
            args.append(a)
        i += 1
    return opts, args


def apt_get(argv, tool="apt-get"):
    opts, args = parse_opts(argv, ("o", "target-release", "t"))
    if not args:
        err("E: No command given")
        return 100
    cmd, names = args[0], args[1:]
    yes = any(k in opts for k in ("y", "yes", "assume-yes")) or "qy" in opts
    with Lock():
        apt_o(opts)
        if cmd == "update":
            knob(tool, "update")
            lists = apt_update()
            if APT_O.get("Dir::State::Lists"):
                d = hp(APT_O["Dir::State::Lists"])
                os.makedirs(d, exist_ok=True)
                with open(d + "/testbed-lists.json", "w") as f:
                    json.dump(lists, f)
            else:
                save("apt-lists", lists)
            return 0
        if cmd in ("install", "reinstall"):
            return apt_install(names, yes, opts, tool)
        if cmd in ("remove", "purge", "autoremove"):
            return apt_remove(names, yes, cmd == "purge" or "purge" in opts, tool, cmd)
        if cmd in ("clean", "autoclean"):
            return 0
    err("E: Invalid operation %s" % cmd)
    return 100


def confirm(yes):
    if yes:
        return True
    sys.stdout.write("Do you want to continue? [Y/n] ")
    sys.stdout.flush()
    ans = read_stdin_line().strip().lower()
    if ans in ("y", "yes"):
        return True
    out("Abort.")
    return False


def apt_install(names, yes, opts, tool):
    dpkg = load("dpkg")
    lists = candidates()
    allow_held = "allow-change-held-packages" in opts or "allow-downgrades" in opts
    want = {}
    for n in names:
        name, _, ver = n.partition("=")
        if name.endswith(".deb") or "/" in name:
            err("E: Unsupported file %s given on commandline" % n)
            return 100
        if name not in lists:
            out("Reading package lists...\nBuilding dependency tree...")
            err("E: Unable to locate package %s" % name)
            return 100
        if ver and ver not in lists[name]:
            err("E: Version '%s' for '%s' was not found" % (ver, name))
            return 100
        want[name] = ver or lists[name][-1]
    # Dependencies at their newest version, unless already installed.
    queue = list(want)
    while queue:
        n = queue.pop()
        for d in DEPENDS.get(n, []):
            if d in want or d in dpkg:
                continue
            if d not in lists:
                err("E: Unable to correct problems, you have held broken packages.\n %s : Depends: %s but it is not installable" % (n, d))
                return 100
            want[d] = lists[d][-1]
            queue.append(d)
    changes, removes = [], []
    for n, v in want.items():
        cur = dpkg.get(n)
        if cur and cur["version"] == v:
            continue
        if cur and cur.get("hold") and not allow_held:
            err("E: Held packages were changed and -y was used without --allow-change-held-packages.")
            return 100
        changes.append((n, v))
        for c in conflicts_of(n):
            if c in dpkg and c not in want:
                if dpkg[c].get("hold") and not allow_held:
                    err("E: Held packages were changed and -y was used without --allow-change-held-packages.")
                    return 100
                removes.append(c)
    out("Reading package lists...\nBuilding dependency tree...\nReading state information...")
    for n in names:
        name = n.partition("=")[0]
        if name in dpkg and dpkg[name]["version"] == want[name]:
            out("%s is already the newest version (%s)." % (name, want[name]))
    if removes:
        out("The following packages will be REMOVED:\n  " + " ".join(sorted(set(removes))))
    if changes:
        out("The following NEW packages will be installed:\n  " + " ".join(sorted(n for n, _ in changes)))
    out("%d upgraded, %d newly installed, %d to remove and 0 not upgraded." % (
        sum(1 for n, _ in changes if n in dpkg), sum(1 for n, _ in changes if n not in dpkg), len(set(removes))))
    if not changes and not removes:
        return 0
    if (removes or len(changes) > len(names)) and not confirm(yes):
        return 1
    knob(tool, "install")
    for c in sorted(set(removes)):
        info = dpkg.pop(c)
        save("dpkg", dpkg)
        remove_effects(c, info, False)
    for n, v in changes:
        out("Setting up %s (%s) ..." % (n, v))
        prev = dpkg.get(n, {})
        auto = n not in [x.partition("=")[0] for x in names]
        dpkg[n] = {"version": v, "hold": prev.get("hold", False), "auto": prev.get("auto", auto) and auto}
        save("dpkg", dpkg)
        dpkg[n]["conffiles"] = install_effects(n, v)
        save("dpkg", dpkg)
    return 0


def apt_remove(names, yes, purge, tool, cmd):
    dpkg = load("dpkg")
    if cmd == "autoremove":
        needed = set()
        for n, i in dpkg.items():
            if not i.get("auto"):
                needed.add(n)
        changed = True
        while changed:
            changed = False
            for n in list(needed):
                for d in DEPENDS.get(n, []):
                    if d in dpkg and d not in needed:
                        needed.add(d)
                        changed = True
        names = [n for n in dpkg if n not in needed]
        if not names:
            out("0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.")
            return 0
    todo = []
    for n in names:
        n = n.rstrip("*")
        if n not in dpkg:
            out("Package '%s' is not installed, so not removed" % n)
            continue
        if dpkg[n].get("hold") and "allow-change-held-packages" not in sys.argv:
            err("E: Held packages were changed and -y was used without --allow-change-held-packages.")
            return 100
        todo.append(n)
    out("The following packages will be REMOVED:\n  " + " ".join(todo) if todo else "0 to remove")
    if not todo:
        return 0
    if not confirm(yes):
        return 1
    knob(tool, "remove")
    for n in todo:
        info = dpkg.pop(n)
        save("dpkg", dpkg)
        out("Removing %s (%s) ..." % (n, info["version"]))
        remove_effects(n, info, purge)
    return 0


def apt_mark(argv):
    opts, args = parse_opts(argv)
    if not args:
        err("apt-mark: no command given")
        return 100
    cmd, names = args[0], args[1:]
    with Lock():
        dpkg = load("dpkg")
        if cmd in ("showhold", "showheld"):
            for n in sorted(dpkg):
                if dpkg[n].get("hold"):
                    out(n)
            return 0
        if cmd in ("hold", "unhold"):
            knob("apt-mark", cmd)
            for n in names:
                if n not in dpkg:
                    err("E: Unable to locate package %s" % n)
                    return 100
            for n in names:
                was = dpkg[n].get("hold", False)
                dpkg[n]["hold"] = cmd == "hold"
                if cmd == "hold":
                    out("%s %s." % (n, "was already set on hold" if was else "set on hold"))
                else:
                    out(("Canceled hold on %s." % n) if was else ("%s was already not on hold." % n))
            save("dpkg", dpkg)
            return 0
        if cmd in ("auto", "manual", "showmanual", "showauto"):
            return 0
    err("E: Invalid operation %s" % cmd)
    return 100


def apt_cache(argv):
    opts, args = parse_opts(argv, ("o",))
    apt_o(opts)
    if not args:
        return 100
    cmd, names = args[0], args[1:]
    dpkg, lists = load("dpkg"), candidates()
    if cmd == "policy":
        for n in names:
            if n not in dpkg and n not in lists:
                continue
            out("%s:" % n)
            out("  Installed: %s" % (dpkg[n]["version"] if n in dpkg else "(none)"))
            out("  Candidate: %s" % (lists[n][-1] if n in lists else "(none)"))
            out("  Version table:")
            for v in reversed(lists.get(n, [])):
                out(" %s %s 500" % ("***" if n in dpkg and dpkg[n]["version"] == v else "   ", v))
        return 0
    if cmd == "madison":
        for n in names:
            for v in reversed(lists.get(n, [])):
                out("%10s | %s | testbed" % (n, v))
        return 0
    if cmd == "show":
        rc = 100
        for n in names:
            if n in lists:
                out("Package: %s\nVersion: %s\nDepends: %s\n" % (n, lists[n][-1], ", ".join(DEPENDS.get(n, []))))
                rc = 0
        if rc:
            err("E: No packages found")
        return rc
    return 0


def dpkg_status(info):
    return "hold ok installed" if info.get("hold") else "install ok installed"


def dpkg_query(argv, tool="dpkg-query"):
    opts, args = parse_opts(argv, ("f", "showformat"))
    dpkg = load("dpkg")
    fmt = None
    for k in ("f", "showformat"):
        if k in opts:
            fmt = opts[k][-1]
    if fmt is True:  # -f given as a separate argument
        fmt, args = args[0], args[1:]
    if "W" in opts or "show" in opts:
        fmt = fmt if fmt is not None else "${binary:Package}\t${Version}\n"
        names = args or sorted(dpkg)
        rc = 0
        for n in names:
            if n not in dpkg:
                err("dpkg-query: no packages found matching %s" % n)
                rc = 1
                continue
            i = dpkg[n]
            s = fmt.replace("${binary:Package}", n).replace("${Package}", n).replace("${Version}", i["version"])
            s = s.replace("${Status}", dpkg_status(i)).replace("${db:Status-Abbrev}", "hi " if i.get("hold") else "ii ")
            s = s.replace("${db:Status-Status}", "installed").replace("${db:Status-Want}", "hold" if i.get("hold") else "install")
            s = s.replace("\\n", "\n").replace("\\t", "\t")
            sys.stdout.write(s)
        return rc
    if "s" in opts or "status" in opts:
        rc = 0
        for n in args:
            if n not in dpkg:
                err("dpkg-query: package '%s' is not installed and no information is available" % n)
                rc = 1
                continue
            out("Package: %s\nStatus: %s\nVersion: %s\n" % (n, dpkg_status(dpkg[n]), dpkg[n]["version"]))
        return rc
    if "l" in opts or "list" in opts:
        out("Desired=Unknown/Install/Remove/Purge/Hold\n||/ Name Version Architecture Description\n+++-====")
        rc = 0
        for n in args or sorted(dpkg):
            if n in dpkg:
                out("%s %s %s amd64 %s" % ("hi" if dpkg[n].get("hold") else "ii", n, dpkg[n]["version"], n))
            elif args:
                err("dpkg-query: no packages found matching %s" % n)
                rc = 1
        return rc
    if "get-selections" in opts:
        for n in sorted(dpkg):
            out("%s\t\t\t\t\t%s" % (n, "hold" if dpkg[n].get("hold") else "install"))
        return 0
    err("dpkg-query: need an action option")
    return 2


def dpkg_cmd(argv):
    opts, args = parse_opts(argv)
    if "i" in opts or "install" in opts:
        with Lock():
            knob("dpkg", "install")
            dpkg = load("dpkg")
            for f in args:
                m = re.match(r"^([a-z0-9.+-]+)_([^_]+)_(amd64|all)\.deb$", os.path.basename(f))
                if not m or not os.path.exists(hp(f)):
                    err("dpkg: error: cannot access archive '%s': No such file or directory" % f)
                    return 1
                n, v = m.group(1), m.group(2).replace("%3a", ":")
                if n in dpkg and dpkg[n].get("hold") and dpkg[n]["version"] != v:
                    err("dpkg: warning: package %s is on hold, not touching it" % n)
                    continue
                out("Setting up %s (%s) ..." % (n, v))
                prev = dpkg.get(n, {})
                dpkg[n] = {"version": v, "hold": prev.get("hold", False), "auto": False}
                save("dpkg", dpkg)
                dpkg[n]["conffiles"] = install_effects(n, v)
                save("dpkg", dpkg)
        return 0
    if any(k in opts for k in ("r", "remove", "P", "purge")):
        with Lock():
            return apt_remove(args, True, "P" in opts or "purge" in opts, "dpkg", "remove")
    return dpkg_query(argv, "dpkg")


# ----------------------------------------------------------------------------- systemd

BASE_UNITS = {"ssh": {"enabled": True, "state": "active"}, "cron": {"enabled": True, "state": "active"},
              "systemd-journald": {"enabled": True, "state": "active"},
              "systemd-timesyncd": {"enabled": True, "state": "active"}}


def unit_name(u):
    return u[:-8] if u.endswith(".service") else u


def unit_state(name, u, host=None):
    """active | activating | inactive | failed; kubelet crash-loops until it has a config."""
    s = u.get("state", "inactive")
    if name == "kubelet" and s in ("started", "active"):
        return "active" if os.path.exists(hp("/var/lib/kubelet/config.yaml", host)) else "activating"
    return "active" if s == "started" else s


def systemctl(argv):
    opts, args = parse_opts(argv, ("p", "property"))
    if not args:
        args = ["list-units"]
    cmd, units = args[0], [unit_name(u) for u in args[1:]]
    quiet = "q" in opts or "quiet" in opts
    now = "now" in opts
    if cmd == "reboot":
        return reboot(args[1:])
    with Lock():
        sd = load("systemd")
        # Units written by hand under /etc/systemd/system are known after daemon-reload.
        if cmd == "daemon-reload":
            knob("systemctl", "daemon-reload")
            d = hp("/etc/systemd/system")
            for n in os.listdir(d) if os.path.isdir(d) else []:
                if n.endswith(".service") and os.path.isfile(os.path.join(d, n)):
                    sd.setdefault(unit_name(n), {"enabled": False, "state": "inactive"})
            save("systemd", sd)
            return 0
        if cmd in ("is-active", "is-enabled", "is-failed"):
            rc = 0
            for u in units:
                info = sd.get(u)
                if cmd == "is-active":
                    s = unit_state(u, info) if info else "inactive"
                    ok = s == "active"
                elif cmd == "is-failed":
                    s = unit_state(u, info) if info else "inactive"
                    ok = s == "failed"
                else:
                    s = ("masked" if info.get("masked") else "enabled" if info.get("enabled") else "disabled") if info else "not-found"
                    ok = s == "enabled"
                    if not info and not quiet:
                        err("Failed to get unit file state for %s.service: No such file or directory" % u)
                        s = None
                if s and not quiet:
                    out(s)
                if not ok:
                    rc = 1 if cmd != "is-active" else 3
            return rc
        if cmd in ("status", "show"):
            rc = 0
            for u in units:
                info = sd.get(u)
                if not info:
                    if cmd == "show":
                        out("LoadState=not-found\nActiveState=inactive\nUnitFileState=")
                        continue
                    err("Unit %s.service could not be found." % u)
                    rc = 4
                    continue
                s = unit_state(u, info)
                if cmd == "show":
                    props = {"LoadState": "masked" if info.get("masked") else "loaded", "ActiveState": s,
                             "SubState": {"active": "running", "activating": "auto-restart"}.get(s, "dead"),
                             "UnitFileState": "enabled" if info.get("enabled") else "disabled"}
                    want = [p for v in opts.get("p", []) + opts.get("property", []) for p in str(v).split(",")]
                    for k, v in props.items():
                        if want and k not in want:
                            continue
                        out(v if "value" in opts else "%s=%s" % (k, v))
                else:
                    out("* %s.service\n     Loaded: loaded (/lib/systemd/system/%s.service; %s)\n     Active: %s" % (
                        u, u, "enabled" if info.get("enabled") else "disabled", s))
                    if s != "active":
                        rc = 3
            return rc
        if cmd == "list-units" or cmd == "list-unit-files":
            for u in sorted(sd):
                out("%s.service %s %s" % (u, "enabled" if sd[u].get("enabled") else "disabled", unit_state(u, sd[u])))
            return 0
        if cmd in ("enable", "disable", "start", "stop", "restart", "reload", "try-restart", "reload-or-restart",
                   "mask", "unmask", "reset-failed"):
            if not units:
                err("Too few arguments.")
                return 1
            for u in units:
                knob("systemctl", cmd)
                knob("systemctl", "%s:%s" % (cmd, u))
                info = sd.get(u)
                if info is None:
                    if cmd in ("stop", "disable", "mask", "unmask", "reset-failed"):
                        if cmd == "mask":
                            sd[u] = {"enabled": False, "state": "inactive", "masked": True}
                        continue
                    verb = {"enable": "enable unit", "restart": "restart", "start": "start"}.get(cmd, cmd)
                    err("Failed to %s %s.service: Unit %s.service not found." % (verb, u, u) if cmd != "enable"
                        else "Failed to enable unit: Unit file %s.service does not exist." % u)
                    save("systemd", sd)
                    return 5 if cmd != "enable" else 1
                if cmd == "mask":
                    info["masked"] = True
                    info["state"] = "inactive" if now else info.get("state", "inactive")
                elif cmd == "unmask":
                    info.pop("masked", None)
                elif cmd == "reset-failed":
                    if info.get("state") == "failed":
                        info["state"] = "inactive"
                elif info.get("masked") and cmd in ("enable", "start", "restart"):
                    err("Failed to %s %s.service: Unit %s.service is masked." % (cmd, u, u))
                    save("systemd", sd)
                    return 1
                if cmd == "enable":
                    info["enabled"] = True
                if cmd == "disable":
                    info["enabled"] = False
                starting = cmd in ("start", "restart", "reload-or-restart") or (cmd == "enable" and now) or \
                    (cmd in ("try-restart", "reload") and unit_state(u, info) == "active")
                stopping = cmd == "stop" or (cmd in ("disable", "mask") and now)
                if stopping:
                    info["state"] = "inactive"
                if starting:
                    if u == "containerd":
                        if not containerd_start(sd):
                            save("systemd", sd)
                            err("Job for containerd.service failed because the control process exited with error code.\n"
                                "See \"systemctl status containerd.service\" and \"journalctl -xeu containerd.service\" for details.")
                            return 1
                    else:
                        info["state"] = "started"
                    if u == "kubelet":
                        kubelet_started(info)
                        ensure_apiserver(sd)
            save("systemd", sd)
            return 0
    err("Unknown command verb %s." % cmd)
    return 1


# ----------------------------------------------------------------------------- containerd

CONTAINERD_IO_CONFIG = """#   Copyright 2018-2022 Docker Inc.

#   Licensed under the Apache License, Version 2.0 (the "License");
#   you may not use this file except in compliance with the License.

disabled_plugins = ["cri"]

#root = "/var/lib/containerd"
#state = "/run/containerd"
#subreaper = true
#oom_score = 0
"""

CONTAINERD_DEFAULT = """disabled_plugins = []
imports = []
oom_score = 0
plugin_dir = ""
required_plugins = []
root = "/var/lib/containerd"
state = "/run/containerd"
temp = ""
version = 2

[cgroup]
  path = ""

[grpc]
  address = "/run/containerd/containerd.sock"
  gid = 0
  max_recv_message_size = 16777216
  max_send_message_size = 16777216
  uid = 0

[plugins]

  [plugins."io.containerd.grpc.v1.cri"]
    enable_selinux = false
    sandbox_image = "registry.k8s.io/pause:3.8"
    systemd_cgroup = false

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/opt/cni/bin"
      conf_dir = "/etc/cni/net.d"

    [plugins."io.containerd.grpc.v1.cri".containerd]
      default_runtime_name = "runc"
      snapshotter = "overlayfs"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes]

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
          base_runtime_spec = ""
          runtime_type = "io.containerd.runc.v2"

          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
            BinaryName = ""
            SystemdCgroup = false

    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = ""
"""

KUBELET_DROPIN = """[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
"""


def containerd_facts(text):
    """What containerd makes of a config.toml: None when it would not start."""
    import tomllib
    if text is None:
        return {"config": False, "cri": True, "SystemdCgroup": False, "default_runtime": "runc", "runtimes": ["runc"]}
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return {"error": "failed to load TOML: %s" % e}
    plugins = doc.get("plugins", {})
    version = doc.get("version", 1)
    if version >= 3:
        cri = plugins.get("io.containerd.cri.v1.runtime", {}).get("containerd", {})
        disabled = doc.get("disabled_plugins", [])
        cri_on = not any("cri" in d for d in disabled)
    else:
        cri = plugins.get("io.containerd.grpc.v1.cri", {}).get("containerd", {})
        cri_on = not any(d in ("cri", "io.containerd.grpc.v1.cri") for d in doc.get("disabled_plugins", []))
    runtimes = cri.get("runtimes", {}) or {"runc": {"options": {}}}
    default = cri.get("default_runtime_name", "runc")
    dr = runtimes.get(default, {})
    return {"config": True, "cri": cri_on, "version": version, "default_runtime": default,
            "SystemdCgroup": bool(dr.get("options", {}).get("SystemdCgroup", False)),
            "runtimes": sorted(runtimes),
            "default_runtime_binary": dr.get("options", {}).get("BinaryName", "") or None}


def containerd_start(sd):
    """systemctl (re)start containerd: reads config.toml as containerd would."""
    u = sd.setdefault("containerd", {"enabled": False, "state": "inactive"})
    facts = containerd_facts(read_file("/etc/containerd/config.toml"))
    if "error" in facts:
        u["state"] = "failed"
        return False
    u["state"] = "active"
    c = load("containerd")
    c["running"] = facts
    save("containerd", c)
    return True


def toml_key(k):
    return k if re.match(r"^[A-Za-z0-9_-]+$", k) else json.dumps(k)


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise ValueError("cannot write %r as TOML" % (v,))


def toml_dump(doc):
    lines = []

    def table(d, path, depth):
        scalars = [(k, v) for k, v in d.items() if not isinstance(v, dict)]
        tables = [(k, v) for k, v in d.items() if isinstance(v, dict)]
        ind = "  " * max(depth - 1, 0)
        if path:
            lines.append("")
            lines.append(ind + "[" + ".".join(toml_key(p) for p in path) + "]")
        for k, v in scalars:
            lines.append((ind + "  " if path else "") + "%s = %s" % (toml_key(k), toml_value(v)))
        for k, v in tables:
            table(v, path + [k], depth + 1)

    table(doc, [], 0)
    return "\n".join(lines).lstrip("\n") + "\n"


def containerd(argv):
    opts, args = parse_opts(argv)
    ver = load("dpkg").get("containerd", load("dpkg").get("containerd.io", {})).get("version", "1.7.12")
    plain = ver.split("-")[0].split("~")[0]
    if "version" in opts or "v" in opts:
        out("containerd github.com/containerd/containerd v%s testbed" % plain)
        return 0
    if args[:2] == ["config", "default"]:
        knob("containerd", "config-default")
        sys.stdout.write(CONTAINERD_DEFAULT)
        return 0
    if args[:2] == ["config", "dump"]:
        sys.stdout.write(read_file("/etc/containerd/config.toml") or CONTAINERD_DEFAULT)
        return 0
    err("containerd: the testbed's fake answers --version, config default and config dump")
    return 1


def normalized_image(ref):
    """A reference as containerd names it: docker.io and library/ added, :latest when untagged."""
    first = ref.split("/", 1)[0] if "/" in ref else ""
    if not first or not ("." in first or ":" in first or first == "localhost"):
        ref = "docker.io/" + ref
    if ref.startswith("docker.io/") and "/" not in ref[len("docker.io/"):]:
        ref = "docker.io/library/" + ref[len("docker.io/"):]
    last = ref.rsplit("/", 1)[-1]
    if ":" not in last and "@" not in last:
        ref += ":latest"
    return ref


def images(host=None):
    """The images containerd has in its k8s.io namespace (names, sorted)."""
    return load("images", {"k8s.io": []}, host=host).get("k8s.io", [])


def add_images(names):
    with Lock():
        st = load("images", {"k8s.io": []})
        have = set(st.get("k8s.io", []))
        have.update(names)
        st["k8s.io"] = sorted(have)
        save("images", st)


def pull_image(ref):
    """An image pull (kubeadm's preflight, ctr images pull): recorded as a
    network fetch; with `containerd pull fail` it fails as a host without a
    registry in reach does. Returns the error text, or None once pulled."""
    ref = normalized_image(ref)
    network_attempt("pulls", ref)
    if knob_action("containerd", "pull") == "fail":
        host = ref.split("/", 1)[0]
        return ('failed to pull and unpack image "%s": failed to resolve reference "%s": failed to do request: '
                'Head "https://%s/v2/": dial tcp: lookup %s: Temporary failure in name resolution' % (ref, ref, host, host))
    add_images([ref])
    return None


def oci_image_names(path):
    """The names an OCI image-layout tar carries in its index.json (containerd's
    io.containerd.image.name, else the OCI ref name), as `ctr images import` reads them."""
    import tarfile
    with tarfile.open(path) as t:
        try:
            f = t.extractfile("index.json")
        except KeyError:
            f = None
        if f is None:
            raise ValueError("ctr: failed to import: index.json: file does not exist")
        idx = json.load(f)
    names = []
    for m in idx.get("manifests", []):
        a = m.get("annotations", {}) or {}
        n = a.get("io.containerd.image.name") or a.get("org.opencontainers.image.ref.name")
        if n:
            names.append(normalized_image(n))
    return names


def ctr(argv):
    if argv[:1] == ["version"] or "--version" in argv:
        out("ctr github.com/containerd/containerd v1.7.12")
        return 0
    opts, args = parse_opts(argv, ("n", "namespace"))
    ns = (opts.get("n") or opts.get("namespace") or ["default"])[-1]
    running = load("systemd").get("containerd", {}).get("state") == "active"
    if args[:1] == ["images"] or args[:1] == ["image"]:
        if not running:
            err('ctr: failed to dial "/run/containerd/containerd.sock": connection error: desc = "transport: Error '
                'while dialing: dial unix /run/containerd/containerd.sock: connect: no such file or directory"')
            return 1
        if ns != "k8s.io":
            err("ctr: the testbed's fake keeps images of the k8s.io namespace only")
            return 1
        sub = args[1:2]
        if sub in (["ls"], ["list"]):
            for n in images():
                out(n)
            return 0
        if sub == ["import"] and len(args) >= 3:
            f = args[2]
            try:
                names = oci_image_names(hp(f) if not f.startswith(HOST) else f)
            except (OSError, ValueError) as e:
                err("ctr: %s" % (e if isinstance(e, ValueError) else "open %s: no such file or directory" % f))
                return 1
            knob("ctr", "import")
            for n in names:
                out("unpacking %s (sha256:%s)...done" % (n, "0" * 64))
            add_images(names)
            return 0
        if sub == ["pull"] and len(args) >= 3:
            e = pull_image(args[2])
            if e:
                err("ctr: " + e)
                return 1
            return 0
    err("ctr: the testbed's fake answers version and images ls|import|pull (-n k8s.io)")
    return 1


def crictl(argv):
    c = load("containerd").get("running")
    if not c or load("systemd").get("containerd", {}).get("state") != "active" or not c.get("cri"):
        err('time="0" level=fatal msg="validate service connection: validate CRI v1 runtime API for endpoint '
            '\\"unix:///run/containerd/containerd.sock\\": rpc error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService"')
        return 1
    if argv[:1] == ["info"]:
        out(json.dumps({"status": {"conditions": [{"type": "RuntimeReady", "status": True}]},
                        "config": {"containerd": {"defaultRuntimeName": c["default_runtime"],
                                                  "runtimes": {r: {} for r in c["runtimes"]}}}}, indent=2))
        return 0
    if argv[:1] == ["version"]:
        out("Version:  0.1.0\nRuntimeName:  containerd\nRuntimeVersion:  v1.7.12\nRuntimeApiVersion:  v1")
        return 0
    if argv[:1] in (["ps"], ["pods"], ["images"]):
        return 0
    return 0


def nvidia_ctk(argv):
    opts, args = parse_opts(argv, ("runtime", "config", "config-source"))
    if "version" in opts or "v" in opts:
        out("NVIDIA Container Toolkit CLI version 1.17.3\ncommit: testbed")
        return 0
    if args[:2] != ["runtime", "configure"]:
        err("nvidia-ctk: the testbed's fake answers --version and runtime configure")
        return 1
    runtime = (opts.get("runtime") or ["docker"])[-1]
    default = "set-as-default" in opts or "nvidia-set-as-default" in opts
    import tomllib
    with Lock():
        knob("nvidia-ctk", "runtime-configure")
        if runtime == "containerd":
            path = (opts.get("config") or ["/etc/containerd/config.toml"])[-1]
            text = read_file(path)
            try:
                doc = tomllib.loads(text) if text else {"version": 2}
            except tomllib.TOMLDecodeError as e:
                err('ERRO[0000] unable to load config for runtime containerd: %s' % e)
                return 1
            doc.setdefault("version", 2)
            cri = doc.setdefault("plugins", {}).setdefault("io.containerd.grpc.v1.cri", {}).setdefault("containerd", {})
            rts = cri.setdefault("runtimes", {})
            base = rts.get("runc", {"runtime_type": "io.containerd.runc.v2", "options": {}})
            nv = json.loads(json.dumps(base))
            nv["runtime_type"] = "io.containerd.runc.v2"
            nv.setdefault("options", {})["BinaryName"] = "/usr/bin/nvidia-container-runtime"
            rts["nvidia"] = nv
            if default:
                cri["default_runtime_name"] = "nvidia"
            write_file(path, toml_dump(doc))
            err("INFO[0000] Wrote updated config to %s" % path)
            err("INFO[0000] It is recommended that containerd daemon be restarted.")
            return 0
        if runtime == "docker":
            path = (opts.get("config") or ["/etc/docker/daemon.json"])[-1]
            real = hp(path)
            try:
                doc = json.load(open(real))
            except (OSError, ValueError):
                doc = {}
            doc.setdefault("runtimes", {})["nvidia"] = {"path": "nvidia-container-runtime", "args": []}
            if default:
                doc["default-runtime"] = "nvidia"
            with open(real, "w") as f:
                json.dump(doc, f, indent=4)
            err("INFO[0000] Wrote updated config to %s" % path)
            return 0
    err("ERRO[0000] unrecognized runtime '%s'" % runtime)
    return 1


# ----------------------------------------------------------------------------- kernel

KNOWN_MODULES = ["overlay", "br_netfilter", "nf_conntrack", "ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_sh",
                 "vxlan", "ip_tables", "x_tables", "iptable_nat", "iptable_filter", "xt_conntrack", "ipip",
                 "nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm", "ext4", "bridge", "veth", "ib_core", "rdma_ucm"]
BASE_MODULES = ["ext4", "ip_tables", "x_tables"]
GPU_MODULES = ["nvidia", "nvidia_modeset", "nvidia_uvm"]
MODULE_DEPS = {"br_netfilter": ["bridge"], "ip_vs_rr": ["ip_vs"], "ip_vs_wrr": ["ip_vs"], "ip_vs_sh": ["ip_vs"],
               "ip_vs": ["nf_conntrack"], "nvidia_uvm": ["nvidia"], "nvidia_modeset": ["nvidia"]}


def modules(host=None):
    return load("modules", [], host)


def write_modules(mods):
    save("modules", sorted(set(mods)))
    with open(HOST + "/proc-modules", "w") as f:
        for m in sorted(set(mods)):
            f.write("%s 16384 0 - Live 0x0000000000000000\n" % m)
    # The same as /sys/module's directories, bound there where the machine has no
    # /proc/modules: a directory a loaded module, kept (not recreated) while loaded.
    d = HOST + "/sys-module"
    os.makedirs(d, exist_ok=True)
    for m in os.listdir(d):
        if m not in mods:
            try:
                os.rmdir(os.path.join(d, m))
            except OSError:
                pass
    for m in set(mods):
        os.makedirs(os.path.join(d, m), exist_ok=True)


def modprobe(argv):
    opts, args = parse_opts(argv)
    remove = "r" in opts or "remove" in opts
    with Lock():
        mods = modules()
        for m in args:
            if "=" in m:
                continue
            knob("modprobe", m)
            if m not in KNOWN_MODULES:
                err("modprobe: FATAL: Module %s not found in directory /lib/modules/6.1.0-testbed" % m)
                return 1
            if m.startswith("nvidia") and not host_info()["gpus"]:
                err("modprobe: ERROR: could not insert '%s': No such device" % m)
                return 1
            if remove:
                if m in mods:
                    mods.remove(m)
            else:
                mods.extend([m] + MODULE_DEPS.get(m, []))
            sysctl_defaults_for(mods)
        write_modules(mods)
    return 0


def lsmod(argv):
    out("Module                  Size  Used by")
    for m in modules():
        out("%-24s%6d  0" % (m, 16384))
    return 0


SYSCTL_DEFAULTS = {
    "net.ipv4.ip_forward": "0", "net.ipv6.conf.all.forwarding": "0", "vm.swappiness": "60",
    "vm.overcommit_memory": "0", "vm.max_map_count": "65530", "kernel.panic": "0", "kernel.panic_on_oops": "0",
    "fs.inotify.max_user_watches": "8192", "fs.inotify.max_user_instances": "128", "fs.file-max": "9223372036854775807",
    "net.core.somaxconn": "4096", "net.ipv4.conf.all.rp_filter": "2", "net.ipv4.conf.default.rp_filter": "2",
    "kernel.pid_max": "4194304", "net.ipv4.tcp_keepalive_time": "7200", "vm.panic_on_oom": "0",
}
MODULE_SYSCTLS = {
    "br_netfilter": {"net.bridge.bridge-nf-call-iptables": "1", "net.bridge.bridge-nf-call-ip6tables": "1",
                     "net.bridge.bridge-nf-call-arptables": "1"},
    "nf_conntrack": {"net.netfilter.nf_conntrack_max": "262144"},
}


def sysctl_defaults_for(mods):
    s = load("sysctl")
    for m, keys in MODULE_SYSCTLS.items():
        for k, v in keys.items():
            if m in mods:
                s.setdefault(k, v)
            else:
                s.pop(k, None)
    save("sysctl", s)


def sysctl(argv):
    opts, args = parse_opts(argv, ("p", "load", "pattern"))
    quiet = "q" in opts or "quiet" in opts
    values_only = "n" in opts or "values" in opts
    with Lock():
        s = load("sysctl")

        changed = []

        def setkv(k, v, echo=True):
            k = k.strip().replace("/", ".")
            v = " ".join(v.split())
            if k not in s:
                err("sysctl: cannot stat /proc/sys/%s: No such file or directory" % k.replace(".", "/"))
                return False
            if s[k] != v:
                changed.append(k)
            s[k] = v
            if echo and not quiet:
                out("%s = %s" % (k, v))
            return True

        def apply_file(path):
            text = read_file(path)
            if text is None:
                err("sysctl: cannot open \"%s\": No such file or directory" % path)
                return False
            ok = True
            for line in text.splitlines():
                line = line.strip()
                if not line or line[0] in "#;":
                    continue
                ignore = line.startswith("-")
                k, eq, v = line.lstrip("-").partition("=")
                if eq and not setkv(k, v) and not ignore:
                    ok = False
            return ok

        rc = 0
        if "system" in opts:
            knob("sysctl", "system")
            d = hp("/etc/sysctl.d")
            for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                if n.endswith(".conf"):
                    if not quiet:
                        out("* Applying /etc/sysctl.d/%s ..." % n)
                    if not apply_file("/etc/sysctl.d/" + n):
                        rc = 255
        elif "p" in opts or "load" in opts:
            knob("sysctl", "load")
            for f in (opts.get("p") or opts.get("load")):
                if not apply_file("/etc/sysctl.conf" if f is True else f):
                    rc = 255
            for f in args:
                if not apply_file(f):
                    rc = 255
        elif "a" in opts or "all" in opts:
            for k in sorted(s):
                out(s[k] if values_only else "%s = %s" % (k, s[k]))
        else:
            for a in args:
                if "=" in a:
                    knob("sysctl", "write")
                    k, _, v = a.partition("=")
                    if not setkv(k, v):
                        rc = 255
                else:
                    k = a.replace("/", ".")
                    if k not in s:
                        err("sysctl: cannot stat /proc/sys/%s: No such file or directory" % k.replace(".", "/"))
                        rc = 255
                        continue
                    out(s[k] if values_only else "%s = %s" % (k, s[k]))
        if changed:
            save("sysctl", s)
        return rc


def swaps(host=None):
    try:
        with open(hp("/proc/swaps", host)) as f:
            return [l.split()[0] for l in f.read().splitlines()[1:] if l.strip()]
    except FileNotFoundError:
        return []


def fstab_swaps(host=None):
    t = read_file("/etc/fstab", host) or ""
    res = []
    for l in t.splitlines():
        p = l.split()
        if len(p) >= 3 and not p[0].startswith("#") and p[2] == "swap":
            res.append(p[0])
    return res


def set_swaps(active):
    hdr = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
    rewrite_in_place(hp("/proc/swaps"), hdr + "".join(
        "%-40sfile\t\t2097148\t\t0\t\t-2\n" % a for a in active))
    total = 2097148 * len(active)
    with open(hp("/proc/meminfo")) as f:
        mi = f.read()
    mi = re.sub(r"^SwapTotal:\s+\d+ kB", "SwapTotal:      %8d kB" % total, mi, flags=re.M)
    mi = re.sub(r"^SwapFree:\s+\d+ kB", "SwapFree:       %8d kB" % total, mi, flags=re.M)
    rewrite_in_place(hp("/proc/meminfo"), mi)


def swapoff(argv):
    opts, args = parse_opts(argv)
    with Lock():
        knob("swapoff", "all" if "a" in opts or "all" in opts else "file")
        active = swaps()
        if "a" in opts or "all" in opts:
            active = []
        else:
            for a in args:
                if a not in active:
                    err("swapoff: %s: swapoff failed: Invalid argument" % a)
                    return 255
                active.remove(a)
        set_swaps(active)
    return 0


def swapon(argv):
    opts, args = parse_opts(argv)
    active = swaps()
    if "show" in opts or "s" in opts or "summary" in opts:
        if active:
            out("NAME      TYPE SIZE USED PRIO")
            for a in active:
                out("%s file   2G   0B   -2" % a)
        return 0
    with Lock():
        new = fstab_swaps() if ("a" in opts or "all" in opts) else args
        for a in new:
            if a not in active:
                active.append(a)
        set_swaps(active)
    return 0


# ----------------------------------------------------------------------------- kubelet, kubeadm


def pkg_version(name):
    v = load("dpkg").get(name, {}).get("version")
    return v.split("-")[0] if v else None


def kubelet_started(unit):
    """The version a (re)started kubelet runs: the installed package's, until its next restart."""
    v = pkg_version("kubelet")
    if v:
        unit["version"] = v


def kubelet(argv):
    v = pkg_version("kubelet") or "1.30.0"
    if "--version" in argv:
        out("Kubernetes v%s" % v)
        return 0
    err("kubelet: the testbed's fake answers --version; `systemctl start kubelet` runs it")
    return 1


def kubeadm_fake():
    try:
        import yaml  # noqa: F401
    except ImportError:  # started with python3 -S (the fast path of the other fakes)
        import site
        site.main()
    import kubeadm_fake as k  # kubeadm lives in its own file and uses the helpers above
    k.tb = sys.modules[__name__]
    return k


def kubectl_ensure(argv):
    """Before each real kubectl on the master: the kubelet restarts the API server's static pod."""
    with Lock():
        sd = load("systemd")
        ensure_apiserver(sd)
    return 0


def ensure_apiserver(sd):
    if host_info()["role"] == "master" and os.path.exists(HOST + "/state/apiserver/config.json"):
        kubeadm_fake().ensure_apiserver(sd)


TOOLS = {
    "apt-get": lambda a: apt_get(a, "apt-get"), "apt": lambda a: apt_get(a, "apt"), "apt-mark": apt_mark,
    "apt-cache": apt_cache, "dpkg": dpkg_cmd, "dpkg-query": dpkg_query, "systemctl": systemctl,
    "modprobe": modprobe, "lsmod": lsmod, "sysctl": sysctl, "swapoff": swapoff, "swapon": swapon,
    "containerd": containerd, "ctr": ctr, "crictl": crictl, "nvidia-ctk": nvidia_ctk, "kubelet": kubelet,
    "kubeadm": lambda a: kubeadm_fake().main(a), "kubectl-ensure": kubectl_ensure, "reboot": reboot,
}


def read_only(tool, argv):
    """Whether this call only reads the host's state: no knob applies to it, it
    reads no input and changes no file, so the fake server (tbserver.py) may run
    it in its own process instead of a forked worker. It still logs its
    invocation as every call does. With a call latency every call goes to a worker
    (the server would otherwise serialise the hosts' waits)."""
    if call_latency() > 0:
        return False
    if tool in ("dpkg-query", "lsmod"):
        return True
    if tool == "systemctl":
        _, args = parse_opts(argv, ("p", "property"))
        return bool(args) and args[0] in ("is-active", "is-enabled", "is-failed")
    if tool == "sysctl":
        opts, args = parse_opts(argv, ("p", "load", "pattern"))
        return not any(k in opts for k in ("p", "load", "system", "w", "write")) and not any("=" in a for a in args)
    if tool == "containerd":
        opts, args = parse_opts(argv)
        return "version" in opts or "v" in opts or args[:2] == ["config", "dump"]
    return False


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in TOOLS or not HOST:
        err("usage: TB_HOST=DIR tbfake.py TOOL ARGS... (tools: %s)" % " ".join(sorted(TOOLS)))
        return 2
    tool, argv = sys.argv[1], sys.argv[2:]
    if tool != "kubectl-ensure":
        log_start(tool, argv)
    if not IN_SERVER:  # the server must not die of a caller's closed pipe
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if tool != "kubectl-ensure":
        latency = call_latency()
        if latency > 0:
            time.sleep(latency)
    rc = 1
    try:
        rc = TOOLS[tool](argv)
    except Exit as e:
        rc = e.rc
    finally:
        sys.stdout.flush()
        if tool != "kubectl-ensure":
            log_end(rc)
    return rc


if __name__ == "__main__":
    sys.exit(main())
