#!/bin/sh
# paictl check cluster on a testbed it installed (a master and one GPU worker,
# its own testbed on 127.0.57.x):
#  1. right after the install: the only finding is that there is no backup yet
#     (a warning, exit 0), and a backup record of today clears it;
#  2. the worker cordoned with kubectl: the cordoned warning, still exit 0;
#     exit 1 with --fail-on-warn;
#  3. the worker's kubelet stopped: its node not Ready, an error, exit 1; the
#     JSON and SARIF reports parse and say the same;
#  4. the master unreachable: one error, exit 3.
set -eu
: "${RUN:?}" "${PAICTL:?}" "${TESTBED:?}" "${PYTHON3:?}" "${HIVED_SERVER:?}"
# shellcheck disable=SC2034 # read by lib.sh: this test starts its own testbed
TB_OWN=1
. "$(dirname "$0")/lib.sh"
need_kubectl

"$TESTBED" up 2 "$RUN" --base 127.0.57 --rollout-delay 0.1 --hived-server "$HIVED_SERVER" > "$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; fail "testbed up"; }
C=$RUN/cluster
SSH="--ssh-config $RUN/ssh_config"
# CPU, DNS and DiskFree as install.testbed ignores them; RunningKubernetes because
# the hosts see this machine's processes, where another testbed's real etcd may run.
"$PAICTL" install "$C" $SSH --ignore-check-errors CPU,DNS,DiskFree,RunningKubernetes --wait 60 --yes > "$TMP/install.txt" 2>&1 ||
  { cat "$TMP/install.txt"; fail "install"; }
KUBECTL="$KUBECTL --kubeconfig $(kubeconfig)"

# check_cluster NAME ARGS...: runs check cluster ARGS, its output in $TMP/NAME.out and
# $TMP/NAME.err, its exit code in $rc.
check_cluster() {
  name=$1
  shift
  set +e
  "$PAICTL" check cluster "$C" $SSH "$@" > "$TMP/$name.out" 2> "$TMP/$name.err"
  rc=$?
  set -e
}
# The findings of a JSON report as "CODE severity location", one a line, sorted.
findings() {
  "$PYTHON3" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for x in sorted("%s %s %s" % (f["code"], f["severity"], f.get("location", "")) for f in d["diagnostics"]):
    print(x)' "$1"
}
expect_findings() {  # FILE WHAT EXPECTED-LINES
  got=$(findings "$1")
  [ "$got" = "$3" ] || { cat "$1"; fail "$2: the findings are
$got
want
$3"; }
}

# 1. Freshly installed: no backup yet, nothing else.
check_cluster fresh -o json
[ $rc -eq 0 ] || { cat "$TMP/fresh.out" "$TMP/fresh.err"; fail "check cluster of a fresh install exited $rc, want 0"; }
expect_findings "$TMP/fresh.out" "a fresh install" "K030 warning backups"
check_cluster fresh-text
[ $rc -eq 0 ] || fail "the text report exited $rc"
grep -q "^paictl: warning\[K030\]: \[backups\] no backup of this cluster yet (no $C/.paictl/backups.jsonl)" "$TMP/fresh-text.out" ||
  { cat "$TMP/fresh-text.out"; fail "the text report does not name the missing backup"; }
grep -q "0 errors, 1 warning in cluster $C" "$TMP/fresh-text.out" || { cat "$TMP/fresh-text.out"; fail "no summary line"; }
mkdir -p "$C/.paictl"
"$PYTHON3" -c 'import json, time; print(json.dumps({"time": time.time() - 3600, "path": "/var/backups/x.tar", "sha256": "00", "bytes": 1, "cluster": "tb"}))' > "$C/.paictl/backups.jsonl"
check_cluster backed-up -o json
[ $rc -eq 0 ] || fail "with a backup of an hour ago: exit $rc"
expect_findings "$TMP/backed-up.out" "with a backup of an hour ago" ""
pass "a fresh install: only 'no backup yet'; a recent backup clears it"

# 2. The worker cordoned.
$KUBECTL cordon tb-worker1 > /dev/null
check_cluster cordoned -o json
[ $rc -eq 0 ] || { cat "$TMP/cordoned.out"; fail "a cordoned worker exited $rc, want 0 (warnings)"; }
# HiveD counts a cordoned node's cells as bad: the VC's one cell is doomed (K055).
expect_findings "$TMP/cordoned.out" "the worker cordoned" "K004 warning tb-worker1
K055 warning default"
check_cluster cordoned-strict --fail-on-warn
[ $rc -eq 1 ] || fail "--fail-on-warn with a cordoned worker exited $rc, want 1"
grep -q "node tb-worker1 is cordoned: HiveD counts its cells as bad" "$TMP/cordoned-strict.out" || { cat "$TMP/cordoned-strict.out"; fail "the text does not say why"; }
$KUBECTL uncordon tb-worker1 > /dev/null
pass "a cordoned worker: the cordoned warning"

# 3. The worker's kubelet stopped: not Ready.
ssh -F "$RUN/ssh_config" tb-worker1 systemctl stop kubelet
i=0
until $KUBECTL get node tb-worker1 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -qv True; do
  i=$((i + 1))
  [ $i -lt 100 ] || fail "tb-worker1 stayed Ready after its kubelet stopped"
  sleep 0.1
done
check_cluster notready -o json --sarif "$TMP/notready.sarif" --junit "$TMP/notready.xml"
[ $rc -eq 1 ] || { cat "$TMP/notready.out" "$TMP/notready.err"; fail "a worker not Ready exited $rc, want 1"; }
findings "$TMP/notready.out" | grep -qx "K003 error tb-worker1" || { cat "$TMP/notready.out"; fail "no not-Ready error for tb-worker1"; }
"$PYTHON3" - "$TMP/notready.out" "$TMP/notready.sarif" <<'PY' || fail "the SARIF report does not hold the JSON report's findings"
import json, sys
report = json.load(open(sys.argv[1]))
sarif = json.load(open(sys.argv[2]))
assert sarif["version"] == "2.1.0"
results = sarif["runs"][0]["results"]
assert sorted(r["ruleId"] for r in results) == sorted(d["code"] for d in report["diagnostics"]), (results, report)
rules = {r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
assert "K003" in rules, rules
k003 = [r for r in results if r["ruleId"] == "K003"][0]
assert k003["level"] == "error"
assert k003["locations"][0]["logicalLocations"][0]["name"] == "tb-worker1"
PY
grep -q 'K003' "$TMP/notready.xml" || fail "the JUnit report has no K003"
pass "a worker whose kubelet stopped: not Ready, exit 1; JSON, SARIF and JUnit agree"

# 4. The master unreachable: one error, exit 3.
sed "s/^\( *Port \).*/\1 1/" "$RUN/ssh_config" > "$TMP/ssh_config"
set +e
"$PAICTL" check cluster "$C" --ssh-config "$TMP/ssh_config" --connect-timeout 2 -o json > "$TMP/down.out" 2> "$TMP/down.err"
rc=$?
set -e
[ $rc -eq 3 ] || { cat "$TMP/down.out" "$TMP/down.err"; fail "an unreachable master exited $rc, want 3"; }
expect_findings "$TMP/down.out" "the master unreachable" "K001 error tb-master"
pass "the master unreachable: one error, exit 3"
