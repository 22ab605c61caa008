# Helpers for the testbed tests (sourced by tests/integration/*/test_*.sh one folder
# below tests/integration). ctest sets PAICTL, RUN (the testbed's run directory),
# TB_DIR, TESTBED and PYTHON3.
#
# A test on the fixture's testbed (testbed.up) sources this as it is. A test that starts
# its own testbed sets TB_OWN=1 first: then the machine is checked here (testbed.sh
# can-run; a test skips with the reason where it cannot run), the testbed is taken down
# on exit unless KEEP is set, and paictl's registry and settings are the test's own
# ($TMP/config, $TMP/home). need_kubectl, need_etcd and need_haproxy skip a test where
# the machine lacks what it needs.
set -eu
: "${RUN:?RUN is not set}"
. "$(dirname "$0")/../../skip.sh"
if [ -z "${TB_OWN:-}" ]; then
  if [ -f "$RUN.skipped" ]; then skip_test "$(cat "$RUN.skipped")"; fi
  if [ ! -f "$RUN/testbed.json" ]; then
    echo "the testbed of $RUN is not running (the fixture failed; see testbed.up)" >&2
    exit 1
  fi
else
  set +e
  tb_reason=$("$TESTBED" can-run)
  tb_rc=$?
  set -e
  [ $tb_rc -eq 0 ] || skip_test "$tb_reason"
fi
KUBECTL=${TESTBED_KUBECTL:-$(command -v kubectl || true)}
need_kubectl() { [ -n "$KUBECTL" ] || skip_test "testbed: no kubectl on this machine"; }
need_etcd() {
  for t in etcd etcdctl; do
    [ -x /usr/bin/$t ] || skip_test "testbed: no /usr/bin/$t on this machine (scripts/install-deps.sh installs etcd-server and etcd-client)"
  done
}
need_haproxy() { command -v haproxy >/dev/null 2>&1 || skip_test "testbed: no haproxy on this machine (scripts/install-deps.sh installs it)"; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/paictl-$(basename "$0" .sh).XXXXXX")
TB_T0=$(date +%s)
# One SSH connection per host for the whole test (a login costs more than most fakes).
cleanup() {
  for c in "$TMP"/cm-*; do [ -S "$c" ] && ssh -o ControlPath="$c" -O exit dummy 2>/dev/null; done
  if [ -n "${TB_OWN:-}" ] && [ -z "${KEEP:-}" ]; then "$TESTBED" down "$RUN" >/dev/null 2>&1 || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
if [ -n "${TB_OWN:-}" ]; then
  export XDG_CONFIG_HOME="$TMP/config" HOME="$TMP/home"
  unset PAICTL_CONFIG
fi

fail() { echo "FAIL: $*" >&2; exit 1; }
# pass MESSAGE: a step done, with the seconds since the test began.
pass() { echo "ok: $* ($(($(date +%s) - TB_T0)) s)"; }
# run ARGS...: paictl with its output in $TMP/out and $TMP/err, the exit code in $RC.
run() { set +e; "$PAICTL" "$@" > "$TMP/out" 2> "$TMP/err"; RC=$?; set -e; }
expect_rc() { [ "$RC" -eq "$1" ] || { cat "$TMP/out" "$TMP/err" >&2; fail "$2: exit $RC, want $1"; }; }
# check_file FILE 'PYTHON-EXPRESSION' MESSAGE: the expression holds with d = FILE
# parsed as JSON, or the test fails with MESSAGE; check 'EXPR' MESSAGE: of the last output.
check_file() {
  "$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" \
    || { cat "$1" >&2; fail "$3"; }
  pass "$3"
}
check() { check_file "$TMP/out" "$1" "$2"; }
# save NAME: the last output, for the docs, when DOC_OUT names a directory.
save() { [ -z "${DOC_OUT:-}" ] || cat "$TMP/out" "$TMP/err" > "$DOC_OUT/$1"; }

on() { host=$1; shift; ssh -F "$RUN/ssh_config" -o ControlMaster=auto -o "ControlPath=$TMP/cm-%h" -o ControlPersist=60 "$host" "$@"; }
state() { "$TESTBED" state "$RUN" > "$TMP/state.json"; }
# jq-like: py 'EXPR' evaluates EXPR with s = the last state (c = its cluster, m = the
# first master's host), prints the result as JSON.
py() {
  "$PYTHON3" -c 'import calendar,json,sys,time; s=json.load(open(sys.argv[1])); c=s.get("cluster"); m=(s.get("hosts") or {}).get("tb-master"); print(json.dumps(eval(sys.argv[2]), sort_keys=True))' \
    "$TMP/state.json" "$1"
}
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
