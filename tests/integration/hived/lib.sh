# Helpers for the HiveD inspect API tests (POSIX sh): tests/cli/lib.sh plus
# starting and stopping hived_test_server on a port the kernel picks.
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
: "${HIVED_SERVER:?HIVED_SERVER must point at hived_test_server}"
SCEN="$PAI_SOURCE_DIR/tests/integration/hived/scenarios"
PY=${PYTHON3:-python3}
export XDG_CONFIG_HOME="$TMP/config" HOME="$TMP/home"
unset PAICTL_CONFIG
SERVER_PIDS=""
stop_servers() { rc=$?; trap - EXIT INT TERM; for p in $SERVER_PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"; exit $rc; }
trap stop_servers EXIT INT TERM
# start_server SCENARIO [CONFIG-FILE]: starts a server, sets $URL and $SERVER_PID.
# With CONFIG-FILE the server reads it again on SIGHUP (a HiveD restart).
start_server() {
  rm -f "$TMP/port"
  "$HIVED_SERVER" "$SCEN/$1.json" "$TMP/port" ${2:+"$2"} >"$TMP/server-$1.log" 2>&1 &
  SERVER_PID=$!
  SERVER_PIDS="$SERVER_PIDS $!"
  wait_port_file "$TMP/port" "$TMP/server-$1.log" "the HiveD test server"
  URL="http://127.0.0.1:$(cat "$TMP/port")"
}
# wait_port_file FILE LOG WHAT: waits up to 10 s for a server to write its port
# to FILE; otherwise shows its LOG and fails.
wait_port_file() {
  i=0
  while [ ! -s "$1" ]; do
    i=$((i + 1))
    if [ "$i" -gt 200 ]; then echo "$3 did not start" >&2; cat "$2" >&2; exit 1; fi
    sleep 0.05
  done
}
# json_check PYTHON-EXPRESSION MESSAGE: evaluates it with `d` = stdout parsed as JSON.
json_check() {
  if "$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if ($1) else 1)
" "$OUT"; then pass "$2"; else fail "$2"; sed 's/^/  | /' "$OUT" >&2; fi
}
# schema_check KIND MESSAGE: stdout validates against docs/schemas/KIND.schema.json.
schema_check() {
  if "$PY" -c "
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])), cls=jsonschema.Draft202012Validator)
" "$PAI_SOURCE_DIR/docs/schemas/$1.schema.json" "$OUT"; then pass "$2 matches docs/schemas/$1.schema.json"; else fail "$2 does not match its schema"; fi
}
# requests_seen: the inspect requests the server has answered, one "METHOD PATH" a line.
requests_seen() { "$PY" -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())" "$URL/__control/requests"; }
