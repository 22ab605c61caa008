#!/bin/sh
# Benchmarks for `paictl check config` and start-up (docs/benchmarks.md).
#   scripts/bench-check-config.sh [BUILD_DIR]
# Needs a built paictl (scripts/build.sh). Prints medians of repeated runs, side by side.
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
PAICTL=$BUILD/paictl
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# median_ms RUNS CMD...: median wall time of RUNS runs, in milliseconds, and the
# median CPU time (user + system) of the child, which other load disturbs less.
median_ms() {
  runs=$1; shift
  python3 - "$runs" "$@" <<'PY'
import os, subprocess, sys, time, statistics
runs = int(sys.argv[1]); cmd = sys.argv[2:]
wall, cpu = [], []
for _ in range(runs):
    before = os.times()
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall.append((time.perf_counter() - t) * 1000)
    after = os.times()
    cpu.append(((after.children_user - before.children_user) + (after.children_system - before.children_system)) * 1000)
print("%.2f ms wall, %.1f ms cpu" % (statistics.median(wall), statistics.median(cpu)))
PY
}

python3 scripts/gen-cluster.py 10000 "$TMP/cluster-10k" >/dev/null
python3 scripts/gen-cluster.py 1000 "$TMP/cluster-1k" >/dev/null
"$PAICTL" check config "$TMP/cluster-10k" >/dev/null || { echo "generated cluster does not validate" >&2; exit 1; }

echo "machine: $(nproc) cores, $(uname -r)"
# Interleave the two commands so that load on the machine affects both alike.
for round in 1 2 3; do
  t_true=$(median_ms 200 /bin/true)
  t_ver=$(median_ms 200 "$PAICTL" --version)
  echo "round $round: /bin/true ${t_true}   paictl --version ${t_ver}"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "check config, 1,000 machines:  $(median_ms 21 "$PAICTL" check config "$TMP/cluster-1k") (median of 21)"
echo "check config, 10,000 machines: $(median_ms 21 "$PAICTL" check config "$TMP/cluster-10k") (median of 21)"
echo "check config, 10,000 machines, -o json: $(median_ms 21 "$PAICTL" check config -o json "$TMP/cluster-10k")"
if command -v valgrind >/dev/null 2>&1; then
  valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$PAICTL" check config "$TMP/cluster-10k" \
    >/dev/null 2>"$TMP/cg.log" || true
  echo "check config, 10,000 machines: $(grep -E 'Collected' "$TMP/cg.log" | awk '{print $4}') instructions (callgrind)"
fi
