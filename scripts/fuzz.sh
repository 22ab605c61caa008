#!/bin/sh
# Builds the libFuzzer targets with clang and runs each for a while.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60 s, all targets)
# Crashes are written to tests/fuzz/artifacts/; the corpus grows in build-fuzz/corpus/<target>.
set -eu
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
[ $# -gt 0 ] && shift
JOBS=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DPAI_BUILD_FUZZERS=ON -DPAI_BUILD_TESTS=OFF >/dev/null
TARGETS=${*:-$(cd tests/fuzz && ls fuzz_*.cc | sed 's/\.cc$//')}
cmake --build build-fuzz -j "$JOBS" --target $TARGETS
mkdir -p tests/fuzz/artifacts
status=0
for t in $TARGETS; do
  name=${t#fuzz_}
  corpus=build-fuzz/corpus/$t
  mkdir -p "$corpus"
  seeds=""
  [ -d "tests/fuzz/seeds/$name" ] && seeds="tests/fuzz/seeds/$name"
  echo "==> $t for ${SECONDS_PER_TARGET}s"
  if ! ASAN_OPTIONS=detect_leaks=1 ./build-fuzz/tests/fuzz/$t "$corpus" $seeds \
      -max_total_time="$SECONDS_PER_TARGET" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix=tests/fuzz/artifacts/"$t"- -print_final_stats=1 2>build-fuzz/$t.log; then
    echo "$t found a problem; see build-fuzz/$t.log and tests/fuzz/artifacts/" >&2
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov:" build-fuzz/$t.log | tail -3
done
exit $status
