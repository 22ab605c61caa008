# Helpers for the testbed tests (sourced). ctest sets PAICTL, RUN (the fixture's
# run directory), TB_DIR, TESTBED and PYTHON3.
set -eu
: "${RUN:?RUN is not set}"
. "$(dirname "$0")/../../skip.sh"
# A test with its own testbed (TB_OWN=1, e.g. the journey) starts it after sourcing this.
if [ -z "${TB_OWN:-}" ]; then
  if [ -f "$RUN.skipped" ]; then skip_test "$(cat "$RUN.skipped")"; fi
  if [ ! -f "$RUN/testbed.json" ]; then
    echo "the testbed of $RUN is not running (the fixture failed; see testbed.up)" >&2
    exit 1
  fi
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/paictl-testbed-test.XXXXXX")
# One SSH connection per host for the whole test (a login costs more than most fakes).
cleanup() {
  for c in "$TMP"/cm-*; do [ -S "$c" ] && ssh -o ControlPath="$c" -O exit dummy 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }
on() { host=$1; shift; ssh -F "$RUN/ssh_config" -o ControlMaster=auto -o "ControlPath=$TMP/cm-%h" -o ControlPersist=60 "$host" "$@"; }
state() { "$TESTBED" state "$RUN" > "$TMP/state.json"; }
# jq-like: py 'EXPR' evaluates EXPR with s = the last state, prints the result as JSON.
py() { "$PYTHON3" -c 'import json,sys; s=json.load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2]), sort_keys=True))' "$TMP/state.json" "$1"; }
expect() {  # expect 'EXPR' 'JSON'
  got=$(py "$1")
  want=$("$PYTHON3" -c 'import json,sys; print(json.dumps(json.loads(sys.argv[1]), sort_keys=True))' "$2")
  [ "$got" = "$want" ] || fail "$1: got $got, want $want"
}
# eventually 'EXPR' 'JSON': as expect, for what the fake API server's controller (a
# tick every 0.15 s, as a node controller lags behind the kubelet) reports: the state
# is taken again until it matches, for up to 10 s.
eventually() {
  want=$("$PYTHON3" -c 'import json,sys; print(json.dumps(json.loads(sys.argv[1]), sort_keys=True))' "$2")
  n=0
  while :; do
    state
    got=$(py "$1")
    [ "$got" = "$want" ] && return 0
    n=$((n + 1))
    [ $n -lt 50 ] || fail "$1: got $got, want $want (after 10 s)"
    sleep 0.2
  done
}
# poll WHAT COMMAND...: runs COMMAND (a function or a program) until it succeeds, every
# 0.2 s for up to 10 s; fails with WHAT and the last output ($TMP/out) after that.
poll() {
  _what=$1
  shift
  _n=0
  until "$@"; do
    _n=$((_n + 1))
    [ $_n -lt 50 ] || fail "$_what after 10 s: $(cat "$TMP/out" 2>/dev/null || true)"
    sleep 0.2
  done
}
# The kubeconfig of the master, usable from this machine (the API server listens on the master's address).
kubeconfig() { "$TESTBED" kubeconfig "$RUN"; }
KUBECTL=${TESTBED_KUBECTL:-$(command -v kubectl || true)}
