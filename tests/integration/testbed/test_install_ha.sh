#!/bin/sh
# paictl install of a highly available control plane (its own testbed on 127.0.61.x:
# three masters and a GPU worker, a real HAProxy on 127.0.61.250:6443 in front of
# the masters' API servers, their objects in a real etcd cluster):
#  1. check config accepts the three masters with the endpoint; check hosts finds
#     the endpoint answering and the ports between the masters open; install's own
#     checks stop at an endpoint where nothing listens;
#  2. install: kubeadm init --upload-certs on tb-master, tb-master2 and tb-master3
#     joined as control-plane nodes (three etcd members, all healthy), the worker
#     joined through the endpoint; the certificate key 0600 in the cluster
#     directory, never in a host's argv, a log or paictl's output; no configuration
#     left in a host's /tmp;
#  3. kubectl through HAProxy, the control-plane Nodes tainted, the REST server
#     with a replica on each master;
#  4. a re-run changes nothing;
#  5. a master lost (stop-host tb-master3): install names it, exits 3 and changes
#     nothing; node remove of a second master is
#     refused (one healthy member of two left: no quorum), nothing changed; node
#     remove of the lost one removes its etcd member through a master that stays,
#     deletes its Node, leaves it unreset, and takes it out of layout.yaml;
#  6. the lost master replaced (start-host: same name and address, disks wiped),
#     back in layout.yaml: node add joins it as a control-plane node (three etcd
#     members again, all healthy) and a re-run of install changes nothing.
#  7. upgrade --to 1.31: kubeadm upgrade apply on tb-master, kubeadm upgrade node
#     on tb-master2 and tb-master3 one at a time, then the worker; etcd healthy.
set -eu
: "${RUN:?}" "${PAICTL:?}" "${TESTBED:?}" "${PYTHON3:?}" "${HIVED_SERVER:?}"
# shellcheck disable=SC2034 # read by lib.sh: this test starts its own testbed
TB_OWN=1
. "$(dirname "$0")/lib.sh"
need_etcd
need_haproxy
need_kubectl

"$TESTBED" up 4 "$RUN" --base 127.0.61 --masters 3 --rollout-delay 0.1 --hived-server "$HIVED_SERVER" > "$TMP/up.log" 2>&1 ||
  { cat "$TMP/up.log"; fail "testbed up"; }
C=$RUN/cluster
SSH="--ssh-config $RUN/ssh_config"
grep -q 'kube_control_plane_endpoint: "127.0.61.250:6443"' "$C/config.yaml" || fail "config.yaml has no endpoint"

# 1. The files and the hosts.
"$PAICTL" check config "$C" > "$TMP/cc.txt" 2>&1 || { cat "$TMP/cc.txt"; fail "check config"; }
set +e
"$PAICTL" check hosts "$C" $SSH --connect-timeout 5 --command-timeout 30 -o json > "$TMP/ch.json" 2> "$TMP/ch.err"
rc=$?
set -e
[ $rc -le 1 ] || { cat "$TMP/ch.err"; fail "check hosts exited $rc"; }
"$PYTHON3" - "$TMP/ch.json" <<'PY' || fail "check hosts: the endpoint or the masters' ports"
import json, sys
d = json.load(open(sys.argv[1]))
rs = d["results"]
ep = [r for r in rs if r["check"] == "ControlPlaneEndpoint"]
mp = [r for r in rs if r["check"] == "MasterPort"]
bad = [r for r in ep + mp if r["status"] != "pass"]
assert len(ep) == 4 and len(mp) == 3 * 2 * 4 and not bad, (len(ep), len(mp), bad[:3])
PY
pass "check config and check hosts: the endpoint answers, the masters' ports are open"
# install's own pre-install checks probe them too: an endpoint where nothing listens stops it.
cp -r "$C" "$TMP/bad-endpoint"
sed -i 's/^kube_control_plane_endpoint: "127.0.61.250:6443"/kube_control_plane_endpoint: "127.0.61.250:6444"/' "$TMP/bad-endpoint/config.yaml"
set +e
"$PAICTL" install "$TMP/bad-endpoint" $SSH --ignore-check-errors CPU,DNS,DiskFree,RunningKubernetes --dry-run > "$TMP/bad-ep.txt" 2>&1
rc=$?
set -e
[ $rc -ne 0 ] || { cat "$TMP/bad-ep.txt"; fail "install --dry-run with no load balancer on the endpoint exited 0"; }
grep -q "ControlPlaneEndpoint" "$TMP/bad-ep.txt" || fail "install's checks do not name ControlPlaneEndpoint: $(cat "$TMP/bad-ep.txt")"
pass "install's pre-install checks: an endpoint where nothing listens stops it (ControlPlaneEndpoint)"

# 2. The install.
"$PAICTL" install "$C" $SSH --ignore-check-errors CPU,DNS,DiskFree,RunningKubernetes --wait 90 --yes > "$TMP/install.txt" 2>&1 ||
  { cat "$TMP/install.txt"; fail "install"; }
KEY=$C/.paictl/certificate-key
[ "$(stat -c %a "$KEY")" = 600 ] || fail "the certificate key is not 0600"
K=$(cat "$KEY")
[ ${#K} -eq 64 ] || fail "the certificate key is not 64 characters"
grep -rqF "$K" "$C/.paictl/logs" "$TMP/install.txt" && fail "the certificate key is in a log or the output"
for h in tb-master tb-master2 tb-master3 tb-worker1; do
  grep -qF "$K" "$RUN/hosts/$h/invocations.jsonl" && fail "the certificate key is in $h's argv"
done
state
expect '[f for h in s["hosts"].values() for f in (h.get("tmp") or []) if "paictl-kubeadm" in f]' '[]'
expect 'sorted(c["etcdMembers"])' '["tb-master", "tb-master2", "tb-master3"]'
expect 'c.get("etcdUnhealthy", [])' '[]'
expect '{h: v["kubeadm"] for h, v in s["hosts"].items()}["tb-master"]["init"]' '1'
grep -q 'join-control-plane' "$TMP/install.txt" || fail "no join-control-plane phase in the output"
pass "install: 3 masters (3 etcd members, healthy) and a worker"

# 3. kubectl through the endpoint.
KUBECONFIG_FILE=$("$TESTBED" kubeconfig "$RUN")
grep -q 'server: https://127.0.61.250:6443' "$KUBECONFIG_FILE" || fail "admin.conf does not name the endpoint"
KUBECTL="$KUBECTL --kubeconfig $KUBECONFIG_FILE"
$KUBECTL get nodes -o json > "$TMP/nodes.json"
"$PYTHON3" - "$TMP/nodes.json" <<'PY' || fail "the nodes"
import json, sys
d = json.load(open(sys.argv[1]))
ns = {n["metadata"]["name"]: n for n in d["items"]}
assert sorted(ns) == ["tb-master", "tb-master2", "tb-master3", "tb-worker1"], sorted(ns)
for m in ("tb-master", "tb-master2", "tb-master3"):
    n = ns[m]
    assert n["metadata"]["labels"].get("pai-master") == "true", m
    assert any(t["key"] == "node-role.kubernetes.io/control-plane" and t["effect"] == "NoSchedule"
               for t in n["spec"].get("taints", [])), m
for n in d["items"]:
    ready = [c["status"] for c in n["status"]["conditions"] if c["type"] == "Ready"]
    assert ready == ["True"], (n["metadata"]["name"], ready)
PY
r=$($KUBECTL -n openpai get deployment rest-server -o jsonpath='{.spec.replicas}')
[ "$r" = 3 ] || fail "rest-server has $r replicas, not 3"
pass "kubectl through HAProxy: 4 nodes Ready, the masters tainted, rest-server 3 replicas"

# 4. A re-run changes nothing.
set +e
"$PAICTL" install "$C" $SSH --ignore-check-errors CPU,DNS,DiskFree,RunningKubernetes --wait 60 --yes --detailed-exitcode > "$TMP/again.txt" 2>&1
rc=$?
set -e
[ $rc -eq 0 ] || { cat "$TMP/again.txt"; fail "the re-run exited $rc (changes or an error)"; }
state
expect '{h: v["kubeadm"] for h, v in s["hosts"].items()}["tb-master"]["init"]' '1'
expect 'sorted(c["etcdMembers"])' '["tb-master", "tb-master2", "tb-master3"]'
pass "a re-run changes nothing"

# 5. A master lost.
"$TESTBED" stop-host "$RUN" tb-master3 > "$TMP/stop" 2>&1 || { cat "$TMP/stop"; fail "stop-host"; }
set +e
"$PAICTL" install "$C" $SSH --ignore-check-errors CPU,DNS,DiskFree,RunningKubernetes --wait 30 --connect-timeout 3 --yes > "$TMP/lost.txt" 2>&1
rc=$?
set -e
[ $rc -eq 3 ] || { cat "$TMP/lost.txt"; fail "install with tb-master3 lost exited $rc, want 3 (a remote failure)"; }
grep -q "tb-master3" "$TMP/lost.txt" || fail "install does not name the lost master: $(cat "$TMP/lost.txt")"
state
expect '{h: v["kubeadm"] for h, v in s["hosts"].items()}["tb-master"]["init"]' '1'
expect 'sorted(c["etcdMembers"])' '["tb-master", "tb-master2", "tb-master3"]'
expect 'sorted(k for k in c["objects"] if k.startswith("Node/"))' '["Node/tb-master", "Node/tb-master2", "Node/tb-master3", "Node/tb-worker1"]'
pass "install with a master lost: exit 3, the lost host named, nothing changed"
set +e
"$PAICTL" node remove "$C" tb-master2 $SSH --yes > "$TMP/rm2.txt" 2>&1
rc=$?
[ -z "${DOC_OUT:-}" ] || cp "$TMP/rm2.txt" "$DOC_OUT/node-remove-quorum.txt"
set -e
[ $rc -eq 2 ] || { cat "$TMP/rm2.txt"; fail "node remove tb-master2 with tb-master3 lost exited $rc, want 2"; }
grep -q "quorum" "$TMP/rm2.txt" || fail "the refusal does not speak of the quorum: $(cat "$TMP/rm2.txt")"
grep -q "tb-master3" "$TMP/rm2.txt" || fail "the refusal does not name the lost master: $(cat "$TMP/rm2.txt")"
state
expect 'sorted(c["etcdMembers"])' '["tb-master", "tb-master2", "tb-master3"]'
expect 'c["etcdUnhealthy"]' '["tb-master3"]'
expect '"Node/tb-master2" in c["objects"]' 'true'
pass "node remove of a second master with one lost: refused (no quorum), nothing changed"
set +e
"$PAICTL" upgrade "$C" $SSH --to 1.31 --dry-run > "$TMP/up-lost.txt" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || { cat "$TMP/up-lost.txt"; fail "upgrade with tb-master3 lost exited $rc, want 2"; }
grep -q "etcd member tb-master3 not healthy" "$TMP/up-lost.txt" || fail "the upgrade's refusal does not name the lost member: $(cat "$TMP/up-lost.txt")"
pass "upgrade with a master lost: refused before anything changes, the member named"

"$PAICTL" node remove "$C" tb-master3 $SSH --dry-run > "$TMP/rm3-plan.txt" 2>&1 || true
[ -z "${DOC_OUT:-}" ] || cp "$TMP/rm3-plan.txt" "$DOC_OUT/node-remove-lost-plan.txt"
grep -q "etcdctl member remove [0-9a-f]* (tb-master3, not healthy)" "$TMP/rm3-plan.txt" ||
  fail "the dry run does not show the member's removal: $(cat "$TMP/rm3-plan.txt")"
grep -q "tb-master3 is lost" "$TMP/rm3-plan.txt" || fail "the dry run does not say tb-master3 is lost: $(cat "$TMP/rm3-plan.txt")"
cp "$C/layout.yaml" "$TMP/layout.with-master3"
"$PAICTL" node remove "$C" tb-master3 $SSH --yes -o json > "$TMP/rm3.json" 2> "$TMP/rm3.err" ||
  { cat "$TMP/rm3.json" "$TMP/rm3.err"; fail "node remove of the lost master"; }
check_file "$TMP/rm3.json" 'd["etcd"]["lost"] == ["tb-master3"] and [m["name"] for m in d["etcd"]["members"] if m["removed"]] == ["tb-master3"] and d["etcd"]["via"] != "tb-master3"' \
  "node remove -o json: the member removed through a master that stays, the host lost"
state
expect 'sorted(c["etcdMembers"])' '["tb-master", "tb-master2"]'
expect 'c.get("etcdUnhealthy", [])' '[]'
expect '"Node/tb-master3" in c["objects"]' 'false'
grep -q "tb-master3" "$C/layout.yaml" && fail "tb-master3 is still in layout.yaml"
$KUBECTL get configmap -n kube-system -o name > /dev/null || fail "kubectl through HAProxy after the removal"
pass "node remove of the lost master: its etcd member and Node gone, layout.yaml without it, kubectl works"

# 6. The lost master replaced: a machine of the same name and address, installed
# again, goes back into layout.yaml and node add joins it as a control-plane node.
"$TESTBED" start-host "$RUN" tb-master3 > "$TMP/start" 2>&1 || { cat "$TMP/start"; fail "start-host tb-master3"; }
cp "$TMP/layout.with-master3" "$C/layout.yaml"
"$PAICTL" node add "$C" tb-master3 $SSH --ignore-check-errors CPU,DNS,DiskFree --dry-run > "$TMP/add3-plan.txt" 2>&1 || { cat "$TMP/add3-plan.txt"; fail "node add --dry-run of the replacement"; }
grep -q "kubeadm join .* as a control-plane node" "$TMP/add3-plan.txt" || fail "the dry run does not show the control-plane join: $(cat "$TMP/add3-plan.txt")"
"$PAICTL" node add "$C" tb-master3 $SSH --ignore-check-errors CPU,DNS,DiskFree --wait 90 --yes > "$TMP/add3.txt" 2>&1 || { cat "$TMP/add3.txt"; fail "node add of the replacement"; }
[ -z "${DOC_OUT:-}" ] || cp "$TMP/add3.txt" "$DOC_OUT/node-add-master.txt"
grep -q '^tb-worker1 .*join' "$TMP/add3.txt" && fail "node add of tb-master3 joined tb-worker1 again: $(cat "$TMP/add3.txt")"
state
expect 'sorted(c["etcdMembers"])' '["tb-master", "tb-master2", "tb-master3"]'
expect 'c.get("etcdUnhealthy", [])' '[]'
expect '{h: v["kubeadm"] for h, v in s["hosts"].items()}["tb-master"]["init"]' '1'
$KUBECTL get node tb-master3 -o json > "$TMP/master3.json" || fail "kubectl get node tb-master3"
check_file "$TMP/master3.json" '[c["status"] for c in d["status"]["conditions"] if c["type"] == "Ready"] == ["True"] and d["metadata"]["labels"].get("pai-master") == "true"' \
  "tb-master3 Ready and labelled a master"
set +e
"$PAICTL" install "$C" $SSH --ignore-check-errors CPU,DNS,DiskFree,RunningKubernetes --wait 60 --yes --detailed-exitcode > "$TMP/after-add3.txt" 2>&1
rc=$?
set -e
[ $rc -eq 0 ] || { cat "$TMP/after-add3.txt"; fail "install after the replacement joined exited $rc (changes or an error)"; }
pass "the replacement of the lost master joins: 3 etcd members healthy, its Node Ready, a re-run changes nothing"

# 7. upgrade of the control plane of three: kubeadm upgrade apply on the first
# master, then kubeadm upgrade node on the others one at a time (each Ready at the
# new version and etcd healthy before the next), then the worker.
"$PAICTL" upgrade "$C" $SSH --to 1.31 --dry-run > "$TMP/up-plan.txt" 2>&1 || { cat "$TMP/up-plan.txt"; fail "upgrade --dry-run"; }
grep -q "control plane on tb-master2: kubeadm 1.31.6, kubeadm upgrade node" "$TMP/up-plan.txt" || fail "the plan does not upgrade tb-master2: $(cat "$TMP/up-plan.txt")"
grep -q "control plane on tb-master3: kubeadm 1.31.6, kubeadm upgrade node" "$TMP/up-plan.txt" || fail "the plan does not upgrade tb-master3: $(cat "$TMP/up-plan.txt")"
"$PAICTL" upgrade "$C" $SSH --to 1.31 --yes > "$TMP/up.txt" 2> "$TMP/up.err" || { cat "$TMP/up.txt" "$TMP/up.err"; fail "upgrade --to 1.31"; }
[ -z "${DOC_OUT:-}" ] || cat "$TMP/up-plan.txt" > "$DOC_OUT/upgrade-ha-plan.txt"
order=$(grep "runs 1.31.6" "$TMP/up.err" | awk '{print $2}' | tr '\n' ' ')
[ "$order" = "tb-master tb-master2 tb-master3 tb-worker1 " ] || fail "the nodes' order ($order): $(cat "$TMP/up.err")"
$KUBECTL get nodes -o json > "$TMP/nodes-up.json"
check_file "$TMP/nodes-up.json" 'sorted((n["metadata"]["name"], n["status"]["nodeInfo"]["kubeletVersion"]) for n in d["items"]) == [("tb-master", "v1.31.6"), ("tb-master2", "v1.31.6"), ("tb-master3", "v1.31.6"), ("tb-worker1", "v1.31.6")]' \
  "every kubelet at v1.31.6"
state
expect 'sorted(c["etcdMembers"])' '["tb-master", "tb-master2", "tb-master3"]'
expect 'c.get("etcdUnhealthy", [])' '[]'
for m in tb-master tb-master2 tb-master3; do
  grep -q 'kube-apiserver:v1.31.6' "$RUN/hosts/$m/fs/etc/kubernetes/manifests/kube-apiserver.yaml" || fail "$m's API server is not at v1.31.6"
done
pass "upgrade of three masters: one at a time (apply on the first, upgrade node on the others), etcd healthy, the worker last"
