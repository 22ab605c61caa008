#!/bin/sh
# paictl hived status and hived diff --live on a 10x Philly cluster (5,520 nodes)
# with 10,000 running groups, and hived why with its reason codes and wouldFit on
# 1,500 nodes with 2,000 running groups (BENCH_HIVED=why: that one only), served by the HiveD test server on loopback
# (tests/integration/hived/hived_test_server.cc). Prints the time each command
# takes after HiveD's answers arrive (parsing, indexing, computing, printing;
# `-v` reports it, with the process's CPU time over the same span), the HTTP
# time and the answers' size, best of RUNS runs.
#
#   scripts/bench-hived.sh [BUILD-DIR] [RUNS]      (default: build, 5)
set -eu
BUILD=${1:-build}
RUNS=${2:-5}
PAICTL=$BUILD/paictl
SERVER=$BUILD/tests/integration/hived/hived_test_server
[ -x "$PAICTL" ] && [ -x "$SERVER" ] || { echo "build paictl and hived_test_server in $BUILD first" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/paictl-bench-hived.XXXXXX")
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT INT TERM

best() {
  what=$1; shift
  b="" bc=""
  for r in $(seq "$RUNS"); do
    "$PAICTL" "$@" -v >/dev/null 2>"$TMP/err" || [ $? -eq 0 ] || true
    line=$(grep "after they arrived" "$TMP/err" || true)
    [ -n "$line" ] || { cat "$TMP/err" >&2; exit 1; }
    ms=$(echo "$line" | sed 's/.*; \([0-9.]*\) ms after.*/\1/')
    http=$(echo "$line" | sed 's/.* in \([0-9.]*\) ms;.*/\1/')
    bytes=$(echo "$line" | sed 's/.*answers (\([0-9]*\) bytes).*/\1/')
    cpu=$(echo "$line" | sed -n 's/.*(\([0-9.]*\) ms of CPU).*/\1/p')
    if [ -z "$b" ] || awk "BEGIN{exit !($ms < $b)}"; then b=$ms; bh=$http; bb=$bytes; fi
    if [ -n "$cpu" ] && { [ -z "$bc" ] || awk "BEGIN{exit !($cpu < $bc)}"; }; then bc=$cpu; fi
  done
  echo "$what: $b ms after the answers arrived (HTTP $bh ms, $bb bytes; best of $RUNS); ${bc:-?} ms of CPU (best)"
}
if [ "${BENCH_HIVED:-all}" != why ]; then
"$PAICTL" simulate generate --scale 10 --jobs 1 --cluster-out "$TMP/old" --out "$TMP/trace.json" >/dev/null
# The scenario: 10,000 groups (1, 2, 4 or 8 GPUs, Philly's mix; what does not fit
# in its VC runs opportunistically); the new config moves a tenth of vc01's
# cells to vc02.
python3 - "$TMP" <<'PY'
import json, random, re, sys, os
tmp = sys.argv[1]
cfg = open(os.path.join(tmp, "old", "hivedscheduler.yaml")).read()
vcs = sorted(set(re.findall(r"^  (vc\d+):", cfg, re.M)))
rnd = random.Random(7)
steps = []
for i in range(10000):
    gpus = rnd.choices([1, 2, 4, 8], [60, 25, 10, 5])[0]
    leaf = "P100" if gpus <= 2 and rnd.random() < 0.5 else "P40"
    prio = -1 if rnd.random() < 0.2 else 100
    steps.append({"schedule": {"group": "g%05d" % i, "vc": rnd.choice(vcs), "priority": prio,
                               "pods": [[1, gpus]], "leafType": leaf, "preempt": False,
                               "orOpportunistic": True}})
json.dump({"config": "old/hivedscheduler.yaml", "steps": steps}, open(os.path.join(tmp, "bench.json"), "w"))
# New config: vc01 gives a tenth of each of its cell counts to vc02.
out, vc, ct, moved = [], None, None, {}
for line in cfg.split("\n"):
    m = re.match(r"^  (vc\d+):", line)
    if m: vc = m.group(1)
    m = re.match(r"^    - cellType: (\S+)", line)
    if m: ct = m.group(1)
    m = re.match(r"^(      cellNumber: )(\d+)$", line)
    if m and vc in ("vc01", "vc02"):
        n = int(m.group(2))
        if vc == "vc01":
            k = max(1, n // 10); moved[ct] = k; n -= k
        else:
            n += moved.pop(ct, 0)
        line = m.group(1) + str(n)
    out.append(line)
os.makedirs(os.path.join(tmp, "new"), exist_ok=True)
open(os.path.join(tmp, "new", "hivedscheduler.yaml"), "w").write("\n".join(out))
PY
"$SERVER" "$TMP/bench.json" "$TMP/port" >"$TMP/server.log" 2>&1 &
PID=$!
i=0
while [ ! -s "$TMP/port" ]; do
  i=$((i + 1)); [ "$i" -lt 1200 ] || { cat "$TMP/server.log" >&2; exit 1; }
  sleep 0.1
done
URL="http://127.0.0.1:$(cat "$TMP/port")"
GROUPS=$("$PAICTL" hived status --hived "$URL" -o json | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['groups'], len(d['nodes']))")
echo "cluster: $GROUPS (groups, nodes)"
best "hived status" hived status --hived "$URL"
best "hived status -o json" hived status --hived "$URL" -o json
best "hived diff --live" hived diff "$TMP/old" "$TMP/new" --live --hived "$URL"
kill "$PID" 2>/dev/null; PID=""
fi

# hived why with reason codes and wouldFit: 1,500 8-GPU nodes (12,000 GPUs, 150
# racks of 10) in ten VCs, 2,000 running groups named as OpenPAI names them
# (USER~JOB/default), and a REST test server whose job list gives each running
# job's launch and each user's finished jobs (their median run time is the
# expected duration). vc01 is full: a waiting 4 x 8-GPU group is judged, its
# codes found and wouldFit replayed over the running groups' expected ends.
# The time after the answers arrived includes reading the job list.
python3 - "$TMP" <<'PY'
import json, random, os, sys
tmp = sys.argv[1]
rnd = random.Random(11)
nodes = ["n%04d" % i for i in range(1500)]
lines = ["physicalCluster:", "  skuTypes:", "    V100: {gpu: 1, cpu: 6, memory: 60Gi}", "  cellTypes:",
         "    V100-NODE: {childCellType: V100, childCellNumber: 8, isNodeLevel: true}",
         "    V100-RACK: {childCellType: V100-NODE, childCellNumber: 10}", "  physicalCells:"]
for r in range(150):
    lines.append("  - cellType: V100-RACK")
    lines.append("    cellChildren: [" + ", ".join("{cellAddress: %s}" % n for n in nodes[r * 10:r * 10 + 10]) + "]")
lines.append("virtualClusters:")
vcs = ["vc%02d" % (i + 1) for i in range(10)]
for vc in vcs:
    lines += ["  %s:" % vc, "    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 150}]"]
os.makedirs(os.path.join(tmp, "why"), exist_ok=True)
open(os.path.join(tmp, "why", "hivedscheduler.yaml"), "w").write("\n".join(lines) + "\n")
steps, jobs = [], []
users = ["u%02d" % i for i in range(40)]
for i in range(2000):
    vc = "vc01" if i < 200 else rnd.choice(vcs[1:])
    pods, gpus = ([1, 8] if i < 150 else [1, 4]) if i < 200 else rnd.choice([[1, 1], [1, 2], [1, 4], [1, 8], [2, 8]])
    user = rnd.choice(users)
    name = "job%04d" % i
    steps.append({"schedule": {"group": "%s~%s/default" % (user, name), "vc": vc, "priority": 100,
                               "pods": [[pods, gpus]], "leafType": "V100", "preempt": False,
                               "orOpportunistic": True}})
    jobs.append({"user": user, "name": name, "vc": vc, "plan": ["RUNNING"], "gpus": pods * gpus,
                 "ageSeconds": rnd.randint(60, 20000), "launchDelayMs": 0})
for u in users:
    for k in range(5):
        jobs.append({"user": u, "name": "done%d" % k, "vc": "vc01", "plan": ["SUCCEEDED"], "gpus": 8,
                     "ageSeconds": 90000, "launchDelayMs": 0, "runMs": rnd.randint(1, 12) * 3600000})
json.dump({"config": "hivedscheduler.yaml", "steps": steps}, open(os.path.join(tmp, "why", "bench.json"), "w"))
rest = {"version": "v1.8.0", "authnMethod": "basic",
        "users": {"alice": {"password": "alice-pass-1", "admin": True, "virtualCluster": vcs}},
        "virtualClusters": {vc: {"capacity": 10} for vc in vcs}, "jobs": jobs}
json.dump(rest, open(os.path.join(tmp, "why", "rest.json"), "w"))
PY
rm -f "$TMP/port"
"$SERVER" "$TMP/why/bench.json" "$TMP/port" >"$TMP/server.log" 2>&1 &
PID=$!
i=0
while [ ! -s "$TMP/port" ]; do
  i=$((i + 1)); [ "$i" -lt 1200 ] || { cat "$TMP/server.log" >&2; exit 1; }
  sleep 0.1
done
URL="http://127.0.0.1:$(cat "$TMP/port")"
SRC=$(cd "$(dirname "$0")/.." && pwd)
python3 "$SRC/tests/integration/rest/rest_fixture.py" start "$TMP/rest" bench="$TMP/why/rest.json" >/dev/null
. "$TMP/rest/env.sh"
export XDG_CONFIG_HOME="$TMP/config" HOME="$TMP/home"
echo alice-pass-1 | "$PAICTL" cluster add bench --uri "$BENCH_URI" --user alice --password-stdin --hived "$URL" >/dev/null
GROUPS=$("$PAICTL" hived status --hived "$URL" -o json | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['groups'], len(d['nodes']), sum(n['leafCells'] for n in d['nodes']))")
echo "cluster: $GROUPS (groups, nodes, GPUs)"
"$PAICTL" hived why wait --cluster bench --vc vc01 --priority 100 --pods 4 --gpus 8 --leaf-type V100 -o json |
  python3 -c "import json,sys; d=json.load(sys.stdin); print('why: %s %s; wouldFit %s' % (d['verdict'], [r['code'] for r in d['reasons']], d['wouldFit']['text']))"
# The whole process's CPU (user + system, an upper bound of its CPU after the answers
# arrived, which -v prints too), best of RUNS.
bc=""
for r in $(seq "$RUNS"); do
  /usr/bin/time -f "%U %S %e" -o "$TMP/time" "$PAICTL" hived why wait --cluster bench --vc vc01 --priority 100 --pods 4 --gpus 8 --leaf-type V100 >/dev/null
  cpu=$(awk '{printf "%.0f", ($1 + $2) * 1000}' "$TMP/time")
  if [ -z "$bc" ] || [ "$cpu" -lt "$bc" ]; then bc=$cpu; bw=$(awk '{print $3}' "$TMP/time"); fi
done
echo "hived why (codes, wouldFit): $bc ms of CPU for the whole process (best of $RUNS; ${bw} s wall with the answers)"
python3 "$SRC/tests/integration/rest/rest_fixture.py" stop "$TMP/rest" >/dev/null
