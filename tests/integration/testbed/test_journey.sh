#!/bin/sh
# The journey on the testbed alone, from bare hosts to a job that ran: install a
# fresh testbed of 3 hosts, then against what install left there (no other test
# server): cluster add on its gateway (the admin's password from the cluster's
# Secret, then a token), cluster status, hived status and groups on its HiveD, a
# job submitted, bound by HiveD to a worker's GPUs, a second one waiting for its
# cells, the first one's log followed to the end, the second waited for, the
# cells free again; a stopped job's cells freed, a worker gone bad in HiveD. Its
# own testbed on 127.0.35.x.
set -eu
: "${RUN:?}" "${PAICTL:?}" "${TESTBED:?}" "${PYTHON3:?}" "${HIVED_SERVER:?}"
# shellcheck disable=SC2034 # read by lib.sh: this test starts its own testbed
TB_OWN=1
. "$(dirname "$0")/lib.sh"
need_kubectl
# holds 'PYTHON-EXPRESSION': whether it is true, with d = the last output parsed as JSON.
holds() {
  "$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$TMP/out" "$1"
}
# run_holds 'PYTHON-EXPRESSION' ARGS...: paictl ARGS exits 0 and the expression holds of its output.
run_holds() {
  _expr=$1
  shift
  run "$@"
  [ "$RC" -eq 0 ] && holds "$_expr" 2>/dev/null
}

"$TESTBED" up 3 "$RUN" --base 127.0.35 --rollout-delay 0.2 --hived-server "$HIVED_SERVER" > "$TMP/up.log" 2>&1 \
  || { cat "$TMP/up.log"; fail "testbed up"; }
MASTER=127.0.35.2
# --- the operator's journey: bare hosts, facts, init, checks, install --register -------
# No file is written or edited by hand between these commands.
"$PAICTL" facts collect --hosts-file "$RUN/hosts.list" --ssh-config "$RUN/ssh_config" \
  --master "$MASTER" --out "$TMP/facts" --command-timeout 30 > "$TMP/facts.txt" 2>&1 ||
  { cat "$TMP/facts.txt"; fail "facts collect --hosts-file"; }
C=$TMP/cluster
# The testbed's hosts report this machine's CPUs and have no DNS or much free disk:
# the site's checks to ignore go into config.yaml once (and no CPU is reserved).
"$PAICTL" init "$C" --facts "$TMP/facts" --ssh-config "$RUN/ssh_config" --reserve-cpu 0 \
  --reserve-memory 1Gi --ignore-check-errors CPU,DNS,DiskFree > "$TMP/init.txt" 2>&1 ||
  { cat "$TMP/init.txt"; fail "init"; }
pass "facts collect --hosts-file, then init: the cluster directory written"
run check config "$C"
expect_rc 0 "check config of what init wrote"
grep -q '^0 errors' "$TMP/out" || fail "check config: $(cat "$TMP/out")"
# check hosts reads the SSH settings and the ignored checks from config.yaml; on
# fresh hosts what install sets up itself is "install will do this", not an error.
run check hosts "$C"
expect_rc 0 "check hosts of fresh hosts before install"
grep -q 'INST' "$TMP/out" || fail "check hosts shows nothing install will do: $(cat "$TMP/out")"
if grep -q '^ *FAIL ' "$TMP/out"; then fail "check hosts: an error on fresh hosts: $(grep '^ *FAIL ' "$TMP/out")"; fi
pass "check config and check hosts: nothing for the operator to fix"
run install "$C" --wait 60 --yes --register bed
[ "$RC" -eq 0 ] || { cat "$TMP/out" "$TMP/err"; fail "install --register exited $RC"; }
grep -q "cluster bed" "$TMP/out" "$TMP/err" || fail "install --register did not say it registered bed: $(tail -5 "$TMP/out")"
pass "install on 3 fresh hosts, registered as bed with a token (no password typed)"
run cluster list --no-probe -o json
check "[c['name'] for c in d['items']] == ['bed']" "the registry holds bed"
grep -q "hived: http://$MASTER:30096" "$XDG_CONFIG_HOME/paictl/clusters.yaml" ||
  fail "the registry has no HiveD URL for bed: $(cat "$XDG_CONFIG_HOME/paictl/clusters.yaml")"
if grep -q "$(sed -n 's/^ *default-pai-admin-password: *//p' "$C/services-configuration.yaml" | tr -d '"')" "$XDG_CONFIG_HOME/paictl/clusters.yaml" 2>/dev/null; then
  fail "the registry holds the admin password"
fi

# The admin's password is the one init wrote and install put in the cluster.
KC=$("$TESTBED" kubeconfig "$RUN")
PASSWORD=$("$KUBECTL" --kubeconfig "$KC" -n openpai get secret pai-secrets -o jsonpath='{.data.admin-password}' | base64 -d)
[ -n "$PASSWORD" ] || fail "no admin-password in the Secret openpai/pai-secrets"
grep -q "default-pai-admin-password: \"\\?$PASSWORD" "$C/services-configuration.yaml" ||
  grep -q "$PASSWORD" "$C/services-configuration.yaml" || fail "the cluster's password is not init's"

# --- cluster add by hand: a password sign-in, then a token ----------------------------
set +e
printf '%s\n' "$PASSWORD" | "$PAICTL" cluster add bed-pw --uri "http://$MASTER" --user admin --password-stdin \
  --hived "http://$MASTER:30096" > "$TMP/out" 2> "$TMP/err"
RC=$?
set -e
expect_rc 0 "cluster add with the admin's password"
grep -q "cluster bed-pw added" "$TMP/out" || fail "cluster add: $(cat "$TMP/out")"
grep -q "virtual clusters you may use: default" "$TMP/out" || fail "cluster add names no VC: $(cat "$TMP/out")"
set +e
printf 'not-the-password\n' | "$PAICTL" cluster add wrong --uri "http://$MASTER" --user admin --password-stdin > "$TMP/out" 2> "$TMP/err"
RC=$?
set -e
expect_rc 2 "cluster add with a wrong password"
pass "cluster add: the admin signs in to the gateway with install's password, a wrong one is refused"
# A token from REST v2's login, as a client that signs in itself gets one.
TOKEN=$(printf '%s' "$PASSWORD" | "$PYTHON3" -c '
import json, sys, urllib.parse, urllib.request
body = urllib.parse.urlencode({"username": "admin", "password": sys.stdin.read(), "expiration": 3600}).encode()
print(json.load(urllib.request.urlopen(sys.argv[1] + "/rest-server/api/v2/authn/basic/login", body))["token"])' "http://$MASTER")
set +e
printf '%s\n' "$TOKEN" | "$PAICTL" cluster add bed-token --uri "http://$MASTER" --token-stdin > "$TMP/out" 2> "$TMP/err"
RC=$?
set -e
expect_rc 0 "cluster add with a token"
grep -q "user admin" "$TMP/out" || fail "cluster add --token-stdin: $(cat "$TMP/out")"
# A token of the same shape that the cluster's jwt-secret did not sign is refused.
FORGED=$(printf '%s' "$TOKEN" | "$PYTHON3" -c 'import sys; h, p, s = sys.stdin.read().split("."); print(h + "." + p + "." + s[::-1])')
set +e
printf '%s\n' "$FORGED" | "$PAICTL" cluster add forged --uri "http://$MASTER" --token-stdin > "$TMP/out" 2> "$TMP/err"
RC=$?
set -e
# (The exit code is cluster add's business: a refused token is 3 today, a refused password 2.)
[ "$RC" -ne 0 ] || fail "cluster add with a forged token succeeded"
grep -q "401 UnauthorizedUserError" "$TMP/err" || fail "cluster add with a forged token: $(cat "$TMP/err")"
run cluster list --no-probe -o json
check "sorted(c['name'] for c in d['items']) == ['bed', 'bed-pw', 'bed-token']" "the forged token registered no cluster"
pass "cluster add with a token from POST /rest-server/api/v2/authn/basic/login; a forged one is refused"

# A cluster registered without --hived reaches HiveD behind its pylon (/a/HOST:30096/...).
run hived status --cluster bed-token -o json
expect_rc 0 "hived status behind the gateway"
check "sorted(n['name'] for n in d['nodes']) == ['tb-worker1', 'tb-worker2']" "hived status through the gateway's /a/$MASTER:30096/"

run cluster status --cluster bed -o json
expect_rc 0 "cluster status"
check "[(v['name'], v['total']['gpu'], v['free']['gpu']) for v in d['items'][0]['virtualClusters']] == [('default', 8, 8)]" \
  "cluster status: the default VC has the 8 GPUs of the two workers, all free"

# --- HiveD: the cells install pushed, every node healthy, no group --------------------
run hived status --cluster bed -o json
expect_rc 0 "hived status"
check "d['nodes'] and sorted(n['name'] for n in d['nodes']) == ['tb-worker1', 'tb-worker2'] and all(n['healthy'] for n in d['nodes'])" \
  "hived status: the two GPU workers, healthy"
cp "$TMP/out" "$TMP/status-before.json"
run hived groups --cluster bed -o json
expect_rc 0 "hived groups"
check "d['items'] == []" "hived groups: none before a job"

# --- a job: submitted, bound by HiveD, its log followed to the end --------------------
cat > "$TMP/job.yaml" <<'EOF'
protocolVersion: 2
name: journey
type: job
prerequisites:
  - name: image
    type: dockerimage
    uri: openpai/standard:python_3.6-pytorch_1.2.0-gpu
taskRoles:
  train:
    instances: 2
    dockerImage: image
    resourcePerInstance: {cpu: 2, memoryMB: 4096, gpu: 2}
    commands:
      - sleep 4
defaults:
  virtualCluster: default
EOF
# A second job that needs all 8 GPUs: it waits for the first one's cells.
sed -e 's/^name: journey/name: big/' -e 's/gpu: 2}/gpu: 4}/' -e 's/sleep 4/sleep 1/' "$TMP/job.yaml" > "$TMP/big.yaml"
run job submit "$TMP/job.yaml" --cluster bed
expect_rc 0 "job submit"
pass "job submit"
# HiveD binds the gang: two pods, two GPUs each, on the workers.
# journey_pods_bound: the job has two pods, both bound to a node ($TMP/out: the pods).
journey_pods_bound() {
  "$KUBECTL" --kubeconfig "$KC" -n default get pods -o json > "$TMP/out" &&
    holds '[bool(x["spec"].get("nodeName")) for x in d["items"] if x["metadata"].get("labels", {}).get("jobName") == "journey"] == [True, True]' 2>/dev/null
}
poll "the job's pods are not bound" journey_pods_bound
cp "$TMP/out" "$TMP/pods.json"
"$PYTHON3" -c '
import json, sys, yaml
p = [x for x in json.load(open(sys.argv[1]))["items"] if x["metadata"].get("labels", {}).get("jobName") == "journey"]
for x in p:
    a = x["metadata"]["annotations"]
    spec = yaml.safe_load(a["hivedscheduler.microsoft.com/pod-scheduling-spec"])
    bind = yaml.safe_load(a["hivedscheduler.microsoft.com/pod-bind-info"])
    assert spec["affinityGroup"]["name"] == "admin~journey" and spec["leafCellNumber"] == 2, spec
    assert bind["node"] == x["spec"]["nodeName"] and bind["node"].startswith("tb-worker"), bind
    assert len(bind["leafCellIsolation"]) == 2, bind
    assert a["hivedscheduler.microsoft.com/pod-leaf-cell-isolation"] == ",".join(map(str, bind["leafCellIsolation"])), a
' "$TMP/pods.json" || fail "the job's pods: $(cat "$TMP/pods.json")"
pass "the job's two pods carry HiveD's scheduling spec and bind info, on the workers"

run hived groups --cluster bed -o json
expect_rc 0 "hived groups with a job"
check "[(g['name'], g['vc'], g['state'], sum(len(v) for v in g['physicalPlacement'].values())) for g in d['items']] == [('admin~journey', 'default', 'Allocated', 4)]" \
  "hived groups: the job's group, allocated, 4 GPUs"
run hived status --cluster bed -o json
expect_rc 0 "hived status with a job"
check "sum(n['used'] for n in d['nodes']) == 4" "hived status: 4 GPUs used"

run hived why admin~journey --cluster bed
expect_rc 0 "hived why"
grep -q "admin~journey is Allocated in VC default" "$TMP/out" || fail "hived why: $(cat "$TMP/out")"
pass "hived why: the group is allocated in VC default"

run job submit "$TMP/big.yaml" --cluster bed
expect_rc 0 "job submit of a job that does not fit now"
run job status big --cluster bed -o json
expect_rc 0 "job status of the waiting job"
check "d['jobStatus']['state'] == 'WAITING'" "a job that needs the cells another job holds waits"

run job logs -f journey --cluster bed
expect_rc 0 "job logs -f"
grep -q "step 5 of 5" "$TMP/out" && grep -q "^done" "$TMP/out" || fail "job logs -f: $(cat "$TMP/out" "$TMP/err")"
pass "job logs -f follows the log to its end"
run job status journey --cluster bed -o json
expect_rc 0 "job status"
check "d['jobStatus']['state'] == 'SUCCEEDED'" "job status: SUCCEEDED"
run job wait big --cluster bed --interval 0.5 --timeout 60
expect_rc 0 "job wait"
pass "job wait: the waiting job got the cells, ran and SUCCEEDED"
run job list --cluster bed -o json
expect_rc 0 "job list"
check "sorted((j['name'], j['state'], j['totalGpuNumber']) for j in d['items']) == [('big', 'SUCCEEDED', 8), ('journey', 'SUCCEEDED', 4)]" \
  "job list: both jobs, SUCCEEDED"
run hived groups --cluster bed -o json
expect_rc 0 "hived groups after the job"
check "d['items'] == []" "hived groups: the cells are free again when the job's pods ended"

# --- a stopped job frees its cells; a node that goes down is bad in HiveD ---------------
sed -e 's/^name: journey/name: long/' -e 's/instances: 2/instances: 1/' -e 's/sleep 4/sleep 600/' "$TMP/job.yaml" > "$TMP/long.yaml"
run job submit "$TMP/long.yaml" --cluster bed
expect_rc 0 "job submit of a long job"
poll "the long job's group is not allocated" run_holds '[g["name"] for g in d["items"]] == ["admin~long"]' \
  hived groups --cluster bed -o json
run job stop long --cluster bed --wait --wait-interval 0.2 --wait-timeout 30
expect_rc 0 "job stop --wait"
run hived groups --cluster bed -o json
expect_rc 0 "hived groups after the stop"
check "d['items'] == []" "a stopped job's pods are deleted and its cells free"

# --- the operator's own labels and taints, a proxy and a registry mirror ----------------
# Added to the cluster directory and installed again: the files land on every host
# (the drop-ins 0600, the proxy's password in no output), the labels and taints on
# the nodes; taken out again, paictl removes what it set and nothing else.
cp "$C/config.yaml" "$TMP/config.orig"
cp "$C/layout.yaml" "$TMP/layout.orig"
printf '%s\n' 'http_proxy: http://ops:pr0xy-s3cret@proxy.corp.example:3128' 'no_proxy: [.corp.example]' \
  'containerd_registry_mirrors:' '  docker.io: [https://mirror.corp.example]' >> "$C/config.yaml"
"$PYTHON3" -c '
import sys, yaml
p = sys.argv[1]
d = yaml.safe_load(open(p))
for m in d["machine-list"]:
    if m["hostname"] == "tb-worker1":
        m["labels"] = {"example.com/rack": "r1"}
        m["taints"] = [{"key": "example.com/dedicated", "value": "ops", "effect": "PreferNoSchedule"}]
open(p, "w").write(yaml.safe_dump(d, sort_keys=False))
' "$C/layout.yaml"
run check config "$C"
expect_rc 0 "check config with a proxy, a mirror, labels and a taint"
run install "$C" --dry-run
expect_rc 0 "install --dry-run with a proxy"
grep -q 'write /etc/systemd/system/kubelet.service.d/paictl-proxy.conf' "$TMP/out" "$TMP/err" ||
  fail "the plan does not write the kubelet's proxy: $(cat "$TMP/out")"
grep -q 'taint tb-worker1 example.com/dedicated=ops:PreferNoSchedule' "$TMP/out" "$TMP/err" ||
  fail "the plan does not taint tb-worker1: $(cat "$TMP/out")"
if grep -q 'pr0xy-s3cret' "$TMP/out" "$TMP/err"; then fail "the proxy's password is in the dry run's output"; fi
run install "$C" --wait 60 --yes
[ "$RC" -eq 0 ] || { cat "$TMP/out" "$TMP/err"; fail "install with a proxy exited $RC"; }
if grep -rq 'pr0xy-s3cret' "$TMP/out" "$TMP/err" "$C/.paictl" 2>/dev/null; then
  fail "the proxy's password is in paictl's output or logs"
fi
for h in tb-master tb-worker1 tb-worker2; do
  f=$RUN/hosts/$h/fs/etc
  for d in systemd/system/kubelet.service.d/paictl-proxy.conf systemd/system/containerd.service.d/paictl-proxy.conf \
    apt/apt.conf.d/95paictl-proxy; do
    [ "$(stat -c %a "$f/$d")" = 600 ] || fail "$h: /etc/$d is not 0600"
  done
  grep -q '^Environment="HTTP_PROXY=http://ops:pr0xy-s3cret@proxy.corp.example:3128"' \
    "$f/systemd/system/kubelet.service.d/paictl-proxy.conf" || fail "$h: the kubelet's proxy"
  np=$(sed -n 's/^Environment="NO_PROXY=\([^"]*\)".*/,\1,/p' "$f/systemd/system/containerd.service.d/paictl-proxy.conf")
  for e in .corp.example localhost 127.0.0.1 127.0.35.2 tb-master tb-worker2 .svc .cluster.local; do
    case $np in *",$e,"*) ;; *) fail "$h: containerd's NO_PROXY lacks $e: $np" ;; esac
  done
  grep -q '^\[host."https://mirror.corp.example"\]' "$f/containerd/certs.d/docker.io/hosts.toml" ||
    fail "$h: docker.io's hosts.toml"
  grep -q 'config_path = "/etc/containerd/certs.d"' "$f/containerd/config.toml" || fail "$h: containerd's config_path"
done
pass "install writes the proxies (0600, the password in no output) and the mirror's hosts.toml on every host"
"$KUBECTL" --kubeconfig "$KC" get node tb-worker1 -o json > "$TMP/node.json"
"$PYTHON3" -c '
import json, sys
n = json.load(open(sys.argv[1]))
assert n["metadata"]["labels"]["example.com/rack"] == "r1", n["metadata"]["labels"]
assert {"key": "example.com/dedicated", "value": "ops", "effect": "PreferNoSchedule"} in [
    {k: t.get(k) for k in ("key", "value", "effect")} for t in n["spec"].get("taints", [])], n["spec"]
assert n["metadata"]["annotations"]["paictl.io/managed-labels"] == "example.com/rack"
' "$TMP/node.json" || fail "tb-worker1's labels and taints: $(cat "$TMP/node.json")"
pass "tb-worker1 carries layout.yaml's label and taint"
run install "$C" --dry-run
expect_rc 0 "install --dry-run again"
grep -q 'taint tb-worker1\|write /etc/systemd' "$TMP/out" "$TMP/err" && fail "a re-run would change things: $(cat "$TMP/out")"
pass "a re-run changes nothing"
# Someone else's label is not paictl's to remove.
"$KUBECTL" --kubeconfig "$KC" label node tb-worker1 someone.else/keep=1 > /dev/null
cp "$TMP/config.orig" "$C/config.yaml"
cp "$TMP/layout.orig" "$C/layout.yaml"
run install "$C" --wait 60 --yes
[ "$RC" -eq 0 ] || { cat "$TMP/out" "$TMP/err"; fail "install without the proxy exited $RC"; }
"$KUBECTL" --kubeconfig "$KC" get node tb-worker1 -o json > "$TMP/node.json"
"$PYTHON3" -c '
import json, sys
n = json.load(open(sys.argv[1]))
l = n["metadata"]["labels"]
assert "example.com/rack" not in l and l.get("someone.else/keep") == "1", l
assert all(t["key"] != "example.com/dedicated" for t in n["spec"].get("taints", [])), n["spec"]
' "$TMP/node.json" || fail "tb-worker1 after the labels and taints were taken out: $(cat "$TMP/node.json")"
for h in tb-master tb-worker1 tb-worker2; do
  f=$RUN/hosts/$h/fs/etc
  [ ! -e "$f/systemd/system/kubelet.service.d/paictl-proxy.conf" ] && [ ! -e "$f/apt/apt.conf.d/95paictl-proxy" ] &&
    [ ! -e "$f/containerd/certs.d/docker.io" ] || fail "$h: the proxy's files are still there"
done
pass "taken out of the cluster directory, paictl's label, taint and files are removed, someone else's label kept"

# The API server restarts (its static pod, as the kubelet restarts it before kubectl
# runs on the master): the token signed before still works, and the old HiveD
# double's process went with the old server.
P=$(cat "$RUN/hosts/tb-master/state/apiserver/pid")
kill "$P"
n=0
while kill -0 "$P" 2>/dev/null; do n=$((n + 1)); [ $n -lt 100 ] || fail "the API server did not stop"; sleep 0.05; done
ssh -F "$RUN/ssh_config" tb-master 'kubectl --kubeconfig /etc/kubernetes/admin.conf get nodes >/dev/null' || fail "kubectl on the master"
[ "$(cat "$RUN/hosts/tb-master/state/apiserver/pid")" != "$P" ] || fail "the API server was not restarted"
poll "cluster status with the token after the API server restarted" run_holds True cluster status --cluster bed-token -o json
run hived groups --cluster bed -o json
expect_rc 0 "hived groups after the API server restarted"
[ "$(pgrep -cf "$RUN/lib/hived_test_server" || true)" -eq 1 ] || fail "not one HiveD double runs: $(pgrep -af "$RUN/lib/hived_test_server")"
pass "after a restart of the API server the token still signs in and one HiveD double answers"

ssh -F "$RUN/ssh_config" tb-worker2 'systemctl stop kubelet' || fail "stopping tb-worker2's kubelet"
poll "tb-worker2 is not bad in HiveD after its kubelet stopped" \
  run_holds '{n["name"]: n["healthy"] for n in d["nodes"]} == {"tb-worker1": True, "tb-worker2": False}' hived status --cluster bed -o json
pass "a worker whose kubelet stopped (its Node NotReady) is bad in hived status"
echo "ok: the journey from bare hosts to a job that ran, on the testbed alone"
