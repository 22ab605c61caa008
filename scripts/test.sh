#!/bin/sh
# The whole test suite from a fresh Debian machine: installs the packages, checks the
# formatting, builds paictl once with AddressSanitizer + UndefinedBehaviorSanitizer and
# runs every test (unit, CLI end-to-end, integration, conformance) on that build.
#
# One sanitized build for every test, not a plain pass and a sanitized pass: the
# sanitizers see every access the tests make, and one build is half the compile time
# on a 2-core machine (see docs/benchmarks.md, "test suite"). Each unit-test binary is
# one ctest test here (PAI_UNIT_PER_BINARY): a sanitized process start is costly.
#
#   PAI_SANITIZE=LIST   sanitizers to build with (default address,undefined;
#                       empty for a plain build, e.g. where libasan is missing)
#   PAI_SANITIZE_EXCLUDE=LIST  their checks left out (default alignment,null; empty
#                       for every check)
#   PAI_TEST_JOBS=N     parallel tests (default: twice the number of CPUs: many
#                       end-to-end tests wait on SSH hosts and servers)
#   PAI_SKIP_SLOW=1     leave out the tests labelled "slow" (`ctest -L slow -N`)
#   PAI_REQUIRE_ALL=1   a test that would be skipped (a missing prerequisite: root,
#                       sshd, openssl, PyYAML, npm...) fails instead; the default
#                       when CI is set, and .ci/run sets it (tests/skip.sh)
set -eu
if [ -n "${CI:-}" ]; then
  PAI_REQUIRE_ALL=${PAI_REQUIRE_ALL:-1}
fi
export PAI_REQUIRE_ALL="${PAI_REQUIRE_ALL:-0}"
cd "$(dirname "$0")/.."
scripts/install-deps.sh
echo "==> format"
scripts/check-format.sh
JOBS=$(nproc 2>/dev/null || echo 2)
TEST_JOBS=${PAI_TEST_JOBS:-$((JOBS * 2))}
SANITIZE=${PAI_SANITIZE-address,undefined}
# UBSan's null and alignment checks instrument every access through a pointer or a
# reference: a third of a sanitized translation unit's compile time (docs/benchmarks.md,
# "test suite"). A null pointer read or written still stops the test with AddressSanitizer's
# report and stack; what goes unchecked is a reference bound to null that is never read and
# a misaligned access, which x86 performs.
SANITIZE_EXCLUDE=${PAI_SANITIZE_EXCLUDE-alignment,null}

# -O0 -g1: instrumented code compiles about 40% faster unoptimised, which more than
# pays for the slower tests; -g1 keeps line numbers in the sanitizers' reports.
# PAI_UNITY: eight sources per translation unit (the default is sixteen), so the
# template code they share is generated once per batch (a third of the CPU time
# for cli/); eight keeps a sanitized translation unit's memory moderate.
if [ -n "$SANITIZE" ]; then
  echo "==> build ($SANITIZE)"
else
  echo "==> build (no sanitizers)"
fi
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Check "-DCMAKE_CXX_FLAGS_CHECK=-O0 -g1" \
  -DPAI_BUILD_TESTS=ON -DPAI_UNIT_PER_BINARY=ON -DPAI_UNITY=ON -DPAI_UNITY_BATCH=8 "-DPAI_SANITIZE=$SANITIZE" \
  "-DPAI_SANITIZE_EXCLUDE=$SANITIZE_EXCLUDE" >/dev/null
cmake --build build-test -j "$JOBS"

echo "==> tests"
EXCLUDE=""
[ "${PAI_SKIP_SLOW:-0}" = "1" ] && EXCLUDE="-LE slow"
# shellcheck disable=SC2086
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-test --output-on-failure -j "$TEST_JOBS" --timeout 1200 $EXCLUDE
if [ "$PAI_REQUIRE_ALL" = "1" ]; then
  echo "==> all tests passed (PAI_REQUIRE_ALL=1: none skipped)"
else
  echo "==> all tests passed (tests that skipped for a missing prerequisite are listed above as Skipped)"
fi
