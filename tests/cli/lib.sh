# Helpers for the CLI end-to-end tests (POSIX sh). Source it; it needs $PAICTL.
set -u
: "${PAICTL:?PAICTL must point at the paictl binary}"
: "${PAI_SOURCE_DIR:?PAI_SOURCE_DIR must point at the source tree}"
FAILS=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/paictl-cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
# own_home: a HOME and a configuration directory of the test's own (no registry of the machine's).
own_home() {
  export XDG_CONFIG_HOME="$TMP/config" HOME="$TMP/home"
  mkdir -p "$HOME"
  unset PAICTL_CONFIG
}
pass() { echo "ok: $*"; }

# run NAME: runs paictl with the remaining arguments, capturing stdout, stderr and the exit code.
run() {
  OUT="$TMP/out" ERR="$TMP/err"
  set +e
  "$PAICTL" "$@" >"$OUT" 2>"$ERR"
  RC=$?
  set -e
}
expect_rc() { if [ "$RC" -eq "$1" ]; then pass "$2 (exit $RC)"; else fail "$2: exit $RC, expected $1"; sed 's/^/  | /' "$OUT" "$ERR" >&2; fi; }
expect_out() { if grep -qF -- "$1" "$OUT"; then pass "$2"; else fail "$2: stdout lacks: $1"; sed 's/^/  | /' "$OUT" >&2; fi; }
expect_err() { if grep -qF -- "$1" "$ERR"; then pass "$2"; else fail "$2: stderr lacks: $1"; sed 's/^/  | /' "$ERR" >&2; fi; }
expect_no_out() { if grep -qF -- "$1" "$OUT"; then fail "$2: stdout has: $1"; else pass "$2"; fi; }
finish() {
  if [ "$FAILS" -ne 0 ]; then echo "$FAILS check(s) failed" >&2; exit 1; fi
  echo "all checks passed"
}
