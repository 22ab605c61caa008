#!/bin/sh
# The whole test suite from a fresh Debian machine: installs the packages, builds
# paictl, runs every test (unit, CLI end-to-end, integration), then builds again
# with AddressSanitizer + UndefinedBehaviorSanitizer and runs the suite once more.
#
#   PAI_SKIP_SANITIZERS=1   skip the sanitizer pass
#   PAI_TEST_JOBS=N         parallel tests (default: number of CPUs)
# The sanitizer pass leaves out the tests labelled "slow": long end-to-end runs
# whose paictl code paths the other tests under the sanitizers already cover, and
# tests of the test doubles themselves (`ctest -L slow -N` lists them).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
echo "==> format"
scripts/check-format.sh
JOBS=$(nproc 2>/dev/null || echo 2)
TEST_JOBS=${PAI_TEST_JOBS:-$JOBS}

# Tests need neither -O2 nor full debug info: -O1 -g1 halves the compile time and
# keeps line numbers in backtraces.
CHECK_FLAGS="-DCMAKE_BUILD_TYPE=Check -DCMAKE_CXX_FLAGS_CHECK=-O1\ -g1"

echo "==> build (-O1)"
eval cmake -S . -B build-test -G Ninja "$CHECK_FLAGS" -DPAI_BUILD_TESTS=ON >/dev/null
cmake --build build-test -j "$JOBS"
echo "==> tests"
ctest --test-dir build-test --output-on-failure -j "$TEST_JOBS" --timeout 600

if [ "${PAI_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "==> build (ASan + UBSan)"
  # -O0 here: instrumented code compiles about 40% faster unoptimised, which more
  # than pays for the slower tests, and the sanitizers see every access.
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Check "-DCMAKE_CXX_FLAGS_CHECK=-O0 -g1" \
    -DPAI_BUILD_TESTS=ON -DPAI_SANITIZE=address,undefined >/dev/null
  cmake --build build-asan -j "$JOBS"
  echo "==> tests under ASan + UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$TEST_JOBS" --timeout 900 -LE slow
fi
echo "==> all tests passed"
