#!/bin/sh
# Builds the libFuzzer targets with clang and runs each for a given time.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60 s, every target; built at -O1 as libFuzzer advises)
# Every tests/fuzz/fuzz_*.cc is a target. Crashes are written to tests/fuzz/artifacts/;
# the corpus grows in build-fuzz/corpus/<target>. At the end a table gives, per target,
# the executions, executions per second, peak memory and the result, for docs/fuzzing.md.
# FUZZ_MAX_LEN (default 65536) bounds the input size. FUZZ_PARALLEL=N runs N targets at
# once; FUZZ_NICE=N runs them under `nice -n N` (a shared machine stays usable).
set -eu
cd "$(dirname "$0")/.."
MODE=all
if [ "${1:-}" = "--run-one" ]; then  # internal: --run-one SECONDS TARGET
  MODE=run-one
  shift
fi
SECONDS_PER_TARGET=${1:-60}
[ $# -gt 0 ] && shift
JOBS=$(nproc 2>/dev/null || echo 2)
MAX_LEN=${FUZZ_MAX_LEN:-65536}
PARALLEL=${FUZZ_PARALLEL:-1}
NICE=""
[ -n "${FUZZ_NICE:-}" ] && NICE="nice -n $FUZZ_NICE"
# One target: runs it, then writes build-fuzz/<target>.result (one summary row).
run_one() {
  t=$1
  name=${t#fuzz_}
  corpus=build-fuzz/corpus/$t
  mkdir -p "$corpus"
  seeds=""
  [ -d "tests/fuzz/seeds/$name" ] && seeds="tests/fuzz/seeds/$name"
  echo "==> $t for ${SECONDS_PER_TARGET}s"
  result=ok
  if ! ASAN_OPTIONS=detect_leaks=1 $NICE ./build-fuzz/tests/fuzz/$t "$corpus" $seeds \
      -max_total_time="$SECONDS_PER_TARGET" -max_len="$MAX_LEN" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix=tests/fuzz/artifacts/"$t"- -print_final_stats=1 2>build-fuzz/$t.log; then
    echo "$t found a problem; see build-fuzz/$t.log and tests/fuzz/artifacts/" >&2
    result=FOUND
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' build-fuzz/$t.log | tail -1)
  per_s=$(sed -n 's/^stat::average_exec_per_sec: *//p' build-fuzz/$t.log | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' build-fuzz/$t.log | tail -1)
  cov=$(grep -oE "cov: [0-9]+" build-fuzz/$t.log | tail -1 | cut -d' ' -f2)
  printf '%-26s %12s %10s %8s %7s  %s\n' "$t" "${execs:-?}" "${per_s:-?}" "${rss:-?}" "${cov:-?}" \
    "$result" >build-fuzz/$t.result
}

if [ "$MODE" = run-one ]; then  # internal: one target of a parallel run
  run_one "$1"
  exit 0
fi
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Check "-DCMAKE_CXX_FLAGS_CHECK=-O1 -g1" -DCMAKE_CXX_COMPILER=clang++ \
  -DPAI_BUILD_FUZZERS=ON -DPAI_BUILD_TESTS=OFF >/dev/null
TARGETS=${*:-$(cd tests/fuzz && ls fuzz_*.cc | sed 's/\.cc$//')}
cmake --build build-fuzz -j "$JOBS" --target $TARGETS
mkdir -p tests/fuzz/artifacts
if [ "$PARALLEL" -gt 1 ]; then
  # shellcheck disable=SC2086
  printf '%s\n' $TARGETS | FUZZ_MAX_LEN=$MAX_LEN xargs -P "$PARALLEL" -n 1 sh "$0" --run-one "$SECONDS_PER_TARGET"
else
  for t in $TARGETS; do run_one "$t"; done
fi

echo
printf '%-26s %12s %10s %8s %7s  %s\n' target executions "execs/s" "rss MB" "cov" result
status=0
for t in $TARGETS; do
  cat "build-fuzz/$t.result"
  grep -q ' FOUND$' "build-fuzz/$t.result" && status=1
done
exit $status
