#!/bin/sh
# The install engine by its own cost (docs/benchmarks.md, "install engine cost"):
# for each host count N, a fresh N-host testbed and
#   plan-N    install --dry-run -o json    (the plan of fresh hosts)
#   full-N    install --yes -o json        (a full install)
#   noop-N    install --yes -o json        (a re-run with nothing to do)
# Each line has what `stats` of the run's JSON says (the most SSH sessions,
# commands and bytes sent on any host; paictl's own CPU, user + system) and
# paictl's CPU per host. The hosts' own work is not counted: it runs on the
# same cores here, and on machines of their own in a real cluster.
#
#   scripts/bench-engine.sh [N...]     (default 10 100; the testbed runs up to 1000)
#   PAICTL=path   the binary (default build/paictl)
#   PLAN_ONLY=1   only plan-N
#   PARALLEL=N    hosts at once (default 64, install's own default)
#
# Needs root (the testbed).
set -eu
cd "$(dirname "$0")/.."
PAICTL=${PAICTL:-build/paictl}
TESTBED=scripts/testbed.sh
"$TESTBED" can-run >/dev/null || exit 77
[ -x "$PAICTL" ] || { echo "bench-engine: build paictl first or set PAICTL" >&2; exit 2; }
[ $# -gt 0 ] || set -- 10 100
export PAICTL_TEMPLATES=${PAICTL_TEMPLATES:-$(pwd)/templates}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/paictl-bench-engine.XXXXXX")
BED=""
cleanup() { [ -n "$BED" ] && "$TESTBED" down "$BED" >/dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM

# NAME N COMMAND...: runs it, prints its stats line.
run() {
  name=$1 n=$2; shift 2
  t0=$(date +%s.%N)
  set +e
  "$@" > "$WORK/$name.json" 2> "$WORK/$name.err"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  python3 - "$WORK/$name.json" "$name" "$n" "$rc" "$(echo "$t1 - $t0" | bc)" <<'PY' || { tail -5 "$WORK/$name.err" >&2; exit 1; }
import json, sys
path, name, n, rc, wall = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
try:
    d = json.load(open(path))
except ValueError:
    sys.exit("bench-engine: %s printed no JSON (exit %d)" % (name, rc))
s = d.get("stats")
if not s:
    sys.exit("bench-engine: %s: no stats in its JSON (exit %d)" % (name, rc))
changed = (d.get("result") or d.get("plan") or {}).get("changed")
print("%-10s exit %d  hosts %4d  sessions/host %2d  commands/host %4d  bytes sent/host %8d  "
      "paictl CPU %7.3f s = %6.2f ms a host  wall %7.2f s  changed %s"
      % (name, rc, s["hosts"], s["sessionsPerHost"], s["commandsPerHost"], s["bytesSentPerHost"],
         s["cpuSeconds"], s["cpuSeconds"] * 1000 / max(s["hosts"], 1), wall, changed))
PY
}

echo "machine: $(nproc) cores, $(uname -r); paictl $("$PAICTL" version 2>/dev/null | head -1)"
for n in "$@"; do
  BED=$WORK/bed-$n
  "$TESTBED" up "$n" "$BED" --base 127.0.93 --rollout-delay 0.1 > "$WORK/up-$n.log" 2>&1 ||
    { echo "bench-engine: testbed.sh up $n failed:" >&2; tail -20 "$WORK/up-$n.log" >&2; exit 1; }
  # ClockSkew too: the testbed's hosts share this machine's clock, so a skew it measures
  # is only how late an answer arrived (1,000 hosts on 2 cores answer seconds late).
  A="--ssh-config $BED/ssh_config --ignore-check-errors CPU,DNS,DiskFree,ClockSkew --parallel ${PARALLEL:-64} -o json"
  # shellcheck disable=SC2086
  run "plan-$n" "$n" "$PAICTL" install "$BED/cluster" $A --dry-run
  if [ "${PLAN_ONLY:-0}" != 1 ]; then
    # shellcheck disable=SC2086
    run "full-$n" "$n" "$PAICTL" install "$BED/cluster" $A --yes --wait 600
    # shellcheck disable=SC2086
    run "noop-$n" "$n" "$PAICTL" install "$BED/cluster" $A --yes
  fi
  "$TESTBED" down "$BED" > /dev/null 2>&1
  BED=""
done
