#!/bin/sh
# End-to-end speed and memory of `paictl simulate` on Philly-shaped clusters and
# Philly-like traces (generated, seeded): wall time and peak RSS of the real
# binary, parsing included, for growing trace lengths and cluster sizes.
#
#   scripts/bench-simulate.sh [PAICTL] [JOBS...]     (default: build/paictl; 10000 100000 1000000)
#
# Prints one line per run: scale, jobs, format, policies, wall seconds, CPU
# seconds (user + system: the figure to compare on a shared, loaded machine),
# peak MB.
set -eu
cd "$(dirname "$0")/.."
PAICTL=${1:-build/paictl}
[ $# -gt 0 ] && shift
SIZES=${*:-10000 100000 1000000}
[ -x "$PAICTL" ] || { echo "no paictl at $PAICTL (build it first)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time (/usr/bin/time, Debian package 'time')" >&2; exit 2; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/paictl-bench-sim.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM

measure() {  # measure LABEL ARGS...: runs paictl, prints wall and CPU seconds and peak RSS
  label=$1
  shift
  /usr/bin/time -f "%e %U %S %M" -o "$DIR/time" "$PAICTL" "$@" >"$DIR/out" 2>"$DIR/err" || {
    echo "$label: paictl failed" >&2
    cat "$DIR/err" >&2
    exit 1
  }
  read -r secs user sys kb <"$DIR/time"
  cpu=$(awk "BEGIN { print $user + $sys }")
  printf '%-44s %8.2f s %8.2f s %8.0f MB\n' "$label" "$secs" "$cpu" "$((kb / 1024))"
}

printf '%-44s %10s %10s %11s\n' "run" "wall" "CPU" "peak RSS"
for scale in 1 10; do
  "$PAICTL" -q simulate generate --jobs 1 --scale "$scale" --cluster-out "$DIR/c$scale" --out "$DIR/unused.json"
  for jobs in $SIZES; do
    for fmt in philly csv; do
      [ "$fmt" = csv ] && [ "$jobs" -lt 1000000 ] && continue  # CSV only for the memory run
      ext=json
      [ "$fmt" = csv ] && ext=csv
      trace="$DIR/t-$scale-$jobs.$ext"
      "$PAICTL" -q simulate generate --jobs "$jobs" --seed 7 --scale "$scale" --format "$fmt" --out "$trace"
      measure "scale ${scale}x, $jobs jobs ($fmt), hived" simulate --config "$DIR/c$scale" --trace "$trace" \
        --policy hived --overflow -o json
      if [ "$jobs" -eq 100000 ]; then
        measure "scale ${scale}x, $jobs jobs ($fmt), all 4 policies" simulate --config "$DIR/c$scale" --trace "$trace" \
          --policy hived,quota,k8s-default,private --overflow -o json
        measure "scale ${scale}x, $jobs jobs ($fmt), hived + report" simulate --config "$DIR/c$scale" --trace "$trace" \
          --policy hived --overflow -o json --report "$DIR/report"
      fi
      rm -f "$trace"
    done
  done
done
