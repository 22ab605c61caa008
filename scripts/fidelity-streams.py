#!/usr/bin/env python3
"""Writes the request streams of the fidelity test (docs/fidelity.md).

  scripts/fidelity-streams.py PAICTL OUTDIR [--driver HIVED_DRIVER]

Streams (JSON lines: the config, then requests):
  philly-s{1..5}.jsonl   Philly-shaped cluster (paictl simulate generate --scale 1),
                         seeded traces replayed by `paictl simulate --record-requests`
  philly-busy-s{1..5}.jsonl  the same with twice the jobs (queues build up, so
                         guaranteed work preempts opportunistic work)
  philly10x-s1.jsonl     a 10x Philly-shaped cluster (--scale 10: 5,520 nodes)
  heterogeneous.jsonl    examples/clusters/heterogeneous, a seeded trace, the same way
  philly-suggested-s1.jsonl  the Philly-shaped cluster, 1,500 jobs, every decision with a
                         seeded suggested node set (simulate --suggested-fraction 0.98)
  philly-busy-suggested-s2.jsonl  the same with 3,000 jobs, seed 2 (preemptions)
  hived-test-suggested.jsonl  the hived-test cluster, 1,000 requests, half of them with a
                         random suggested node set, most avoiding the other nodes
  hived-test.jsonl       a small cluster shaped like HiveD's design example (binary
                         DGX-2-like trees, multi-node chains, a pinned cell, two leaf
                         types) and a seeded open-loop sequence of schedule and release
                         requests: gangs of several members, lazy preemption, pinned
                         cells, priorities, opportunistic work
With --driver, each stream is piped through the HiveD driver and OUTDIR gets the
recorded decisions instead of the bare streams. Files are written gzip-compressed
(NAME.jsonl.gz, reproducible: no name or time in the header).
"""
import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PHILLY_JOBS = 1500
PHILLY_BUSY_JOBS = 3000
PHILLY_LOAD = 3
HETERO_JOBS = 400
# philly-suggested: each decision's suggested nodes keep every node with this probability
SUGGESTED_FRACTION = 0.98

HIVED_TEST_CONFIG = """\
# A small cluster shaped like HiveD's design example: K80 racks of 4-GPU nodes,
# DGX-2-like nodes as binary trees (2, 4, 8, 16 GPUs), chains of 1, 2 and 4 nodes.
physicalCluster:
  cellTypes:
    K80-PAIR: {childCellType: K80, childCellNumber: 2}
    K80-NODE: {childCellType: K80-PAIR, childCellNumber: 2, isNodeLevel: true}
    K80-RACK: {childCellType: K80-NODE, childCellNumber: 3}
    DGX-2-GPU: {childCellType: DGX, childCellNumber: 2}
    DGX-4-GPU: {childCellType: DGX-2-GPU, childCellNumber: 2}
    DGX-8-GPU: {childCellType: DGX-4-GPU, childCellNumber: 2}
    DGX-NODE: {childCellType: DGX-8-GPU, childCellNumber: 2, isNodeLevel: true}
    DGX-2-NODE: {childCellType: DGX-NODE, childCellNumber: 2}
    DGX-4-NODE: {childCellType: DGX-2-NODE, childCellNumber: 2}
  physicalCells:
  - cellType: K80-RACK
    cellAddress: krack0
    cellChildren: [{cellAddress: k0}, {cellAddress: k1}, {cellAddress: k2}]
  - cellType: K80-RACK
    cellAddress: krack1
    cellChildren: [{cellAddress: k3}, {cellAddress: k4}, {cellAddress: k5}]
  - {cellType: DGX-NODE, cellAddress: d0}
  - cellType: DGX-2-NODE
    cellAddress: dpair0
    cellChildren: [{cellAddress: d1}, {cellAddress: d2}]
  - cellType: DGX-4-NODE
    cellAddress: dquad0
    cellChildren:
    - cellAddress: dquad0-a
      cellChildren: [{cellAddress: d3, pinnedCellId: VC1-PIN}, {cellAddress: d4}]
    - cellAddress: dquad0-b
      cellChildren: [{cellAddress: d5}, {cellAddress: d6}]
virtualClusters:
  vc1:
    virtualCells:
    - {cellType: DGX-4-NODE.DGX-2-NODE.DGX-NODE, cellNumber: 2}
    - {cellType: K80-RACK.K80-NODE, cellNumber: 2}
    pinnedCells:
    - pinnedCellId: VC1-PIN
  vc2:
    virtualCells:
    - {cellType: DGX-2-NODE, cellNumber: 1}
    - {cellType: DGX-NODE.DGX-8-GPU, cellNumber: 2}
    - {cellType: K80-RACK, cellNumber: 1}
    - {cellType: DGX-4-NODE.DGX-2-NODE.DGX-NODE.DGX-8-GPU, cellNumber: 1}
"""


HIVED_TEST_NODES = ["k%d" % i for i in range(6)] + ["d%d" % i for i in range(7)]


def with_suggested(req, rnd):
    """Half the schedule requests carry a random suggested node set (each node
    kept with probability 0.7), most of them avoiding the other nodes
    (ignoreSuggestedNodes false), some ignoring them (HiveD still checks a
    preempting group's placement against the set)."""
    if rnd.random() >= 0.5:
        return req
    req = dict(req)
    req["suggestedNodes"] = [n for n in HIVED_TEST_NODES if rnd.random() < 0.7]
    if rnd.random() < 0.8:
        req["ignoreSuggestedNodes"] = False
    return req


def hived_test_stream(seed, n, suggested=False):
    rnd = random.Random(seed)
    srnd = random.Random(seed + 1000)
    lines = [json.dumps({"op": "config", "yaml": HIVED_TEST_CONFIG})]
    names = []
    for i in range(n):
        r = rnd.random()
        if names and r < 0.3:
            lines.append(json.dumps({"op": "release", "group": rnd.choice(names)}))
            continue
        if names and r < 0.4:
            # asked again: an allocated group answers its placement, a preempting one continues
            g = rnd.choice(names)
            lines.append(json.dumps(with_suggested(groups[g], srnd) if suggested else groups[g]))
            continue
        if not names:
            groups = {}
        name = "g%d" % i
        vc = rnd.choice(["vc1", "vc2"])
        prio = rnd.choice([-1, 0, 0, 1, 5, 10, 100])
        req = {"op": "schedule", "group": name, "vc": vc, "priority": prio}
        t = rnd.random()
        if vc == "vc1" and prio >= 0 and t < 0.1:
            req["pinnedCellId"] = "VC1-PIN"
            sizes = [1, 2, 4, 8, 16]
        elif t < 0.45:
            req["leafCellType"] = "K80"
            sizes = [1, 2, 4]
        elif t < 0.9:
            req["leafCellType"] = "DGX"
            sizes = [1, 2, 4, 8, 16]
        else:
            sizes = [1, 2, 4]
        if prio >= 0 and rnd.random() < 0.3:
            req["lazy"] = True
        if rnd.random() < 0.15:
            a, b = rnd.sample(sizes, 2)
            req["members"] = [{"podNumber": rnd.choice([1, 2]), "leafCellNumber": a},
                              {"podNumber": 1, "leafCellNumber": b}]
        else:
            req["members"] = [{"podNumber": rnd.choice([1, 1, 2, 3]),
                               "leafCellNumber": rnd.choice(sizes)}]
        names.append(name)
        groups[name] = req
        lines.append(json.dumps(with_suggested(req, srnd) if suggested else req))
    return "\n".join(lines) + "\n"


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def record_trace(paictl, config, trace, out, extra=()):
    run([paictl, "simulate", "--config", config, "--trace", trace, "--policy", "hived",
         "--overflow", "--record-requests", out, "-o", "json"] + list(extra))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paictl")
    ap.add_argument("outdir")
    ap.add_argument("--driver", help="the HiveD driver: records its decisions")
    ap.add_argument("--only", nargs="+", metavar="NAME",
                    help="write only these streams (names without .jsonl)")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    streams = {}
    with tempfile.TemporaryDirectory() as tmp:
        philly = [("philly-s%d" % s, s, PHILLY_JOBS, 1) for s in range(1, 6)]
        philly += [("philly-busy-s%d" % s, s, PHILLY_BUSY_JOBS, 1) for s in range(1, 6)]
        philly += [("philly10x-s1", 1, PHILLY_BUSY_JOBS, 10)]
        philly += [("philly-suggested-s1", 1, PHILLY_JOBS, 1),
                   ("philly-busy-suggested-s2", 2, PHILLY_BUSY_JOBS, 1)]
        for name, seed, jobs, scale in philly:
            if a.only and name not in a.only:
                continue
            d = os.path.join(tmp, name)
            run([a.paictl, "simulate", "generate", "--jobs", str(jobs), "--seed", str(seed),
                 "--load", str(PHILLY_LOAD), "--opportunistic", "0.2", "--scale", str(scale),
                 "--cluster-out", d, "--format", "csv", "--out", os.path.join(d, "trace.csv")])
            out = os.path.join(tmp, name + ".jsonl")
            extra = []
            if "suggested" in name:
                extra = ["--suggested-fraction", str(SUGGESTED_FRACTION), "--suggested-seed",
                         str(seed)]
            record_trace(a.paictl, d, os.path.join(d, "trace.csv"), out, extra)
            streams[name + ".jsonl"] = open(out).read()
        het = os.path.join(ROOT, "examples", "clusters", "heterogeneous")
        trace = os.path.join(tmp, "het.csv")
        run([a.paictl, "simulate", "generate", "--config", het, "--jobs", str(HETERO_JOBS),
             "--seed", "11", "--load", "2", "--opportunistic", "0.2", "--format", "csv",
             "--out", trace])
        out = os.path.join(tmp, "heterogeneous.jsonl")
        if not a.only or "heterogeneous" in a.only:
            record_trace(a.paictl, het, trace, out)
            streams["heterogeneous.jsonl"] = open(out).read()
    streams["hived-test.jsonl"] = hived_test_stream(14, 600)
    streams["hived-test-suggested.jsonl"] = hived_test_stream(15, 1000, suggested=True)
    if a.only:
        streams = {k: v for k, v in streams.items() if k[:-len(".jsonl")] in a.only}
    for name, text in streams.items():
        path = os.path.join(a.outdir, name + ".gz")
        if a.driver:
            res = subprocess.run([a.driver], input=text, capture_output=True, text=True, check=True)
            text = res.stdout
        with open(path, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as f:
                f.write(text.encode())
        print("%s: %d lines" % (path, text.count("\n")), flush=True)


if __name__ == "__main__":
    sys.exit(main())
