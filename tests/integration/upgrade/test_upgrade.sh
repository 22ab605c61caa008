#!/bin/sh
# paictl upgrade on the testbed (127.0.53.x): install 1.30 on a master and two
# GPU workers, a gang running on one worker (submitted through the gateway, as
# test_journey.sh does); bad versions refused with exit 2 and no host changed;
# the dry run's plan takes the idle worker first and the busy one last (waited
# for); the upgrade to 1.31: every node at 1.31 (kubectl and the testbed's
# state), kubeadm upgrade apply once on the master, config.yaml's kube_version
# 1.31.x, no node cordoned; a second run has nothing to do. Then the rest of the
# lifecycle on the same hosts: certs check, backup, a namespace lost, restore,
# check cluster clean.
set -eu
: "${RUN:?}" "${PAICTL:?}" "${TESTBED:?}" "${PYTHON3:?}" "${HIVED_SERVER:?}"
# shellcheck disable=SC2034 # read by lib.sh: this test starts its own testbed
TB_OWN=1
. "$(dirname "$0")/../testbed/lib.sh"
need_kubectl
T0=$(date +%s)
"$TESTBED" up 3 "$RUN" --base 127.0.53 --rollout-delay 0.2 --hived-server "$HIVED_SERVER" > "$TMP/up.log" 2>&1 \
  || { cat "$TMP/up.log"; fail "testbed up"; }
C=$RUN/cluster
SSH="--ssh-config $RUN/ssh_config"
UP="$SSH --hived http://127.0.53.2:30096"
run install "$C" $SSH  --ignore-check-errors CPU,DNS,DiskFree,RunningKubernetes --wait 60 --yes --register bed
expect_rc 0 "install"
KC=$("$TESTBED" kubeconfig "$RUN")
pass "installed at 1.30 in $(($(date +%s) - T0)) s"

# --- bad input: exit 2, nothing changed on any host --------------------------------
"$TESTBED" state "$RUN" > "$TMP/before.json"
cp "$C/config.yaml" "$TMP/config.before"
for to in 1.29 1.99 x.y; do
  run upgrade "$C" $UP --to "$to" --yes
  expect_rc 2 "upgrade --to $to"
  grep -q "error" "$TMP/err" || fail "upgrade --to $to said nothing: $(cat "$TMP/err")"
done
run upgrade "$C" $UP --to 1.29 --yes
grep -q "downgrade" "$TMP/err" || fail "--to 1.29 is not called a downgrade: $(cat "$TMP/err")"
run upgrade "$C" $UP --to 1.99 --yes
grep -q "no Kubernetes 1.99" "$TMP/err" || fail "--to 1.99: $(cat "$TMP/err")"
# The testbed's kubeadm keeps kubeadm's rules: no target above the installed kubeadm.
set +e
ssh -F "$RUN/ssh_config" tb-master 'kubeadm upgrade apply v1.31.6 -y' > "$TMP/ka" 2>&1
RC=$?
set -e
[ "$RC" -ne 0 ] && grep -q "Upgrade kubeadm first" "$TMP/ka" || fail "kubeadm upgrade apply above kubeadm's version: $(cat "$TMP/ka")"
"$TESTBED" state "$RUN" > "$TMP/after.json"
cmp -s "$C/config.yaml" "$TMP/config.before" || fail "config.yaml changed"
"$PYTHON3" - "$TMP/before.json" "$TMP/after.json" <<'PY' || fail "a refused upgrade changed a host"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for s in (a, b):
    for o in (s.get("cluster") or {}).get("objects", {}).values():
        if isinstance(o, dict):
            o.pop("status", None)
bad = [h for h in a["hosts"] if a["hosts"][h] != b["hosts"][h]]
if bad or a["cluster"]["objects"].keys() != b["cluster"]["objects"].keys():
    print("changed:", bad)
    sys.exit(1)
PY
pass "--to 1.29 (a downgrade), 1.99 (not in the repository), x.y: exit 2, no host changed"

# --- a gang running on one worker ---------------------------------------------------
cat > "$TMP/short.yaml" <<'YAML'
protocolVersion: 2
name: warmup
type: job
prerequisites:
  - name: image
    type: dockerimage
    uri: openpai/standard:python_3.6-pytorch_1.2.0-gpu
taskRoles:
  train:
    instances: 1
    dockerImage: image
    resourcePerInstance: {cpu: 1, memoryMB: 2048, gpu: 1}
    commands:
      - sleep 1
defaults:
  virtualCluster: default
YAML
sed -e 's/^name: warmup/name: gang/' -e 's/instances: 1/instances: 2/' -e 's/gpu: 1}/gpu: 2}/' \
  -e "s/sleep 1/sleep ${GANG_S:-14}/" "$TMP/short.yaml" > "$TMP/gang.yaml"
# A finished job first: the user's median run time gives the gang its expected end.
run job submit "$TMP/short.yaml" --cluster bed
expect_rc 0 "job submit warmup"
run job wait warmup --cluster bed --interval 0.5 --timeout 60
expect_rc 0 "job wait warmup"
run job submit "$TMP/gang.yaml" --cluster bed
expect_rc 0 "job submit gang"
n=0
while :; do
  BUSY=$("$KUBECTL" --kubeconfig "$KC" get pods -n default -l jobName=gang -o jsonpath='{.items[*].spec.nodeName}' 2>/dev/null | tr ' ' '\n' | sort -u | head -1)
  [ -n "$BUSY" ] && break
  n=$((n + 1)); [ $n -lt 100 ] || fail "the gang was not bound"
  sleep 0.2
done
case $BUSY in tb-worker1) IDLE=tb-worker2 ;; *) IDLE=tb-worker1 ;; esac
pass "the gang runs on $BUSY; $IDLE is idle"

# --- the plan: the idle worker first, the busy one waited for -----------------------
run upgrade "$C" $UP --to 1.31 --dry-run -o json
expect_rc 0 "upgrade --dry-run"
cp "$TMP/out" "$TMP/plan.json"
check_file "$TMP/plan.json" "d['steps'][0]['version'] == '1.31.6' and d['controlPlane'] == '1.30.10'" "one step, 1.30.10 -> 1.31.6"
check_file "$TMP/plan.json" "[b['nodes'] for b in d['steps'][0]['maintenance']['batches']] == [['$IDLE'], ['$BUSY']]" "the idle worker first, the busy one last"
check_file "$TMP/plan.json" "[g['action'] for g in d['steps'][0]['maintenance']['batches'][1]['groups']] == ['waitedFor']" "the gang is waited for"
run upgrade "$C" $UP --to 1.31 --dry-run --detailed-exitcode
expect_rc 2 "upgrade --dry-run --detailed-exitcode: changes to make"
grep -q "batch 2 .*$BUSY" "$TMP/out" || fail "the text plan: $(cat "$TMP/out")"
grep -q "^    Maintenance plan: 2 nodes in 2 batches" "$TMP/out" || fail "the text plan's summary: $(cat "$TMP/out")"
cp "$TMP/out" "$RUN.plan.txt"  # (docs/upgrade.md shows it)

# --- the upgrade --------------------------------------------------------------------
T1=$(date +%s)
run upgrade "$C" $UP --to 1.31 --yes --wait-for-groups 5m
expect_rc 0 "upgrade --to 1.31"
pass "upgraded in $(($(date +%s) - T1)) s"
cp "$TMP/out" "$RUN.apply.txt"; cat "$TMP/err" >> "$RUN.apply.txt"
order=$(grep "runs 1.31.6" "$TMP/err" | awk '{print $2}' | tr '\n' ' ')
[ "$order" = "tb-master $IDLE $BUSY " ] || fail "the nodes' order ($order): $(cat "$TMP/err")"
grep -q "$BUSY: waiting for admin~gang" "$TMP/err" || fail "no wait for the gang shown: $(cat "$TMP/err")"
pass "the master, then $IDLE, then $BUSY once the gang ended"
"$TESTBED" state "$RUN" > "$TMP/state.json"
check_file "$TMP/state.json" "d['hosts']['tb-master']['kubeadm'].get('upgradeApply') == 1" "kubeadm upgrade apply ran once on the master"
check_file "$TMP/state.json" "all(h['packages'].get(p) == '1.31.6-1.1' for h in d['hosts'].values() for p in ('kubeadm', 'kubelet', 'kubectl'))" "kubeadm, kubelet, kubectl 1.31.6 on every host"
check_file "$TMP/state.json" "all(set(('kubeadm', 'kubelet', 'kubectl')) <= set(h['held']) for h in d['hosts'].values())" "held again"
check_file "$TMP/state.json" "all(d['hosts'][w]['kubeadm'].get('upgradeNode') == 1 for w in ('tb-worker1', 'tb-worker2'))" "kubeadm upgrade node once on each worker"
check_file "$TMP/state.json" "all(not o.get('spec', {}).get('unschedulable') and 'paictl.io/maintenance' not in (o.get('annotations') or {}) for k, o in d['cluster']['objects'].items() if k.startswith('Node/'))" "no node cordoned or annotated"
"$KUBECTL" --kubeconfig "$KC" get nodes -o json > "$TMP/nodes.json"
check_file "$TMP/nodes.json" "sorted(n['status']['nodeInfo']['kubeletVersion'] for n in d['items']) == ['v1.31.6'] * 3" "kubectl: every node's kubelet v1.31.6"
"$KUBECTL" --kubeconfig "$KC" version -o json > "$TMP/version.json" 2>/dev/null || true
check_file "$TMP/version.json" "d['serverVersion']['gitVersion'] == 'v1.31.6'" "kubectl: the API server v1.31.6"
grep -q '^kube_version: "1.31.6"' "$C/config.yaml" || fail "config.yaml: $(grep kube_version "$C/config.yaml")"
pass "config.yaml: kube_version 1.31.6"
run upgrade "$C" $UP --to 1.31 --yes --detailed-exitcode
expect_rc 0 "a second upgrade --to 1.31: nothing to do"
pass "upgrade test in $(($(date +%s) - T0)) s"

# --- the rest of the cluster's life on the same hosts: certs check, backup, a
# deliberate loss, restore, check cluster clean (docs/lifecycle.md) -----------------
T2=$(date +%s)
run certs check "$C" $SSH -o json
expect_rc 0 "certs check after the upgrade"
check_file "$TMP/out" "d['diagnostics'] == [] and len(d['certificates']) >= 15" "certs check: every certificate read, nothing expiring"
"$KUBECTL" --kubeconfig "$KC" create namespace precious > /dev/null
"$KUBECTL" --kubeconfig "$KC" -n precious create configmap keep --from-literal=answer=42 > /dev/null
run backup "$C" $SSH --out "$TMP/lab.tar.gz"
expect_rc 0 "backup"
[ "$(stat -c %a "$TMP/lab.tar.gz")" = 600 ] || fail "the archive is not 0600"
# The loss: a namespace and everything in it deleted by mistake.
"$KUBECTL" --kubeconfig "$KC" delete namespace precious --wait=false > /dev/null
n=0
while "$KUBECTL" --kubeconfig "$KC" get namespace precious > /dev/null 2>&1; do
  n=$((n + 1)); [ $n -lt 50 ] || fail "the namespace was not deleted"
  sleep 0.2
done
run restore "$C" --from "$TMP/lab.tar.gz" --yes $SSH
expect_rc 0 "restore"
V=$("$KUBECTL" --kubeconfig "$KC" -n precious get configmap keep -o jsonpath='{.data.answer}')
[ "$V" = 42 ] || fail "after the restore the ConfigMap is not back: '$V'"
"$KUBECTL" --kubeconfig "$KC" version -o json > "$TMP/version.json" 2>/dev/null || true
check_file "$TMP/version.json" "d['serverVersion']['gitVersion'] == 'v1.31.6'" "the restored cluster still runs v1.31.6"
run check cluster "$C" $UP -o json
expect_rc 0 "check cluster after the restore"
check_file "$TMP/out" "[f['code'] for f in d['diagnostics']] == []" "check cluster: no finding after upgrade, backup, loss and restore"
pass "certs check, backup, a namespace lost, restore, check cluster clean in $(($(date +%s) - T2)) s"
