#!/bin/sh
# The testbed's highly available control plane (scripts/testbed.sh up --masters 3): three
# masters and a worker behind a real HAProxy on 127.0.60.250:6443, driven with the fake
# kubeadm over SSH as an installer drives it: `kubeadm init --upload-certs` on the first
# master (its config on stdin into a 0600 file, the certificate key never printed), a
# second master joined (the uploaded certificates, an etcd member added with the real
# etcdctl), a worker joined through the endpoint, the certificates uploaded again under a
# new key, the third master's join with the old key refused (nothing added) and with the
# new one done; then kubectl through HAProxy with TLS verified, an object written through
# master 1 read through master 3, a rollout watched through master 2; the first master
# lost (stop-host) with kubectl through HAProxy still working, its etcd member listed but
# unhealthy and its controllers' lead taken over; `kubeadm reset` of a master removing its
# own member.
# Its own testbed on 127.0.60.x.
set -eu
: "${RUN:?}" "${TESTBED:?}" "${PYTHON3:?}" "${TB_DIR:?}"
# shellcheck disable=SC2034 # read by lib.sh: this test starts its own testbed
TB_OWN=1
. "$(dirname "$0")/lib.sh"
need_etcd
need_haproxy
need_kubectl
LB=127.0.60.250
M1=127.0.60.2
M2=127.0.60.3
M3=127.0.60.4
# The machine's kubectl with the first master's admin.conf (its server: the endpoint), TLS verified.
K() { "$KUBECTL" --kubeconfig "$RUN/hosts/tb-master/fs/etc/kubernetes/admin.conf" --request-timeout 10s "$@"; }
# A file of a config carrying a key or token: on stdin into a 0600 file, deleted after use.
with_config() { host=$1; shift; on "$host" "umask 077; cat > /root/kubeadm.yaml; $*; rc=\$?; rm -f /root/kubeadm.yaml; exit \$rc"; }

"$TESTBED" up 4 "$RUN" --base 127.0.60 --masters 3 --rollout-delay 0.2 > "$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; fail "testbed up"; }
grep -q "^kube_control_plane_endpoint: \"$LB:6443\"$" "$RUN/cluster/config.yaml" || fail "config.yaml names no endpoint: $(cat "$RUN/cluster/config.yaml")"
"$PYTHON3" - "$RUN/cluster/layout.yaml" <<'PY' || fail "layout.yaml: the three masters are not pai-master"
import sys, yaml
ms = yaml.safe_load(open(sys.argv[1]))["machine-list"]
got = [(m["hostname"], m.get("pai-master") == "true", m.get("pai-worker") == "true") for m in ms]
want = [("tb-master", True, False), ("tb-master2", True, False), ("tb-master3", True, False), ("tb-worker1", False, True)]
sys.exit(0 if got == want else print(got) or 1)
PY
hp=$(cat "$RUN/haproxy.pid")
[ "$(cat /proc/"$hp"/comm)" = haproxy ] || fail "no HAProxy process at $hp"
ss -Hltn "src = $LB and sport = :6443" | grep -q . || fail "nothing listens on $LB:6443"
pass "up --masters 3: tb-master, tb-master2, tb-master3 marked pai-master, HAProxy on $LB:6443 written as kube_control_plane_endpoint"

for h in tb-master tb-master2 tb-master3 tb-worker1; do
  on $h 'sh -s' < "$TB_DIR/prepare_host.sh" > "$TMP/prep.$h" 2>&1 &
done
for j in 1 2 3 4; do wait %$j 2>/dev/null || true; done
for h in tb-master tb-master2 tb-master3 tb-worker1; do
  on $h 'systemctl is-active containerd' > /dev/null 2>&1 || { cat "$TMP/prep.$h"; fail "prepare $h"; }
done

KEY=$(openssl rand -hex 32)
TOKEN=abcdef.0123456789abcdef
cat > "$TMP/init.yaml" <<EOF
apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
certificateKey: "$KEY"
localAPIEndpoint: {advertiseAddress: $M1, bindPort: 6443}
bootstrapTokens:
- token: $TOKEN
  ttl: 1h0m0s
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.30.0
controlPlaneEndpoint: "$LB:6443"
apiServer:
  certSANs: ["$LB", "$M1", "$M2", "$M3"]
EOF
with_config tb-master 'kubeadm init --config /root/kubeadm.yaml --upload-certs --skip-certificate-key-print' \
  < "$TMP/init.yaml" > "$TMP/init" 2>&1 || { cat "$TMP/init"; fail "kubeadm init --upload-certs"; }
! grep -q "$KEY" "$TMP/init" || fail "the certificate key was printed"
grep -q 'Storing the certificates in Secret "kubeadm-certs"' "$TMP/init" || fail "no upload-certs phase: $(cat "$TMP/init")"
grep -q -- "--control-plane --certificate-key <value withheld>" "$TMP/init" || fail "no control-plane join command"
K -n kube-system get secret kubeadm-certs -o json > "$TMP/certs.json" || fail "no Secret kubeadm-certs"
"$PYTHON3" - "$TMP/certs.json" "$RUN/hosts/tb-master/fs/etc/kubernetes/pki/ca.crt" <<'PY' || fail "the uploaded certificates are not kubeadm's set, encrypted"
import base64, json, sys
d = json.load(open(sys.argv[1]))["data"]
want = {"ca.crt", "ca.key", "sa.key", "sa.pub", "front-proxy-ca.crt", "front-proxy-ca.key", "etcd-ca.crt", "etcd-ca.key"}
ca = open(sys.argv[2], "rb").read()
ok = set(d) == want and all(b"BEGIN" not in base64.b64decode(v) for v in d.values()) and ca not in base64.b64decode(d["ca.crt"])
sys.exit(0 if ok else print(sorted(d)) or 1)
PY
owner=$(K -n kube-system get secret kubeadm-certs -o jsonpath='{.metadata.ownerReferences[0].name}')
on tb-master 'kubeadm token list' > "$TMP/tokens" 2>&1 || fail "kubeadm token list: $(cat "$TMP/tokens")"
grep "^${owner#bootstrap-token-}\." "$TMP/tokens" | grep -q "<none> *Proxy for managing TTL for the kubeadm-certs secret" ||
  fail "the Secret's owner $owner is not kubeadm's TTL token: $(cat "$TMP/tokens")"
pass "kubeadm init --upload-certs (config on stdin, 0600, deleted): the CAs and sa keys encrypted in Secret kube-system/kubeadm-certs, owned by a 2 h token without usages, the key never printed"

HASH=sha256:$(openssl x509 -pubkey -noout -in "$RUN/hosts/tb-master/fs/etc/kubernetes/pki/ca.crt" | openssl pkey -pubin -outform DER | sha256sum | cut -d' ' -f1)
join_config() {  # ADDRESS KEY: a control-plane JoinConfiguration (no ADDRESS: a worker's)
  cat <<EOF
apiVersion: kubeadm.k8s.io/v1beta3
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: $LB:6443
    token: $TOKEN
    caCertHashes: ["$HASH"]
EOF
  [ -z "${1:-}" ] || printf 'controlPlane:\n  localAPIEndpoint: {advertiseAddress: %s, bindPort: 6443}\n  certificateKey: "%s"\n' "$1" "$2"
}
# tb-master2 joins with the key; meanwhile (etcd takes a third member only once the second
# is 5 s old) tb-worker1 joins through the endpoint and tb-master2 uploads the
# certificates again under a new key, as a later run does after their two hours.
cp_join() {  # HOST: the control-plane JoinConfiguration on stdin
  with_config "$1" 'kubeadm join --config /root/kubeadm.yaml' > "$TMP/join.$1" 2>&1
}
join_config $M2 "$KEY" | cp_join tb-master2 || { cat "$TMP/join.tb-master2"; fail "control-plane join of tb-master2"; }
grep -q "A new etcd member was added" "$TMP/join.tb-master2" || fail "join of tb-master2: $(cat "$TMP/join.tb-master2")"
join_config > "$TMP/worker.yaml"
with_config tb-worker1 'kubeadm join --config /root/kubeadm.yaml' < "$TMP/worker.yaml" > "$TMP/join.w" 2>&1 || { cat "$TMP/join.w"; fail "worker join through $LB:6443"; }
before=$(K -n kube-system get secret kubeadm-certs -o jsonpath='{.data.ca\.key}')
KEY2=$(openssl rand -hex 32)
sed "s/$KEY/$KEY2/" "$TMP/init.yaml" > "$TMP/init2.yaml"
with_config tb-master2 'kubeadm init phase upload-certs --upload-certs --skip-certificate-key-print --config /root/kubeadm.yaml' \
  < "$TMP/init2.yaml" > "$TMP/upload" 2>&1 || { cat "$TMP/upload"; fail "init phase upload-certs"; }
! grep -q "$KEY2" "$TMP/upload" || fail "upload-certs printed the key"
[ "$(K -n kube-system get secret kubeadm-certs -o jsonpath='{.data.ca\.key}')" != "$before" ] || fail "the certificates were not uploaded again"
pass "tb-master2 joined the control plane, tb-worker1 joined through $LB:6443, kubeadm init phase upload-certs --upload-certs --config on tb-master2 replaced the Secret under a new key"

if join_config $M3 "$KEY" | cp_join tb-master3; then
  fail "a control-plane join with the replaced certificate key succeeded"
fi
grep -q "error decoding secret data with provided key: cipher: message authentication failed" "$TMP/join.tb-master3" ||
  fail "wrong key: $(cat "$TMP/join.tb-master3")"
state
expect 'c["etcdMembers"]' '["tb-master", "tb-master2"]'
expect '[s["hosts"]["tb-master3"]["etcd"], sorted(f for f in s["hosts"]["tb-master3"]["files"] if f.startswith("/etc/kubernetes/"))]' '[null, []]'
pass "a control-plane join with the old certificate key: kubeadm's error, exit 1, no etcd member, nothing written"

join_config $M3 "$KEY2" | cp_join tb-master3 || { cat "$TMP/join.tb-master3"; fail "control-plane join of tb-master3"; }
grep -q "A new etcd member was added" "$TMP/join.tb-master3" || fail "join of tb-master3: $(cat "$TMP/join.tb-master3")"
state
expect '[c["etcdMembers"], c["etcdUnhealthy"]]' '[["tb-master", "tb-master2", "tb-master3"], []]'
expect '[s["hosts"][h][k] for h in ("tb-master2", "tb-master3") for k in ("etcd", "apiserver")]' '["running", "running", "running", "running"]'
expect 'sorted(m["name"] for m in s["hosts"]["tb-master3"]["etcd_members"])' '["tb-master", "tb-master2", "tb-master3"]'
expect 'sorted(k for k, o in c["objects"].items() if k.startswith("Node/") and "node-role.kubernetes.io/control-plane" in o["labels"])' \
  '["Node/tb-master", "Node/tb-master2", "Node/tb-master3"]'
for f in ca.crt ca.key sa.key front-proxy-ca.crt etcd/ca.crt; do
  cmp -s "$RUN/hosts/tb-master/fs/etc/kubernetes/pki/$f" "$RUN/hosts/tb-master3/fs/etc/kubernetes/pki/$f" || fail "tb-master3's $f is not the cluster's"
done
! cmp -s "$RUN/hosts/tb-master/fs/etc/kubernetes/pki/apiserver.crt" "$RUN/hosts/tb-master3/fs/etc/kubernetes/pki/apiserver.crt" || fail "tb-master3 serves tb-master's certificate"
openssl x509 -noout -ext subjectAltName -in "$RUN/hosts/tb-master3/fs/etc/kubernetes/pki/apiserver.crt" | grep -q "IP Address:$LB" ||
  fail "tb-master3's API server certificate lacks the endpoint $LB"
pass "tb-master3 joined with the new key (the uploaded CAs, its own serving certificate with the certSANs): 3 etcd members, 3 control-plane Nodes"

K get nodes -o name > "$TMP/nodes" || fail "kubectl through HAProxy"
[ "$(wc -l < "$TMP/nodes")" = 4 ] || fail "kubectl through HAProxy: $(cat "$TMP/nodes")"
K --server "https://$M1:6443" create configmap ha-probe --from-literal=written=master1 > /dev/null || fail "create through master 1"
[ "$(K --server "https://$M3:6443" get configmap ha-probe -o jsonpath='{.data.written}')" = master1 ] || fail "master 3 does not see master 1's object"
K --server "https://$M2:6443" patch configmap ha-probe -p '{"data":{"patched":"master2"}}' > /dev/null || fail "patch through master 2"
rv1=$(K --server "https://$M1:6443" get configmap ha-probe -o jsonpath='{.metadata.resourceVersion}/{.data.patched}')
rv3=$(K --server "https://$M3:6443" get configmap ha-probe -o jsonpath='{.metadata.resourceVersion}/{.data.patched}')
[ "$rv1" = "$rv3" ] && [ "${rv1#*/}" = master2 ] || fail "the masters disagree after a patch through master 2: $rv1 vs $rv3"
# A watch on another master than the one whose controllers run (tb-master's lead): the
# Deployment's status reaches kubectl rollout status through tb-master2.
printf '%s\n' 'apiVersion: apps/v1' 'kind: Deployment' 'metadata: {name: web, namespace: default}' \
  'spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}},' \
  '  spec: {tolerations: [{operator: Exists}], containers: [{name: web, image: nginx}]}}}' > "$TMP/web.yaml"
K --server "https://$M1:6443" apply -f "$TMP/web.yaml" > /dev/null || fail "apply through master 1"
K --server "https://$M2:6443" rollout status deployment/web --timeout 20s > "$TMP/rollout" 2>&1 || fail "rollout status through master 2: $(cat "$TMP/rollout")"
pass "kubectl through HAProxy (TLS verified against the endpoint's SAN); an object written through master 1 read through master 3, patched through master 2, the same resourceVersion everywhere; a Deployment applied through master 1 watched to its rollout through master 2"

# TESTBED_HA_FULL=1 also: an upgrade (apply on the first master moves its control plane
# and kubeadm-config, upgrade node on another master moves that one's), and snapshot|restore
# of the three masters (10 to 30 s more: three etcd data directories and their 64 MB WALs
# copied and compared).
ver() { K --server "https://$1:6443" version -o json 2>/dev/null | "$PYTHON3" -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])' 2>/dev/null; }
# until_version ADDRESS VERSION: the API server there answers VERSION within 10 s (a restarted static pod).
until_version() {
  n=0
  until [ "$(ver "$1")" = "$2" ]; do
    n=$((n + 1)); [ $n -lt 50 ] || fail "$1 serves $(ver "$1"), not $2"; sleep 0.2
  done
}
if [ "${TESTBED_HA_FULL:-0}" = 1 ]; then
  target=$(on tb-master 'kubeadm version -o short')
  [ "$(ver $M3)" = v1.30.0 ] || fail "tb-master3 is not at v1.30.0: $(ver $M3)"
  on tb-master "kubeadm upgrade apply $target -y" > "$TMP/apply" 2>&1 || { cat "$TMP/apply"; fail "kubeadm upgrade apply $target"; }
  until_version $M1 "$target"
  [ "$(ver $M3)" = v1.30.0 ] || fail "tb-master3 moved with tb-master's apply: $(ver $M3)"
  on tb-master3 'kubeadm upgrade node' > "$TMP/node" 2>&1 || { cat "$TMP/node"; fail "kubeadm upgrade node on tb-master3"; }
  grep -q 'Component "kube-apiserver" upgraded successfully' "$TMP/node" || fail "upgrade node: $(cat "$TMP/node")"
  [ "$(ver $M3)" = "$target" ] || fail "after upgrade node, tb-master3 serves $(ver $M3)"
  pass "kubeadm upgrade apply $target on tb-master, kubeadm upgrade node on tb-master3: each master's control plane at the target"

  "$TESTBED" snapshot "$RUN" joined || fail "snapshot of three masters"
  K create configmap after-snapshot > /dev/null || fail "a write after the snapshot"
  "$TESTBED" restore "$RUN" joined || fail "restore of three masters"
  n=0
  until K get configmap -o name > "$TMP/cms" 2>/dev/null; do
    n=$((n + 1)); [ $n -lt 100 ] || fail "kubectl through HAProxy after the restore"; sleep 0.2
  done
  grep -q configmap/ha-probe "$TMP/cms" && ! grep -q after-snapshot "$TMP/cms" || fail "after the restore: $(cat "$TMP/cms")"
  state
  expect '[c["etcdMembers"], c["etcdUnhealthy"]]' '[["tb-master", "tb-master2", "tb-master3"], []]'
  pass "snapshot and restore of three masters: the etcd cluster back as it was, healthy, kubectl through HAProxy"
fi

# The first master lost: its API server led the controllers, which another takes over.
"$TESTBED" stop-host "$RUN" tb-master > "$TMP/stop" 2>&1 || { cat "$TMP/stop"; fail "stop-host"; }
for i in 1 2 3; do
  K get configmap ha-probe -o name > /dev/null || fail "kubectl through HAProxy with tb-master lost (request $i)"
done
K create configmap after-loss > /dev/null || fail "a write through HAProxy with tb-master lost"
! on tb-master true 2>/dev/null || fail "tb-master still answers SSH"
state
expect '[c["etcdMembers"], c["etcdUnhealthy"], s["hosts"]["tb-master"].get("lost"), s["hosts"]["tb-master"]["etcd"], s["hosts"]["tb-master"]["apiserver"]]' \
  '[["tb-master", "tb-master2", "tb-master3"], ["tb-master"], true, "stopped", "stopped"]'
eventually 'c["objects"]["Node/tb-master"]["ready"]' '"Unknown"'
pass "stop-host tb-master: kubectl through HAProxy reads and writes, etcd still lists 3 members with tb-master unhealthy, its Node Unknown (the controllers' lead taken over)"

# The lost member removed as an operator does (etcdctl on a live master), then a reset
# of tb-master3 removes its own member (the last two would lose quorum otherwise).
E="etcdctl --endpoints https://$M2:2379 --cacert /etc/kubernetes/pki/etcd/ca.crt --cert /etc/kubernetes/pki/etcd/healthcheck-client.crt --key /etc/kubernetes/pki/etcd/healthcheck-client.key"
id=$(on tb-master2 "$E member list" | awk -F', ' '$3 == "tb-master" {print $1}')
[ -n "$id" ] || fail "no member tb-master in etcdctl member list"
on tb-master2 "$E member remove $id" > /dev/null || fail "etcdctl member remove of the lost member"
on tb-master3 'kubeadm reset -f' > "$TMP/reset" 2>&1 || { cat "$TMP/reset"; fail "kubeadm reset of tb-master3"; }
grep -q "Removed member tb-master3" "$TMP/reset" || fail "reset: $(cat "$TMP/reset")"
state
expect '[c["etcdMembers"], c["etcdUnhealthy"], s["hosts"]["tb-master3"]["etcd"]]' '[["tb-master2"], [], null]'
[ "$(K get configmap -o name | grep -c -e ha-probe -e after-loss)" = 2 ] || fail "the objects are gone after the reset"
pass "kubeadm reset on tb-master3 removed its own etcd member; kubectl through HAProxy on the last master sees every object"

"$TESTBED" down "$RUN" > /dev/null || fail "down"
! { [ -r "/proc/$hp/stat" ] && [ "$(cut -d' ' -f3 "/proc/$hp/stat")" != Z ]; } || fail "HAProxy still runs after down"
pass "the testbed's HA control plane: 3 masters behind HAProxy, a lost master, a reset one"
