# Skipping a test whose prerequisite this machine lacks (POSIX sh; source it).
#
#   skip_test MESSAGE  the test cannot run here: prints MESSAGE and exits 77, which
#                      ctest shows as skipped (SKIP_RETURN_CODE 77)
#   skip_part MESSAGE  a part of the test cannot run here; the rest goes on
#
# Under PAI_REQUIRE_ALL=1 both are failures (exit 1): CI (.ci/run, and
# scripts/test.sh when CI is set) has every prerequisite, so a test that does not
# run there is a broken machine or a broken test, never a quiet pass.
pai_require_all() { [ "${PAI_REQUIRE_ALL:-0}" = "1" ]; }
skip_test() {
  echo "SKIP: $*"
  if pai_require_all; then
    echo "FAIL: a skipped test is a failure under PAI_REQUIRE_ALL=1 ($*)" >&2
    exit 1
  fi
  exit 77
}
skip_part() {
  echo "skip: $*"
  if pai_require_all; then
    echo "FAIL: a skipped part is a failure under PAI_REQUIRE_ALL=1 ($*)" >&2
    exit 1
  fi
}
