#!/usr/bin/env python3
"""`paictl job submit --cluster auto` with start-time estimates over 5 clusters.

  scripts/bench-auto.py [BUILD-DIR] [--repeat N] [--clusters N] [--scale S] [--groups N]

Each cluster is a Philly-shaped HiveD cluster (`simulate generate --scale 2`:
1,104 nodes, 15 VCs) whose HiveD test server (tests/integration/hived) holds
--groups running groups: one 8-GPU group on each of vc01's P40 nodes, the rest
of 1, 2, 4 or 8 GPUs (Philly's mix) in any VC (what does not fit in its VC runs
opportunistically), beside a REST test server
(tests/integration/rest) that lists the same jobs as RUNNING, with finished
ones that give each user a median run time of 24-48 h (every running group is
expected to end in the future). The job asked about is a gang of 4 pods x 8 P40
GPUs (a node each) in vc01 that fits on none of them now, so every cluster's
verdict needs the start estimate (the running groups released in the order of
their expected ends until the gang fits). Prints what `-v` reports: the time
from the last cluster's answers to the decision, the slowest cluster's own
time after its answers and the CPU of all verdicts; best of --repeat runs.
Stops its servers by pid.
"""

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

from bench_util import stop_all

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REST = os.path.join(ROOT, "tests", "integration", "rest", "pai_rest_server.py")
LAB = os.path.join(ROOT, "tests", "integration", "rest", "scenarios", "lab.json")


def wait_file(path, what, log):
    deadline = time.time() + 300
    while not (os.path.exists(path) and open(path).read().strip()):
        if time.time() > deadline:
            sys.stderr.write(open(log).read() if os.path.exists(log) else "")
            raise SystemExit("%s did not start" % what)
        time.sleep(0.05)
    return open(path).read().strip()


def main(argv):
    build, repeat, nclusters, scale, ngroups = os.path.join(ROOT, "build"), 5, 5, 2, 2000
    args = list(argv[1:])
    while args:
        a = args.pop(0)
        if a == "--repeat":
            repeat = int(args.pop(0))
        elif a == "--clusters":
            nclusters = int(args.pop(0))
        elif a == "--scale":
            scale = int(args.pop(0))
        elif a == "--groups":
            ngroups = int(args.pop(0))
        else:
            build = a
    paictl = os.path.join(build, "paictl")
    hived = os.path.join(build, "tests", "integration", "hived", "hived_test_server")
    for f in (paictl, hived):
        if not os.access(f, os.X_OK):
            raise SystemExit("build paictl and hived_test_server in %s first" % build)
    tmp = tempfile.mkdtemp(prefix="paictl-bench-auto-")
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(tmp, "config"), HOME=os.path.join(tmp, "home"))
    env.pop("PAICTL_CONFIG", None)
    procs = []
    try:
        subprocess.run([paictl, "simulate", "generate", "--scale", str(scale), "--jobs", "1", "--cluster-out",
                        os.path.join(tmp, "cfg"), "--out", os.path.join(tmp, "trace.json")], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        cfg = yaml.safe_load(open(os.path.join(tmp, "cfg", "hivedscheduler.yaml")))
        vcs = sorted(cfg["virtualClusters"])
        skus = {name: {"cpu": s["cpu"], "memory": int(str(s["memory"]).rstrip("Gi")) * 1024, "gpu": s["gpu"]}
                for name, s in cfg["physicalCluster"]["skuTypes"].items()}
        alice = json.load(open(LAB))["users"]["alice"]
        alice["virtualCluster"] = vcs
        token = alice["tokens"][0]
        p40_nodes = sum(c["cellNumber"] for c in cfg["virtualClusters"]["vc01"]["virtualCells"]
                        if c["cellType"].endswith("P40-NODE"))
        for k in range(nclusters):
            rnd = random.Random(7 + k)
            steps, jobs = [], []
            users = ["u%02d" % i for i in range(40)]
            for i in range(ngroups):
                if i < p40_nodes:  # vc01's P40 nodes, each held by one group
                    gpus, leaf, prio, vc = 8, "P40", 100, "vc01"
                else:
                    gpus = rnd.choices([1, 2, 4, 8], [60, 25, 10, 5])[0]
                    leaf = "P100" if gpus <= 2 and rnd.random() < 0.5 else "P40"
                    prio = -1 if rnd.random() < 0.2 else 100
                    vc = rnd.choice(vcs)
                user, name = rnd.choice(users), "job-%05d" % i
                steps.append({"schedule": {"group": "%s~%s" % (user, name), "vc": vc, "priority": prio,
                                           "pods": [[1, gpus]], "leafType": leaf, "preempt": False,
                                           "orOpportunistic": True}})
                jobs.append({"user": user, "name": name, "vc": vc, "plan": ["RUNNING"], "gpus": gpus,
                             "ageSeconds": rnd.randint(60, 20 * 3600)})
            for u in users:  # finished jobs: each user's median run time
                for i in range(5):
                    jobs.append({"user": u, "name": "done-%d" % i, "vc": vcs[0], "plan": ["SUCCEEDED"], "gpus": 1,
                                 "ageSeconds": 90000, "runMs": rnd.randint(24, 48) * 3600 * 1000})
            scen = os.path.join(tmp, "cfg", "c%d.json" % k)
            json.dump({"config": "hivedscheduler.yaml", "steps": steps}, open(scen, "w"))
            sku = skus
            rest = {"version": "v1.8.0", "authnMethod": "basic",
                    "users": {"alice": alice},
                    "virtualClusters": {vc: {"capacity": 100.0 / len(vcs), "usedCapacity": 0, "maxCapacity": 100,
                                             "dedicated": False,
                                             "resourcesUsed": {"cpu": 0, "memory": 0, "gpu": 0},
                                             "resourcesGuaranteed": {"cpu": 64, "memory": 262144, "gpu": 16},
                                             "resourcesTotal": {"cpu": 64, "memory": 262144, "gpu": 16}}
                                        for vc in vcs},
                    "skuTypes": {vc: sku for vc in vcs}, "storages": {}, "jobs": jobs}
            rpath = os.path.join(tmp, "rest%d.json" % k)
            json.dump(rest, open(rpath, "w"))
            hlog, rlog = os.path.join(tmp, "hived%d.log" % k), os.path.join(tmp, "rest%d.log" % k)
            procs.append(subprocess.Popen([hived, scen, os.path.join(tmp, "hived%d.port" % k)],
                                          stdout=open(hlog, "w"), stderr=subprocess.STDOUT, start_new_session=True))
            procs.append(subprocess.Popen([sys.executable, REST, "--scenario", rpath, "--port-file",
                                           os.path.join(tmp, "rest%d.port" % k)], stdout=open(rlog, "w"),
                                          stderr=subprocess.STDOUT, start_new_session=True))
        for k in range(nclusters):
            hport = wait_file(os.path.join(tmp, "hived%d.port" % k), "HiveD test server %d" % k,
                              os.path.join(tmp, "hived%d.log" % k))
            rport = wait_file(os.path.join(tmp, "rest%d.port" % k), "REST test server %d" % k,
                              os.path.join(tmp, "rest%d.log" % k))
            subprocess.run([paictl, "cluster", "add", "c%d" % (k + 1), "--uri", "http://127.0.0.1:" + rport,
                            "--token-stdin", "--hived", "http://127.0.0.1:" + hport, "-q"], input=token + "\n",
                           text=True, env=env, check=True, stdout=subprocess.DEVNULL)
        job = os.path.join(tmp, "gang.yaml")
        open(job, "w").write("""protocolVersion: 2
name: gang
type: job
prerequisites:
  - {name: image, type: dockerimage, uri: "ubuntu:22.04"}
taskRoles:
  worker:
    instances: 4
    dockerImage: image
    resourcePerInstance: {gpu: 8, cpu: 48, memoryMB: 458752}
    commands: [sleep 600]
defaults:
  virtualCluster: vc01
extras:
  hivedScheduler:
    taskRoles:
      worker: {skuType: P40}
""")
        best = None
        verdicts = ""
        for _ in range(repeat):
            r = subprocess.run([paictl, "job", "submit", job, "--cluster", "auto", "--dry-run", "-o", "json", "-v"],
                               env=env, capture_output=True, text=True)
            if r.returncode not in (0, 2):
                sys.stderr.write(r.stderr)
                raise SystemExit("paictl job submit exited %d" % r.returncode)
            line = [l for l in r.stderr.splitlines() if l.startswith("paictl: auto:")]
            if not line:
                sys.stderr.write(r.stderr)
                raise SystemExit("no timing line (-v) from paictl")
            m = re.search(r"\(([0-9]+) bytes\).* in ([0-9.]+) ms; the decision ([0-9.]+) ms after the last arrived; "
                          r"per cluster at most ([0-9.]+) ms after its own, ([0-9.]+) ms of CPU", line[0])
            fig = tuple(float(x) for x in m.groups())
            if best is None or fig[2] < best[2]:
                best = fig
            d = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
            verdicts = ", ".join("%s: %s (%s), start %s" % (e["cluster"], (e.get("hived") or {}).get("verdict"), (e.get("hived") or {}).get("reason"),
                                                      (e.get("hived") or {}).get("estimatedStart"))
                                 for e in d.get("decision", []))
        print("%d clusters of %d nodes (--scale %d), %d running groups each (%d on vc01's P40 nodes); load %.1f" %
              (nclusters, 552 * scale, scale, ngroups, p40_nodes, os.getloadavg()[0]))
        print("verdicts: " + verdicts)
        print("answers %d bytes in %.0f ms; decision %.1f ms after the last answers (best of %d); "
              "slowest cluster %.1f ms after its own; %.1f ms of CPU for all verdicts" %
              (best[0], best[1], best[2], repeat, best[3], best[4]))
    finally:
        stop_all(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
