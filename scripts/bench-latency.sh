#!/bin/sh
# Latency-bound hosts (docs/benchmarks.md, "latency-bound hosts"): every call of
# a testbed fake sleeps S seconds first (testbed.sh up --call-latency S), standing
# in for real hosts whose work is slow and off this machine, so that the hosts'
# waits, not this machine's cores, set the time. Then
#   single    a full install of a master and one worker
#   full-N    a full install of a master and N-1 workers
# and their ratio (target: full-50 <= 1.3 x single: the engine never serialises
# hosts). Each line has the wall time, the fake calls of the busiest host (from the
# hosts' invocation logs) and paictl's stats.
#
#   scripts/bench-latency.sh [N [S]]     (default 50 2)
#   PAICTL=path   the binary (default build/paictl)
#
# Needs root (the testbed).
set -eu
cd "$(dirname "$0")/.."
PAICTL=${PAICTL:-build/paictl}
N=${1:-50}
S=${2:-2}
TESTBED=scripts/testbed.sh
"$TESTBED" can-run >/dev/null || exit 77
[ -x "$PAICTL" ] || { echo "bench-latency: build paictl first or set PAICTL" >&2; exit 2; }
export PAICTL_TEMPLATES=${PAICTL_TEMPLATES:-$(pwd)/templates}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/paictl-bench-latency.XXXXXX")
BED=""
cleanup() { [ -n "$BED" ] && "$TESTBED" down "$BED" >/dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM

# NAME HOSTS: a fresh testbed of HOSTS hosts, a full install, its line; sets W_NAME.
install() {
  name=$1 n=$2
  BED=$WORK/bed-$name
  "$TESTBED" up "$n" "$BED" --base 127.0.94 --rollout-delay 0.1 --call-latency "$S" > "$WORK/up-$name.log" 2>&1 ||
    { echo "bench-latency: testbed.sh up $n failed:" >&2; tail -20 "$WORK/up-$name.log" >&2; exit 1; }
  t0=$(date +%s.%N)
  set +e
  "$PAICTL" install "$BED/cluster" --ssh-config "$BED/ssh_config" --ignore-check-errors CPU,DNS,DiskFree \
    --parallel "$n" --wait 900 --yes -o json > "$WORK/$name.json" 2> "$WORK/$name.err"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  wall=$(echo "$t1 - $t0" | bc)
  eval "W_$name=$wall"
  python3 - "$WORK/$name.json" "$BED" "$name" "$rc" "$wall" <<'PY' || { tail -5 "$WORK/$name.err" >&2; exit 1; }
import json, os, sys
path, bed, name, rc, wall = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
calls = {}
for h in os.listdir(bed + "/hosts"):
    try:
        with open(bed + "/hosts/%s/invocations.jsonl" % h) as f:
            calls[h] = sum(1 for l in f if '"event": "start"' in l)
    except OSError:
        pass
most = max(calls.items(), key=lambda kv: kv[1]) if calls else ("-", 0)
try:
    s = json.load(open(path)).get("stats", {})
except ValueError:
    s = {}
print("%-8s exit %d  wall %7.1f s  fake calls on the busiest host %d (%s)  sessions/host %s  paictl CPU %s s"
      % (name, rc, wall, most[1], most[0], s.get("sessionsPerHost"), s.get("cpuSeconds")))
if rc != 0:
    sys.exit(1)
PY
  "$TESTBED" down "$BED" > /dev/null 2>&1
  BED=""
}

echo "machine: $(nproc) cores, $(uname -r); each fake call waits $S s"
install single 2
install "full$N" "$N"
eval "full=\$W_full$N"
awk -v f="$full" -v s="$W_single" -v n="$N" 'BEGIN { printf "full-%d / single: %.2f x  (target <= 1.3; %.1f s / %.1f s)\n", n, f / s, f, s }'
