#!/bin/sh
# The build's own cost: the CPU time (user + sys) and wall time of building
# libpai and paictl from scratch (RelWithDebInfo, tests off, the project's
# default options, no compiler cache), for one or more commits.
#   scripts/bench-build.sh [REV...] [-- CMAKE_ARGS...]   (default REV: HEAD)
# e.g. scripts/bench-build.sh b9d1742 HEAD
#      scripts/bench-build.sh HEAD -- -DPAI_UNITY=OFF
# Each commit is checked out into a temporary directory; nothing here changes.
set -eu
cd "$(dirname "$0")/.."
revs=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do revs="$revs $1"; shift; done
[ "${1:-}" = "--" ] && shift
[ -n "$revs" ] || revs=HEAD
JOBS=$(nproc 2>/dev/null || echo 2)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/paictl-bench-build.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
for rev in $revs; do
  src=$TMP/src
  rm -rf "$src" "$TMP/build"
  git worktree add -q --detach "$src" "$rev"
  CMAKE_CXX_COMPILER_LAUNCHER='' cmake -S "$src" -B "$TMP/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPAI_BUILD_TESTS=OFF "$@" >/dev/null
  /usr/bin/time -f "%U %S %e %M" -o "$TMP/time" cmake --build "$TMP/build" -j "$JOBS" >"$TMP/log" 2>&1 ||
    { tail -20 "$TMP/log" >&2; git worktree remove --force "$src"; exit 1; }
  read -r user sys wall rss <"$TMP/time"
  steps=$(grep -c '^\[' "$TMP/log" || true)
  printf '%s (%s): CPU %.1f s (user %s + sys %s), wall %s s, %s steps, max RSS %s MB, load %s\n' \
    "$rev" "$(git rev-parse --short "$rev")" "$(awk "BEGIN { print $user + $sys }")" "$user" "$sys" "$wall" \
    "$steps" "$((rss / 1024))" "$(cut -d' ' -f1-3 /proc/loadavg)"
  git worktree remove --force "$src"
done
