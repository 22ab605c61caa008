#!/bin/sh
# Benchmark of paictl upgrade on the testbed (docs/benchmarks.md, "upgrade"): a
# master and N GPU workers installed at Kubernetes 1.30, then `paictl upgrade
# --to 1.31` with the default batches (one node at a time: cordon, drain, the
# packages, the kubelet restarted, verified, uncordoned). The target is about
# paictl's own CPU (user + system, from GNU time) against the run's wall time:
# <= 5 %; the rest is the hosts and the waits.
#
#   scripts/bench-upgrade.sh [N]       (default 50 workers)
#   PAICTL=path   the binary (default build/paictl)
#
# Needs root (the testbed) and GNU time (/usr/bin/time).
set -eu
cd "$(dirname "$0")/.."
PAICTL=${PAICTL:-build/paictl}
N=${1:-50}
TESTBED=scripts/testbed.sh
"$TESTBED" can-run >/dev/null || exit 77
[ -x "$PAICTL" ] || { echo "bench-upgrade: build paictl first or set PAICTL" >&2; exit 2; }
export PAICTL_TEMPLATES=${PAICTL_TEMPLATES:-$(pwd)/templates}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/paictl-bench-upgrade.XXXXXX")
BED=$WORK/bed
cleanup() { "$TESTBED" down "$BED" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM
export XDG_CONFIG_HOME="$WORK/config" HOME="$WORK/home"
now() { date +%s.%N; }
load() { cut -d' ' -f1 /proc/loadavg; }
timed() {  # NAME COMMAND...: wall, exit, paictl's CPU and the load average
  name=$1; shift
  l0=$(load)
  t0=$(now); set +e; /usr/bin/time -f '%U %S %M' -o "$WORK/$name.cpu" "$@" >"$WORK/$name.log" 2>&1; rc=$?; set -e; t1=$(now)
  wall=$(echo "$t1 - $t0" | bc)
  cpu=$(tail -n 1 "$WORK/$name.cpu" | awk '{printf "%.2f", $1 + $2}')
  rss=$(tail -n 1 "$WORK/$name.cpu" | awk '{printf "%.0f", $3 / 1024}')
  printf '%-10s %8.2f s  (exit %d)  paictl CPU %s s (%s %% of wall)  max RSS %s MB  load %s -> %s\n' "$name" "$wall" "$rc" \
    "$cpu" "$(awk "BEGIN { printf \"%.2f\", 100 * $cpu / $wall }")" "$rss" "$l0" "$(load)"
  [ "$rc" -eq 0 ] || { tail -n 30 "$WORK/$name.log" >&2; exit 1; }
}
echo "machine: $(nproc) cores, $(uname -r); $N workers"
"$TESTBED" up $((N + 1)) "$BED" --base 127.0.64 --rollout-delay 0.1 >"$WORK/up.log" 2>&1 ||
  { echo "bench-upgrade: testbed.sh up failed:" >&2; cat "$WORK/up.log" >&2; exit 1; }
A="--ssh-config $BED/ssh_config"
timed install "$PAICTL" install "$BED/cluster" $A --ignore-check-errors CPU,DNS,DiskFree,RunningKubernetes --wait 300 --yes
timed upgrade "$PAICTL" upgrade "$BED/cluster" $A --to 1.31 --yes
grep -E "^upgraded|nodes" "$WORK/upgrade.log" | tail -n 3 || true
