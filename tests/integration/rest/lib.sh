# Helpers for the REST end-to-end tests (POSIX sh): tests/cli/lib.sh plus the
# test servers' addresses and control API. Source it; it needs $RUN.
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
: "${RUN:?RUN must be the fixture directory}"
. "$PAI_SOURCE_DIR/tests/skip.sh"
if [ ! -f "$RUN/env.sh" ]; then
  # The fixture left no servers: skipped only where it could not start them.
  skip_test "the REST test servers are not running (see $RUN)"
fi
. "$RUN/env.sh"
PY=${PYTHON3:-python3}
# Each test has its own registry; nothing is read from the real home.
export XDG_CONFIG_HOME="$TMP/config"
export HOME="$TMP/home"
unset PAICTL_CONFIG
REGISTRY="$XDG_CONFIG_HOME/paictl/clusters.yaml"

# ctl URI METHOD PATH [BODY]: calls a server's control API, prints the answer.
ctl() {
  "$PY" - "$@" <<'PYEOF'
import sys, urllib.request
uri, method, path = sys.argv[1:4]
body = sys.argv[4].encode() if len(sys.argv) > 4 else None
req = urllib.request.Request(uri + path, data=body, method=method, headers={"Content-Type": "application/json"})
print(urllib.request.urlopen(req).read().decode())
PYEOF
}
reset_requests() { ctl "$1" POST /__control/reset '{}' >/dev/null; }
# inject URI JSON: the next matching requests get the given answer.
inject() { ctl "$1" POST /__control/fail "$2" >/dev/null; }
# check_requests URI PYTHON-EXPRESSION MESSAGE: evaluates the expression with
# `reqs` bound to the requests the server recorded (a list of dicts).
check_requests() {
  if ctl "$1" GET /__control/requests | "$PY" -c "
import json, sys
reqs = json.load(sys.stdin)
ok = bool($2)
if not ok:
    for r in reqs: sys.stderr.write('  | %s %s %s\n' % (r['method'], r['path'], r.get('query', '')))
sys.exit(0 if ok else 1)
"; then pass "$3"; else fail "$3"; fi
}
# json_check PYTHON-EXPRESSION MESSAGE: evaluates it with `d` = stdout parsed as JSON.
# schema_check KIND MESSAGE: stdout is a paictl.KIND/v1 document matching docs/schemas/KIND.schema.json.
schema_check() {
  if "$PY" -c "
import json, sys, jsonschema
d = json.load(open(sys.argv[1]))
assert d['apiVersion'] == 'paictl.%s/v1' % sys.argv[3], d.get('apiVersion')
jsonschema.validate(d, json.load(open(sys.argv[2])), cls=jsonschema.Draft202012Validator)
" "$OUT" "$PAI_SOURCE_DIR/docs/schemas/$1.schema.json" "$1"; then pass "$2: matches docs/schemas/$1.schema.json"; else fail "$2: schema $1"; fi
}
json_check() {
  if "$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if ($1) else 1)
" "$OUT"; then pass "$2"; else fail "$2"; sed 's/^/  | /' "$OUT" >&2; fi
}
