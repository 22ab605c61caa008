#!/bin/sh
# paictl hived health|quarantine|release on its own testbed (127.0.63.x: a
# master and one 8-GPU worker, installed; HiveD's double serves the inspect
# API from the API server's Nodes and pods):
#  1. a healthy cluster: hived health --collect finds nothing (exit 0);
#  2. the worker's fake nvidia-smi lists 7 of 8 GPUs with an uncorrectable ECC
#     error, its kernel log an Xid 79: health finds it (N010, N011, N013, exit 1);
#  3. quarantine --dry-run shows the VC's doomed cell and changes nothing;
#     health --collect --quarantine cordons and annotates it (who, when, why);
#     HiveD's inspect answer shows it bad and the VC's doomed cell;
#  4. release undoes exactly that (uncordoned, annotation gone, HiveD healthy);
#  5. bad input: an unknown node (exit 2); a node cordoned by someone else, or
#     quarantined by another user (shown, not overwritten: exit 1); release of a
#     node paictl did not quarantine leaves it cordoned.
set -eu
: "${RUN:?}" "${PAICTL:?}" "${TESTBED:?}" "${PYTHON3:?}" "${HIVED_SERVER:?}"
# shellcheck disable=SC2034 # read by lib.sh: this test starts its own testbed
TB_OWN=1
. "$(dirname "$0")/lib.sh"
need_kubectl
START=$(date +%s)

"$TESTBED" up 2 "$RUN" --base 127.0.63 --host 2:gpus=8 --rollout-delay 0.1 --hived-server "$HIVED_SERVER" > "$TMP/up.log" 2>&1 \
  || { cat "$TMP/up.log"; fail "testbed up"; }
MASTER=127.0.63.2
HIVED="http://$MASTER:30096"
C=$RUN/cluster
SSH="--ssh-config $RUN/ssh_config"
run install "$C" $SSH --ignore-check-errors CPU,DNS,DiskFree,RunningKubernetes --wait 60 --yes
[ "$RC" -eq 0 ] || { cat "$TMP/out" "$TMP/err"; fail "install exited $RC"; }
KC=$("$TESTBED" kubeconfig "$RUN")
kc() { "$KUBECTL" --kubeconfig "$KC" "$@"; }
W=tb-worker1
pass "installed: a master and $W with 8 GPUs ($(( $(date +%s) - START )) s)"

# 1. Healthy.
run hived health "$C" --collect $SSH -o json
expect_rc 0 "hived health of a healthy cluster"
check "d['candidates'] == [] and d['gpuHosts'] == 1 and d['checked'] == 1" "a healthy cluster: no candidate"

# 2. 7 of 8 GPUs, an uncorrectable ECC error, Xid 79.
"$TESTBED" gpu-fault "$RUN" $W --gpus 7 --ecc 2 --xid 79
run hived health "$C" --collect $SSH
save health.txt
expect_rc 1 "hived health with a faulty GPU"
run hived health "$C" --collect $SSH -o json
expect_rc 1 "hived health -o json with a faulty GPU"
check "[c['node'] for c in d['candidates']] == ['$W'] and [f['code'] for f in d['candidates'][0]['findings']] == ['N010', 'N011', 'N013']" \
  "health finds $W: 7 of 8 GPUs (N010), uncorrectable ECC (N011), Xid 79 (N013)"
run check hosts "$C" $SSH -o json
"$PYTHON3" - "$TMP/out" <<'PY' || fail "check hosts does not report the GPU's health"
import json, sys
d = json.load(open(sys.argv[1]))
r = {(x["host"], x["check"]): x for x in d["results"]}
assert r[("tb-worker1", "GPUEcc")]["status"] == "fail" and "[N011]" in r[("tb-worker1", "GPUEcc")]["message"], r[("tb-worker1", "GPUEcc")]
assert r[("tb-worker1", "GPUXid")]["status"] == "warn" and "Xid 79" in r[("tb-worker1", "GPUXid")]["message"]
assert r[("tb-worker1", "GPURetiredPages")]["status"] == "pass"
PY
pass "check hosts: GPUEcc fails [N011], GPUXid warns (Xid 79)"

# 3. The dry run, then the quarantine.
node_json() { kc get node "$1" -o json > "$TMP/node.json"; }
node_check() {
  node_json "$1"
  "$PYTHON3" -c 'import json,sys; n=json.load(open(sys.argv[1])); a=(n["metadata"].get("annotations") or {}); u=bool(n["spec"].get("unschedulable")); sys.exit(0 if eval(sys.argv[2]) else 1)' "$TMP/node.json" "$2" \
    || { cat "$TMP/node.json" >&2; fail "$3"; }
  pass "$3"
}
run hived quarantine "$C" $W --reason "ECC errors" --dry-run --hived "$HIVED" $SSH -o json
expect_rc 0 "quarantine --dry-run"
check "d['nodes'][0]['action'] == 'quarantine' and d['effect']['doomed'][0]['vc'] == 'default' and d['effect']['doomed'][0]['cellsAfter'] == 1 and d['effect']['groups'] == []" \
  "dry run: default's one cell would be doomed, no running group"
"$PYTHON3" -c 'import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])), cls=jsonschema.Draft202012Validator)' \
  "$TB_DIR/../../../docs/schemas/hivedQuarantine.schema.json" "$TMP/out" || { cat "$TMP/out" >&2; fail "quarantine --dry-run -o json does not match docs/schemas/hivedQuarantine.schema.json"; }
pass "quarantine --dry-run -o json matches docs/schemas/hivedQuarantine.schema.json"
run hived quarantine "$C" $W --reason "ECC errors" --dry-run --hived "$HIVED" $SSH
save quarantine-dry-run.txt
node_check $W "not u and 'paictl.io/quarantine' not in a" "the dry run changed nothing"

run hived health "$C" --collect --quarantine --hived "$HIVED" $SSH
save health-quarantine.txt
expect_rc 1 "health --quarantine"
grep -q "quarantined $W" "$TMP/out" || { cat "$TMP/out" "$TMP/err"; fail "health --quarantine does not say it quarantined $W"; }
WHO="$(id -un)@$(hostname)"
node_check $W "u and json.loads(a['paictl.io/quarantine'])['by'] == '$WHO' and json.loads(a['paictl.io/quarantine'])['cordoned'] and 'N011' in json.loads(a['paictl.io/quarantine'])['reason'] and json.loads(a['paictl.io/quarantine'])['at'].endswith('Z')" \
  "$W cordoned and annotated (by $WHO, when, why)"
run hived status --hived "$HIVED" -o json
check "[n['healthy'] for n in d['nodes'] if n['name'] == '$W'] == [False] and sum(v['bad'] for v in d['virtualClusters'] if v['vc'] == 'default') == 8 and sum(l['doomed'] for l in d['cells']) > 0" \
  "HiveD's inspect answer: $W bad, default's cell doomed (8 bad leaf cells)"
run hived quarantine "$C" $W --hived "$HIVED" $SSH
expect_rc 0 "a second quarantine by the same user"
grep -q "already quarantined by $WHO" "$TMP/out" || fail "the second quarantine does not say it is already quarantined"

# 4. Release.
run hived release "$C" $W --hived "$HIVED" $SSH
save release.txt
expect_rc 0 "release"
node_check $W "not u and 'paictl.io/quarantine' not in a" "release: uncordoned, annotation gone"
run hived status --hived "$HIVED" -o json
check "all(n['healthy'] for n in d['nodes']) and sum(v['bad'] for v in d['virtualClusters']) == 0 and sum(l['doomed'] for l in d['cells']) == 0" "HiveD: every node healthy again, nothing doomed"

# 5. Bad input.
run hived quarantine "$C" tb-nope --hived "$HIVED" $SSH
expect_rc 2 "an unknown node"
grep -q "tb-nope is not a node of the cluster" "$TMP/err" || { cat "$TMP/err"; fail "the unknown node is not named"; }
kc cordon $W > /dev/null
run hived quarantine "$C" $W --hived "$HIVED" $SSH
save refused.txt
expect_rc 1 "a node cordoned by someone else"
grep -q "cordoned by someone else" "$TMP/err" || { cat "$TMP/out" "$TMP/err"; fail "the refusal does not say why"; }
node_check $W "u and 'paictl.io/quarantine' not in a" "a node cordoned by hand: shown, left as it was"
run hived release "$C" $W --hived "$HIVED" $SSH
expect_rc 0 "release of a node paictl did not quarantine"
node_check $W "u" "release leaves a node cordoned by hand cordoned"
kc uncordon $W > /dev/null
kc annotate node $W 'paictl.io/quarantine={"by":"bob@ops2","at":"2026-01-01T00:00:00Z","reason":"fan","cordoned":false}' > /dev/null
run hived quarantine "$C" $W --hived "$HIVED" $SSH
expect_rc 1 "a node quarantined by another user"
grep -q "already quarantined by bob@ops2 at 2026-01-01T00:00:00Z (fan)" "$TMP/err" || { cat "$TMP/out" "$TMP/err"; fail "the other user's quarantine is not shown"; }
node_check $W "json.loads(a['paictl.io/quarantine'])['by'] == 'bob@ops2' and not u" "another user's quarantine: not overwritten"
# Its release removes only the annotation: the quarantine did not cordon it.
run hived release "$C" $W --hived "$HIVED" $SSH
expect_rc 0 "release of bob's quarantine"
node_check $W "not u and 'paictl.io/quarantine' not in a" "bob's quarantine released: annotation gone, never cordoned"
echo "test_quarantine: $(( $(date +%s) - START )) s"
