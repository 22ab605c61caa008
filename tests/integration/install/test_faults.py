#!/usr/bin/env python3
"""Fault injection for paictl install on a small testbed (a master and one GPU worker).

1. An uninterrupted install: its end state is the reference, its journal gives
   the order in which the (host, phase) steps start. Then reset.
2. A failing step in every phase that changes something, one per run: each run
   fails at its phase (exit 1, the phase named), the next one goes on; the end
   state is the reference's. Then reset.
3. kill -9 of install at N seeded points across all phases (a step of the
   reference order, then a seeded delay of 0-400 ms), each followed by the next
   run; then a last run: the end state is the reference's, with `kubeadm init`
   run to completion exactly once on the master and `kubeadm join` exactly once
   on the worker in that series.

Environment: PAICTL, TESTBED, RUN; FAULT_SEED (default 11), FAULT_POINTS (20).
Exit 77 where the machine cannot run the testbed.
"""
import json
import os
import random
import signal
import subprocess
import sys
import time

PAICTL, TESTBED, RUN = os.environ["PAICTL"], os.environ["TESTBED"], os.environ["RUN"]
SEED = int(os.environ.get("FAULT_SEED", "11"))
POINTS = int(os.environ.get("FAULT_POINTS", "20"))
C = RUN + "/cluster"
JOURNAL = C + "/.paictl/install.journal"
ARGS = ["--ssh-config", RUN + "/ssh_config", "--ignore-check-errors", "CPU,DNS", "--wait", "60", "--yes"]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def ok(msg):
    print("ok: " + msg, flush=True)


def tb(*args, check=True):
    r = subprocess.run([TESTBED] + list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        fail("testbed %s: %s%s" % (" ".join(args), r.stdout, r.stderr))
    return r


def state():
    return json.loads(tb("state", RUN).stdout)


def install(*extra):
    return subprocess.run([PAICTL, "install", C] + ARGS + list(extra), capture_output=True, text=True)


def journal_runs():
    """The journal's records, split into runs."""
    runs = []
    try:
        with open(JOURNAL) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue  # a torn last line
                if r.get("event") == "run-start":
                    runs.append([])
                if runs:
                    runs[-1].append(r)
    except FileNotFoundError:
        pass
    return runs


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


def reset():
    r = subprocess.run([PAICTL, "reset", C, "--ssh-config", RUN + "/ssh_config", "--yes"], capture_output=True, text=True)
    if r.returncode != 0:
        fail("reset: " + r.stdout + r.stderr)


def main():
    r = subprocess.run([TESTBED, "can-run"], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout.strip() or r.stderr.strip())
        return 77
    try:
        tb("up", "2", RUN, "--base", "127.0.36", "--rollout-delay", "0.1")
        return run()
    finally:
        tb("down", RUN, check=False)


def run():
    master, worker = "tb-master", "tb-worker1"
    # 1. The reference.
    r = install()
    if r.returncode != 0:
        fail("the uninterrupted install exited %d: %s" % (r.returncode, r.stdout[-3000:] + r.stderr[-3000:]))
    ref = state()
    order = []
    for rec in journal_runs()[-1]:
        if rec.get("event") == "start" and (rec["host"], rec["phase"]) not in order:
            order.append((rec["host"], rec["phase"]))
    phases = sorted({p for _, p in order})
    if len(order) < 15:
        fail("the reference run started only %d steps: %s" % (len(order), order))
    ok("reference install: %d steps in %d phases (%s)" % (len(order), len(phases), ", ".join(phases)))
    reset()
    base = counts(state())

    # 2. A failing step per phase, one run each. The host phases fail on the
    # worker: the master goes on to the next barrier meanwhile, so a knob there
    # would find its step done.
    failing = [
        ("swap", worker, "swapoff all fail-once"),
        ("kernel", worker, "modprobe br_netfilter fail-once"),
        ("packages", worker, "apt-get install fail-once"),
        ("containerd", worker, "systemctl restart:containerd fail-once"),
        ("control-plane", master, "kubeadm init fail-once"),
        ("cni", master, "apiserver PATCH:daemonsets fail-once"),
        ("join", worker, "kubeadm join fail-once"),
        ("labels", master, "apiserver PATCH:nodes fail-once"),
        ("device-plugin", master, "apiserver PATCH:daemonsets fail-once"),
        ("hived", master, "apiserver PATCH:statefulsets fail-once"),
        ("openpai", master, "apiserver PATCH:secrets fail-once"),
    ]
    for phase, host, knob in failing:
        tb("knob", RUN, host, knob)
        r = install()
        text = r.stdout + r.stderr
        if r.returncode != 1:
            fail("with '%s' install exited %d, want 1: %s" % (knob, r.returncode, text[-3000:]))
        want = [l for l in text.splitlines() if l.startswith(host) and (" %s " % phase) in l and "FAILED" in l]
        if not want:
            fail("with '%s' no failure of %s on %s: %s" % (knob, phase, host, text[-3000:]))
        if any(l.split()[2:3] == ["FAILED:"] and (" %s " % phase) not in l for l in text.splitlines()):
            fail("with '%s' another phase failed: %s" % (knob, text[-3000:]))
        knobs = open("%s/hosts/%s/knobs" % (RUN, host)).read()
        if knob in knobs:
            fail("the knob '%s' did not fire" % knob)
    r = install()
    if r.returncode != 0:
        fail("the install after the failures exited %d: %s" % (r.returncode, (r.stdout + r.stderr)[-3000:]))
    s = state()
    d = diff(without_counters(ref), without_counters(s))
    if d:
        fail("after a failing step per phase the end state differs from the reference:\n" + "\n".join(d[:30]))
    c = counts(s)
    if c[master]["init"] - base[master]["init"] != 1 or c[worker]["join"] - base[worker]["join"] != 1:
        fail("after the failures: kubeadm runs %s, before %s" % (c, base))
    ok("a failing step in %d phases (%s): each run failed there, the end state is the reference's, init and join once"
       % (len(failing), ", ".join(p for p, _, _ in failing)))
    reset()
    base = counts(state())

    # 3. kill -9 at seeded points across the phases.
    rnd = random.Random(SEED)
    targets = sorted(rnd.randrange(len(order)) for _ in range(POINTS))
    killed_in = []
    for t in targets:
        delay = rnd.uniform(0, 0.4)
        before = len(journal_runs())
        p = subprocess.Popen([PAICTL, "install", C] + ARGS, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        hit = None
        deadline = time.time() + 120
        while p.poll() is None and time.time() < deadline and hit is None:
            runs = journal_runs()
            if len(runs) > before:
                for rec in runs[-1]:
                    if rec.get("event") == "start" and (rec["host"], rec["phase"]) in order and \
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
    r = install()
    if r.returncode != 0:
        fail("the install after the kills exited %d: %s" % (r.returncode, (r.stdout + r.stderr)[-3000:]))
    s = state()
    d = diff(without_counters(ref), without_counters(s))
    if d:
        fail("after %d kills the end state differs from the reference:\n%s" % (len(killed_in), "\n".join(d[:30])))
    c = counts(s)
    if c[master]["init"] - base[master]["init"] != 1:
        fail("kubeadm init completed %d times in the kill series" % (c[master]["init"] - base[master]["init"]))
    if c[worker]["join"] - base[worker]["join"] != 1:
        fail("kubeadm join completed %d times in the kill series" % (c[worker]["join"] - base[worker]["join"]))
    hit_phases = sorted({h[1] for h in killed_in if h})
    if len(killed_in) < POINTS * 3 // 4:
        fail("only %d of %d runs were killed (the rest finished first): %s" % (len(killed_in), POINTS, killed_in))
    ok("install killed (kill -9) %d times, seed %d, in phases %s; the last run reached the reference's end state, "
       "init and join completed once" % (len(killed_in), SEED, ", ".join(hit_phases)))
    r = install("--detailed-exitcode")
    if r.returncode != 0:
        fail("a run after that exited %d, want 0 (nothing to do)" % r.returncode)
    ok("then nothing to do")
    return 0


if __name__ == "__main__":
    sys.exit(main())
