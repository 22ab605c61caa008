#!/bin/sh
# Builds the libFuzzer targets with clang and runs each for a given time.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60 s, every target)
# Every tests/fuzz/fuzz_*.cc is a target. Crashes are written to tests/fuzz/artifacts/;
# the corpus grows in build-fuzz/corpus/<target>. At the end a table gives, per target,
# the executions, executions per second, peak memory and the result, for docs/fuzzing.md.
# FUZZ_MAX_LEN (default 65536) bounds the input size.
set -eu
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
[ $# -gt 0 ] && shift
JOBS=$(nproc 2>/dev/null || echo 2)
MAX_LEN=${FUZZ_MAX_LEN:-65536}
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DPAI_BUILD_FUZZERS=ON -DPAI_BUILD_TESTS=OFF >/dev/null
TARGETS=${*:-$(cd tests/fuzz && ls fuzz_*.cc | sed 's/\.cc$//')}
cmake --build build-fuzz -j "$JOBS" --target $TARGETS
mkdir -p tests/fuzz/artifacts
status=0
summary=""
for t in $TARGETS; do
  name=${t#fuzz_}
  corpus=build-fuzz/corpus/$t
  mkdir -p "$corpus"
  seeds=""
  [ -d "tests/fuzz/seeds/$name" ] && seeds="tests/fuzz/seeds/$name"
  echo "==> $t for ${SECONDS_PER_TARGET}s"
  result=ok
  if ! ASAN_OPTIONS=detect_leaks=1 ./build-fuzz/tests/fuzz/$t "$corpus" $seeds \
      -max_total_time="$SECONDS_PER_TARGET" -max_len="$MAX_LEN" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix=tests/fuzz/artifacts/"$t"- -print_final_stats=1 2>build-fuzz/$t.log; then
    echo "$t found a problem; see build-fuzz/$t.log and tests/fuzz/artifacts/" >&2
    status=1
    result=FOUND
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' build-fuzz/$t.log | tail -1)
  per_s=$(sed -n 's/^stat::average_exec_per_sec: *//p' build-fuzz/$t.log | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' build-fuzz/$t.log | tail -1)
  grep -E "cov:" build-fuzz/$t.log | tail -1 || true
  summary="$summary$(printf '%-26s %12s %10s %8s  %s' "$t" "${execs:-?}" "${per_s:-?}" "${rss:-?}" "$result")
"
done
echo
printf '%-26s %12s %10s %8s  %s\n' target executions "execs/s" "rss MB" result
printf '%s' "$summary"
exit $status
