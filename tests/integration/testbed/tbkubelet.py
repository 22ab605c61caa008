#!/usr/bin/python3
"""The testbed kubelet's static pods: etcd and the API server run from their manifests.

While the master's kubelet unit is active and /etc/kubernetes/manifests/etcd.yaml
(kube-apiserver.yaml) exists, its process runs: the machine's real `etcd` with
the manifest's command line (paths under a volume's mountPath read as its
hostPath, so `--data-dir=/var/lib/etcd` is the directory the `etcd-data`
hostPath names), and the fake API server (kube_apiserver.py) with the
manifest's `--etcd-*` flags. A manifest moved away stops its process; one that
comes back, or whose content changed, starts it again. With the kubelet
stopped, the processes keep running (a real kubelet's containers do too).

`sync(H)` makes it so once, for one host; it runs
  - in this program's loop (`tbkubelet.py RUNDIR`, started by `testbed.sh up`,
    pid in RUNDIR/kubelet.pid), every 0.3 s per master, the processes started in
    the master's mount and UTS namespaces (nsenter);
  - in the fakes on the master (already in its namespaces): `kubeadm init`,
    `systemctl start kubelet` and before every `kubectl` on the master.
It skips a host while another holds the host's state lock or kubeadm's lock.
"""

import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tbetcd  # noqa: E402
import tbfake  # noqa: E402

STATIC = ("etcd", "kube-apiserver")
INTERVAL = 0.3


def manifest_path(name):
    return "/etc/kubernetes/manifests/%s.yaml" % name


def pod_file(H, name):
    return H + "/state/static-pods/%s.json" % name


def pid_alive(pid, needle=None):
    try:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                return False
        if needle:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                return needle.encode() in f.read()
        return True
    except (OSError, IndexError, ValueError):
        return False


def pod_info(H, name):
    try:
        with open(pod_file(H, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def save_pod_info(H, name, info):
    os.makedirs(H + "/state/static-pods", exist_ok=True)
    p = pod_file(H, name)
    with open(p + ".tmp", "w") as f:
        json.dump(info, f, indent=1, sort_keys=True)
    os.rename(p + ".tmp", p)


def apiserver_pid(H):
    try:
        with open(H + "/state/apiserver/pid") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def running_pid(H, name):
    """The pid of NAME's process when it runs, else None."""
    if name == "kube-apiserver":
        pid = apiserver_pid(H)
        return pid if pid and pid_alive(pid, "kube_apiserver.py") else None
    pid = pod_info(H, name).get("pid")
    return pid if pid and pid_alive(pid, "etcd") else None


def etcd_running(H):
    return running_pid(H, "etcd") is not None


def read_manifest(H, name):
    try:
        with open(tbfake.hp(manifest_path(name), H)) as f:
            return f.read()
    except OSError:
        return None


def parse_manifest(text):
    """The pod, or None when it is not one with a command."""
    import yaml
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        doc["spec"]["containers"][0]["command"]
    except (yaml.YAMLError, TypeError, KeyError, IndexError):
        return None
    return doc


def load_manifest(H, name):
    """(its text, the parsed pod) or (None, None)."""
    text = read_manifest(H, name)
    return (None, None) if text is None else (text, parse_manifest(text))


def host_paths(doc):
    """[(mountPath, hostPath)] of the pod's first container, longest first."""
    vols = {v.get("name"): (v.get("hostPath") or {}).get("path") for v in doc["spec"].get("volumes") or []}
    res = []
    for m in doc["spec"]["containers"][0].get("volumeMounts") or []:
        hp = vols.get(m.get("name"))
        if hp and m.get("mountPath"):
            res.append((m["mountPath"].rstrip("/") or "/", hp.rstrip("/") or "/"))
    return sorted(res, key=lambda x: -len(x[0]))


def as_host_path(value, mounts):
    for mp, hp in mounts:
        if value == mp or value.startswith(mp + "/"):
            return hp + value[len(mp):]
    return value


ETCD = "/usr/bin/etcd"
# The name etcd runs under (its /proc/PID/comm): every testbed host sees every process
# of the machine, and a fact script that finds a process named etcd takes its host for
# a member of a cluster (RunningKubernetes), on the workers too. A symlink to the
# machine's etcd in the run's lib/ gives it this name instead.
ETCD_NAME = "tb-etcd"


def etcd_program(H):
    path = tbfake.host_info(H)["run"] + "/lib/" + ETCD_NAME
    if not (os.path.islink(path) and os.readlink(path) == ETCD):
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(ETCD, path)
    return path


def etcd_argv(doc, program=ETCD):
    """The container's command with its paths as the host's (the kubelet mounts the volumes there)."""
    mounts = host_paths(doc)
    argv = [program]
    for a in doc["spec"]["containers"][0]["command"][1:]:
        if a.startswith("--") and "=" in a:
            k, v = a.split("=", 1)
            a = k + "=" + ",".join(as_host_path(x, mounts) for x in v.split(","))
        argv.append(a)
    return argv


def etcd_client_url(H):
    """The client URL the master's etcd manifest advertises, or None."""
    _, doc = load_manifest(H, "etcd")
    if not doc:
        return None
    return (tbetcd.manifest_flags(doc["spec"]["containers"][0]["command"]).get("advertise-client-urls") or "").split(",")[0] or None


def etcd_client(H, flags=None, user="healthcheck-client", timeout=10.0):
    """A client of the master's etcd, with the apiserver-etcd-client or healthcheck-client certificate."""
    if flags is None:
        _, doc = load_manifest(H, "etcd")
        flags = tbetcd.manifest_flags(doc["spec"]["containers"][0]["command"]) if doc else {}
        url = (flags.get("advertise-client-urls") or "").split(",")[0]
    else:
        url = flags.get("etcd-servers", "").split(",")[0]
    pki = tbfake.hp("/etc/kubernetes/pki", H)
    if user == "apiserver-etcd-client":
        cert, key = pki + "/apiserver-etcd-client.crt", pki + "/apiserver-etcd-client.key"
    else:
        cert, key = pki + "/etcd/healthcheck-client.crt", pki + "/etcd/healthcheck-client.key"
    return tbetcd.Client(url, pki + "/etcd/ca.crt", cert, key, timeout=timeout)


def reap(pid=-1):
    """Collects this process's children that ended (the loop's own etcd and API servers)."""
    while True:
        try:
            got, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if got == 0 or pid != -1:
            return


def stop_pid(pid, needle, grace=5.0):
    if not pid or not pid_alive(pid, needle):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.time() + grace
    while pid_alive(pid) and time.time() < deadline:
        time.sleep(0.02)
    if pid_alive(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        while pid_alive(pid):
            time.sleep(0.01)
    reap(pid)


def stop(H, name):
    if name == "kube-apiserver":
        stop_pid(apiserver_pid(H), "kube_apiserver.py")
    else:
        stop_pid(pod_info(H, name).get("pid"), "etcd")
        info = pod_info(H, name)
        if info:
            info["pid"] = None
            save_pod_info(H, name, info)


def spawn(H, argv, log, enter):
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
    with open(log, "a") as lf:
        return subprocess.Popen((enter or []) + argv, stdin=subprocess.DEVNULL, stdout=lf, stderr=lf, close_fds=True,
                                start_new_session=True, cwd="/", env=env)


def several_masters(H):
    try:
        with open(tbfake.host_info(H)["run"] + "/testbed.json") as f:
            return sum(1 for h in json.load(f)["hosts"] if h["role"] == "master") > 1
    except (OSError, ValueError, KeyError):
        return False


def wait_listening(p, H, flags):
    import socket
    import urllib.parse
    u = urllib.parse.urlsplit((flags.get("listen-client-urls") or flags.get("advertise-client-urls") or "").split(",")[0])
    deadline = time.time() + 10
    while time.time() < deadline:
        if p.poll() is not None:
            raise RuntimeError("etcd exited with %s (see %s/etcd.log)" % (p.returncode, H))
        try:
            socket.create_connection((u.hostname, u.port or 2379), timeout=0.5).close()
            return p.pid
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("etcd does not listen on %s after 10s (see %s/etcd.log)" % (u.netloc, H))


def start_etcd(H, text, doc, enter=None):
    """Runs the manifest's etcd and waits until it answers (10 s at most)."""
    argv = etcd_argv(doc, etcd_program(H))
    flags = tbetcd.manifest_flags(argv)
    data = flags.get("data-dir", "/var/lib/etcd")
    os.makedirs(tbfake.hp(data, H), mode=0o700, exist_ok=True)
    p = spawn(H, argv, H + "/etcd.log", enter)
    save_pod_info(H, "etcd", {"pid": p.pid, "sha256": hashlib.sha256(text.encode()).hexdigest(), "data_dir": data})
    if several_masters(H):
        # A member of several serves its clients only once a quorum of the members runs
        # (it has published itself to the cluster): the kubelet waits for its listener,
        # not for the others, which it starts next.
        return wait_listening(p, H, flags)
    c = etcd_client(H)
    deadline = time.time() + 10
    try:
        while time.time() < deadline:
            if p.poll() is not None:
                raise RuntimeError("etcd exited with %s (see %s/etcd.log)" % (p.returncode, H))
            try:
                c.get("health")
                return p.pid
            except tbetcd.EtcdError:
                time.sleep(0.05)
    finally:
        c.close()
    raise RuntimeError("etcd does not answer after 10s (see %s/etcd.log)" % H)


def apiserver_argv(H, doc, lib):
    """The fake API server with the manifest's --etcd-* flags (their files as this machine sees them)."""
    flags = tbetcd.manifest_flags(doc["spec"]["containers"][0]["command"]) if doc else {}
    argv = ["/usr/bin/python3", lib + "/kube_apiserver.py", "--dir", H + "/state/apiserver"]
    for k in ("etcd-servers", "etcd-cafile", "etcd-certfile", "etcd-keyfile"):
        if flags.get(k):
            v = flags[k] if k == "etcd-servers" else tbfake.hp(flags[k], H)
            argv.append("--%s=%s" % (k, v))
    return argv


def start_apiserver(H, text, doc, lib, enter=None, wait=10.0):
    """Runs the API server and waits until it answers /readyz."""
    import socket
    import ssl
    d = H + "/state/apiserver"
    with open(d + "/config.json") as f:
        cfg = json.load(f)
    p = spawn(H, apiserver_argv(H, doc, lib), H + "/apiserver.log", enter)
    with open(d + "/pid.tmp", "w") as f:
        f.write("%d\n" % p.pid)
    os.rename(d + "/pid.tmp", d + "/pid")
    save_pod_info(H, "kube-apiserver", {"pid": p.pid, "sha256": hashlib.sha256((text or "").encode()).hexdigest()})
    ctx = ssl.create_default_context(cafile=cfg["ca"])
    ctx.check_hostname = False
    deadline = time.time() + wait
    while time.time() < deadline:
        if p.poll() is not None:
            raise RuntimeError("the API server exited (see %s/apiserver.log)" % H)
        try:
            with socket.create_connection((cfg["address"], cfg["port"]), timeout=1) as s:
                with ctx.wrap_socket(s) as t:
                    t.sendall(b"GET /readyz HTTP/1.0\r\n\r\n")
                    if b" 200 " in t.recv(64):
                        return p.pid
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError("[api-check] The API server is not healthy after %ds" % wait)


def kubelet_active(H, sd=None):
    if sd is None:
        sd = tbfake.load("systemd", host=H)
    return tbfake.unit_state("kubelet", sd.get("kubelet", {}), H) == "active"


# A static pod whose process failed to start is tried again after a back-off that
# doubles up to 10 s (the kubelet's CrashLoopBackOff, shorter), per host and pod.
BACKOFF = {}


def sync(H, lib, sd=None, enter=None, log=None, names=STATIC):
    """Makes the static pods' processes what the manifests and the kubelet say.
    Returns the errors (starting a process that failed), as text."""
    errors = []
    if not kubelet_active(H, sd):
        return errors
    for name in names:
        text = read_manifest(H, name)
        pid = running_pid(H, name)
        if text is None:
            if pid:
                stop(H, name)
                if log:
                    log("%s: %s stopped (its manifest is gone)" % (os.path.basename(H), name))
            continue
        if name == "kube-apiserver" and not os.path.exists(H + "/state/apiserver/config.json"):
            continue
        sha = hashlib.sha256(text.encode()).hexdigest()
        if pid and pod_info(H, name).get("sha256") in (sha, None):
            continue
        doc = parse_manifest(text)
        if doc is None:
            errors.append("%s: the manifest %s does not parse" % (name, manifest_path(name)))
            continue
        if pid:
            stop(H, name)
        key = (H, name, sha)
        wait_until, delay = BACKOFF.get(key, (0, 0))
        if time.time() < wait_until:
            continue
        try:
            if name == "etcd":
                start_etcd(H, text, doc, enter)
            else:
                start_apiserver(H, text, doc, lib, enter)
            BACKOFF.pop(key, None)
            if log:
                log("%s: %s started%s" % (os.path.basename(H), name, " again (its manifest changed)" if pid else ""))
        except (RuntimeError, OSError) as e:
            delay = min(max(delay * 2, 0.5), 10.0)
            BACKOFF[key] = (time.time() + delay, delay)
            errors.append("%s: %s (tried again in %.1f s)" % (name, e, delay))
    return errors


def stop_all(H):
    """kubeadm reset, testbed.sh down/snapshot/restore: the API server first, then etcd."""
    stop(H, "kube-apiserver")
    stop(H, "etcd")


# ----------------------------------------------------------------------------- the loop


def try_lock(path):
    fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError:
        os.close(fd)
        return None


def main():
    rundir = os.path.abspath(sys.argv[1])
    lib = rundir + "/lib"
    with open(rundir + "/testbed.json") as f:
        run = json.load(f)
    sshd = {}
    with open(rundir + "/pids") as f:
        for line in f:
            p = line.split()
            if len(p) == 3 and p[1] == "sshd":
                sshd[p[2]] = int(p[0])
    masters = [(rundir + "/hosts/" + h["name"], sshd.get(h["name"])) for h in run["hosts"] if h["role"] == "master"]
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))

    def log(msg):
        sys.stderr.write("%s %s\n" % (time.strftime("%H:%M:%S"), msg))
        sys.stderr.flush()

    # With several masters, every master's etcd first, then the API servers: a member
    # serves only once a quorum of them runs, and an API server needs its etcd.
    passes = [("etcd",), ("kube-apiserver",)] if len(masters) > 1 else [STATIC]
    while True:
        for (H, pid), names in [(m, n) for n in passes for m in masters]:
            if not pid or not pid_alive(pid):
                continue
            init = try_lock(H + "/state/.kubeadm-lock")
            if init is None:
                continue
            lock = try_lock(H + "/state/.lock")
            if lock is None:
                os.close(init)
                continue
            tbfake.Lock.held[H + "/state/.lock"] = (lock, 1)
            try:
                for e in sync(H, lib, enter=["nsenter", "-t", str(pid), "-m", "-u", "--"], log=log, names=names):
                    log("%s: %s" % (os.path.basename(H), e))
            except Exception as e:  # noqa: BLE001 (a bad manifest must not stop the kubelet)
                log("%s: %r" % (os.path.basename(H), e))
            finally:
                tbfake.Lock.held.pop(H + "/state/.lock", None)
                os.close(lock)
                os.close(init)
        reap()
        time.sleep(INTERVAL)


if __name__ == "__main__":
    main()
