# Helpers for tests against hostile_server.py (POSIX sh): tests/cli/lib.sh plus
# starting misbehaving servers and running paictl with a time limit. Source it.
#
#   hostile NAME [--tls-cert C --tls-key K] [--route REGEX=BEHAVIOUR]... BEHAVIOUR
#       starts a server, sets NAME_URI (http[s]://127.0.0.1:PORT) and NAME_LOG
#       (its request log, one JSON line per request); every server is stopped
#       when the test ends.
#   bounded SECONDS ARGS...
#       runs "$PAICTL" ARGS like run (OUT, ERR, RC), killed after SECONDS
#       (RC=124 then); MAXRSS is its peak resident memory in MiB.
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
PY=${PYTHON3:-python3}
HOSTILE_DIR="$PAI_SOURCE_DIR/tests/integration/hostile"
HOSTILE_PIDS=""
hostile_stop_all() {
  for p in $HOSTILE_PIDS; do kill "$p" 2>/dev/null || true; done
  for p in $HOSTILE_PIDS; do wait "$p" 2>/dev/null || true; done
  HOSTILE_PIDS=""
}
trap 'hostile_stop_all; rm -rf "$TMP"' EXIT INT TERM

hostile() {
  _name=$1
  shift
  _scheme=http
  case " $* " in *" --tls-cert "*) _scheme=https ;; esac
  rm -f "$TMP/$_name.port"
  "$PY" "$HOSTILE_DIR/hostile_server.py" --port-file "$TMP/$_name.port" --log "$TMP/$_name.log" "$@" &
  HOSTILE_PIDS="$HOSTILE_PIDS $!"
  _i=0
  while [ ! -s "$TMP/$_name.port" ]; do
    _i=$((_i + 1))
    if [ "$_i" -gt 100 ]; then echo "FAIL: hostile server $_name did not start" >&2; exit 1; fi
    sleep 0.1
  done
  : >>"$TMP/$_name.log"
  eval "${_name}_URI=$_scheme://127.0.0.1:$(cat "$TMP/$_name.port")"
  eval "${_name}_LOG=$TMP/$_name.log"
}

bounded() {
  _secs=$1
  shift
  OUT="$TMP/out" ERR="$TMP/err"
  set +e
  export OUT ERR
  MAXRSS=$("$PY" - "$_secs" "$PAICTL" "$@" <<'PYEOF'
import os, resource, subprocess, sys
secs = float(sys.argv[1])
with open(os.environ["OUT"], "wb") as out, open(os.environ["ERR"], "wb") as err:
    p = subprocess.Popen(sys.argv[2:], stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    try:
        rc = p.wait(timeout=secs)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        rc = 124
if rc < 0:
    rc = 128 - rc
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
sys.exit(rc)
PYEOF
)
  RC=$?
  set -e
}
# expect_bounded RC MESSAGE: exit code RC, no crash, no timeout.
expect_bounded() {
  case $RC in
    124) fail "$2: still running after the time limit" ;;
    13[0-9] | 1[4-9][0-9]) fail "$2: killed by signal $((RC - 128))"; sed 's/^/  | /' "$ERR" | tail -5 >&2 ;;
    *) expect_rc "$1" "$2" ;;
  esac
}
