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
  philly-long-s{1..3}.jsonl  the Philly-shaped cluster, 6,000 jobs at load 1 (long streams:
                         nodes are freed and taken again many times)
  philly-long-load3-s{1,2}.jsonl  the same at load 3 (queues, preemptions)
  philly3x-s1.jsonl      a 3x Philly-shaped cluster (1,656 nodes), 6,000 jobs at load 3
  philly-lazy-s{1,2}.jsonl   load 3, half the guaranteed jobs with lazy preemption
  philly-faults-s{1,2}.jsonl  load 1 and 3 with seeded node failures and repairs
  gpu-mixed[-lazy][-faults]-s*.jsonl  an A100/H100 cluster: 8-GPU nodes (4+4 NVLink
                         halves, binary H100 trees), 4-GPU nodes, racks of 4, 3 and 2
                         nodes and single nodes (several chains per leaf type), three
                         VCs; with and without lazy preemption and node failures
  k80-racks-s1.jsonl, k80-racks-load3-s2.jsonl  a Philly-like cluster of racks (K80 racks
                         of 8, 6 and 4 nodes, P40 racks), VCs of whole racks, nodes and
                         pairs: 6,000 jobs at load 1, and 3,000 at load 3 with lazy preemption;
                         k80-racks-faults-s3.jsonl: 2,500 jobs at load 2 with node failures
  k80-racks-open-*.jsonl  the rack cluster, 4,000 seeded open-loop requests each, 30% of
                         them with a suggested node set; in -filtering-s3 20% may not
                         preempt (Kubernetes' filtering phase)
  gpu-mixed-open-suggested-s5.jsonl, hived-test-open-suggested-s2.jsonl  open-loop
                         streams with suggested node sets on the A100/H100 and the
                         hived-test clusters (preempting groups cancelled and released)
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
LONG_JOBS = 6000
LONG_LOAD3_JOBS = 3000
PHILLY3X_JOBS = 6000
# node failures: one node fails every MTBF/nodes on average and is back after MTTR
PHILLY_FAULTS = "random:mtbf=60d,mttr=6h,seed=%d"
GPU_MIXED_FAULTS = "random:mtbf=20d,mttr=2h,seed=%d"
# name, seed, jobs, load, lazy preemption, fault model
GPU_MIXED_STREAMS = [
    ("gpu-mixed-s1", 41, 2500, 1, False, None),
    ("gpu-mixed-s2", 42, 2500, 3, False, None),
    ("gpu-mixed-lazy-s3", 43, 2500, 3, True, None),
    ("gpu-mixed-faults-s4", 49, 2500, 1, False, GPU_MIXED_FAULTS),
    ("gpu-mixed-lazy-faults-s5", 45, 2500, 3, True, GPU_MIXED_FAULTS),
]
K80_RACKS_STREAMS = [
    ("k80-racks-s1", 71, 6000, 1, False, None),
    ("k80-racks-load3-s2", 72, 3000, 3, True, None),
    ("k80-racks-faults-s3", 82, 2500, 2, False, "random:mtbf=60d,mttr=2h,seed=%d"),
]
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


GPU_MIXED_CONFIG = """\
# An A100/H100 cluster of mixed node and rack sizes. A100 8-GPU nodes have two
# NVLink halves of 4; A100 4-GPU nodes are flat; H100 nodes are binary trees
# (pairs, quads). Several chains share a leaf type (racks of 4 and of 2 nodes,
# single nodes), so a request without a leaf type may land on either.
physicalCluster:
  skuTypes:
    A100: {gpu: 1, cpu: 12, memory: 100Gi}
    H100: {gpu: 1, cpu: 16, memory: 200Gi}
  cellTypes:
    A100-NVL: {childCellType: A100, childCellNumber: 4}
    A100-NODE: {childCellType: A100-NVL, childCellNumber: 2, isNodeLevel: true}
    A100-RACK4: {childCellType: A100-NODE, childCellNumber: 4}
    A100-RACK2: {childCellType: A100-NODE, childCellNumber: 2}
    A100-QNODE: {childCellType: A100, childCellNumber: 4, isNodeLevel: true}
    H100-PAIR: {childCellType: H100, childCellNumber: 2}
    H100-QUAD: {childCellType: H100-PAIR, childCellNumber: 2}
    H100-NODE: {childCellType: H100-QUAD, childCellNumber: 2, isNodeLevel: true}
    H100-RACK4: {childCellType: H100-NODE, childCellNumber: 4}
    H100-RACK3: {childCellType: H100-NODE, childCellNumber: 3}
  physicalCells:
  - cellType: A100-RACK4
    cellAddress: ar1
    cellChildren: [{cellAddress: a01}, {cellAddress: a02}, {cellAddress: a03}, {cellAddress: a04}]
  - cellType: H100-RACK4
    cellAddress: hr1
    cellChildren: [{cellAddress: h01}, {cellAddress: h02}, {cellAddress: h03}, {cellAddress: h04}]
  - cellType: A100-RACK4
    cellAddress: ar2
    cellChildren: [{cellAddress: a05}, {cellAddress: a06}, {cellAddress: a07}, {cellAddress: a08}]
  - cellType: A100-RACK2
    cellAddress: ar3
    cellChildren: [{cellAddress: a09}, {cellAddress: a10}]
  - cellType: H100-RACK3
    cellAddress: hr2
    cellChildren: [{cellAddress: h05}, {cellAddress: h06}, {cellAddress: h07}]
  - cellType: A100-RACK2
    cellAddress: ar4
    cellChildren: [{cellAddress: a11}, {cellAddress: a12}]
  - {cellType: A100-QNODE, cellAddress: q01}
  - {cellType: A100-QNODE, cellAddress: q02}
  - {cellType: H100-NODE, cellAddress: h08}
  - {cellType: A100-QNODE, cellAddress: q03}
  - {cellType: H100-NODE, cellAddress: h09}
  - {cellType: A100-QNODE, cellAddress: q04}
virtualClusters:
  research:
    virtualCells:
    - {cellType: A100-RACK4, cellNumber: 1}
    - {cellType: H100-RACK4.H100-NODE, cellNumber: 2}
    - {cellType: A100-QNODE, cellNumber: 2}
  prod:
    virtualCells:
    - {cellType: A100-RACK4.A100-NODE, cellNumber: 3}
    - {cellType: A100-RACK2, cellNumber: 1}
    - {cellType: H100-RACK3, cellNumber: 1}
    - {cellType: H100-NODE, cellNumber: 1}
  dev:
    virtualCells:
    - {cellType: A100-RACK2.A100-NODE, cellNumber: 1}
    - {cellType: A100-RACK4.A100-NODE.A100-NVL, cellNumber: 1}
    - {cellType: A100-QNODE, cellNumber: 1}
    - {cellType: H100-RACK4.H100-NODE.H100-QUAD, cellNumber: 2}
    - {cellType: H100-NODE.H100-QUAD, cellNumber: 1}
"""

def k80_racks_config():
    """A Philly-like cluster built of racks: 40 K80 racks (4-GPU nodes as two
    pairs; racks of 8, 6 and 4 nodes) and 10 P40 racks of 4 nodes (4 GPUs as two
    pairs), 8 VCs holding whole racks, single nodes and pairs."""
    lines = ["physicalCluster:", "  cellTypes:",
             "    K80-PAIR: {childCellType: K80, childCellNumber: 2}",
             "    K80-NODE: {childCellType: K80-PAIR, childCellNumber: 2, isNodeLevel: true}",
             "    K80-RACK8: {childCellType: K80-NODE, childCellNumber: 8}",
             "    K80-RACK6: {childCellType: K80-NODE, childCellNumber: 6}",
             "    K80-RACK4: {childCellType: K80-NODE, childCellNumber: 4}",
             "    P40-PAIR: {childCellType: P40, childCellNumber: 2}",
             "    P40-NODE: {childCellType: P40-PAIR, childCellNumber: 2, isNodeLevel: true}",
             "    P40-RACK: {childCellType: P40-NODE, childCellNumber: 4}",
             "  physicalCells:"]
    node = 0
    racks = {"K80-RACK8": 0, "K80-RACK6": 0, "K80-RACK4": 0, "P40-RACK": 0}
    for r in range(50):
        if r % 5 == 4:
            t, n, prefix = "P40-RACK", 4, "p40"
        else:
            t = ["K80-RACK8", "K80-RACK6", "K80-RACK4"][r % 3]
            n, prefix = int(t[-1]), "k80"
        racks[t] += 1
        kids = []
        for _ in range(n):
            node += 1
            kids.append("{cellAddress: %s-%05d}" % (prefix, node))
        lines.append("  - cellType: %s" % t)
        lines.append("    cellAddress: rack%02d" % r)
        lines.append("    cellChildren: [%s]" % ", ".join(kids))
    # racks: K80-RACK8 14, K80-RACK6 13, K80-RACK4 13, P40-RACK 10
    vcs = {
        "vc1": [("K80-RACK8", 4), ("K80-RACK6.K80-NODE", 12), ("P40-RACK", 2)],
        "vc2": [("K80-RACK8", 3), ("K80-RACK4", 4), ("P40-RACK.P40-NODE", 6)],
        "vc3": [("K80-RACK6", 3), ("K80-RACK8.K80-NODE", 10), ("K80-RACK4.K80-NODE.K80-PAIR", 6)],
        "vc4": [("K80-RACK4", 3), ("K80-RACK6.K80-NODE", 14), ("P40-RACK", 2)],
        "vc5": [("K80-RACK8.K80-NODE", 20), ("K80-RACK4.K80-NODE", 8)],
        "vc6": [("K80-RACK6", 2), ("P40-RACK.P40-NODE", 10)],
        "vc7": [("K80-RACK8", 1), ("K80-RACK6.K80-NODE", 6), ("K80-RACK4.K80-NODE", 6)],
        "vc8": [("K80-RACK8.K80-NODE.K80-PAIR", 8), ("P40-RACK.P40-NODE.P40-PAIR", 4)],
    }
    lines.append("virtualClusters:")
    for vc, cells in vcs.items():
        lines.append("  %s:" % vc)
        lines.append("    virtualCells:")
        for t, n in cells:
            lines.append("    - {cellType: %s, cellNumber: %d}" % (t, n))
    return "\n".join(lines) + "\n"


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


GPU_MIXED_NODES = (["a%02d" % i for i in range(1, 13)] + ["q%02d" % i for i in range(1, 5)] +
                   ["h%02d" % i for i in range(1, 10)])


def gpu_mixed_open_stream(seed, n, lazy=0.3, failures=0.0):
    """A seeded open-loop sequence on the A100/H100 cluster: gangs of 1-4 pods of
    1-8 GPUs, either leaf type or none, priorities -1..100, lazy
    preemption for a share of them, requests repeated, releases and (with
    failures > 0) nodes failing and coming back."""
    rnd = random.Random(seed)
    lines = [json.dumps({"op": "config", "yaml": GPU_MIXED_CONFIG})]
    names, live, groups, bad = [], [], {}, []
    for i in range(n):
        r = rnd.random()
        if r < failures:
            if bad and rnd.random() < 0.5:
                node = bad.pop(rnd.randrange(len(bad)))
                lines.append(json.dumps({"op": "node", "node": node, "healthy": True}))
            else:
                node = rnd.choice(GPU_MIXED_NODES)
                if node not in bad:
                    bad.append(node)
                lines.append(json.dumps({"op": "node", "node": node, "healthy": False}))
            continue
        r = rnd.random()
        if live and r < 0.4:
            # mostly the oldest groups (they finish), sometimes any, sometimes one gone
            if rnd.random() < 0.9:
                g = live.pop(rnd.randrange(min(len(live), 8)))
            else:
                g = rnd.choice(names)
                if g in live:
                    live.remove(g)
            lines.append(json.dumps({"op": "release", "group": g}))
            continue
        if live and r < 0.5:
            # asked again: bound answers its placement, preempting continues or binds
            lines.append(json.dumps(groups[rnd.choice(live)]))
            continue
        name = "g%d" % i
        vc = rnd.choice(["research", "prod", "dev"])
        prio = rnd.choice([-1, -1, 0, 0, 1, 5, 10, 100])
        req = {"op": "schedule", "group": name, "vc": vc, "priority": prio}
        t = rnd.random()
        if t < 0.45:
            req["leafCellType"] = "A100"
        elif t < 0.85:
            req["leafCellType"] = "H100"
        sizes = [1, 1, 1, 2, 2, 4, 4, 8]
        if prio >= 0 and rnd.random() < lazy:
            req["lazy"] = True
        # One member per group: HiveD allocates and releases the members of a
        # group in Go map order, so members of distinct leaf cell numbers make
        # its free lists (and later decisions) differ from run to run.
        req["members"] = [{"podNumber": rnd.choice([1, 1, 1, 2, 3, 4]),
                           "leafCellNumber": rnd.choice(sizes)}]
        names.append(name)
        live.append(name)
        groups[name] = req
        lines.append(json.dumps(req))
    return "\n".join(lines) + "\n"


def k80_racks_open_stream(seed, n, filtering=0.0, suggested=0.0):
    """A seeded open-loop sequence on the K80/P40 rack cluster: gangs of 1-6 pods
    of 1-4 GPUs, releases mostly of the oldest groups, requests repeated; a share
    of the schedule requests carry a suggested node set (each node kept with
    probability 0.9, most of them avoiding the others), a share may not preempt
    (Kubernetes' filtering phase)."""
    import re
    cfg = k80_racks_config()
    nodes = re.findall(r"cellAddress: ((?:k80|p40)-\d+)", cfg)
    rnd = random.Random(seed)
    lines = [json.dumps({"op": "config", "yaml": cfg})]
    live, groups = [], {}
    for i in range(n):
        r = rnd.random()
        if live and r < 0.42:
            g = live.pop(rnd.randrange(min(len(live), 10)))
            lines.append(json.dumps({"op": "release", "group": g}))
            continue
        if live and r < 0.5:
            req = dict(groups[rnd.choice(live)])
        else:
            name = "g%d" % i
            req = {"op": "schedule", "group": name, "vc": "vc%d" % rnd.randint(1, 8),
                   "priority": rnd.choice([-1, -1, 0, 0, 1, 5, 10, 100])}
            t = rnd.random()
            if t < 0.6:
                req["leafCellType"] = "K80"
            elif t < 0.85:
                req["leafCellType"] = "P40"
            if req["priority"] >= 0 and rnd.random() < 0.4:
                req["lazy"] = True
            req["members"] = [{"podNumber": rnd.choice([1, 1, 1, 2, 3, 4, 6]),
                               "leafCellNumber": rnd.choice([1, 1, 2, 2, 4])}]
            live.append(name)
            groups[name] = req
        if rnd.random() < filtering:
            req["preempt"] = False
        if rnd.random() < suggested:
            req["suggestedNodes"] = [x for x in nodes if rnd.random() < 0.9]
            if rnd.random() < 0.8:
                req["ignoreSuggestedNodes"] = False
        lines.append(json.dumps(req))
    return "\n".join(lines) + "\n"


def suggested_open_stream(config, nodes, vcs, leaf_types, seed, n, suggested, sizes):
    """A seeded open-loop sequence with suggested node sets: gangs of 1-4 pods,
    a leaf type for 80% of the groups, lazy preemption for 40% of the guaranteed
    ones, releases mostly of the oldest groups, requests repeated; a share of the
    schedule requests carry a suggested set (each node kept with probability
    0.85, 80% of them avoiding the others)."""
    rnd = random.Random(seed)
    lines = [json.dumps({"op": "config", "yaml": config})]
    live, groups = [], {}
    for i in range(n):
        r = rnd.random()
        if live and r < 0.42:
            g = live.pop(rnd.randrange(min(len(live), 10)))
            lines.append(json.dumps({"op": "release", "group": g}))
            continue
        if live and r < 0.5:
            req = dict(groups[rnd.choice(live)])
        else:
            name = "g%d" % i
            req = {"op": "schedule", "group": name, "vc": rnd.choice(vcs),
                   "priority": rnd.choice([-1, -1, 0, 0, 1, 5, 10, 100])}
            if rnd.random() < 0.8:
                req["leafCellType"] = rnd.choice(leaf_types)
            if req["priority"] >= 0 and rnd.random() < 0.4:
                req["lazy"] = True
            req["members"] = [{"podNumber": rnd.choice([1, 1, 1, 2, 3, 4]),
                               "leafCellNumber": rnd.choice(sizes)}]
            live.append(name)
            groups[name] = req
        if rnd.random() < suggested:
            req["suggestedNodes"] = [x for x in nodes if rnd.random() < 0.85]
            if rnd.random() < 0.8:
                req["ignoreSuggestedNodes"] = False
        lines.append(json.dumps(req))
    return "\n".join(lines) + "\n"


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def with_lazy(trace, seed, fraction=0.5):
    """Marks a seeded share of the guaranteed jobs of a native CSV trace for lazy preemption."""
    rnd = random.Random(seed)
    lines = open(trace).read().splitlines()
    out = []
    cols = None
    for line in lines:
        if line.startswith("#") or not line.strip():
            out.append(line)
            continue
        if cols is None:
            cols = line.split(",")
            out.append(line)
            continue
        f = line.split(",")
        while len(f) < len(cols):
            f.append("")
        if int(f[cols.index("priority")]) >= 0 and rnd.random() < fraction:
            f[cols.index("lazy_preemption")] = "true"
        out.append(",".join(f))
    open(trace, "w").write("\n".join(out) + "\n")


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
        philly = [(n, s, j, sc, PHILLY_LOAD, False, None) for n, s, j, sc in philly]
        # Long streams (nodes freed and taken again many times), lazy preemption, node failures.
        philly += [("philly-long-s%d" % s, s, LONG_JOBS, 1, 1, False, None) for s in (1, 2, 3)]
        philly += [("philly-long-load3-s%d" % s, s + 10, LONG_LOAD3_JOBS, 1, 3, False, None)
                   for s in (1, 2)]
        philly += [("philly3x-s1", 61, PHILLY3X_JOBS, 3, 3, False, None)]
        philly += [("philly-lazy-s%d" % s, s + 20, PHILLY_BUSY_JOBS, 1, 3, True, None)
                   for s in (1, 2)]
        philly += [("philly-faults-s1", 31, LONG_JOBS, 1, 1, False, PHILLY_FAULTS % 31),
                   ("philly-faults-s2", 32, PHILLY_BUSY_JOBS, 1, 3, True, PHILLY_FAULTS % 32)]
        for name, seed, jobs, scale, load, lazy, faults in philly:
            if a.only and name not in a.only:
                continue
            d = os.path.join(tmp, name)
            run([a.paictl, "simulate", "generate", "--jobs", str(jobs), "--seed", str(seed),
                 "--load", str(load), "--opportunistic", "0.2", "--scale", str(scale),
                 "--cluster-out", d, "--format", "csv", "--out", os.path.join(d, "trace.csv")])
            if lazy:
                with_lazy(os.path.join(d, "trace.csv"), seed)
            out = os.path.join(tmp, name + ".jsonl")
            extra = []
            if "suggested" in name:
                extra = ["--suggested-fraction", str(SUGGESTED_FRACTION), "--suggested-seed",
                         str(seed)]
            if faults:
                extra += ["--faults", faults]
            record_trace(a.paictl, d, os.path.join(d, "trace.csv"), out, extra)
            streams[name + ".jsonl"] = open(out).read()
        mixed = os.path.join(tmp, "gpu-mixed")
        os.makedirs(mixed, exist_ok=True)
        with open(os.path.join(mixed, "hivedscheduler.yaml"), "w") as f:
            f.write(GPU_MIXED_CONFIG)
        racks = os.path.join(tmp, "k80-racks")
        os.makedirs(racks, exist_ok=True)
        with open(os.path.join(racks, "hivedscheduler.yaml"), "w") as f:
            f.write(k80_racks_config())
        for name, seed, jobs, load, lazy, faults in GPU_MIXED_STREAMS + K80_RACKS_STREAMS:
            if a.only and name not in a.only:
                continue
            trace = os.path.join(tmp, name + ".csv")
            cfg = racks if name.startswith("k80-racks") else mixed
            run([a.paictl, "simulate", "generate", "--config", cfg, "--jobs", str(jobs),
                 "--seed", str(seed), "--load", str(load), "--opportunistic", "0.2",
                 "--format", "csv", "--out", trace])
            if lazy:
                with_lazy(trace, seed)
            out = os.path.join(tmp, name + ".jsonl")
            record_trace(a.paictl, cfg, trace, out,
                         ["--faults", faults % seed] if faults else [])
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
    streams["gpu-mixed-open-s1.jsonl"] = gpu_mixed_open_stream(51, 3000, lazy=0.0)
    streams["gpu-mixed-open-lazy-s2.jsonl"] = gpu_mixed_open_stream(52, 3000, lazy=0.5)
    streams["gpu-mixed-open-faults-s3.jsonl"] = gpu_mixed_open_stream(53, 3000, lazy=0.0,
                                                                      failures=0.01)
    streams["gpu-mixed-open-lazy-faults-s4.jsonl"] = gpu_mixed_open_stream(54, 3000, lazy=0.5,
                                                                           failures=0.02)
    streams["k80-racks-open-suggested-s1.jsonl"] = k80_racks_open_stream(201, 4000, suggested=0.3)
    streams["k80-racks-open-suggested-s2.jsonl"] = k80_racks_open_stream(203, 4000, suggested=0.3)
    streams["k80-racks-open-filtering-s3.jsonl"] = k80_racks_open_stream(207, 4000, filtering=0.2,
                                                                         suggested=0.3)
    streams["gpu-mixed-open-suggested-s5.jsonl"] = suggested_open_stream(
        GPU_MIXED_CONFIG, GPU_MIXED_NODES, ["research", "prod", "dev"], ["A100", "H100"], 301,
        4000, 0.4, [1, 1, 2, 2, 4, 8])
    streams["hived-test-open-suggested-s2.jsonl"] = suggested_open_stream(
        HIVED_TEST_CONFIG, HIVED_TEST_NODES, ["vc1", "vc2"], ["K80", "DGX"], 310, 3000, 0.4,
        [1, 2, 4, 8])
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
