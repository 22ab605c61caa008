#!/usr/bin/env python3
"""kill -9 of paictl upgrade at seeded points, each followed by a re-run.

One testbed of a master and a GPU worker on 127.0.54.x, installed at 1.30 and
saved (`testbed.sh snapshot`, with config.yaml). An uninterrupted upgrade to
1.31 is the reference: its end state and its wall time T. Then for each point:
the installed state put back (`testbed.sh restore`, config.yaml), an upgrade
killed with SIGKILL after a seeded delay in [0, T], and a re-run that must
complete: the end state is the reference's (packages and holds, files, the
cluster's objects: every Node at 1.31, none cordoned or annotated), with
`kubeadm upgrade apply` completed exactly once on the master, and config.yaml's
kube_version 1.31.x.

Environment: PAICTL, TESTBED, RUN, HIVED_SERVER; UPGRADE_FAULT_SEED (7),
UPGRADE_FAULT_POINTS (20). Exit 77 where the machine cannot run the testbed.
"""
import json
import os
import random
import shutil
import subprocess
import sys
import time

PAICTL, TESTBED, RUN = os.environ["PAICTL"], os.environ["TESTBED"], os.environ["RUN"]
SEED = int(os.environ.get("UPGRADE_FAULT_SEED", "7"))
POINTS = int(os.environ.get("UPGRADE_FAULT_POINTS") or "20")
BASE = os.environ.get("UPGRADE_FAULT_BASE", "127.0.54")
C = os.path.join(RUN, "cluster")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def tb(*args, check=True):
    r = subprocess.run([TESTBED] + list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        fail("testbed %s: %s%s" % (" ".join(args), r.stdout, r.stderr))
    return r


def paictl(*args, check=True):
    r = subprocess.run([PAICTL] + list(args), capture_output=True, text=True, errors="replace")
    if check and r.returncode != 0:
        fail("paictl %s: exit %d\n%s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
    return r


UPGRADE = ["upgrade", C, "--ssh-config", os.path.join(RUN, "ssh_config"), "--to", "1.31", "--yes", "--wait", "60"]


def state():
    s = json.loads(tb("state", RUN).stdout)
    # What a re-run may legitimately change: kubeadm upgrade node on the worker
    # runs again when its node was cut short; the objects' status is the kubelet's.
    for h in s["hosts"].values():
        h["kubeadm"].pop("upgradeNode", None)
        h.pop("tmp", None)
    for k, o in list((s.get("cluster") or {}).get("objects", {}).items()):
        if k.startswith(("Pod/", "Event/")):
            del s["cluster"]["objects"][k]
    return s


def diff(a, b):
    out = []
    for h in sorted(set(a["hosts"]) | set(b["hosts"])):
        x, y = a["hosts"].get(h, {}), b["hosts"].get(h, {})
        for k in sorted(set(x) | set(y)):
            if x.get(k) != y.get(k):
                out.append("%s %s: %s != %s" % (h, k, json.dumps(x.get(k))[:300], json.dumps(y.get(k))[:300]))
    ca, cb = (a.get("cluster") or {}).get("objects", {}), (b.get("cluster") or {}).get("objects", {})
    for k in sorted(set(ca) | set(cb)):
        if ca.get(k) != cb.get(k):
            out.append("%s: %s != %s" % (k, json.dumps(ca.get(k))[:300], json.dumps(cb.get(k))[:300]))
    return out


def restore():
    tb("restore", RUN, "installed")
    shutil.copy(os.path.join(RUN, "config.yaml.installed"), os.path.join(C, "config.yaml"))
    api_up()


def api_up():
    # The restore stopped the API server (and a kill may stop it while the
    # testbed's kubelet restarts it); the master's kubelet starts it again at the
    # next kubectl. Waited for here, so a kill lands in the upgrade, not in the
    # testbed's restart of its control plane.
    for _ in range(40):
        r = subprocess.run(["ssh", "-F", os.path.join(RUN, "ssh_config"), "tb-master",
                            "kubectl --kubeconfig=/etc/kubernetes/admin.conf --cache-dir=/etc/paictl/kube-cache get --raw /readyz"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            return
        time.sleep(0.25)
    fail("the API server after the restore: " + r.stdout + r.stderr)


def main():
    r = subprocess.run([TESTBED, "can-run"], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        return 77
    t0 = time.time()
    tb("up", "2", RUN, "--base", BASE, "--rollout-delay", "0.2", "--hived-server", os.environ["HIVED_SERVER"])
    try:
        paictl("install", C, "--ssh-config", os.path.join(RUN, "ssh_config"), "--ignore-check-errors",
               "CPU,DNS,DiskFree,RunningKubernetes", "--wait", "60", "--yes")
        tb("snapshot", RUN, "installed")
        shutil.copy(os.path.join(C, "config.yaml"), os.path.join(RUN, "config.yaml.installed"))
        print("ok: installed and saved in %.1f s" % (time.time() - t0))
        t1 = time.time()
        r = paictl(*UPGRADE)
        T = time.time() - t1
        if "\ufffd" in r.stdout + r.stderr:
            fail("the upgrade's output is not UTF-8:\n" + r.stdout + r.stderr)
        ref = state()
        if ref["hosts"]["tb-master"]["kubeadm"].get("upgradeApply") != 1:
            fail("the reference: upgradeApply %s" % ref["hosts"]["tb-master"]["kubeadm"])
        print("ok: the uninterrupted upgrade took %.1f s" % T)
        rng = random.Random(SEED)
        for i in range(POINTS):
            restore()
            delay = rng.uniform(0, T)
            p = subprocess.Popen([PAICTL] + UPGRADE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(delay)
            killed = p.poll() is None
            if killed:
                p.kill()
            p.wait()
            api_up()
            r = paictl(*UPGRADE, check=False)
            if r.returncode != 0:
                fail("point %d (kill at %.2f s): the re-run exited %d\n%s%s" % (i, delay, r.returncode, r.stdout, r.stderr))
            s = state()
            d = diff(ref, s)
            if d:
                fail("point %d (kill at %.2f s): the end state differs:\n  %s" % (i, delay, "\n  ".join(d[:20])))
            with open(os.path.join(C, "config.yaml")) as f:
                if 'kube_version: "1.31.6"' not in f.read():
                    fail("point %d: config.yaml's kube_version is not 1.31.6" % i)
            print("ok: point %d: killed at %.2f s%s, the re-run finished it" % (i, delay, "" if killed else " (it had ended)"))
        print("ok: %d kill points in %.1f s (all: %.1f s)" % (POINTS, time.time() - t1, time.time() - t0))
    finally:
        if not os.environ.get("KEEP"):
            tb("down", RUN, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
