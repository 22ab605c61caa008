# Helpers for the Azure end-to-end tests (POSIX sh): tests/cli/lib.sh plus an
# ARM test server of the test's own. Source it.
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
PY=${PYTHON3:-python3}
AZ="$PAI_SOURCE_DIR/tests/integration/azure"
export XDG_CONFIG_HOME="$TMP/config" HOME="$TMP/home"
mkdir -p "$HOME"
unset PAICTL_ARM_ENDPOINT PAICTL_AUTHORITY_HOST PAICTL_CA_FILE AZURE_CLIENT_SECRET \
  AZURE_FEDERATED_TOKEN_FILE IDENTITY_ENDPOINT IDENTITY_HEADER AZURE_TENANT_ID AZURE_CLIENT_ID
SECRET='sp-secret-Zq8~must-not-leak'
CLIENT_ID=11111111-2222-3333-4444-555555555555

# start_arm [ARGS]: starts the server; sets ARM (its https URL), CTL (control URL), CA.
start_arm() {
  sh "$AZ/make_certs.sh" "$TMP/certs" || exit 77
  printf '%s\n' "$SECRET" >"$TMP/server-secret"
  "$PY" "$AZ/arm_server.py" --port-file "$TMP/port" --control-port-file "$TMP/ctl-port" \
    --tls-cert "$TMP/certs/server.pem" --tls-key "$TMP/certs/server.key" \
    --client-id "$CLIENT_ID" --client-secret-file "$TMP/server-secret" "$@" >"$TMP/server.log" 2>&1 &
  SERVER_PID=$!
  trap 'kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
  i=0
  while [ ! -s "$TMP/port" ] || [ ! -s "$TMP/ctl-port" ]; do
    i=$((i + 1))
    if [ $i -gt 400 ] || ! kill -0 "$SERVER_PID" 2>/dev/null; then
      echo "the ARM test server did not start:" >&2
      cat "$TMP/server.log" >&2
      exit 1
    fi
    sleep 0.05
  done
  ARM="https://127.0.0.1:$(cat "$TMP/port")"
  CTL="http://127.0.0.1:$(cat "$TMP/ctl-port")"
  CA="$TMP/certs/ca.pem"
}

# ctl METHOD PATH [BODY]: the server's control API.
ctl() {
  "$PY" - "$CTL" "$@" <<'PYEOF'
import sys, urllib.request
uri, method, path = sys.argv[1:4]
body = sys.argv[4].encode() if len(sys.argv) > 4 else None
req = urllib.request.Request(uri + path, data=body, method=method, headers={"Content-Type": "application/json"})
print(urllib.request.urlopen(req).read().decode())
PYEOF
}
# check_requests PYTHON-EXPRESSION MESSAGE: `reqs` is the server's request log.
check_requests() {
  if ctl GET /__control/requests | "$PY" -c "
import json, sys
reqs = json.load(sys.stdin)
arm = [r for r in reqs if r['kind'] not in ('token', 'msi')]
ok = bool($1)
if not ok:
    for r in reqs: sys.stderr.write('  | %s %s %s %s early=%s\n' % (r['method'], r['path'], r['kind'], r['status'], r['early']))
sys.exit(0 if ok else 1)
"; then pass "$2"; else fail "$2"; fi
}
