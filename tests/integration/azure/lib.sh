# Helpers for the Azure end-to-end tests (POSIX sh): tests/cli/lib.sh plus an
# ARM test server of the test's own. Source it.
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
. "$PAI_SOURCE_DIR/tests/skip.sh"
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
  # Only a missing openssl (77) is a skip; a certificate that cannot be made is a failure.
  rc=0
  sh "$AZ/make_certs.sh" "$TMP/certs" || rc=$?
  if [ "$rc" -eq 77 ]; then skip_test "openssl is missing (apt-get install openssl)"; fi
  [ "$rc" -eq 0 ] || { echo "FAIL: make_certs.sh could not make the test certificates (exit $rc)" >&2; exit 1; }
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

# azure_section CLUSTER-DIR RESOURCE-GROUP ONPREM-ADDRESS-SPACE COUNT MACHINE-TYPE [MASTER-TYPE]:
# writes the service principal's secret file (mode 0600) and appends to the
# cluster's config.yaml an azure: section with one pool "gpu" of COUNT
# Standard_NC24s_v3 VMs, reached with $RUN/id_ed25519.pub (the testbed's key);
# with MASTER-TYPE also a pool "cp" with role: master (one Standard_D8s_v5 VM of
# that machine-type): the master on Azure.
azure_section() {
  printf '%s\n' "$SECRET" >"$1/azure-secret"
  chmod 600 "$1/azure-secret"
  cat >>"$1/config.yaml" <<YAML
azure:
  subscription: 00000000-0000-0000-0000-000000000001
  tenant: contoso.onmicrosoft.com
  client-id: $CLIENT_ID
  client-secret-file: azure-secret
  location: eastus
  resource-group: $2
  address-space: 10.224.0.0/16
  onprem-address-space: [$3]
  ssh-public-key-file: $RUN/id_ed25519.pub
  pools:
    - name: gpu
      sku: Standard_NC24s_v3
      count: $4
      machine-type: $5
YAML
  [ -z "${6:-}" ] || cat >>"$1/config.yaml" <<YAML
    - name: cp
      role: master
      sku: Standard_D8s_v5
      count: 1
      machine-type: $6
YAML
}

# testbed_can_run: skips the test (tests/skip.sh) where this machine cannot run the testbed.
# leave_to_azure DIR HOST...: the testbed's HOSTs become Azure's: they leave
# layout.yaml and the HiveD config of the cluster directory DIR (a 4-host
# testbed's: its one on-prem worker keeps one node cell), and layout.yaml gains
# the Azure pool's machine-type v100-azure (NC24s_v3: 4 V100, as the testbed's
# GPUs; the testbed's hosts are smaller, so install's CPU and Memory checks are
# demoted where it is used). Prints the HOSTs' addresses, in order.
leave_to_azure() {
  "$PY" - "$@" <<'PYEOF'
import re, sys
d, hosts = sys.argv[1], sys.argv[2:]
lay = open(d + "/layout.yaml").read()
ip = [re.search(r"hostname: %s\n    hostip: (\S+)" % h, lay).group(1) for h in hosts]
for h in hosts:
    lay, n = re.subn(r"  - hostname: %s\n(    .*\n)+" % h, "", lay)
    assert n == 1, (h, lay)
lay = lay.replace("\nmachine-list:", """  v100-azure:
    mem: 440Gi
    cpu:
      vcore: 24
    computing-device:
      type: nvidia.com/gpu
      model: V100
      count: 4

machine-list:""")
open(d + "/layout.yaml", "w").write(lay)
svc = open(d + "/services-configuration.yaml").read()
for h in hosts:
    svc = svc.replace("        - cellAddress: %s\n" % h, "")
svc = svc.replace("childCellNumber: 3\n", "childCellNumber: 1\n").replace("cellNumber: 3\n", "cellNumber: 1\n")
assert not any(("cellAddress: %s\n" % h) in svc for h in hosts), svc
open(d + "/services-configuration.yaml", "w").write(svc)
print(" ".join(ip))
PYEOF
}

testbed_can_run() {
  : "${TESTBED:?}"
  reason=$("$TESTBED" can-run) || skip_test "$reason"
}

# testbed_up N BASE: after start_arm, a testbed of N hosts at BASE.1... in
# $TMP/bed (RUN, its cluster directory C), taken down with the server on exit.
testbed_up() {
  RUN="$TMP/bed"
  trap '"$TESTBED" down "$RUN" >/dev/null 2>&1; kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
  "$TESTBED" up "$1" "$RUN" --base "$2" --rollout-delay 0.2 >"$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; exit 1; }
  C="$RUN/cluster"
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

# schema_check KIND MESSAGE: stdout is one JSON document (json.load reads one
# only) that validates against docs/schemas/KIND.schema.json.
schema_check() {
  if "$PY" -c "
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])), cls=jsonschema.Draft202012Validator)
" "$PAI_SOURCE_DIR/docs/schemas/$1.schema.json" "$OUT"; then pass "$2 matches docs/schemas/$1.schema.json"
  else fail "$2 does not match its schema"; sed 's/^/  | /' "$OUT" >&2; fi
}

# skip_or_fail WHAT MESSAGE: the test cannot run here: skipped (77), unless
# PAI_REQUIRE_AZURE_SDK=1 or PAI_REQUIRE_ALL=1 (CI), where it fails.
skip_or_fail() {
  echo "$1: $2" >&2
  if [ "${PAI_REQUIRE_AZURE_SDK:-0}" = "1" ]; then exit 1; fi
  skip_test "$1: $2"
}

# npm_packages WHAT DEST "PKGS" PATH...: the test-only npm packages PKGS,
# installed into DEST (the build tree) at test time unless every PATH (relative
# to DEST) is there already. Without node, npm or a registry: skip_or_fail.
npm_packages() {
  what=$1 dest=$2 pkgs=$3
  shift 3
  command -v node >/dev/null 2>&1 || skip_or_fail "$what" "node is not installed (apt-get install npm)"
  missing=0
  for p in "$@"; do [ -e "$dest/$p" ] || missing=1; done
  [ $missing -eq 1 ] || return 0
  command -v npm >/dev/null 2>&1 || skip_or_fail "$what" "npm is not installed (apt-get install npm)"
  mkdir -p "$dest"
  # shellcheck disable=SC2086
  if ! timeout 300 npm install --prefix "$dest" --no-save --no-audit --no-fund --no-package-lock \
      --loglevel=error $pkgs >"$dest/npm.log" 2>&1; then
    cat "$dest/npm.log" >&2
    skip_or_fail "$what" "npm could not install $pkgs (is the registry reachable?)"
  fi
}
