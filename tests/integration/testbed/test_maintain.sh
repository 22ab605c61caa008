#!/bin/sh
# paictl node maintain on its own testbed (127.0.52.x: a master and two GPU
# workers, installed and registered): a gang job runs on one worker, so HiveD
# has a running group there;
#  1. the dry run (-o json): the idle worker first, the busy one waits for the
#     group; with no wait and no --evict the group blocks its node (exit 1);
#  2. an apply with a short --wait-for-groups: the idle worker's driver changes
#     (apt, reboot, nvidia-smi reports it), the busy worker's wait ends naming the
#     group and leaves it as found (uncordoned, no annotation);
#  3. the job gone, a re-run changes the other worker: both at the new driver,
#     every node uncordoned, no annotation left;
#  4. a run killed (kill -9) while a node is cordoned, then a re-run: no node
#     left cordoned or annotated, the killed run's node rebooted.
set -eu
: "${RUN:?}" "${PAICTL:?}" "${TESTBED:?}" "${PYTHON3:?}" "${HIVED_SERVER:?}"
# shellcheck disable=SC2034 # read by lib.sh: this test starts its own testbed
TB_OWN=1
. "$(dirname "$0")/lib.sh"
need_kubectl

"$TESTBED" up 3 "$RUN" --base 127.0.52 --rollout-delay 0.1 --hived-server "$HIVED_SERVER" > "$TMP/up.log" 2>&1 \
  || { cat "$TMP/up.log"; fail "testbed up"; }
MASTER=127.0.52.2
HIVED="http://$MASTER:30096"
C=$RUN/cluster
SSH="--ssh-config $RUN/ssh_config"
# RunningKubernetes: the hosts see this machine's processes, and another test may run an etcd.
run install "$C" $SSH --ignore-check-errors CPU,DNS,DiskFree,RunningKubernetes --wait 60 --yes --register bed
[ "$RC" -eq 0 ] || { cat "$TMP/out" "$TMP/err"; fail "install --register exited $RC"; }
KC=$("$TESTBED" kubeconfig "$RUN")
kc() { "$KUBECTL" --kubeconfig "$KC" "$@"; }
smi() { ssh -F "$RUN/ssh_config" "$1" nvidia-smi --query-gpu=driver_version --format=csv,noheader | sort -u; }
[ "$(smi tb-worker1)" = 535.104.05 ] || fail "a fresh worker's driver: $(smi tb-worker1)"
pass "installed: the workers run driver 535.104.05"

# A gang of 4 GPUs (a whole worker) that runs until it is stopped.
cat > "$TMP/job.yaml" <<'EOF'
protocolVersion: 2
name: long
type: job
prerequisites:
  - name: image
    type: dockerimage
    uri: openpai/standard:python_3.6-pytorch_1.2.0-gpu
taskRoles:
  train:
    instances: 1
    dockerImage: image
    resourcePerInstance: {cpu: 2, memoryMB: 4096, gpu: 4}
    commands:
      - sleep 600
defaults:
  virtualCluster: default
EOF
run job submit "$TMP/job.yaml" --cluster bed
expect_rc 0 "job submit"
n=0
BUSY=
while [ -z "$BUSY" ]; do
  BUSY=$(kc -n default get pods -l jobName=long -o jsonpath='{.items[0].spec.nodeName}' 2>/dev/null || true)
  n=$((n + 1))
  [ $n -lt 50 ] || fail "the job's pod is not bound after 10 s"
  [ -n "$BUSY" ] || sleep 0.2
done
if [ "$BUSY" = tb-worker1 ]; then IDLE=tb-worker2; else IDLE=tb-worker1; fi
pass "the gang admin~long runs on $BUSY"

M="node maintain $C tb-worker1 tb-worker2 --driver 550 $SSH --hived $HIVED"
# 1. The dry run.
"$TESTBED" state "$RUN" > "$TMP/before.json"
run $M --wait-for-groups 1m --dry-run -o json
expect_rc 0 "node maintain --dry-run"
check "[b['nodes'] for b in d['plan']['batches']] == [['$IDLE'], ['$BUSY']]" "dry run: $IDLE (idle) first, then $BUSY"
check "[(g['name'], g['action']) for g in d['plan']['batches'][1]['groups']] == [('admin~long', 'waitedFor')]" \
  "dry run: $BUSY waits for admin~long"
check "all(h['packages'][0]['name'] == 'nvidia-driver-550' and h['packages'][0]['to'] == '550.127.05-0ubuntu1' and h['packages'][0]['removes'] == ['nvidia-driver-535'] and h['reboot'] for h in d['hosts'])" \
  "dry run: nvidia-driver-550 550.127.05-0ubuntu1 replaces nvidia-driver-535, then a reboot"
"$TESTBED" state "$RUN" > "$TMP/after-dry.json"
"$PYTHON3" - "$TMP/before.json" "$TMP/after-dry.json" <<'PY' || fail "the dry run changed a host"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for h in a["hosts"]:
    assert a["hosts"][h]["packages"] == b["hosts"][h]["packages"], h
    assert a["hosts"][h]["reboots"] == b["hosts"][h]["reboots"] == 0, h
PY
run $M --wait-for-groups 1m --dry-run
expect_rc 0 "node maintain --dry-run (text)"
save dry-run.txt
run $M --dry-run
save blocked.txt
expect_rc 1 "node maintain --dry-run with no wait and no --evict"
grep -q "Not in any batch" "$TMP/out" && grep -q "admin~long" "$TMP/out" || fail "the plan does not name the blocking group: $(cat "$TMP/out")"
pass "with no wait and no --evict, admin~long blocks $BUSY"

# 2. A short wait: the idle worker changes, the busy one's wait ends, left as found.
run $M --wait-for-groups 2s --yes
save short-wait.txt
expect_rc 1 "node maintain with a short wait"
grep -q "admin~long still running" "$TMP/err" || fail "the stop does not name the group: $(cat "$TMP/err")"
[ "$(smi "$IDLE")" = 550.127.05 ] || fail "$IDLE's driver: $(smi "$IDLE")"
[ "$(smi "$BUSY")" = 535.104.05 ] || fail "$BUSY's driver changed: $(smi "$BUSY")"
nodes() { kc get nodes -o json > "$TMP/nodes.json"; }
no_node_held() {
  nodes
  "$PYTHON3" -c '
import json, sys
for n in json.load(open(sys.argv[1]))["items"]:
    assert not n["spec"].get("unschedulable"), n["metadata"]["name"] + " is cordoned"
    assert "paictl.io/maintenance" not in (n["metadata"].get("annotations") or {}), n["metadata"]["name"] + " is annotated"
' "$TMP/nodes.json" || fail "$1"
}
no_node_held "a node left cordoned or annotated after the wait's end"
pass "$IDLE at 550.127.05; $BUSY's wait ended naming admin~long, left uncordoned and unannotated"

# 3. The job gone: the re-run changes only the busy worker.
kc -n default delete pods -l jobName=long --wait=false > /dev/null
run $M --wait-for-groups 20s --yes -o json
expect_rc 0 "node maintain after the job"
check "[n['node'] for n in d['outcome']['nodes']] == ['$BUSY'] and d['outcome']['end'] == 'applied'" \
  "the re-run changes $BUSY only ($IDLE has the driver)"
[ "$(smi tb-worker1)" = 550.127.05 ] && [ "$(smi tb-worker2)" = 550.127.05 ] || fail "drivers: $(smi tb-worker1) $(smi tb-worker2)"
no_node_held "a node left cordoned or annotated"
"$TESTBED" state "$RUN" > "$TMP/s.json"
"$PYTHON3" -c '
import json, sys
s = json.load(open(sys.argv[1]))
for w in ("tb-worker1", "tb-worker2"):
    h = s["hosts"][w]
    assert h["packages"].get("nvidia-driver-550") == "550.127.05-0ubuntu1" and "nvidia-driver-535" not in h["packages"], h["packages"]
    assert h["reboots"] == 1, (w, h["reboots"])
    assert s["cluster"]["objects"]["Node/" + w]["ready"] == "True" and s["cluster"]["objects"]["Node/" + w]["allocatable_gpus"] == 4
' "$TMP/s.json" || fail "the workers after maintain: $(cat "$TMP/s.json" | head -c 2000)"
pass "both workers: nvidia-driver-550, rebooted once, Ready with 4 GPUs, uncordoned"

# 4. kill -9 while a node is cordoned, then a re-run.
"$PAICTL" node maintain "$C" tb-worker1 tb-worker2 --reboot $SSH --hived "$HIVED" --max-unavailable 2 --yes \
  > "$TMP/killed.out" 2>&1 &
pid=$!
n=0
while :; do
  kc get nodes -o jsonpath='{.items[*].metadata.annotations.paictl\.io/maintenance}' > "$TMP/ann" 2>/dev/null || true
  if grep -q maintain "$TMP/ann"; then break; fi
  n=$((n + 1))
  [ $n -lt 100 ] || fail "no node annotated after 10 s: $(cat "$TMP/killed.out")"
  sleep 0.1
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
nodes
grep -q '"unschedulable": true' "$TMP/nodes.json" || grep -q paictl.io/maintenance "$TMP/nodes.json" ||
  fail "the kill left nothing to resume"
run node maintain "$C" tb-worker1 tb-worker2 --reboot $SSH --hived "$HIVED" --max-unavailable 2 --yes
save resumed.txt
expect_rc 0 "the re-run after kill -9"
grep -q "^resume" "$TMP/err" || fail "the re-run does not say it resumed a node: $(cat "$TMP/err")"
no_node_held "a node left cordoned or annotated after kill -9 and a re-run"
pass "kill -9 with a node cordoned: the re-run finished it, no node left cordoned or annotated"
