#!/usr/bin/env python3
"""Fault injection for paictl install on small testbeds (a master and one GPU worker).

Two testbeds run side by side, each on its own addresses:

A. 1. An uninterrupted install: its end state is the reference. Then the
      hosts' fresh state is put back (`testbed.sh restore` of the snapshot taken
      after `up`: the same files and fake state as new hosts, without a reset).
   2. A failing step in every phase that changes something, one per run: each
      run fails at its phase (exit 1, the phase named), the next one goes on;
      the end state is the reference's, with `kubeadm init` and `kubeadm join`
      completed once.
B. 1. The same reference install on its own hosts; its journal gives the order
      in which the (host, phase) steps start. Then the fresh state again.
   2. kill -9 of install at N seeded points across all phases (a step of the
      reference order, then a seeded delay of 0-400 ms), each followed by the
      next run; then a last run: the end state is the reference's, with
      `kubeadm init` run to completion exactly once on the master and `kubeadm
      join` exactly once on the worker in that series; then nothing to do.

Environment: PAICTL, TESTBED, RUN; FAULT_SEED (default 11), FAULT_POINTS (20).
Exit 77 where the machine cannot run the testbed.
"""
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

PAICTL, TESTBED, RUN = os.environ["PAICTL"], os.environ["TESTBED"], os.environ["RUN"]
SEED = int(os.environ.get("FAULT_SEED", "11"))
POINTS = int(os.environ.get("FAULT_POINTS", "20"))
MASTER, WORKER = "tb-master", "tb-worker1"
PRINT = threading.Lock()


class Failure(Exception):
    pass


def fail(msg):
    raise Failure(msg)


def tb(*args, check=True):
    r = subprocess.run([TESTBED] + list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        fail("testbed %s: %s%s" % (" ".join(args), r.stdout, r.stderr))
    return r


class JournalTail:
    """The records appended to a journal since this was made (whole lines only),
    read incrementally: polling must not cost the install CPU."""

    def __init__(self, path):
        self.path = path
        try:
            self.offset = os.path.getsize(path)
        except OSError:
            self.offset = 0
        self.buf = b""

    def new_records(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        self.buf += data
        lines = self.buf.split(b"\n")
        self.buf = lines.pop()
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a torn line
        return out


def without_counters(s):
    s = json.loads(json.dumps(s))
    for h in s["hosts"].values():
        h.pop("kubeadm", None)
        h.pop("apt_updated", None)
    return s


def diff(a, b):
    out = []
    for h in sorted(set(a["hosts"]) | set(b["hosts"])):
        x, y = a["hosts"].get(h, {}), b["hosts"].get(h, {})
        for k in sorted(set(x) | set(y)):
            if x.get(k) != y.get(k):
                out.append("%s %s: %s != %s" % (h, k, json.dumps(x.get(k))[:200], json.dumps(y.get(k))[:200]))
    ca, cb = (a.get("cluster") or {}).get("objects", {}), (b.get("cluster") or {}).get("objects", {})
    for k in sorted(set(ca) | set(cb)):
        if ca.get(k) != cb.get(k):
            out.append("%s: %s != %s" % (k, json.dumps(ca.get(k))[:200], json.dumps(cb.get(k))[:200]))
    if (a.get("cluster") or {}).get("bootstrap_tokens") != (b.get("cluster") or {}).get("bootstrap_tokens"):
        out.append("bootstrap tokens differ")
    return out


def counts(s):
    return {h: dict(v["kubeadm"]) for h, v in s["hosts"].items()}


class Bed:
    """One testbed of a master and a GPU worker, with its fresh state saved."""

    def __init__(self, name, base):
        self.name, self.base = name, base
        self.run = RUN + "/" + name
        self.cluster = self.run + "/cluster"
        self.journal = self.cluster + "/.paictl/install.journal"
        self.args = ["--ssh-config", self.run + "/ssh_config", "--ignore-check-errors", "CPU,DNS", "--wait", "60", "--yes"]
        self.fresh_state = None
        self.t0 = time.time()

    def ok(self, msg):
        with PRINT:
            print("ok (%s, %.0f s): %s" % (self.name, time.time() - self.t0, msg), flush=True)

    def up(self):
        tb("up", "2", self.run, "--base", self.base, "--rollout-delay", "0.1")
        tb("snapshot", self.run, "fresh")
        self.fresh_state = self.state()

    def state(self):
        return json.loads(tb("state", self.run).stdout)

    def install(self, *extra):
        return subprocess.run([PAICTL, "install", self.cluster] + self.args + list(extra), capture_output=True, text=True)

    def fresh(self):
        """The hosts as `up` left them (their files and the fakes' state; no API server)."""
        tb("restore", self.run, "fresh")
        d = diff(without_counters(self.fresh_state), without_counters(self.state()))
        if d:
            fail("%s: restoring the fresh state left differences:\n%s" % (self.name, "\n".join(d[:30])))

    def reference(self):
        tail = JournalTail(self.journal)
        r = self.install()
        if r.returncode != 0:
            fail("%s: the uninterrupted install exited %d: %s" % (self.name, r.returncode, r.stdout[-3000:] + r.stderr[-3000:]))
        ref = self.state()
        order = []
        for rec in tail.new_records():
            if rec.get("event") == "start" and (rec["host"], rec["phase"]) not in order:
                order.append((rec["host"], rec["phase"]))
        phases = sorted({p for _, p in order})
        if len(order) < 15:
            fail("%s: the reference run started only %d steps: %s" % (self.name, len(order), order))
        self.ok("reference install: %d steps in %d phases (%s)" % (len(order), len(phases), ", ".join(phases)))
        return ref, order


def failing_steps(bed):
    bed.up()
    ref, _ = bed.reference()
    bed.fresh()
    base = counts(bed.state())
    # A failing step per phase, one run each. The host phases fail on the
    # worker: the master goes on to the next barrier meanwhile, so a knob there
    # would find its step done.
    failing = [
        ("swap", WORKER, "swapoff all fail-once"),
        ("kernel", WORKER, "modprobe br_netfilter fail-once"),
        ("packages", WORKER, "apt-get install fail-once"),
        ("containerd", WORKER, "systemctl restart:containerd fail-once"),
        ("control-plane", MASTER, "kubeadm init fail-once"),
        ("cni", MASTER, "apiserver PATCH:daemonsets fail-once"),
        ("join", WORKER, "kubeadm join fail-once"),
        ("labels", MASTER, "apiserver PATCH:nodes fail-once"),
        ("device-plugin", MASTER, "apiserver PATCH:daemonsets fail-once"),
        ("hived", MASTER, "apiserver PATCH:statefulsets fail-once"),
        ("openpai", MASTER, "apiserver PATCH:secrets fail-once"),
    ]
    for phase, host, knob in failing:
        tb("knob", bed.run, host, knob)
        r = bed.install()
        text = r.stdout + r.stderr
        if r.returncode != 1:
            fail("with '%s' install exited %d, want 1: %s" % (knob, r.returncode, text[-3000:]))
        want = [l for l in text.splitlines() if l.startswith(host) and (" %s " % phase) in l and "FAILED" in l]
        if not want:
            fail("with '%s' no failure of %s on %s: %s" % (knob, phase, host, text[-3000:]))
        if any(l.split()[2:3] == ["FAILED:"] and (" %s " % phase) not in l for l in text.splitlines()):
            fail("with '%s' another phase failed: %s" % (knob, text[-3000:]))
        knobs = open("%s/hosts/%s/knobs" % (bed.run, host)).read()
        if knob in knobs:
            fail("the knob '%s' did not fire" % knob)
    r = bed.install()
    if r.returncode != 0:
        fail("the install after the failures exited %d: %s" % (r.returncode, (r.stdout + r.stderr)[-3000:]))
    s = bed.state()
    d = diff(without_counters(ref), without_counters(s))
    if d:
        fail("after a failing step per phase the end state differs from the reference:\n" + "\n".join(d[:30]))
    c = counts(s)
    if c[MASTER]["init"] - base[MASTER]["init"] != 1 or c[WORKER]["join"] - base[WORKER]["join"] != 1:
        fail("after the failures: kubeadm runs %s, before %s" % (c, base))
    bed.ok("a failing step in %d phases (%s): each run failed there, the end state is the reference's, init and join once"
           % (len(failing), ", ".join(p for p, _, _ in failing)))


def kills(bed):
    bed.up()
    ref, order = bed.reference()
    bed.fresh()
    base = counts(bed.state())
    rnd = random.Random(SEED)
    targets = sorted(rnd.randrange(len(order)) for _ in range(POINTS))
    killed_in = []
    for t in targets:
        delay = rnd.uniform(0, 0.4)
        tail = JournalTail(bed.journal)
        p = subprocess.Popen([PAICTL, "install", bed.cluster] + bed.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        hit = None
        started = False
        deadline = time.time() + 120
        while p.poll() is None and time.time() < deadline and hit is None:
            for rec in tail.new_records():
                started |= rec.get("event") == "run-start"
                if started and rec.get("event") == "start" and (rec["host"], rec["phase"]) in order and \
                        order.index((rec["host"], rec["phase"])) >= t:
                    hit = (rec["host"], rec["phase"])
                    break
            time.sleep(0.01)
        if hit:
            time.sleep(delay)
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            killed_in.append(hit)
        p.wait()
    r = bed.install()
    if r.returncode != 0:
        fail("the install after the kills exited %d: %s" % (r.returncode, (r.stdout + r.stderr)[-3000:]))
    s = bed.state()
    d = diff(without_counters(ref), without_counters(s))
    if d:
        fail("after %d kills the end state differs from the reference:\n%s" % (len(killed_in), "\n".join(d[:30])))
    c = counts(s)
    if c[MASTER]["init"] - base[MASTER]["init"] != 1:
        fail("kubeadm init completed %d times in the kill series" % (c[MASTER]["init"] - base[MASTER]["init"]))
    if c[WORKER]["join"] - base[WORKER]["join"] != 1:
        fail("kubeadm join completed %d times in the kill series" % (c[WORKER]["join"] - base[WORKER]["join"]))
    hit_phases = sorted({h[1] for h in killed_in if h})
    if len(killed_in) < POINTS * 3 // 4:
        fail("only %d of %d runs were killed (the rest finished first): %s" % (len(killed_in), POINTS, killed_in))
    bed.ok("install killed (kill -9) %d times, seed %d, in phases %s; the last run reached the reference's end state, "
           "init and join completed once" % (len(killed_in), SEED, ", ".join(hit_phases)))
    r = bed.install("--detailed-exitcode")
    if r.returncode != 0:
        fail("a run after that exited %d, want 0 (nothing to do)" % r.returncode)
    bed.ok("then nothing to do")


def main():
    r = subprocess.run([TESTBED, "can-run"], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout.strip() or r.stderr.strip())
        return 77
    beds = [(Bed("failures", "127.0.36"), failing_steps), (Bed("kills", "127.0.37"), kills)]
    errors = []

    def run(bed, fn):
        try:
            fn(bed)
        except Failure as e:
            errors.append("%s: %s" % (bed.name, e))
        except Exception as e:  # noqa: BLE001 (reported, not swallowed)
            errors.append("%s: %r" % (bed.name, e))

    threads = [threading.Thread(target=run, args=b) for b in beds]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for bed, _ in beds:
            tb("down", bed.run, check=False)
    for e in errors:
        print("FAIL: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
