#!/bin/sh
# A hybrid cluster end to end: an on-prem part and an Azure pool in one cluster
# directory, against the ARM test server (tests/integration/azure/arm_server.py,
# HTTPS on loopback with a throwaway CA) and a 4-host testbed (scripts/testbed.sh,
# 127.0.47.x). tb-master and tb-worker1 are on-prem; tb-worker2 and tb-worker3
# are left out of the cluster files and stand in for the VMs Azure creates: the
# ARM test server gives each new VM of the pool the name and address of one.
#   1. install --dry-run: the Azure plan (each resource, create), the HiveD cells
#      of the VM to come, and the on-prem hosts' plan;
#   2. install --yes: the pre-install checks, the Azure resources, the VM in
#      layout.yaml and in its own HiveD chain, then every host installed;
#   3. install again: nothing to do, in Azure (no PUT) or on the hosts;
#   4. node add --azure gpu --count 1: the scale set grows, the VM joins, its
#      cell joins the chain and the new HiveD config is pushed last;
#   5. node remove --azure of that VM: drained, deleted from the scale set;
#   6. reset --azure: what paictl created in Azure is deleted, each deletion waited for.
#
#   scripts/demo-azure.sh          (PAICTL=path to use another binary than build/paictl)
#
# It needs root, sshd, mount namespaces, python3 and openssl; elsewhere it says so
# in one sentence and exits 0 (DEMO_STRICT=1: 77).
set -eu
cd "$(dirname "$0")/.."
PAI_SOURCE_DIR=$(pwd)
PAICTL=${PAICTL:-./build/paictl}
case $PAICTL in /*) ;; *) PAICTL=$PAI_SOURCE_DIR/$PAICTL ;; esac
TESTBED=$PAI_SOURCE_DIR/scripts/testbed.sh
export PAICTL PAI_SOURCE_DIR TESTBED
skip() {
  echo "Azure demo skipped: $1; run this as root on a machine with openssh-server, python3 and openssl to see paictl build a hybrid cluster."
  [ "${DEMO_STRICT:-0}" = 1 ] && exit 77
  exit 0
}
reason=$("$TESTBED" can-run 2>&1) || skip "${reason#testbed: }"
command -v "${PYTHON3:-python3}" >/dev/null 2>&1 || skip "python3 is not installed"
command -v openssl >/dev/null 2>&1 || skip "openssl is not installed"
[ -x "$PAICTL" ] || { echo "demo-azure: $PAICTL is not built (scripts/build.sh)" >&2; exit 2; }

# The Azure tests' helpers: start_arm, testbed_up, ctl, check_requests, azure_section.
# They keep everything under one temporary directory and stop the server and the
# testbed on exit.
. "$PAI_SOURCE_DIR/tests/integration/azure/lib.sh"
PAICTL_TEMPLATES=${PAICTL_TEMPLATES:-$PAI_SOURCE_DIR/templates}
PAICTL_LAYOUTS=${PAICTL_LAYOUTS:-$PAI_SOURCE_DIR/layouts}
export PAICTL_TEMPLATES PAICTL_LAYOUTS
status=0
DEMO_NAME=demo-azure DEMO_MASK=$TMP   # the commands shown name the temporary directory $DEMO
. scripts/demo-lib.sh
# hived MESSAGE PYTHON: `c` is the HiveD config of services-configuration.yaml.
hived() {
  if "$PY" - "$C/services-configuration.yaml" "$2" <<'PYEOF'; then pass "$1"; else fail "$1"; fi
import sys, yaml
c = yaml.safe_load(yaml.safe_load(open(sys.argv[1]))["hivedscheduler"]["config"])
exec(sys.argv[2])
PYEOF
}

start_arm --polls 1 --retry-after 1
testbed_up 4 127.0.47
export PAICTL_CA_FILE="$CA" PAICTL_ARM_ENDPOINT="$ARM" PAICTL_AUTHORITY_HOST="$ARM"

# tb-worker2 and tb-worker3 are Azure's: out of layout.yaml and the HiveD config.
# The pool's machine-type (4 V100, as the testbed's GPUs) has no cells yet: its
# chain comes from the planner's profile of the VM size (layouts/azure-nc24s-v3).
ips=$(leave_to_azure "$C" tb-worker2 tb-worker3)
VM1_IP=${ips% *} VM2_IP=${ips#* }
ONPREM=$(echo "$VM1_IP" | sed 's/\.[0-9]*$/.0\/24/')
azure_section "$C" pai-burst "$ONPREM" 1 v100-azure
# The testbed's hosts are smaller than the VM size and have no DNS: those checks are demoted.
A="--ssh-config $RUN/ssh_config --wait 60 --ignore-check-errors CPU,Memory,DNS,ClockSkew,DiskFree"
echo "cluster directory: \$DEMO/bed/cluster (the on-prem part: tb-master, tb-worker1; config.yaml's azure: section: pool gpu, 1 Standard_NC24s_v3)"
echo "ARM endpoint: $ARM (PAICTL_ARM_ENDPOINT, PAICTL_AUTHORITY_HOST; its CA in PAICTL_CA_FILE)" | sed "s|$TMP|\$DEMO|g"

step "1. The plan of both sites (reads only): exit 2 = changes to make"
expect 2 $PAICTL install "$C" $A --dry-run --detailed-exitcode
check_requests "arm and all(r['method'] == 'GET' for r in arm)" "the dry run only read from ARM"

step "2. Install: the checks, the Azure resources, the VM in layout.yaml and HiveD, then every host"
ctl POST /__control/vm-hosts "[{\"computerName\": \"tb-worker2\", \"privateIp\": \"$VM1_IP\", \"scaleSet\": \"testbed-gpu\"}]" >/dev/null
ctl POST /__control/clear-requests '{}' >/dev/null
expect 0 $PAICTL install "$C" $A --yes
check_requests "len([r for r in arm if r['method'] == 'PUT' and r['path'].endswith('/virtualMachineScaleSets/testbed-gpu')]) == 1" \
  "one PUT created the scale set"
grep -q "hostname: tb-worker2  # azure pool gpu" "$C/layout.yaml" && pass "layout.yaml has the VM Azure created" ||
  fail "layout.yaml lacks the VM"
hived "the VM is a cell of its own chain in the HiveD config" '
assert {"cellType": "NC24S-V3-NODE", "cellAddress": "tb-worker2"} in c["physicalCluster"]["physicalCells"], c'

step "3. Again: nothing to do in Azure or on the hosts (exit 0 with --detailed-exitcode)"
ctl POST /__control/clear-requests '{}' >/dev/null
expect 0 $PAICTL install "$C" $A --yes --detailed-exitcode
check_requests "arm and not any(r['method'] in ('PUT', 'DELETE') for r in arm)" "the second install sent no PUT"

step "4. Grow the pool: node add --azure gpu --count 1 (the VM joins; HiveD restarts last)"
ctl POST /__control/vm-hosts "[{\"computerName\": \"tb-worker3\", \"privateIp\": \"$VM2_IP\", \"scaleSet\": \"testbed-gpu\"}]" >/dev/null
ctl POST /__control/clear-requests '{}' >/dev/null
expect 0 $PAICTL node add "$C" --azure gpu --count 1 $A --yes
check_requests "[r['path'].rsplit('/', 1)[1] for r in arm if r['method'] == 'PUT'] == ['testbed-gpu']" \
  "one PUT: the scale set, to 2 VMs"
grep -q "count: 2$" "$C/config.yaml" && pass "config.yaml: the pool has 2 VMs" || fail "config.yaml's count"
hived "the new VM's cell joined the chain" '
cells = c["physicalCluster"]["physicalCells"]
assert {"cellType": "NC24S-V3-NODE", "cellAddress": "tb-worker3"} in cells, cells'
"$TESTBED" state "$RUN" >"$TMP/state.json"
if "$PY" -c "
import json, sys
o = json.load(open(sys.argv[1]))['cluster']['objects']
assert o['Node/tb-worker3']['ready'] == 'True'
assert 'cellAddress: tb-worker3' in o['ConfigMap/openpai/hivedscheduler-config']['data']['hivedscheduler.yaml']
" "$TMP/state.json"; then pass "tb-worker3 is a Ready node and HiveD's ConfigMap on the cluster has its cell"
else fail "the new VM on the cluster"; fi

step "5. Shrink it: node remove --azure tb-worker3 (drained, then deleted from the scale set)"
ctl POST /__control/clear-requests '{}' >/dev/null
expect 0 $PAICTL node remove "$C" tb-worker3 --azure --drain --yes --ssh-config "$RUN/ssh_config" --wait 60
check_requests "[r['path'].rsplit('/', 3)[1:] for r in arm if r['method'] == 'DELETE'] == [['testbed-gpu', 'virtualMachines', '1']]" \
  "one DELETE: the VM of the scale set"
grep -q "tb-worker3" "$C/layout.yaml" "$C/services-configuration.yaml" && fail "the files still name tb-worker3" ||
  pass "layout.yaml and the HiveD config without tb-worker3"

step "6. reset --azure: delete what paictl created in Azure (only what carries the cluster's tag)"
ctl POST /__control/clear-requests '{}' >/dev/null
expect 0 $PAICTL reset "$C" --azure --yes
[ "$(ctl GET /__control/resources)" = "[]" ] && pass "nothing is left in the resource group's place" ||
  fail "resources left: $(ctl GET /__control/resources)"

for f in "$C/layout.yaml" "$C/config.yaml" "$C/services-configuration.yaml"; do
  if grep -qF "$SECRET" "$f"; then fail "the client secret is in $f"; fi
done
[ "$FAILS" -eq 0 ] || status=1
[ "$status" -eq 0 ] && echo "demo-azure: every step ended as expected" || echo "demo-azure: some steps did not end as expected" >&2
exit $status
