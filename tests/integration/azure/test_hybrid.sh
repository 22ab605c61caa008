#!/bin/sh
# The hybrid install end to end on one cluster directory, the other way round:
# the master on Azure (a pool with role: master) and an on-prem worker that
# joins it, plus an Azure GPU pool of one VM (the ARM test server). The VMs
# Azure creates are testbed hosts left out of the cluster files: the ARM test
# server gives each new VM the name and address of one (tb-master for the
# master pool, tb-worker2 for the GPU pool, tb-worker3 for node add). The GPU
# pool's machine-type has no cells in the HiveD config: its chain comes from the
# planner's profile of the VM size (layouts/azure-nc24s-v3). Then:
#  0. install --dry-run (text and -o json) shows the Azure plan, that the master
#     is still to be created, and the cells of the GPU pool's planned VM under a
#     placeholder name;
#  1. install creates the Azure resources, writes the VMs into layout.yaml (the
#     master's VM as pai-master), gives the GPU VM its chain in the HiveD config
#     and installs every host in one run: kubeadm init on the Azure master, the
#     on-prem worker and the GPU VM join it; every node carries its site;
#  2. node add --azure grows the GPU pool by one VM, which joins; its cell joins
#     the chain, in the HiveD config and in HiveD's ConfigMap on the cluster.
# (azure.node_azure covers the on-prem master with Azure workers.)
# Skips (77) where the machine cannot run the testbed.
. "$PAI_SOURCE_DIR/tests/integration/azure/lib.sh"
set -e
testbed_can_run
start_arm --polls 1 --retry-after 0
testbed_up 4 127.0.43

# tb-master, tb-worker2 and tb-worker3 are Azure's: out of layout.yaml and the HiveD config.
MASTER_IP=$(leave_to_azure "$C" tb-master tb-worker2 tb-worker3 | cut -d" " -f1)
azure_section "$C" pai-hybrid 127.0.43.0/24 1 v100-azure master-machine
EP="--arm-endpoint $ARM --authority-host $ARM --ca-file $CA"
ARGS="--ssh-config $RUN/ssh_config --wait 60 $EP --ignore-check-errors CPU,Memory,DNS,ClockSkew,DiskFree"
state() { "$TESTBED" state "$RUN" >"$1"; }
pycheck() { # pycheck STATE-FILE MESSAGE PYTHON: `s` is the testbed's state
  if "$PY" -c "import json,sys; s=json.load(open(sys.argv[1])); $3" "$1"; then pass "$2"; else fail "$2"; fi
}

# --- 0. the dry run: the master to be created, the planned VM's cells ---------
run install "$C" --dry-run $ARGS
expect_rc 0 "install --dry-run"
expect_out "the master is the VM of Azure pool cp, not created yet" "the dry run says the master is still to be created"
expect_out "new-gpu-1 as a NC24S-V3-NODE cell of the new chain NC24S-V3-NODE" \
  "the dry run shows the cells of the GPU pool's VM, under a placeholder name"
run install "$C" --dry-run --detailed-exitcode -o json $ARGS
expect_rc 2 "install --dry-run --detailed-exitcode -o json: changes planned"
schema_check install "install --dry-run -o json: one document"
if "$PY" - "$OUT" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["pendingMaster"] == "cp", d
assert d["hived"]["plannedMachines"] == [{"name": "new-gpu-1", "pool": "gpu", "sku": "Standard_NC24s_v3", "machineType": "v100-azure"}], d["hived"]
assert any("new-gpu-1 as a NC24S-V3-NODE cell" in c for c in d["hived"]["changes"]), d["hived"]
kinds = sorted((r["kind"], r["name"], r["action"]) for r in d["azure"]["resources"])
assert ("scale set", "testbed-cp", "create") in kinds and ("scale set", "testbed-gpu", "create") in kinds, kinds
PYEOF
then pass "the JSON dry run: the pending master, the planned VM by SKU, its cells, both scale sets"; else fail "install --dry-run -o json's document"; fi
grep -q "new-gpu-1" "$C/services-configuration.yaml" && fail "the dry run wrote the placeholder into the HiveD config" ||
  pass "the dry run changed no file"

# --- 1. one install: Azure first (the master too), then every host -------------
ctl POST /__control/vm-hosts "[{\"computerName\": \"tb-master\", \"privateIp\": \"$MASTER_IP\", \"scaleSet\": \"testbed-cp\"},
  {\"computerName\": \"tb-worker2\", \"privateIp\": \"127.0.43.4\", \"scaleSet\": \"testbed-gpu\"}]" >/dev/null
run install "$C" --yes $ARGS
expect_rc 0 "install: the Azure pool and the on-prem hosts in one run"
[ "$RC" -eq 0 ] || { finish; exit 1; }
check_requests "len([r for r in arm if r['method'] == 'PUT' and r['path'].endswith('/virtualMachineScaleSets/testbed-gpu')]) == 1" \
  "the scale set was created with one PUT"
expect_out "cellTypes: NC24S-V3-NODE (new: the chain NC24S-V3-NODE of machine-type v100-azure)" \
  "the VM's machine-type gets its chain from the profile"
grep -q "hostname: tb-worker2  # azure pool gpu" "$C/layout.yaml" && grep -q "hostip: 127.0.43.4" "$C/layout.yaml" &&
  pass "layout.yaml has the VM Azure created" || fail "layout.yaml: $(cat "$C/layout.yaml")"
if "$PY" - "$C/layout.yaml" <<'PYEOF'
import sys, yaml
ms = {m["hostname"]: m for m in yaml.safe_load(open(sys.argv[1]))["machine-list"]}
assert ms["tb-master"].get("pai-master") == "true" and "pai-worker" not in ms["tb-master"], ms["tb-master"]
assert ms["tb-master"]["machine-type"] == "master-machine", ms["tb-master"]
assert [n for n, m in ms.items() if m.get("pai-master") == "true"] == ["tb-master"], ms
PYEOF
then pass "layout.yaml: the master pool's VM is the one pai-master"; else fail "layout.yaml's master: $(cat "$C/layout.yaml")"; fi
check_requests "any(r['method'] == 'PUT' and r['path'].endswith('/virtualMachineScaleSets/testbed-cp') for r in arm)" \
  "the master's scale set was created"
if ctl GET /__control/resources | "$PY" -c "
import json, sys
nsg = [r for r in json.load(sys.stdin) if r.get('type', '').endswith('networkSecurityGroups')][0]
rules = {r['name']: r['properties'] for r in nsg['properties']['securityRules']}
tcp, udp = rules['cluster-tcp-from-onprem'], rules['cluster-udp-from-onprem']
assert tcp['sourceAddressPrefix'] == '127.0.43.0/24' and '6443' in tcp['destinationPortRanges'] and '10250' in tcp['destinationPortRanges'], tcp
assert sorted(udp['destinationPortRanges']) == ['4789', '8472'], udp
"; then pass "the NSG admits the API server, the kubelet and VXLAN from the on-prem site"; else fail "the NSG's rules"; fi
hived_cells() { # hived_cells MESSAGE PYTHON: `c` is the HiveD config of services-configuration.yaml
  if "$PY" - "$C/services-configuration.yaml" "$2" <<'PYEOF'; then pass "$1"; else fail "$1"; sed 's/^/  | /' "$C/services-configuration.yaml" >&2; fi
import sys, yaml
c = yaml.safe_load(yaml.safe_load(open(sys.argv[1]))["hivedscheduler"]["config"])
exec(sys.argv[2])
PYEOF
}
hived_cells "the HiveD config: the on-prem pool as it was, the VM in its own chain, in no VC" '
p = c["physicalCluster"]
assert p["cellTypes"]["NC24S-V3-NODE"] == {"childCellType": "V100", "childCellNumber": 4, "isNodeLevel": True}, p["cellTypes"]
assert p["skuTypes"]["V100"]["gpu"] == 1 and "gpu-machine" in p["skuTypes"], p["skuTypes"]
assert p["physicalCells"][1:] == [{"cellType": "NC24S-V3-NODE", "cellAddress": "tb-worker2"}], p["physicalCells"]
assert [x["cellAddress"] for x in p["physicalCells"][0]["cellChildren"]] == ["tb-worker1"], p["physicalCells"]
assert c["virtualClusters"]["default"]["virtualCells"] == [{"cellType": "gpu-machine-NODE-POOL.gpu-machine-NODE", "cellNumber": 1}]'
state "$TMP/installed.json"
pycheck "$TMP/installed.json" "the master, the on-prem worker and the Azure VM are Ready nodes" '
h, o = s["hosts"], s["cluster"]["objects"]
assert h["tb-master"]["kubeadm"]["init"] == 1, h["tb-master"]["kubeadm"]
for n in ("tb-worker1", "tb-worker2"):
    assert h[n]["kubeadm"] == {"init": 0, "join": 1}, (n, h[n]["kubeadm"])
    assert o["Node/" + n]["ready"] == "True" and o["Node/" + n]["allocatable_gpus"] == 4, o["Node/" + n]
assert h["tb-worker3"]["kubeadm"] == {"init": 0, "join": 0}, h["tb-worker3"]["kubeadm"]
assert "Node/tb-worker3" not in o
assert o["Node/tb-worker2"]["labels"]["paictl.io/machine-type"] == "v100-azure", o["Node/tb-worker2"]["labels"]
site = lambda n: {k: v for k, v in o["Node/" + n]["labels"].items() if k.startswith(("paictl.io/site", "paictl.io/azure-pool", "topology.kubernetes.io/"))}
assert site("tb-master") == {"paictl.io/site": "azure", "paictl.io/azure-pool": "cp", "topology.kubernetes.io/region": "eastus"}, site("tb-master")
assert site("tb-worker2") == {"paictl.io/site": "azure", "paictl.io/azure-pool": "gpu", "topology.kubernetes.io/region": "eastus"}, site("tb-worker2")
assert site("tb-worker1") == {"paictl.io/site": "onprem"}, site("tb-worker1")
assert "cellAddress: tb-worker2" in o["ConfigMap/openpai/hivedscheduler-config"]["data"]["hivedscheduler.yaml"]'
pycheck "$TMP/installed.json" "the pods' VXLAN MTU is lowered for the link between the sites (azure.tunnel-mtu 1400 - 50)" '
net = s["cluster"]["objects"]["ConfigMap/kube-flannel/kube-flannel-cfg"]["data"]
assert json.loads(net["net-conf.json"])["Backend"] == {"Type": "vxlan", "MTU": 1350}, net
assert json.loads(net["cni-conf.json"])["plugins"][0]["delegate"]["mtu"] == 1350, net'
ctl POST /__control/clear-requests '{}' >/dev/null
run install "$C" --yes --detailed-exitcode $ARGS
expect_rc 0 "a second install has nothing to do, in Azure or on the hosts"
check_requests "not any(r['method'] in ('PUT', 'DELETE') for r in arm)" "the second install sends no PUT"

# --- check hosts' cross-site checks find seeded faults on the path to the GPU VM --
# The test hosts share this machine's network, so the faults are seeded on it,
# for tb-worker2's address only: a local route with MTU 1300 (a VPN narrower than
# tunnel-mtu's 1400: the pods' 1400-byte VXLAN packets do not fit), and its
# kubelet port dropped (a listener whose accept queue is full: SYNs go unanswered,
# as behind an NSG or a firewall that drops them).
VM=127.0.43.4
# (set -e holds in the trap too: each command there must not fail.)
trap '[ -z "$HOLD_PID" ] || kill "$HOLD_PID" 2>/dev/null || true; ip route del local $VM/32 dev lo table local 2>/dev/null || true; "$TESTBED" down "$RUN" >/dev/null 2>&1 || true; kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; rm -rf "$TMP"' EXIT INT TERM
HOLD_PID=
if ip route add local $VM/32 dev lo table local mtu lock 1300 2>/dev/null; then
  "$PY" - "$VM" "$TMP/hold" <<'PYEOF' &
import socket, sys, time
ip, flag = sys.argv[1], sys.argv[2]
s = socket.socket()
try:
    s.bind((ip, 10250))
except OSError as e:
    open(flag, "w").write("busy %s" % e)
    sys.exit(0)
s.listen(0)
held = []
for _ in range(4):  # fill the accept queue: later SYNs are dropped
    c = socket.socket(); c.setblocking(False)
    try: c.connect((ip, 10250))
    except BlockingIOError: pass
    held.append(c)
time.sleep(1)
open(flag, "w").write("held")
time.sleep(300)
PYEOF
  HOLD_PID=$!
  i=0; while [ ! -s "$TMP/hold" ] && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.05; done
  run check hosts "$C" --ssh-config "$RUN/ssh_config" -o json
  kill "$HOLD_PID" 2>/dev/null || true
  ip route del local $VM/32 dev lo table local 2>/dev/null || true
  if "$PY" - "$OUT" "$TMP/hold" <<'PYEOF'
import json, shutil, sys
rows = [r for r in json.load(open(sys.argv[1]))["results"] if r["check"].startswith("CrossSite") and r["host"] == "tb-worker1"]
by = lambda check, peer: [r for r in rows if r["check"] == check and peer in r["message"]]
if shutil.which("ping"):
    vm, master = by("CrossSiteMTU", "tb-worker2"), by("CrossSiteMTU", "tb-master")
    assert [r["status"] for r in vm] == ["fail"] and "a packet of 1400 bytes (the CNI's MTU 1350 + 50 of VXLAN)" in vm[0]["message"], vm
    assert [r["status"] for r in master] == ["pass"], master
if open(sys.argv[2]).read() == "held":
    vm = [r for r in by("CrossSitePort", "tb-worker2") if "10250" in r["message"]]
    assert [r["status"] for r in vm] == ["fail"] and "no answer" in vm[0]["message"], vm
    master = [r for r in by("CrossSitePort", "tb-master") if "10250" in r["message"]]
    assert [r["status"] for r in master] == ["pass"], master
else:
    print("the kubelet port of %s could not be held (%s): the blocked port is not seeded" % (sys.argv[1], open(sys.argv[2]).read()))
PYEOF
  then pass "check hosts: CrossSiteMTU finds the narrower path and CrossSitePort the dropped kubelet port of the GPU VM; the master's pass"
  else fail "check hosts' cross-site checks with the seeded faults"; sed 's/^/  | /' "$OUT" >&2; fi
else
  skip_part "cannot add a route here, so the cross-site faults are not seeded"
fi

# The master's pool neither grows nor loses its VM.
ctl POST /__control/clear-requests '{}' >/dev/null
run node add "$C" --azure cp --count 1 --yes $ARGS
expect_rc 2 "node add --azure cp: the master's pool does not grow"
expect_err "is the master's (role: master)" "the refusal says why"
run node remove "$C" tb-master --azure --dry-run --ssh-config "$RUN/ssh_config" $EP
expect_rc 2 "node remove --azure of the master's VM is refused"
expect_err "tb-master is the master" "the refusal names the master"
check_requests "not any(r['method'] in ('PUT', 'DELETE') for r in arm)" "neither sent a PUT or a DELETE"

# --- 2. node add --azure grows the pool; the VM's cells reach HiveD ------------
ctl POST /__control/vm-hosts '[{"computerName": "tb-worker3", "privateIp": "127.0.43.5", "scaleSet": "testbed-gpu"}]' >/dev/null
ctl POST /__control/clear-requests '{}' >/dev/null
run node add "$C" --azure gpu --count 1 --yes -o json $ARGS
expect_rc 0 "node add --azure gpu --count 1 -o json"
schema_check nodeAdd "node add -o json: one document"
if "$PY" - "$OUT" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["nodes"] == ["tb-worker3"] and d["dryRun"] is False, d
assert d["azure"]["from"] == 1 and d["azure"]["to"] == 2, d["azure"]
assert "tb-worker3" in [h["host"] for h in d["join"]["result"]["hosts"]] and d["join"]["result"]["ok"], d["join"]
assert d["push"]["result"]["ok"] and d["hived"]["restartsHived"] is True, d["push"]
assert any("tb-worker3 as a NC24S-V3-NODE cell" in c for c in d["hived"]["changes"]), d["hived"]
PYEOF
then pass "the document has the VM, its join, the HiveD change and the push"; else fail "node add -o json's document"; fi
check_requests "[r['path'].rsplit('/', 1)[1] for r in arm if r['method'] == 'PUT'] == ['testbed-gpu']" "one PUT: the scale set"
grep -q "count: 2$" "$C/config.yaml" && pass "config.yaml: the pool has 2 VMs" || fail "config.yaml's count"
grep -q "hostname: tb-worker3  # azure pool gpu" "$C/layout.yaml" && pass "layout.yaml has the new VM" ||
  fail "layout.yaml: $(cat "$C/layout.yaml")"
hived_cells "the HiveD config: the new VM's cell joins the VMs' chain" '
p = c["physicalCluster"]
assert p["physicalCells"][1:] == [{"cellType": "NC24S-V3-NODE", "cellAddress": "tb-worker2"},
                                  {"cellType": "NC24S-V3-NODE", "cellAddress": "tb-worker3"}], p["physicalCells"]
assert len(p["cellTypes"]) == 3 and len(p["skuTypes"]) == 2, p'
state "$TMP/added.json"
pycheck "$TMP/added.json" "the new VM joined, nothing ran twice, and HiveD's ConfigMap has its cell" '
h, o = s["hosts"], s["cluster"]["objects"]
for n in ("tb-worker1", "tb-worker2", "tb-worker3"):
    assert h[n]["kubeadm"] == {"init": 0, "join": 1}, (n, h[n]["kubeadm"])
assert o["Node/tb-worker3"]["ready"] == "True", o["Node/tb-worker3"]
assert o["Node/tb-worker3"]["labels"]["paictl.io/site"] == "azure", o["Node/tb-worker3"]["labels"]
assert "cellAddress: tb-worker3" in o["ConfigMap/openpai/hivedscheduler-config"]["data"]["hivedscheduler.yaml"]'

for f in "$TMP"/out "$TMP"/err "$C/layout.yaml" "$C/.paictl"/logs/*.log; do
  if grep -qF "$SECRET" "$f"; then fail "the client secret is in $f"; fi
done
finish
