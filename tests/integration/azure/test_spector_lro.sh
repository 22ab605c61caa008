#!/bin/sh
# paictl's ARM client against Microsoft's spec mock server: the Azure Resource
# Manager scenarios of @azure-tools/azure-http-specs, served by @typespec/spector
# (npm, test-only, installed into the build tree at test time), driven by
# azure_spector_lro (spector_lro.cc). Without node, npm or a registry the test is
# skipped (77), unless PAI_REQUIRE_AZURE_SDK=1 (CI).
. "$PAI_SOURCE_DIR/tests/integration/azure/lib.sh"
set -e
: "${SPEC_DEST:?SPEC_DEST must name the directory for the npm packages}"
: "${SPECTOR_DRIVER:?SPECTOR_DRIVER must name the azure_spector_lro program}"
PKGS="@typespec/spector@0.1.0-alpha.24-dev.2 @azure-tools/azure-http-specs@0.1.0-alpha.38-dev.2"
command -v git >/dev/null 2>&1 || skip_or_fail spector "git is not installed (the mock server records a commit)"
SPECS="$SPEC_DEST/node_modules/@azure-tools/azure-http-specs/specs"
npm_packages spector "$SPEC_DEST" "$PKGS" node_modules/.bin/tsp-spector \
  node_modules/@azure-tools/azure-http-specs/specs

# The server reads `git rev-parse HEAD` of its working directory for its report.
WORK="$TMP/work"
mkdir -p "$WORK"
git -C "$WORK" init -q
git -C "$WORK" -c user.email=test@localhost -c user.name=test commit -q --allow-empty -m scenarios
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
COVERAGE="$TMP/coverage.json"
(cd "$WORK" && exec "$SPEC_DEST/node_modules/.bin/tsp-spector" serve "$SPECS" --port "$PORT" \
  --coverageFile "$COVERAGE") >"$TMP/server.log" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || :; wait "$SERVER_PID" 2>/dev/null || :; rm -rf "$TMP"' EXIT INT TERM
i=0
until grep -q "Started server on $PORT" "$TMP/server.log"; do
  i=$((i + 1))
  if [ $i -gt 1200 ] || ! kill -0 "$SERVER_PID" 2>/dev/null; then
    cat "$TMP/server.log" >&2
    fail "the spec mock server did not start"
    finish
  fi
  sleep 0.05
done

set +e
"$SPECTOR_DRIVER" "http://localhost:$PORT" >"$TMP/driver.txt" 2>&1
rc=$?
set -e
sed 's/^/  /' "$TMP/driver.txt"
[ $rc -eq 0 ] && pass "paictl's ARM client runs the mock server's scenarios" ||
  { sed 's/^/  | /' "$TMP/server.log" | tail -40 >&2; fail "the ARM client against the mock server (exit $rc)"; }

# The server writes its verdict per scenario when it stops.
kill -INT "$SERVER_PID" 2>/dev/null
i=0
while kill -0 "$SERVER_PID" 2>/dev/null && [ $i -lt 200 ]; do i=$((i + 1)); sleep 0.05; done
"$PY" - "$COVERAGE" <<'PYEOF' && pass "the mock server passes each scenario it was driven through" || fail "the mock server's verdicts"
import json, sys
results = json.load(open(sys.argv[1]))[0]["results"]
want = ["Azure_ResourceManager_OperationTemplates_Lro_createOrReplace",
        "Azure_ResourceManager_OperationTemplates_Lro_delete",
        "Azure_ResourceManager_Resources_TopLevel_createOrReplace",
        "Azure_ResourceManager_Resources_TopLevel_get",
        "Azure_ResourceManager_Resources_TopLevel_delete",
        "Azure_ResourceManager_CommonProperties_Error_createForUserDefinedError",
        "Azure_ResourceManager_CommonProperties_Error_getForPredefinedError"]
bad = [(w, results.get(w)) for w in want if results.get(w) != "pass"]
for w, v in bad: print("  scenario %s: %s" % (w, v), file=sys.stderr)
sys.exit(1 if bad else 0)
PYEOF
finish
