#!/usr/bin/env python3
"""Where the test hosts' CPU goes in paictl install, per host (docs/benchmarks.md, "install").

On a fresh testbed of a master and one GPU worker it runs, in turn, `install
--dry-run`, the full install (`--yes`) and its no-op re-run, and prints for each run
and host:

  - SSH connections (sshd's "Accepted ..." lines) and sessions (its "Starting
    session: command ..." lines: one per exec channel, each a remote command line);
  - the CPU of the host's sshd with everything its sessions ran and reaped (the
    listener's own and children's user + system time, /proc/PID/stat);
  - every call of the testbed's fakes by tool: how many, and their CPU (the fake
    server's workers, from wait4(): TESTBED_CPU_LOG, tbserver.py);
  - on the master the fake API server's CPU;
  - paictl's own CPU and wall time.

With --strace it then restores the fresh hosts and runs the same three again under
`strace -f -e trace=execve` attached to each host's sshd, and prints the number of
processes each host started, by program (strace slows every process: the CPU figures
come from the first pass only).

  scripts/profile-install-host.py [--base 127.0.46] [--hosts N] [--strace] [--keep DIR]
  PAICTL=path (default build/paictl)

Needs root (the testbed), like scripts/bench-install.sh.
"""
import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTBED = os.path.join(ROOT, "scripts", "testbed.sh")
PAICTL = os.environ.get("PAICTL", os.path.join(ROOT, "build", "paictl"))
TCK = os.sysconf("SC_CLK_TCK")


def cpu(pid, children=True):
    try:
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    except (OSError, ValueError):
        return 0.0
    return sum(int(x) for x in f[11:15 if children else 13]) / TCK


def sshd_pids(run):
    out = {}
    for line in open(run + "/pids"):
        p = line.split()
        if len(p) == 3 and p[1] == "sshd":
            out[p[2]] = int(p[0])
    return out


def count_lines(path, needle):
    try:
        return sum(1 for l in open(path, errors="replace") if needle in l)
    except OSError:
        return 0


def apiserver_pid(run):
    try:
        return int(open(run + "/hosts/tb-master/state/apiserver/pid").read())
    except (OSError, ValueError):
        return 0


class Snapshot:
    def __init__(self, run, cpulog):
        self.sshd = {h: cpu(p) for h, p in sshd_pids(run).items()}
        self.accepted = {h: count_lines("%s/hosts/%s/sshd.log" % (run, h), "Accepted publickey for ") for h in self.sshd}
        self.sessions = {h: count_lines("%s/hosts/%s/sshd.log" % (run, h), "Starting session: command") for h in self.sshd}
        self.api_pid = apiserver_pid(run)
        self.api = cpu(self.api_pid) if self.api_pid else 0.0
        try:
            self.cpulog = os.path.getsize(cpulog)
        except OSError:
            self.cpulog = 0
        try:
            self.server = cpu(int(open(run + "/tbserver.pid").read()))
        except (OSError, ValueError):
            self.server = 0.0


def fake_calls(cpulog, offset):
    """host -> tool -> [calls, cpu seconds]"""
    out = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0.0]))
    with open(cpulog, errors="replace") as f:
        f.seek(offset)
        for line in f:
            p = line.split(" ", 5)
            if len(p) < 5:
                continue
            host, tool, u, s = p[0], p[1], float(p[2]), float(p[3])
            sub = p[5].split()[0] if len(p) > 5 and p[5].strip() and tool in ("kubeadm", "systemctl", "apt-get") else ""
            key = tool + (" " + sub if sub else "")
            out[host][key][0] += 1
            out[host][key][1] += u + s
    return out


def run_paictl(cluster, ssh_config, extra):
    t0 = time.time()
    rfd, wfd = os.pipe()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%U %S", "-o", "/dev/fd/%d" % wfd, PAICTL, "install", cluster,
                          "--ssh-config", ssh_config, "--ignore-check-errors", "CPU,DNS,DiskFree", "--wait", "120"] + extra,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=(wfd,), text=True)
    os.close(wfd)
    out, _ = p.communicate()
    times = os.read(rfd, 4096).decode().split()
    os.close(rfd)
    wall = time.time() - t0
    return p.returncode, wall, sum(float(x) for x in times[-2:]) if len(times) >= 2 else 0.0, out


def settle(run):
    """Until the hosts' sshds have reaped their connections (their CPU counts then)."""
    deadline = time.time() + 10
    pids = list(sshd_pids(run).values())
    while time.time() < deadline:
        busy = False
        for p in pids:
            try:
                for t in os.listdir("/proc/%d/task" % p):
                    busy |= bool(open("/proc/%d/task/%s/children" % (p, t)).read().strip())
            except OSError:
                pass
        if not busy:
            return
        time.sleep(0.05)


def measure(run, cpulog, name, extra):
    settle(run)
    a = Snapshot(run, cpulog)
    rc, wall, pcpu, out = run_paictl(run + "/cluster", run + "/ssh_config", extra)
    settle(run)
    b = Snapshot(run, cpulog)
    if rc not in (0, 2):
        sys.stderr.write(out[-4000:])
        sys.exit("profile-install-host: %s exited %d" % (name, rc))
    calls = fake_calls(cpulog, a.cpulog)
    api = (b.api - a.api) if b.api_pid == a.api_pid else b.api
    print("== %s: wall %.2f s, paictl CPU %.2f s, load %s" % (name, wall, pcpu, open("/proc/loadavg").read().split()[0]))
    total_host = 0.0
    for h in sorted(b.sshd):
        ssh_cpu = b.sshd[h] - a.sshd[h]
        fk = calls.get(h, {})
        fk_cpu = sum(v[1] for v in fk.values())
        fk_n = sum(v[0] for v in fk.values())
        extra_api = api if h == "tb-master" else 0.0
        total_host += ssh_cpu + fk_cpu + extra_api
        print("  %-11s connections %d, sessions %d; sshd and its sessions %.2f s; fakes %d calls %.2f s%s" % (
            h, b.accepted[h] - a.accepted[h], b.sessions[h] - a.sessions[h], ssh_cpu, fk_n, fk_cpu,
            "; API server %.2f s" % extra_api if h == "tb-master" else ""))
        for tool, (n, c) in sorted(fk.items(), key=lambda kv: -kv[1][1]):
            print("      %-22s %3d calls %7.3f s (%.1f ms a call)" % (tool, n, c, 1000 * c / n))
    print("  hosts' CPU in all: %.2f s (fake server's own: %.2f s)" % (total_host, b.server - a.server))
    return out


def micro(run, what, command, n=5, stdin=None):
    """The CPU of the worker's sshd (with what its session ran) for one `ssh HOST COMMAND`, the mean of n."""
    host = "tb-master" if "kubectl" in command else "tb-worker1"
    pid = sshd_pids(run)[host]
    settle(run)
    c0 = cpu(pid)
    for _ in range(n):
        subprocess.run(["ssh", "-F", run + "/ssh_config", host, command], input=stdin, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
    settle(run)
    ms = 1000 * (cpu(pid) - c0) / n
    print("  %-44s %6.1f ms of the host's CPU (%s, mean of %d)" % (what, ms, host, n))
    return ms


def strace_pass(run, name, extra, keep):
    tracers = []
    for h, pid in sshd_pids(run).items():
        f = "%s/strace-%s-%s" % (keep, name, h)
        tracers.append((h, f, subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=execve", "-e", "signal=none",
                                                "-o", f, "-p", str(pid)], stderr=subprocess.DEVNULL)))
    time.sleep(0.5)
    run_paictl(run + "/cluster", run + "/ssh_config", extra)
    print("== %s under strace: processes started per host, by program" % name)
    for h, f, p in tracers:
        p.terminate()
        p.wait()
        progs = collections.Counter()
        for line in open(f, errors="replace"):
            if 'execve("' in line and "= -1" not in line:  # the PATH lookups that failed are not processes
                try:
                    prog = line.split('execve("', 1)[1].split('"', 1)[0]
                except IndexError:
                    continue
                progs[os.path.basename(prog)] += 1
        print("  %-11s %d execs: %s" % (h, sum(progs.values()), ", ".join("%s %d" % kv for kv in progs.most_common(25))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="127.0.46")
    ap.add_argument("--strace", action="store_true")
    ap.add_argument("--hosts", type=int, default=2, help="the master and N-1 GPU workers (default 2)")
    ap.add_argument("--keep", help="keep the testbed's run directory here")
    args = ap.parse_args()
    if subprocess.run([TESTBED, "can-run"], capture_output=True).returncode != 0:
        return 77
    work = args.keep or tempfile.mkdtemp(prefix="paictl-profile-install.")
    run = work + "/bed"
    cpulog = work + "/fake-cpu.log"
    env = dict(os.environ, TESTBED_CPU_LOG=cpulog, TESTBED_SSHD_LOGLEVEL="VERBOSE", PAICTL_TEMPLATES=os.environ.get("PAICTL_TEMPLATES", ROOT + "/templates"))
    os.environ.update(env)
    try:
        subprocess.run([TESTBED, "up", str(args.hosts), run, "--base", args.base, "--rollout-delay", "0.1"], check=True,
                       stdout=subprocess.DEVNULL, env=env)
        open(cpulog, "a").close()
        subprocess.run([TESTBED, "snapshot", run, "fresh"], check=True, stdout=subprocess.DEVNULL)
        print("machine: %d cores; %s" % (os.cpu_count(), subprocess.run(["sshd", "-V"], capture_output=True, text=True).stderr.strip()))
        runs = [("dry-run", ["--dry-run"]), ("install", ["--yes"]), ("no-op", ["--yes"])]
        for name, extra in runs:
            measure(run, cpulog, name, extra)
        print("== one SSH connection running one command (sshd and what it ran)")
        micro(run, "ssh HOST true", "true", 10)
        script = subprocess.run([PAICTL, "check", "hosts", run + "/cluster", "--print-script"], capture_output=True).stdout
        micro(run, "ssh HOST sh -s < the fact script", "sh -s", 5, script)
        micro(run, "ssh MASTER kubectl get nodes (admin.conf)", "kubectl --kubeconfig=/etc/kubernetes/admin.conf "
              "--cache-dir=/etc/paictl/kube-cache get nodes -o json", 5)
        if args.strace and shutil.which("strace"):
            subprocess.run([TESTBED, "restore", run, "fresh"], check=True, stdout=subprocess.DEVNULL)
            for name, extra in runs:
                strace_pass(run, name, extra, work)
    finally:
        subprocess.run([TESTBED, "down", run], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
