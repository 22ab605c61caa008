# Helpers for the sshd test-host tests (sourced). Tests get PAICTL, HOSTS_DIR and
# RUN (the fixture's run directory) from ctest.
set -eu
: "${PAICTL:?PAICTL is not set}"
: "${RUN:?RUN is not set}"
HOSTS_DIR=${HOSTS_DIR:-$(cd "$(dirname "$0")" && pwd)}
ASSERT="python3 $HOSTS_DIR/assert_json.py"

# Skip (tests/skip.sh: exit 77, or a failure under PAI_REQUIRE_ALL=1) when the
# fixture could not start hosts.
. "$HOSTS_DIR/../../skip.sh"
if [ -f "$RUN.skipped" ]; then
  skip_test "$(cat "$RUN.skipped")"
fi
if [ ! -f "$RUN/port" ]; then
  echo "the test hosts of $RUN are not running (the fixture failed; see its output)" >&2
  exit 1
fi
PORT=$(cat "$RUN/port")
TMP=$(mktemp -d "${TMPDIR:-/tmp}/paictl-hosts-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }

# run_paictl EXPECTED_EXIT ARGS...: runs paictl, stdout to $TMP/out, stderr to $TMP/err.
run_paictl() {
  want=$1; shift
  set +e
  "$PAICTL" "$@" > "$TMP/out" 2> "$TMP/err"
  got=$?
  set -e
  if [ "$got" -ne "$want" ]; then
    echo "--- paictl $*" >&2
    echo "--- stdout" >&2; head -c 6000 "$TMP/out" >&2
    echo "--- stderr" >&2; head -c 3000 "$TMP/err" >&2
    fail "paictl exited $got, expected $want"
  fi
}

# The usual flags for the run's hosts.
host_flags() {
  echo "--ssh-config $RUN/ssh_config --connect-timeout 2 --command-timeout 4 --min-disk-free 1Gi"
}
facts_flags() {
  echo "--ssh-config $RUN/ssh_config --connect-timeout 2 --command-timeout 4"
}
