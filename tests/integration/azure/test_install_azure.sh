#!/bin/sh
# paictl install/reset with config.yaml's azure: section against the ARM test
# server: the dry-run plan, creation despite throttling, failed polls and
# contention (one PUT per scale set, no poll before its Retry-After), the VMs in
# layout.yaml, a re-run that sends no PUT, a failed operation's message, reset
# --azure deleting only what is tagged, and the client secret nowhere.
. "$PAI_SOURCE_DIR/tests/integration/azure/lib.sh"
set -e
start_arm --polls 1 --retry-after 1

C="$TMP/cluster"
mkdir -p "$C"
cp "$PAI_SOURCE_DIR/tests/data/config/cases/valid/layout.yaml" "$C/"
cp "$C/layout.yaml" "$TMP/layout.orig"
printf '%s\n' "$SECRET" >"$C/azure-secret"
chmod 600 "$C/azure-secret"
echo "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample paictl-test" >"$C/id.pub"
cat >"$C/config.yaml" <<YAML
user: openpai
password: secret-pw
docker_image_tag: v1.8.0
azure:
  subscription: 00000000-0000-0000-0000-000000000001
  tenant: contoso.onmicrosoft.com
  client-id: $CLIENT_ID
  client-secret-file: azure-secret
  location: eastus
  resource-group: pai-rg
  address-space: 10.224.0.0/16
  ssh-public-key-file: id.pub
  allowed-ssh-from: [203.0.113.10/32]
  pools:
    - name: gpu
      sku: Standard_ND96asr_v4
      count: 2
      machine-type: k80-machine
YAML
EP="--arm-endpoint $ARM --authority-host $ARM --ca-file $CA"

# --- the plan --------------------------------------------------------------
run install "$C" --azure-only --dry-run -o json $EP
expect_rc 0 "dry run"
if "$PY" - "$OUT" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))["azure"]
acts = [(r["kind"], r["name"], r["action"]) for r in d["resources"]]
assert acts == [("resource group", "pai-rg", "create"), ("network security group", "pai-nsg", "create"),
                ("virtual network", "pai-vnet", "create"), ("scale set", "pai-gpu", "create")], acts
assert d["changes"] is True
PYEOF
then pass "the plan lists every resource with create"; else fail "the plan"; sed 's/^/  | /' "$OUT" >&2; fi
cp "$OUT" "$TMP/plan.json"
run install "$C" --azure-only --dry-run -o yaml $EP
expect_rc 0 "dry run -o yaml"
if "$PY" -c "
import json, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
sys.exit(0 if d['apiVersion'] == 'paictl.install/v1' and d == json.load(open(sys.argv[2])) else 1)
" "$OUT" "$TMP/plan.json"; then pass "install -o yaml: the same document as -o json"; else fail "install -o yaml"; sed 's/^/  | /' "$OUT" >&2; fi
run install "$C" --azure-only --dry-run --detailed-exitcode $EP
expect_rc 2 "--detailed-exitcode: changes"
expect_out "create  scale set               pai-gpu" "text plan"
check_requests "all(r['method'] == 'GET' for r in arm)" "a dry run only reads"
# The endpoints and the CA from the environment instead of the flags.
export PAICTL_ARM_ENDPOINT="$ARM" PAICTL_AUTHORITY_HOST="$ARM" PAICTL_CA_FILE="$CA"
run install "$C" --azure-only --dry-run -o json
unset PAICTL_ARM_ENDPOINT PAICTL_AUTHORITY_HOST PAICTL_CA_FILE
expect_rc 0 "dry run with PAICTL_ARM_ENDPOINT, PAICTL_AUTHORITY_HOST and PAICTL_CA_FILE"
cmp -s "$OUT" "$TMP/plan.json" && pass "the environment's endpoints give the same plan as the flags" ||
  fail "the plan through the environment's endpoints"
run install "$C" --azure-only --dry-run -o json --arm-endpoint "$ARM" --authority-host "$ARM"
expect_rc 3 "without the test CA the server's certificate is refused"
expect_err "PAICTL_CA_FILE" "the TLS failure names --ca-file / PAICTL_CA_FILE"

# --- apply, through throttling, a failing poll and contention ---------------
ctl POST /__control/clear-requests '{}' >/dev/null
ctl POST /__control/fail '[{"method":"PUT","path":"virtualMachineScaleSets/pai-gpu$","status":429,"retryAfter":1,"count":1},
  {"kind":"poll","status":500,"retryAfter":1,"count":1},
  {"method":"PUT","path":"virtualNetworks/pai-vnet$","status":409,"code":"AnotherOperationInProgress","retryAfter":1,"count":1}]' >/dev/null
run -v install "$C" --azure-only --yes $EP
expect_rc 0 "install --azure-only"
expect_out "azure: 2 VMs in" "the VMs are listed"
check_requests "len([r for r in arm if r['method'] == 'PUT' and r['path'].endswith('/pai-gpu') and r['status'] == 201]) == 1" \
  "exactly one scale set PUT was processed despite a 429 and a 500"
check_requests "not any(r['early'] for r in arm)" "no poll before the Retry-After of the answer before it"
check_requests "all(r['ifNoneMatch'] == '*' for r in arm if r['method'] == 'PUT' and r['status'] in (201, 412))" \
  "creation is create-only (If-None-Match: *)"
if ctl GET /__control/requests | "$PY" -c "
import json, sys
err = open('$ERR').read()
ids = [r['clientRequestId'] for r in json.load(sys.stdin) if r['kind'] not in ('token', 'msi')]
sys.exit(0 if ids and all(i and ('x-ms-client-request-id ' + i) in err for i in ids) else 1)"; then
  pass "-v shows every request's x-ms-client-request-id"
else fail "-v lacks client request ids"; fi
if grep -q "# azure pool gpu" "$C/layout.yaml" && [ "$(grep -c 'machine-type: k80-machine' "$C/layout.yaml")" -eq 4 ] &&
   grep -q "hostip: 10.224.0.4" "$C/layout.yaml"; then
  pass "layout.yaml has the two VMs with their private IPs"
else fail "layout.yaml"; cat "$C/layout.yaml" >&2; fi
run check config "$C"
expect_rc 0 "the updated cluster passes check config"

# --- a re-run sends no PUT ---------------------------------------------------
ctl POST /__control/clear-requests '{}' >/dev/null
cp "$C/layout.yaml" "$TMP/layout.applied"
run install "$C" --azure-only --yes $EP
expect_rc 0 "re-run"
expect_out "azure: nothing to do" "re-run: nothing to do"
check_requests "not any(r['method'] in ('PUT', 'DELETE') for r in arm)" "re-run: no PUT, no DELETE"
if cmp -s "$C/layout.yaml" "$TMP/layout.applied"; then pass "re-run keeps layout.yaml"; else fail "re-run changed layout.yaml"; fi

# --- node add --azure grows the pool; install then finds nothing to do --------
# The new VM is unreachable here (every host is 127.0.0.1:9 in this ssh_config),
# so its join fails after Azure has it: the files are updated, the resume is named.
printf 'Host *\n  HostName 127.0.0.1\n  Port 9\n  ConnectTimeout 2\n  BatchMode yes\n' >"$TMP/ssh_config"
ctl POST /__control/clear-requests '{}' >/dev/null
run node add "$C" --azure gpu --count 1 --dry-run --detailed-exitcode $EP
expect_rc 2 "node add --azure --dry-run: changes"
cp "$OUT" "$TMP/add-dry.txt"
run node add "$C" --azure gpu --count 1 --dry-run -o json $EP
expect_rc 0 "node add --azure --dry-run -o json"
schema_check nodeAdd "node add --azure --dry-run -o json"
if "$PY" - "$OUT" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["apiVersion"] == "paictl.nodeAdd/v1" and d["dryRun"] is True and d["nodes"] == [], d
assert d["azure"]["from"] == 2 and d["azure"]["to"] == 3, d["azure"]
PYEOF
then pass "node add --dry-run -o json: one document with the scale set's new size"; else fail "node add --dry-run -o json"; fi
cp "$OUT" "$TMP/add-dry.json"
run node add "$C" --azure gpu --count 1 --dry-run -o yaml $EP
if "$PY" -c "
import json, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
sys.exit(0 if d['apiVersion'] == 'paictl.nodeAdd/v1' and d == json.load(open(sys.argv[2])) else 1)
" "$OUT" "$TMP/add-dry.json"; then pass "node add -o yaml: the same document as -o json"; else fail "node add -o yaml"; sed 's/^/  | /' "$OUT" >&2; fi
cp "$TMP/add-dry.txt" "$OUT"
expect_out "update  scale set               pai-gpu  sku.capacity: 2 -> 3 (1 new Standard_ND96asr_v4 VM)" "the dry run shows the new size"
expect_out "azure pool gpu count: 2 -> 3" "the dry run shows config.yaml's change"
check_requests "all(r['method'] == 'GET' for r in arm)" "node add --dry-run only reads"
grep -q "count: 2$" "$C/config.yaml" && pass "the dry run keeps config.yaml" || fail "the dry run changed config.yaml"
run node add "$C" --azure gpu --count 1 $EP
expect_rc 2 "node add --azure without a terminal needs --yes"
check_requests "not any(r['method'] == 'PUT' for r in arm)" "no PUT without a confirmation"
run node add "$C" pai-gpu000000 --azure gpu $EP
expect_rc 2 "node add --azure with a host name"
run node add "$C" pai-gpu000000 --count 2 $EP
expect_rc 2 "node add --count without --azure"
expect_err "--count goes with --azure POOL" "--count needs --azure"
run node add "$C" --azure gpu --count 1 --yes --ssh-config "$TMP/ssh_config" --connect-timeout 2 $EP
expect_rc 3 "node add --azure: the new VM's join fails (unreachable)"
expect_err "paictl node add $C pai-gpu000002 resumes their join" "node add names the resume"
check_requests "len([r for r in arm if r['method'] == 'PUT' and r['path'].endswith('/pai-gpu')]) == 1" "one scale set PUT"
grep -q "count: 3" "$C/config.yaml" && pass "config.yaml has the new count" || fail "config.yaml count"
[ "$(grep -c '# azure pool gpu' "$C/layout.yaml")" -eq 3 ] && pass "layout.yaml has three VMs" || fail "layout.yaml after node add"
ctl POST /__control/clear-requests '{}' >/dev/null
run install "$C" --azure-only --yes $EP
expect_out "azure: nothing to do" "after node add, install has nothing to do"
check_requests "not any(r['method'] == 'PUT' for r in arm)" "after node add: no PUT"
run node add "$C" --azure cpu --yes $EP
expect_rc 2 "node add with an unknown pool"
expect_err 'no Azure pool "cpu" (pools: gpu)' "the pools are named"

# --- node remove --azure --dry-run: the VM, the count and layout.yaml, nothing changed
cp "$C/layout.yaml" "$TMP/layout.before-remove"
ctl POST /__control/clear-requests '{}' >/dev/null
run node remove "$C" pai-gpu000001 --azure --dry-run -o json $EP
expect_rc 0 "node remove --azure --dry-run"
if "$PY" - "$OUT" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["apiVersion"] == "paictl.nodeRemove/v1" and d["kind"] == "NodeRemove" and d["nodes"] == ["pai-gpu000001"], d
vm = d["azure"]["delete"]
assert [v["hostname"] for v in vm] == ["pai-gpu000001"] and vm[0]["id"].endswith("/virtualMachineScaleSets/pai-gpu/virtualMachines/1"), vm
assert d["azure"]["counts"] == {"gpu": {"from": 3, "to": 2}}, d["azure"]["counts"]
PYEOF
then pass "the dry run names the VM, its ARM id and the new count"; else fail "node remove --dry-run json"; sed 's/^/  | /' "$OUT" >&2; fi
schema_check nodeRemove "node remove --azure --dry-run -o json"
check_requests "all(r['method'] == 'GET' for r in arm)" "node remove --dry-run only reads"
cmp -s "$C/layout.yaml" "$TMP/layout.before-remove" && grep -q "count: 3" "$C/config.yaml" && pass "the dry run keeps the files" || fail "the dry run changed the files"
run node remove "$C" pai-worker1 --azure --dry-run $EP
expect_rc 2 "node remove --azure of an on-prem host"
expect_err "pai-worker1 is not a VM of an Azure pool" "the on-prem host is named"

# --- a failed operation -------------------------------------------------------
sed -i 's/count: 3$/count: 4/' "$C/config.yaml"
ctl POST /__control/fail-operation '{"path":"pai-gpu","code":"OperationNotAllowed","message":"Operation could not be completed as it results in exceeding approved standardNDASv4Family Cores quota."}' >/dev/null
run install "$C" --azure-only --yes $EP
expect_rc 3 "a failed operation is a remote failure"
expect_err "the operation failed: OperationNotAllowed: Operation could not be completed" "the error names the code"
[ "$(grep -c 'OperationNotAllowed' "$ERR")" -eq 1 ] && pass "one line" || fail "the error is not one line"
ctl POST /__control/config '{}' >/dev/null

# --- answers that are not ARM's ------------------------------------------------
# A 200 that is not JSON, or holds a number out of range: an error naming the
# resource and what came back, never a plan of updates.
for body in '<html><body>proxy says hello</body></html>' '{"location":"eastus","tags":{"n":1e400}}'; do
  ctl POST /__control/clear-faults '{}' >/dev/null
  "$PY" -c 'import json,sys; print(json.dumps({"kind":"arm","method":"GET","path":"resourceGroups/pai-rg$","status":200,"body":sys.argv[1],"count":100}))' "$body" >"$TMP/fault.json"
  ctl POST /__control/fail "$(cat "$TMP/fault.json")" >/dev/null
  run install "$C" --azure-only --dry-run $EP
  expect_rc 3 "a 200 that is not JSON is a remote failure"
  expect_err "resourceGroups/pai-rg: 200 OK with a body that is not JSON: \"$(printf '%s' "$body" | cut -c1-20)" "the error names the resource and what came back"
  if grep -q "update" "$OUT"; then fail "a plan of updates was printed"; fi
done
ctl POST /__control/clear-faults '{}' >/dev/null

# --- secrets -------------------------------------------------------------------
for f in "$TMP"/out "$TMP"/err "$C/layout.yaml"; do
  if grep -qF "$SECRET" "$f"; then fail "the client secret is in $f"; fi
done
if grep -qF "$SECRET" "$TMP/server.log"; then fail "the secret is in the server's log"; fi
AZURE_CLIENT_SECRET="$SECRET" run -v install "$C" --azure-only --dry-run -o json $EP
if grep -qF "$SECRET" "$OUT" "$ERR"; then fail "the secret is in a dry run's output"; else pass "no secret in the output"; fi
if ctl GET /__control/requests | grep -qF "arm-"; then fail "a token is in the request log"; fi

# --- reset --azure deletes only what is tagged ------------------------------------
ctl POST /__control/clear-requests '{}' >/dev/null
run reset "$C" --azure $EP
expect_rc 2 "reset --azure without a terminal needs --yes"
run reset "$C" --azure --dry-run -o yaml $EP
expect_rc 0 "reset --azure --dry-run -o yaml"
if "$PY" -c "
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
ok = d['apiVersion'] == 'paictl.reset/v1' and d['kind'] == 'AzureReset' and d['dryRun'] is True
ok = ok and any(r['kind'] == 'scale set' for r in d['azure']['resources'])
sys.exit(0 if ok else 1)
" "$OUT"; then pass "reset --azure --dry-run -o yaml: one paictl.reset/v1 document with the plan"; else fail "reset --azure --dry-run -o yaml"; sed 's/^/  | /' "$OUT" >&2; fi
run reset "$C" --azure --yes $EP
expect_rc 0 "reset --azure"
expect_out "azure: deleted 4 resources" "the scale set, the VNet, the NSG and the group"
check_requests "len([r for r in arm if r['method'] == 'DELETE']) == 4" "one DELETE per resource"
check_requests "arm[-1]['method'] == 'GET' and arm[-1]['kind'] == 'poll' and arm[-1]['status'] == 200" \
  "the last deletion was waited for"
if cmp -s "$C/layout.yaml" "$TMP/layout.orig"; then pass "layout.yaml is back as it was"; else fail "layout.yaml after reset"; diff "$TMP/layout.orig" "$C/layout.yaml" >&2; fi
[ "$(ctl GET /__control/resources)" = "[]" ] && pass "nothing is left" || fail "resources left: $(ctl GET /__control/resources)"

finish
