#!/usr/bin/env python3
"""Fault injection for paictl install on small testbeds (a master and one GPU worker).

Three testbeds run side by side, each on its own addresses (a, b, c):

1. a: an uninterrupted install. Its end state is the reference for all three,
   its journal gives the order in which the (host, phase) steps start.
2. b and c meanwhile, from fresh hosts: a failing step in every phase that
   changes something, one per run, the phases shared out between the two (b:
   swap to join, c: labels to openpai): each run fails at its phase (exit 1, the
   phase named), the next one goes on; then a run that completes. The end state is
   the reference's, with `kubeadm init` and `kubeadm join` completed once.
3. On each, the hosts' fresh state is put back (`testbed.sh restore` of the
   snapshot taken after `up`: the same files and fake state as new hosts, without
   a reset), then kill -9 of install at N seeded points across all phases (a step
   of the reference order, then a seeded delay of 0-400 ms), half of them to a
   and a quarter each to b and c, each kill followed by the next run on that testbed; then a last run:
   the end state is the reference's, with `kubeadm init` run to completion exactly
   once on the master and `kubeadm join` exactly once on the worker in that
   series; then nothing to do.

b's and c's end states are compared with the reference after writing a's
addresses in place of their own; the HiveD scheduler's config-hash annotation,
which hashes a config that holds the master's address, must be present (the run
that then has nothing to do shows it current).

Environment: PAICTL, TESTBED, RUN; FAULT_SEED (default 11), FAULT_POINTS (20).
Exit 77 where the machine cannot run the testbed.
"""
import json
import os
import random
import re
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
        # What the host fetched (apt's sources, image pulls) is a log, not its
        # state: a run that failed and was re-run fetched more.
        h.pop("network", None)
        # Which certificates a host has is its state; their not-after dates are
        # when kubeadm made them, a second apart from run to run.
        if isinstance(h.get("certs"), dict):
            h["certs"] = sorted(h["certs"])
    return s


HASH_ANNOTATION = "paictl.io/config-hash"


def as_base(s, base, ref_base):
    """A state with the testbed's addresses (base.N) written as the reference's
    (ref_base.N), and the config-hash annotations set aside (they hash configs
    that hold the master's address): returns (state, {object: hash})."""
    if base != ref_base:
        s = json.loads(re.sub(r"(?<![0-9.])%s\." % re.escape(base), ref_base + ".", json.dumps(s)))
    hashes = {}
    for k, o in ((s.get("cluster") or {}).get("objects") or {}).items():
        ann = o.get("annotations") if isinstance(o, dict) else None
        if isinstance(ann, dict) and HASH_ANNOTATION in ann:
            hashes[k] = ann.pop(HASH_ANNOTATION)
    return s, hashes


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
        self.args = ["--ssh-config", self.run + "/ssh_config", "--ignore-check-errors", "CPU,DNS,DiskFree", "--wait", "60", "--yes"]
        self.fresh_state = None
        self.t0 = time.time()

    def ok(self, msg):
        with PRINT:
            print("ok (%s, %.0f s): %s" % (self.name, time.time() - self.t0, msg), flush=True)

    def up(self, snapshot=True):
        tb("up", "2", self.run, "--base", self.base, "--rollout-delay", "0.1")
        if snapshot:
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


class Reference:
    """Bed A's uninterrupted install, which B and C wait for."""

    def __init__(self):
        self.ready = threading.Event()
        self.state = self.order = self.base = None


REF = Reference()


# A failing step per phase, one run each. The host phases fail on the worker: the
# master goes on to the next barrier meanwhile, so a knob there would find its
# step done.
FAILING = [
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


def check_end_state(bed, s, what):
    """The end state is the reference's (with its addresses in place of the testbed's own)."""
    REF.ready.wait()
    if REF.state is None:
        fail("no reference install to compare with (its testbed failed)")
    ref, rh = as_base(without_counters(REF.state), REF.base, REF.base)
    x, xh = as_base(without_counters(s), bed.base, REF.base)
    d = diff(ref, x)
    if bed.base == REF.base:
        d += ["%s: config-hash %s != %s" % (k, rh.get(k), xh.get(k)) for k in sorted(set(rh) | set(xh)) if rh.get(k) != xh.get(k)]
    elif sorted(rh) != sorted(xh) or not all(xh.values()):
        d.append("config-hash annotations on %s, the reference's on %s" % (sorted(k for k in xh if xh[k]), sorted(rh)))
    if d:
        fail("%s the end state differs from the reference:\n%s" % (what, "\n".join(d[:30])))


def failing_steps(bed, steps):
    base = counts(bed.state())
    for phase, host, knob in steps:
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
    check_end_state(bed, s, "after a failing step in %s" % ", ".join(p for p, _, _ in steps))
    c = counts(s)
    if c[MASTER]["init"] - base[MASTER]["init"] != 1 or c[WORKER]["join"] - base[WORKER]["join"] != 1:
        fail("after the failures: kubeadm runs %s, before %s" % (c, base))
    with PRINT:
        FAILED.extend(p for p, _, _ in steps)
    bed.ok("a failing step in %d phases (%s): each run failed there, the end state is the reference's, init and join once"
           % (len(steps), ", ".join(p for p, _, _ in steps)))


def kill_points():
    """The seeded kill points (an index into the reference order, a delay), dealt
    out to the three testbeds: every other one to a, whose reference install is
    done long before b and c are through their failing steps, the rest in turn to
    b and c (so that the three finish at about the same time)."""
    rnd = random.Random(SEED)
    n = len(REF.order)
    points = sorted((rnd.randrange(n), rnd.uniform(0, 0.4)) for _ in range(POINTS))
    rest = points[1::2]
    return [points[0::2], rest[0::2], rest[1::2]]


KILLED = []  # (bed, host, phase) of every run killed, for the summary
FAILED = []  # the phases a step failed in


def kills(bed, share):
    bed.fresh()
    base = counts(bed.state())
    REF.ready.wait()
    if REF.state is None:
        fail("no reference install (its testbed failed)")
    order = REF.order
    points = kill_points()[share]
    killed_in = []
    for t, delay in points:
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
    check_end_state(bed, s, "after %d kills" % len(killed_in))
    c = counts(s)
    if c[MASTER]["init"] - base[MASTER]["init"] != 1:
        fail("kubeadm init completed %d times in the kill series" % (c[MASTER]["init"] - base[MASTER]["init"]))
    if c[WORKER]["join"] - base[WORKER]["join"] != 1:
        fail("kubeadm join completed %d times in the kill series" % (c[WORKER]["join"] - base[WORKER]["join"]))
    hit_phases = sorted({h[1] for h in killed_in if h})
    if len(killed_in) < len(points) * 3 // 4:
        fail("only %d of %d runs were killed (the rest finished first): %s" % (len(killed_in), len(points), killed_in))
    with PRINT:
        KILLED.extend((bed.name,) + (h or ("-", "-")) for h in killed_in)
    bed.ok("install killed (kill -9) %d times, seed %d, in phases %s; the last run reached the reference's end state, "
           "init and join completed once" % (len(killed_in), SEED, ", ".join(hit_phases)))
    r = bed.install("--detailed-exitcode")
    if r.returncode != 0:
        fail("a run after that exited %d, want 0 (nothing to do)" % r.returncode)
    bed.ok("then nothing to do")


def reference_then_kills(bed):
    try:
        bed.up()
        ref, order = bed.reference()
        REF.state, REF.order, REF.base = ref, order, bed.base
    finally:
        REF.ready.set()
    kills(bed, 0)


def failures_then_kills(steps, share):
    def run(bed):
        bed.up()
        failing_steps(bed, steps)
        kills(bed, share)
    return run


def main():
    r = subprocess.run([TESTBED, "can-run"], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout.strip() or r.stderr.strip())
        return 77
    # b's failing steps (the first phases) cost less than c's (the last ones, each
    # run first going through all the phases before): b takes the join too.
    beds = [(Bed("a", "127.0.36"), reference_then_kills), (Bed("b", "127.0.37"), failures_then_kills(FAILING[:7], 1)),
            (Bed("c", "127.0.38"), failures_then_kills(FAILING[7:], 2))]
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
    if not errors:
        phases = sorted({k[2] for k in KILLED if k[2] != "-"})
        print("ok: a failing step in %d phases; %d kill points of %d (seed %d) over three testbeds, in %d phases: %s" % (
            len(FAILED), len(KILLED), POINTS, SEED, len(phases), ", ".join(phases)))
    for e in errors:
        print("FAIL: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
