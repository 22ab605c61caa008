#!/bin/sh
# node add --azure and node remove --azure on the testbed: a cluster of an
# on-prem master and worker (testbed hosts) with an Azure pool of 0 VMs (the ARM
# test server). tb-worker2, a fresh testbed host left out of the cluster files,
# stands in for the VM Azure creates: the ARM test server gives the new VM its
# name and address. Then:
#  1. node add --azure --dry-run reads only and changes no host;
#  2. node add --azure grows the scale set (one PUT), writes config.yaml and
#     layout.yaml, and joins the VM over SSH as on-prem hosts join: only it and
#     the master's cluster-wide phases change; install then has nothing to do;
#  3. node remove --azure --drain --dry-run changes nothing; node remove
#     --azure --drain drains and deletes the node, deletes the VM (one DELETE,
#     waited for; its NIC goes with it) and lowers the pool's count.
# Skips (77) where the machine cannot run the testbed.
. "$PAI_SOURCE_DIR/tests/integration/azure/lib.sh"
set -e
testbed_can_run
start_arm --polls 1 --retry-after 1
testbed_up 3 127.0.41
VM_IP=127.0.41.4

# tb-worker2 is not part of the cluster: out of layout.yaml and the HiveD config.
"$PY" - "$C" <<'PYEOF'
import re, sys
d = sys.argv[1]
lay = open(d + "/layout.yaml").read()
lay, n = re.subn(r"  - hostname: tb-worker2\n(    .*\n)+", "", lay)
assert n == 1, lay
open(d + "/layout.yaml", "w").write(lay)
svc = open(d + "/services-configuration.yaml").read()
svc = svc.replace("        - cellAddress: tb-worker2\n", "")
svc = svc.replace("childCellNumber: 2\n", "childCellNumber: 1\n").replace("cellNumber: 2\n", "cellNumber: 1\n")
assert "tb-worker2" not in svc, svc
open(d + "/services-configuration.yaml", "w").write(svc)
PYEOF
azure_section "$C" pai-rg 127.0.41.0/24 0 gpu-machine
EP="--arm-endpoint $ARM --authority-host $ARM --ca-file $CA"
RARGS="--ssh-config $RUN/ssh_config --wait 60 $EP"
ARGS="$RARGS --ignore-check-errors CPU,DNS,DiskFree"
state() { "$TESTBED" state "$RUN" >"$1"; }
pycheck() { # pycheck STATE-FILE MESSAGE PYTHON: `s` is the testbed's state
  if "$PY" -c "import json,sys; s=json.load(open(sys.argv[1])); $3" "$1"; then pass "$2"; else fail "$2"; fi
}

# --- 0. SiteOverlap among install's pre-install checks -------------------------
# The test hosts share this machine's routes: with the pods' range moved onto a
# network the machine routes, the dry run stops on the on-prem host, naming the
# route and the range, and nothing is created.
ROUTE=$(ip -j -4 route show 2>/dev/null | "$PY" -c '
import ipaddress, json, sys
keep = []
for r in json.load(sys.stdin):
    d = r.get("dst", "default")
    if d == "default" or "/" not in d or r.get("dev", "").startswith(("flannel", "cni", "cali", "vxlan", "tunl", "kube-ipvs")):
        continue
    n = ipaddress.ip_network(d, strict=False)
    if not any(n.overlaps(ipaddress.ip_network(o)) for o in ("10.224.0.0/16", "10.96.0.0/12", "127.0.0.0/8", "10.244.0.0/16")):
        keep.append(d)
print(keep[0] if keep else "")' 2>/dev/null || true)
if [ -n "$ROUTE" ]; then
  cp "$C/config.yaml" "$TMP/config.keep"
  printf 'kube_pods_subnet: %s\n' "$ROUTE" >>"$C/config.yaml"
  run install "$C" --dry-run -o json $ARGS
  if [ "$RC" -ne 0 ] && grep -q "SiteOverlap" "$OUT" "$ERR" && grep -q "overlaps kube_pods_subnet $ROUTE" "$OUT" "$ERR"; then
    pass "install's pre-install checks include SiteOverlap: the route $ROUTE into the pods' range stops the dry run (exit $RC)"
  else
    fail "install --dry-run with kube_pods_subnet on the machine's route $ROUTE: exit $RC"
    sed 's/^/  | /' "$OUT" "$ERR" >&2
  fi
  # The install itself: refused before Azure spends anything (no PUT, no resource).
  ctl POST /__control/clear-requests '{}' >/dev/null
  run install "$C" --yes $ARGS
  cp "$TMP/config.keep" "$C/config.yaml"
  expect_rc 1 "install --yes with the overlap: the on-prem host's checks fail"
  expect_out "SiteOverlap" "the failing check is named"
  expect_err "nothing was created or changed in Azure" "the refusal says Azure was left alone"
  check_requests "arm and not any(r['method'] in ('PUT', 'DELETE', 'PATCH') for r in arm)" \
    "the checks ran before Azure: the plan was read, nothing was sent to create"
  [ "$(ctl GET /__control/resources)" = "[]" ] && pass "no Azure resource exists" ||
    fail "resources created before the checks: $(ctl GET /__control/resources)"
else
  skip_part "this machine routes no network outside the test's ranges, so SiteOverlap cannot be seeded"
fi

# The dry run shows both plans: the Azure resources and the on-prem hosts' phases.
run install "$C" --dry-run $ARGS
expect_rc 0 "install --dry-run"
expect_out "create  scale set               testbed-gpu" "the dry run has the Azure plan"
expect_out "kubeadm init" "and the on-prem plan (kubeadm init on the master)"
expect_out "2 hosts: 2 to change" "of both on-prem hosts"
run install "$C" --dry-run -o json $ARGS
if "$PY" - "$OUT" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
acts = {(r["kind"], r["action"]) for r in d["azure"]["resources"]}
assert ("scale set", "create") in acts and ("virtual network", "create") in acts, acts
assert sorted(h["host"] for h in d["plan"]["hosts"]) == ["tb-master", "tb-worker1"], d["plan"]
PYEOF
then pass "install --dry-run -o json: the Azure resources with their actions and the hosts' plan in one document"
else fail "install --dry-run -o json's document"; sed 's/^/  | /' "$OUT" >&2; fi
run install "$C" --yes $ARGS
expect_rc 0 "install: the Azure part (no VM yet) and the on-prem hosts"
[ "$RC" -eq 0 ] || { finish; exit 1; }

# --- 1. the dry run ------------------------------------------------------------
ctl POST /__control/vm-hosts "[{\"computerName\": \"tb-worker2\", \"privateIp\": \"$VM_IP\"}]" >/dev/null
state "$TMP/before.json"
cp "$C/layout.yaml" "$TMP/layout.before"
ctl POST /__control/clear-requests '{}' >/dev/null
run node add "$C" --azure gpu --count 1 --dry-run --detailed-exitcode $ARGS
expect_rc 2 "node add --azure --dry-run: changes"
expect_out "sku.capacity: 0 -> 1" "the dry run shows the new size"
expect_out "+        - cellAddress: new-vm-1" "the dry run shows the HiveD config's diff (the VM's name is Azure's: a placeholder)"
expect_out "cellTypes: gpu-machine-NODE-POOL childCellNumber 1 -> 2" "the pool of node cells grows"
check_requests "all(r['method'] == 'GET' for r in arm)" "the dry run only reads from ARM"
state "$TMP/after-dry.json"
cmp -s "$TMP/before.json" "$TMP/after-dry.json" && pass "the dry run changes no host" || fail "the dry run changed a host"
cmp -s "$C/layout.yaml" "$TMP/layout.before" && pass "the dry run keeps layout.yaml" || fail "the dry run changed layout.yaml"

# --- 2. grow and join ----------------------------------------------------------
ctl POST /__control/clear-requests '{}' >/dev/null
run node add "$C" --azure gpu --count 1 --yes $ARGS
expect_rc 0 "node add --azure gpu --count 1"
check_requests "len([r for r in arm if r['method'] == 'PUT']) == 1 and [r for r in arm if r['method'] == 'PUT'][0]['path'].endswith('/virtualMachineScaleSets/testbed-gpu')" \
  "one PUT: the scale set"
if grep -q '^tb-worker2 .*join .*done' "$ERR" && ! grep -q '^tb-worker1 ' "$ERR"; then
  pass "the new VM joined; the on-prem worker was not touched"
else fail "the join: $(cat "$ERR")"; fi
grep -q "count: 1$" "$C/config.yaml" && pass "config.yaml: count 1" || fail "config.yaml's count"
grep -q "hostname: tb-worker2  # azure pool gpu" "$C/layout.yaml" && grep -q "hostip: $VM_IP" "$C/layout.yaml" &&
  pass "layout.yaml has the VM" || fail "layout.yaml: $(cat "$C/layout.yaml")"
state "$TMP/added.json"
pycheck "$TMP/added.json" "the VM is a Ready node with its GPUs, labelled as its machine-type; nothing ran twice" '
h = s["hosts"]
assert h["tb-worker2"]["kubeadm"] == {"init": 0, "join": 1}, h["tb-worker2"]["kubeadm"]
assert h["tb-worker1"]["kubeadm"] == {"init": 0, "join": 1}, h["tb-worker1"]["kubeadm"]
assert h["tb-master"]["kubeadm"]["init"] == 1, h["tb-master"]["kubeadm"]
n = s["cluster"]["objects"]["Node/tb-worker2"]
assert n["ready"] == "True" and n["allocatable_gpus"] == 4, n
assert n["labels"]["paictl.io/machine-type"] == "gpu-machine", n["labels"]'
if grep -q "        - cellAddress: tb-worker2" "$C/services-configuration.yaml" && grep -q "childCellNumber: 2$" "$C/services-configuration.yaml" &&
   grep -q "  cellNumber: 1$" "$C/services-configuration.yaml"; then
  pass "the HiveD config has the VM's cell, in no VC"
else fail "the HiveD config: $(cat "$C/services-configuration.yaml")"; fi
pycheck "$TMP/added.json" "HiveD's ConfigMap has the VM" '
assert "tb-worker2" in s["cluster"]["objects"]["ConfigMap/openpai/hivedscheduler-config"]["data"]["hivedscheduler.yaml"]'
ctl POST /__control/clear-requests '{}' >/dev/null
run install "$C" --yes --detailed-exitcode $ARGS
expect_rc 0 "install after node add has nothing to do, in Azure or on the hosts"
check_requests "not any(r['method'] in ('PUT', 'DELETE') for r in arm)" "no PUT after node add"

# --- 3. remove -----------------------------------------------------------------
state "$TMP/before-remove.json"
ctl POST /__control/clear-requests '{}' >/dev/null
run node remove "$C" tb-worker2 --azure --drain --dry-run $RARGS
expect_rc 0 "node remove --azure --dry-run"
expect_out "kubectl --kubeconfig=/etc/kubernetes/admin.conf --cache-dir=/etc/paictl/kube-cache drain tb-worker2 --ignore-daemonsets" "the dry run shows the drain"
expect_out "DELETE /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/pai-rg/providers/Microsoft.Compute/virtualMachineScaleSets/testbed-gpu/virtualMachines/0" "the dry run shows the VM's DELETE"
check_requests "all(r['method'] == 'GET' for r in arm)" "the dry run only reads from ARM"
state "$TMP/after-dry-remove.json"
cmp -s "$TMP/before-remove.json" "$TMP/after-dry-remove.json" && pass "the dry run changes no host" || fail "the dry run changed a host"

run node remove "$C" tb-worker2 --azure --drain --yes $RARGS
expect_rc 0 "node remove --azure --drain"
check_requests "[r['path'] for r in arm if r['method'] == 'DELETE'] == ['/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/pai-rg/providers/Microsoft.Compute/virtualMachineScaleSets/testbed-gpu/virtualMachines/0']" \
  "one DELETE: the VM"
check_requests "any(r['kind'] == 'poll' and r['status'] == 200 for r in arm)" "the deletion was waited for"
if ctl GET /__control/resources | "$PY" -c "
import json, sys
v = [r for r in json.load(sys.stdin) if r['type'] == 'Microsoft.Compute/virtualMachineScaleSets']
sys.exit(0 if len(v) == 1 and v[0]['sku']['capacity'] == 0 else 1)"; then
  pass "the scale set has no VM left"
else fail "the scale set: $(ctl GET /__control/resources)"; fi
grep -q "count: 0$" "$C/config.yaml" && pass "config.yaml: count 0" || fail "config.yaml's count after remove"
grep -q "tb-worker2" "$C/layout.yaml" && fail "layout.yaml still has the VM" || pass "layout.yaml without the VM"
grep -q "tb-worker2" "$C/services-configuration.yaml" && fail "the HiveD config still has the VM" || pass "the HiveD config without the VM"
state "$TMP/removed.json"
pycheck "$TMP/removed.json" "the node is gone; the on-prem worker stays" '
o = s["cluster"]["objects"]
assert "Node/tb-worker2" not in o, "the node is still there"
assert o["Node/tb-worker1"]["ready"] == "True"
assert "tb-worker2" not in o["ConfigMap/openpai/hivedscheduler-config"]["data"]["hivedscheduler.yaml"]'
ctl POST /__control/clear-requests '{}' >/dev/null
run install "$C" --azure-only --yes --detailed-exitcode $EP
expect_rc 0 "after node remove, the Azure part has nothing to do"

for f in "$TMP"/out "$TMP"/err "$C/layout.yaml" "$C/.paictl"/logs/*.log; do
  if grep -qF "$SECRET" "$f"; then fail "the client secret is in $f"; fi
done
finish
