#!/usr/bin/env python3
"""`paictl job list --all-clusters` over 10 clusters against the slowest one alone.

  scripts/bench-job-list.py [PAICTL] [--repeat N] [--jobs N]

Starts 10 REST test servers (tests/integration/rest/pai_rest_server.py) on
loopback, cluster k answering every request after 25*k ms and holding --jobs
jobs of the user, registers them in a temporary registry, and prints the median
wall time of `job list --cluster c10` (the slowest alone), of
`job list --all-clusters`, and of both with `--all` paging (--limit 100).
Stops its servers by pid.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_util import stop_all

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SERVER = os.path.join(ROOT, "tests", "integration", "rest", "pai_rest_server.py")


def main(argv):
    paictl = os.path.join(ROOT, "build", "paictl")
    repeat, njobs = 7, 300
    args = list(argv[1:])
    while args:
        a = args.pop(0)
        if a == "--repeat":
            repeat = int(args.pop(0))
        elif a == "--jobs":
            njobs = int(args.pop(0))
        else:
            paictl = a
    tmp = tempfile.mkdtemp(prefix="paictl-bench-")
    scenario = json.load(open(os.path.join(ROOT, "tests", "integration", "rest", "scenarios", "lab.json")))
    scenario["jobs"] = [{"user": "alice", "name": "job-%04d" % i, "state": ["RUNNING", "SUCCEEDED", "FAILED"][i % 3],
                         "ageSeconds": 60 * i, "tags": ["bench"]} for i in range(njobs)]
    spath = os.path.join(tmp, "scenario.json")
    json.dump(scenario, open(spath, "w"))
    token = scenario["users"]["alice"]["tokens"][0]
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(tmp, "config"), HOME=os.path.join(tmp, "home"))
    env.pop("PAICTL_CONFIG", None)
    procs = []
    try:
        for k in range(1, 11):
            pf = os.path.join(tmp, "c%d.port" % k)
            procs.append(subprocess.Popen([sys.executable, SERVER, "--scenario", spath, "--port-file", pf,
                                           "--latency-ms", str(25 * k)], stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, start_new_session=True))
        for k in range(1, 11):
            pf = os.path.join(tmp, "c%d.port" % k)
            deadline = time.time() + 20
            while not os.path.exists(pf):
                if time.time() > deadline:
                    raise SystemExit("server c%d did not start" % k)
                time.sleep(0.02)
            port = open(pf).read().strip()
            subprocess.run([paictl, "cluster", "add", "c%d" % k, "--uri", "http://127.0.0.1:" + port,
                            "--token-stdin", "-q"], input=token + "\n", text=True, env=env, check=True,
                           stdout=subprocess.DEVNULL)

        def median(cmd):
            times = []
            for _ in range(repeat):
                t = time.perf_counter()
                r = subprocess.run([paictl] + cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                times.append(time.perf_counter() - t)
                if r.returncode != 0:
                    raise SystemExit("paictl %s exited %d" % (" ".join(cmd), r.returncode))
            return statistics.median(times)

        rows = [("job list --cluster c10 (the slowest alone)", ["job", "list", "--cluster", "c10", "-o", "json"]),
                ("job list --all-clusters", ["job", "list", "--all-clusters", "-o", "json"]),
                ("job list --cluster c10 --all --limit 100", ["job", "list", "--cluster", "c10", "--all", "--limit", "100", "-o", "json"]),
                ("job list --all-clusters --all --limit 100", ["job", "list", "--all-clusters", "--all", "--limit", "100", "-o", "json"])]
        res = [(name, median(cmd)) for name, cmd in rows]
        print("10 clusters answering after 25, 50, ..., 250 ms; %d jobs each; median of %d; load %s"
              % (njobs, repeat, os.getloadavg()[0].__format__(".1f")))
        for i, (name, t) in enumerate(res):
            ratio = "" if i % 2 == 0 else "  (%.2fx the slowest alone)" % (t / res[i - 1][1])
            print("%-45s %6.0f ms%s" % (name, t * 1000, ratio))
    finally:
        stop_all(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
