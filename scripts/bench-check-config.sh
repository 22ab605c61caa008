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

# median_ms RUNS CMD...: median wall time of RUNS runs, in milliseconds
median_ms() {
  runs=$1; shift
  python3 - "$runs" "$@" <<'PY'
import subprocess, sys, time, statistics
runs = int(sys.argv[1]); cmd = sys.argv[2:]
times = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append((time.perf_counter() - t) * 1000)
print("%.2f" % statistics.median(times))
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
  echo "round $round: /bin/true ${t_true} ms   paictl --version ${t_ver} ms"
done
echo "check config, 1,000 machines:  $(median_ms 21 "$PAICTL" check config "$TMP/cluster-1k") ms (median of 21)"
echo "check config, 10,000 machines: $(median_ms 21 "$PAICTL" check config "$TMP/cluster-10k") ms (median of 21)"
echo "check config, 10,000 machines, -o json: $(median_ms 21 "$PAICTL" check config -o json "$TMP/cluster-10k") ms"
if command -v valgrind >/dev/null 2>&1; then
  valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$PAICTL" check config "$TMP/cluster-10k" \
    >/dev/null 2>"$TMP/cg.log" || true
  echo "check config, 10,000 machines: $(grep -E 'Collected' "$TMP/cg.log" | awk '{print $4}') instructions (callgrind)"
fi
