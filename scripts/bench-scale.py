#!/usr/bin/env python3
"""Every command but install's, measured from 100 to 1,500 nodes.

  scripts/bench-scale.py [BUILD-DIR] [--sizes 100,500,1000,1500] [--repeat N]
                         [--only check,plan,status,why,diff,auto,add,simulate] [--keep DIR]
                         [--show LINES] [--profile DIR] [--tenx]

--keep DIR keeps the facts directories and the simulator's traces there (DIR/facts-N,
DIR/trace-N.csv; with --tenx DIR/philly10x) for the next run;
--show LINES prints the first LINES of each command's output (to see what it did);
--profile DIR runs each command once more under `perf record --call-graph dwarf`
(DIR/NAME-N.perf.data); --tenx measures the simulator at Philly 10x scale too (below).

At each size N (workers) it generates, with fixed seeds:
  * the cluster: `scripts/gen-cluster.py --mix N` (8-GPU V100 and A100 nodes in
    racks of 20, H100 nodes in one pool, 20 VCs; 1,500 nodes: 12,000 GPUs), as
    an installed cluster keeps it (services-configuration.yaml) and as HiveD
    reads it (hivedscheduler.yaml);
  * N facts directories (`scripts/gen-facts.sh`: dgx1-v100, dgx-a100 in racks,
    hgx-h100 without), the same shares;
  * five HiveD test servers (tests/integration/hived/hived_test_server) on that
    config, each holding 2,000 * N / 1,500 running groups (1, 2, 4 or 8 GPUs,
    Philly's mix, named USER~JOB/default; first one 8-GPU group on each of
    vc01's A100 nodes, so a 4 x 8-GPU A100 gang in vc01 waits), each beside a
    REST test server (tests/integration/rest) listing the same jobs as RUNNING
    and finished ones (each user's median run time: 24-48 h);
  * for simulate, a trace of 320 * N jobs on that cluster (40 a GPU, the density of
    docs/benchmarks.md's Philly traces: 100,000 jobs on 2,490 GPUs at 1x,
    1,000,000 on 24,900 at 10x), `paictl simulate generate --config CLUSTER
    --jobs 320N --seed 7 --format csv` (load 0.7 of the guaranteed GPUs, so the
    same span of days at every size and the cluster's running jobs grow with it).

and runs, REPEAT times each (the median is printed):
  check   paictl check config CLUSTER
  plan    paictl plan --facts FACTS --vc a=50% --vc b=30% -o json
  status  paictl hived status --hived URL
  why     paictl hived why wait --cluster c1 --vc vc01 --pods 4 --gpus 8 --leaf-type A100
  diff    paictl hived diff OLD NEW --live --hived URL (NEW: a tenth of vc01's cells to vc02)
  auto    paictl job submit GANG --cluster auto --explain --dry-run (the five clusters)
  add     paictl node add CLUSTER H100-HOST --dry-run (the host added to layout.yaml
          first; the join's install plan reaches no host: every host's SSH goes to
          a closed port on loopback)
  simulate
          paictl simulate --config CLUSTER --trace TRACE --policy hived --overflow -o json

With --tenx (and simulate in --only), after the sizes: the simulator at Philly 10x
scale as docs/benchmarks.md's "simulate" section runs it, 5,520 nodes, 24,900 GPUs
and 1,000,000 jobs (`simulate generate --scale 10 --seed 7 --format csv`), the same
simulate command, REPEAT times.

Per command: the CPU time (user + system) and the peak RSS of the whole process
(getrusage of the child), and, where paictl reports it with -v, its CPU after
the inputs arrived (the HiveD answers; for auto, the CPU of all verdicts). For
check, plan, add and simulate the whole process is the figure (reading the files
included; `paictl --version` gives the start-up floor; generating the trace is not
measured). Stops its servers by pid.
"""

import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_util import stop_all

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REST = os.path.join(ROOT, "tests", "integration", "rest", "pai_rest_server.py")
LAB = os.path.join(ROOT, "tests", "integration", "rest", "scenarios", "lab.json")
COMMANDS = ["version", "check", "plan", "status", "why", "diff", "auto", "add", "simulate"]
SIM_JOBS_PER_NODE = 320  # 40 jobs a GPU, 8 GPUs a node
SIM_FLAGS = ["--policy", "hived", "--overflow", "-o", "json"]
TARGETS = {"check": 100, "plan": 500, "status": 100, "why": 300, "diff": 300, "auto": 1000, "add": 200}


def wait_file(path, what, log):
    deadline = time.time() + 600
    while not (os.path.exists(path) and open(path).read().strip()):
        if time.time() > deadline:
            sys.stderr.write(open(log).read() if os.path.exists(log) else "")
            raise SystemExit("%s did not start" % what)
        time.sleep(0.05)
    return open(path).read().strip()


def run(cmd, env, out, ok=(0,)):
    """Runs cmd; returns (CPU ms, peak RSS MB, stderr text). stdout goes to `out`."""
    err = out + ".err"
    with open(out, "w") as o, open(err, "w") as e:
        p = subprocess.Popen(cmd, stdout=o, stderr=e, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    text = open(err).read()
    if p.returncode not in ok:
        sys.stderr.write(" ".join(cmd) + "\n" + text + open(out).read()[:2000])
        raise SystemExit("exit %d" % p.returncode)
    return (ru.ru_utime + ru.ru_stime) * 1000, ru.ru_maxrss / 1024, text


def gen_facts(tmp, n, keep):
    """The facts of N hosts; under --keep DIR made once (DIR/facts-N) and reused."""
    facts = os.path.join(keep if keep else tmp, "facts-%d" % n)
    if os.path.exists(facts + ".complete"):
        return facts
    shutil.rmtree(facts, ignore_errors=True)
    v = max(1, round(n * 0.45 / 20)) * 20
    a = max(1, round(n * 0.35 / 20)) * 20
    h = max(1, n - v - a)
    g = os.path.join(HERE, "gen-facts.sh")
    for args in (["dgx1-v100", str(v), facts, str(v // 20), "v100", "101"],
                 ["dgx-a100", str(a), facts, str(a // 20), "a100", "102"],
                 ["hgx-h100", str(h), facts, "0", "h100", "103"]):
        subprocess.run([g] + args, check=True, stderr=subprocess.DEVNULL)
    m = os.path.join(facts, "master")
    os.makedirs(m, exist_ok=True)
    for f in ("lscpu.txt", "meminfo"):
        shutil.copy(os.path.join(ROOT, "layouts", "t4-2socket", f), m)
    open(os.path.join(m, "host.yaml"), "w").write("hostip: 10.0.0.1\nroles: [master]\n")
    open(facts + ".complete", "w").close()
    return facts


def gen_trace(paictl, tmp, n, cluster, keep):
    """The simulator's trace for the N-node cluster (320 * N jobs, CSV); under
    --keep DIR made once (DIR/trace-N.csv) and reused."""
    trace = os.path.join(keep if keep else tmp, "trace-%d.csv" % n)
    if os.path.exists(trace + ".complete"):
        return trace
    subprocess.run([paictl, "-q", "simulate", "generate", "--config", cluster, "--jobs",
                    str(SIM_JOBS_PER_NODE * n), "--seed", "7", "--format", "csv", "--out", trace], check=True)
    open(trace + ".complete", "w").close()
    return trace


def bench_tenx(paictl, repeat, keep):
    """The simulator at Philly 10x: 5,520 nodes, 1,000,000 jobs; (CPU ms, peak RSS MB)."""
    tmp = tempfile.mkdtemp(prefix="paictl-bench-scale-10x-")
    try:
        d = os.path.join(keep if keep else tmp, "philly10x")
        cluster, trace = os.path.join(d, "cluster"), os.path.join(d, "t10.csv")
        if not os.path.exists(trace + ".complete"):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            subprocess.run([paictl, "-q", "simulate", "generate", "--jobs", "1", "--scale", "10", "--cluster-out",
                            cluster, "--out", os.path.join(tmp, "unused.json")], check=True)
            subprocess.run([paictl, "-q", "simulate", "generate", "--jobs", "1000000", "--seed", "7", "--scale",
                            "10", "--format", "csv", "--out", trace], check=True)
            open(trace + ".complete", "w").close()
        cpu, rss = [], []
        for _ in range(repeat):
            c, r, _ = run([paictl, "simulate", "--config", cluster, "--trace", trace] + SIM_FLAGS, None,
                          os.path.join(tmp, "out"))
            cpu.append(c)
            rss.append(r)
        return statistics.median(cpu), max(rss)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def hived_config_dirs(tmp, n):
    """OLD (hivedscheduler.yaml as generated) and NEW (a tenth of vc01's cells to vc02)."""
    old, new = os.path.join(tmp, "old"), os.path.join(tmp, "new")
    subprocess.run([sys.executable, os.path.join(HERE, "gen-cluster.py"), "--mix", str(n), old],
                   check=True, stdout=subprocess.DEVNULL)
    for f in ("layout.yaml", "config.yaml"):
        os.remove(os.path.join(old, f))
    cfg = open(os.path.join(old, "hivedscheduler.yaml")).read()
    out, vc, ct, moved = [], None, None, {}
    for line in cfg.split("\n"):
        m = re.match(r"^  (vc\d+):", line)
        if m:
            vc = m.group(1)
        m = re.match(r"^    - cellType: (\S+)", line)
        if m:
            ct = m.group(1)
        m = re.match(r"^(      cellNumber: )(\d+)$", line)
        if m and vc in ("vc01", "vc02"):
            k = int(m.group(2))
            if vc == "vc01":
                d = max(1, k // 10)
                moved[ct] = d
                k -= d
            else:
                k += moved.pop(ct, 0)
            line = m.group(1) + str(k)
        out.append(line)
    os.makedirs(new, exist_ok=True)
    open(os.path.join(new, "hivedscheduler.yaml"), "w").write("\n".join(out))
    return old, new, cfg


def scenarios(tmp, n, cfg, nclusters):
    """The HiveD and REST scenarios of the clusters; returns their paths and the groups."""
    ngroups = round(2000 * n / 1500)
    vcs = sorted(set(re.findall(r"^  (vc\d+):", cfg, re.M)))
    a_racks = int(re.search(r"^  - cellType: A100-RACK", cfg, re.M) is not None)
    # vc01's A100 nodes: its A100-RACK cellNumber * 20.
    m = re.search(r"^  vc01:\n((?:    .*\n)+)", cfg, re.M)
    vc01 = m.group(1) if m else ""
    a = re.search(r"cellType: A100-RACK\n\s+cellNumber: (\d+)", vc01)
    a100_vc01 = int(a.group(1)) * 20 if a and a_racks else 0
    # Each VC's guaranteed GPUs: 160 a rack, 8 a node.
    vc_gpus = {}
    for vc in vcs:
        m = re.search(r"^  %s:\n((?:    .*\n)+)" % vc, cfg, re.M)
        cells = re.findall(r"cellType: (\S+)\n\s+cellNumber: (\d+)", m.group(1) if m else "")
        vc_gpus[vc] = sum(int(k) * (160 if t.endswith("RACK") else 8) for t, k in cells)
    alice = json.load(open(LAB))["users"]["alice"]
    alice["virtualCluster"] = vcs
    skus = {"V100": {"cpu": 9, "memory": 61440, "gpu": 1}, "A100": {"cpu": 15, "memory": 122880, "gpu": 1},
            "H100": {"cpu": 23, "memory": 245760, "gpu": 1}}
    out = []
    for k in range(nclusters):
        rnd = random.Random(7 + k)
        steps, jobs = [], []
        users = ["u%02d" % i for i in range(40)]
        for i in range(ngroups):
            if i < a100_vc01:
                gpus, leaf, vc = 8, "A100", "vc01"
            else:
                gpus = rnd.choices([1, 2, 4, 8], [60, 25, 10, 5])[0]
                leaf = rnd.choices(["V100", "A100", "H100"], [45, 35, 20])[0]
                vc = rnd.choice(vcs)
            prio = 100 if i < a100_vc01 or rnd.random() >= 0.2 else -1
            user, name = rnd.choice(users), "job-%05d" % i
            steps.append({"schedule": {"group": "%s~%s/default" % (user, name), "vc": vc, "priority": prio,
                                       "pods": [[1, gpus]], "leafType": leaf, "preempt": False,
                                       "orOpportunistic": True}})
            jobs.append({"user": user, "name": name, "vc": vc, "plan": ["RUNNING"], "gpus": gpus,
                         "ageSeconds": rnd.randint(60, 20 * 3600)})
        for u in users:
            for i in range(5):
                jobs.append({"user": u, "name": "done-%d" % i, "vc": vcs[0], "plan": ["SUCCEEDED"], "gpus": 1,
                             "ageSeconds": 90000, "runMs": rnd.randint(24, 48) * 3600 * 1000})
        scen = os.path.join(tmp, "old", "c%d.json" % k)
        json.dump({"config": "hivedscheduler.yaml", "steps": steps}, open(scen, "w"))
        # Each VC's resources as the rest-server reports them: its guaranteed
        # GPUs (and their share of CPU and memory), those its groups use.
        used = {vc: 0 for vc in vcs}
        for st in steps:
            used[st["schedule"]["vc"]] += st["schedule"]["pods"][0][1]

        def res(g):
            return {"cpu": g * 15, "memory": g * 122880, "gpu": g}
        rest = {"version": "v1.8.0", "authnMethod": "basic", "users": {"alice": alice},
                "virtualClusters": {vc: {"capacity": 100.0 / len(vcs), "usedCapacity": 0, "maxCapacity": 100,
                                         "dedicated": False,
                                         "resourcesUsed": res(min(used[vc], vc_gpus[vc])),
                                         "resourcesGuaranteed": res(vc_gpus[vc]),
                                         "resourcesTotal": res(vc_gpus[vc])}
                                    for vc in vcs},
                "skuTypes": {vc: skus for vc in vcs}, "storages": {}, "jobs": jobs}
        rpath = os.path.join(tmp, "rest%d.json" % k)
        json.dump(rest, open(rpath, "w"))
        out.append((scen, rpath))
    return out, ngroups, a100_vc01, alice["tokens"][0]


GANG = """protocolVersion: 2
name: gang
type: job
prerequisites:
  - {name: image, type: dockerimage, uri: "ubuntu:22.04"}
taskRoles:
  worker:
    instances: 4
    dockerImage: image
    resourcePerInstance: {gpu: 8, cpu: 96, memoryMB: 917504}
    commands: [sleep 600]
defaults:
  virtualCluster: vc01
extras:
  hivedScheduler:
    taskRoles:
      worker: {skuType: A100}
"""


def add_host(cluster, n):
    """layout.yaml gains one H100 host (the pool's next); returns its name."""
    lay = open(os.path.join(cluster, "layout.yaml")).read()
    k = len(re.findall(r"^  - hostname: h100-n", lay, re.M))
    name = "h100-n%d" % k
    lay += "  - hostname: %s\n    hostip: 10.250.0.1\n    machine-type: h100-machine\n" \
           '    pai-worker: "true"\n' % name
    open(os.path.join(cluster, "layout.yaml"), "w").write(lay)
    return name


def bench_size(paictl, server, n, repeat, only, keep, show, profile):
    tmp = tempfile.mkdtemp(prefix="paictl-bench-scale-%d-" % n)
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(tmp, "config"), HOME=os.path.join(tmp, "home"))
    env.pop("PAICTL_CONFIG", None)
    procs = []
    res = {}
    try:
        cluster = os.path.join(tmp, "cluster")
        subprocess.run([sys.executable, os.path.join(HERE, "gen-cluster.py"), "--mix", "--services", str(n),
                        cluster], check=True, stdout=subprocess.DEVNULL)
        old, new, cfg = hived_config_dirs(tmp, n)
        need_servers = bool({"status", "why", "diff", "auto"} & only)
        nclusters = 5 if "auto" in only else 1
        scen, ngroups, a100_vc01, token = scenarios(tmp, n, cfg, nclusters)
        if need_servers:
            for k, (s, r) in enumerate(scen):
                hlog, rlog = os.path.join(tmp, "hived%d.log" % k), os.path.join(tmp, "rest%d.log" % k)
                procs.append(subprocess.Popen([server, s, os.path.join(tmp, "hived%d.port" % k)],
                                              stdout=open(hlog, "w"), stderr=subprocess.STDOUT,
                                              start_new_session=True))
                procs.append(subprocess.Popen([sys.executable, REST, "--scenario", r, "--port-file",
                                               os.path.join(tmp, "rest%d.port" % k)], stdout=open(rlog, "w"),
                                              stderr=subprocess.STDOUT, start_new_session=True))
        facts = gen_facts(tmp, n, keep) if "plan" in only else None
        urls = []
        if need_servers:
            for k in range(nclusters):
                hport = wait_file(os.path.join(tmp, "hived%d.port" % k), "HiveD test server %d" % k,
                                  os.path.join(tmp, "hived%d.log" % k))
                rport = wait_file(os.path.join(tmp, "rest%d.port" % k), "REST test server %d" % k,
                                  os.path.join(tmp, "rest%d.log" % k))
                urls.append("http://127.0.0.1:" + hport)
                subprocess.run([paictl, "cluster", "add", "c%d" % (k + 1), "--uri", "http://127.0.0.1:" + rport,
                                "--token-stdin", "--hived", urls[-1], "-q"], input=token + "\n", text=True,
                               env=env, check=True, stdout=subprocess.DEVNULL)
        gang = os.path.join(tmp, "gang.yaml")
        open(gang, "w").write(GANG)
        # node add: a copy of the cluster with the new host in layout.yaml, and
        # an SSH config that sends every host to a closed port on loopback.
        addc = os.path.join(tmp, "add")
        shutil.copytree(cluster, addc)
        host = add_host(addc, n)
        sshc = os.path.join(tmp, "ssh_config")
        open(sshc, "w").write("Host *\n  HostName 127.0.0.1\n  Port 9\n  ConnectTimeout 1\n"
                              "  BatchMode yes\n")
        trace = gen_trace(paictl, tmp, n, cluster, keep) if "simulate" in only else ""
        out = os.path.join(tmp, "out")
        cmds = {
            "version": ([paictl, "--version"], None, (0,)),
            "check": ([paictl, "check", "config", cluster], None, (0,)),
            "plan": ([paictl, "plan", "--facts", facts or "", "--vc", "a=50%", "--vc", "b=30%", "-o", "json"],
                     None, (0,)),
            "status": ([paictl, "hived", "status", "--hived", urls[0] if urls else "", "-v"], "hived", (0,)),
            "why": ([paictl, "hived", "why", "wait", "--cluster", "c1", "--vc", "vc01", "--priority", "100",
                     "--pods", "4", "--gpus", "8", "--leaf-type", "A100", "-v"], "hived", (0, 1, 2)),
            "diff": ([paictl, "hived", "diff", old, new, "--live", "--hived", urls[0] if urls else "", "-v"],
                     "hived", (0, 1, 2)),
            "auto": ([paictl, "job", "submit", gang, "--cluster", "auto", "--explain", "--dry-run", "-v"], "auto",
                     (0, 2)),
            "add": ([paictl, "node", "add", addc, host, "--dry-run", "--ssh-config", sshc], None, (0, 1, 2, 3, 4)),
            "simulate": ([paictl, "simulate", "--config", cluster, "--trace", trace] + SIM_FLAGS, None, (0,)),
        }
        for name in COMMANDS:
            if name not in only and name != "version":
                continue
            cmd, kind, ok = cmds[name]
            cpu, rss, after = [], [], []
            for _ in range(repeat):
                c, r, err = run(cmd, env, out, ok)
                cpu.append(c)
                rss.append(r)
                if kind == "hived":
                    m = re.search(r"after they arrived \(([0-9.]+) ms of CPU\)", err)
                    if m:
                        after.append(float(m.group(1)))
                elif kind == "auto":
                    m = re.search(r"([0-9.]+) ms of CPU in all", err)
                    if m:
                        after.append(float(m.group(1)))
            if profile:
                data = os.path.join(profile, "%s-%d.perf.data" % (name, n))
                run(["perf", "record", "-q", "-F", "1000", "--call-graph", "dwarf,16384", "-o", data, "--"] + cmd, env, out, ok)
            res[name] = (statistics.median(cpu), max(rss), statistics.median(after) if after else None)
            if show:
                print("---- %s (exit ok), stdout then stderr:\n%s\n%s" %
                      (" ".join(cmd), "\n".join(open(out).read().splitlines()[:show]),
                       "\n".join(open(out + ".err").read().splitlines()[:show])))
        return res, ngroups, a100_vc01
    finally:
        stop_all(procs)
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv):
    build, repeat, sizes, only, keep, show = os.path.join(ROOT, "build"), 5, [100, 500, 1000, 1500], set(COMMANDS), None, 0
    profile, tenx = None, False
    args = list(argv[1:])
    while args:
        a = args.pop(0)
        if a == "--repeat":
            repeat = int(args.pop(0))
        elif a == "--sizes":
            sizes = [int(x) for x in args.pop(0).split(",")]
        elif a == "--only":
            only = set(args.pop(0).split(","))
        elif a == "--profile":
            profile = os.path.abspath(args.pop(0))
            os.makedirs(profile, exist_ok=True)
        elif a == "--tenx":
            tenx = True
        elif a == "--show":
            show = int(args.pop(0))
        elif a == "--keep":
            keep = args.pop(0)
            os.makedirs(keep, exist_ok=True)
        else:
            build = a
    paictl = os.path.join(build, "paictl")
    server = os.path.join(build, "tests", "integration", "hived", "hived_test_server")
    for f in (paictl, server):
        if not os.access(f, os.X_OK):
            raise SystemExit("build paictl and hived_test_server in %s first" % build)
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    print("paictl %s at %s, %s; %d cores, load %.1f; median of %d" %
          (paictl, rev, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.cpu_count(),
           os.getloadavg()[0], repeat))
    rows = {}
    for n in sizes:
        res, ngroups, a100 = bench_size(paictl, server, n, repeat, only, keep, show, profile)
        rows[n] = res
        print("%d nodes (%d GPUs), %d running groups a cluster (%d on vc01's A100 nodes)%s; load %.1f" %
              (n, n * 8, ngroups, a100,
               ", %d simulated jobs" % (SIM_JOBS_PER_NODE * n) if "simulate" in only else "", os.getloadavg()[0]))
        for name in COMMANDS:
            if name in res:
                c, r, a = res[name]
                print("  %-8s CPU %8.1f ms  peak RSS %7.1f MB%s" %
                      (name, c, r, "" if a is None else "  after the inputs %7.1f ms of CPU" % a))
        sys.stdout.flush()
    print()
    print("| command | target | " + " | ".join("%d nodes" % n for n in sizes) + " |")
    print("|---|---|" + "---:|" * len(sizes))
    for name in COMMANDS:
        if not all(name in rows[n] for n in sizes):
            continue
        cells = []
        for n in sizes:
            c, r, a = rows[n][name]
            cells.append("%.0f ms%s, %.0f MB" % (c, "" if a is None else " (%.0f)" % a, r))
        t = TARGETS.get(name)
        print("| %s | %s | %s |" % (name, "≤ %d ms" % t if t else "", " | ".join(cells)))
    if tenx and "simulate" in only:
        c, r = bench_tenx(paictl, repeat, keep)
        print()
        print("simulate at Philly 10x (5,520 nodes, 24,900 GPUs, 1,000,000 jobs): CPU %.1f ms  peak RSS %.1f MB;"
              " load %.1f" % (c, r, os.getloadavg()[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
