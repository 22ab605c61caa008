#!/bin/sh
# The testbed's real etcd: kubeadm init on one host runs Debian's etcd from the
# static pod manifest, the fake API server keeps its objects in it (kube-apiserver's
# keys under /registry), and the machine's real etcdctl backs it up and restores
# it: objects made with the real kubectl, `etcdctl snapshot save` over SSH, the
# objects deleted, the snapshot restored into a new data directory, the manifests
# moved out (etcd and the API server stop), the directory swapped in, the
# manifests moved back (they start again) and kubectl sees the objects again.
# Also: a changed manifest restarts etcd, `testbed.sh snapshot|restore` keep
# etcd's data, `kubeadm reset` leaves no etcd running. Its own testbed on 127.0.50.x.
set -eu
: "${RUN:?}" "${TESTBED:?}" "${PYTHON3:?}" "${TB_DIR:?}"
# shellcheck disable=SC2034 # read by lib.sh: this test starts its own testbed
TB_OWN=1
. "$(dirname "$0")/lib.sh"
need_etcd
need_kubectl
etcd_pid() { "$PYTHON3" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("pid") or "")' "$RUN/hosts/tb-master/state/static-pods/etcd.json" 2>/dev/null || true; }
runs() { [ -n "$1" ] && [ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat")" != Z ]; }
# until 'SHELL CONDITION' MESSAGE [TENTHS]: waits up to TENTHS/10 s (default 5 s).
until_true() {
  n=0
  while ! eval "$1"; do
    n=$((n + 1))
    [ $n -lt "${3:-50}" ] || fail "$2"
    sleep 0.1
  done
}
MASTER=127.0.50.2
PKI=/etc/kubernetes/pki
ETCDCTL="ETCDCTL_API=3 etcdctl --endpoints https://$MASTER:2379 --cacert $PKI/etcd/ca.crt --cert $PKI/apiserver-etcd-client.crt --key $PKI/apiserver-etcd-client.key"
K="kubectl --kubeconfig /etc/kubernetes/admin.conf --request-timeout 10s"

"$TESTBED" up 1 "$RUN" --base 127.0.50 --rollout-delay 0.2 > "$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; fail "testbed up"; }
on tb-master 'sh -s' < "$TB_DIR/prepare_host.sh" > "$TMP/prep" 2>&1 || { cat "$TMP/prep"; fail "prepare the master"; }
on tb-master 'kubeadm init --skip-token-print' > "$TMP/init" 2>&1 || { cat "$TMP/init"; fail "kubeadm init"; }
state
expect 'm["etcd"]' '"running"'
expect 'm["apiserver"]' '"running"'
expect 'm["etcd_members"]' "[{\"name\": \"tb-master\", \"clientURLs\": [\"https://$MASTER:2379\"], \"peerURLs\": [\"https://$MASTER:2380\"]}]"
expect 'm["etcd_keys"] > 10 and "Node/tb-master" in s["cluster"]["objects"]' 'true'
for f in etcd/ca etcd/server etcd/peer etcd/healthcheck-client apiserver-etcd-client; do
  expect "m[\"files\"][\"$PKI/$f.key\"]" '"0600"'
done
on tb-master "openssl x509 -in $PKI/etcd/server.crt -noout -ext subjectAltName" | grep -q "DNS:tb-master, DNS:localhost, IP Address:$MASTER, IP Address:127.0.0.1" \
  || fail "etcd's server certificate: $(on tb-master "openssl x509 -in $PKI/etcd/server.crt -noout -text")"
# Only the master's own address: 127.0.0.1 is every testbed host's (and this machine's).
ss -Hltn "sport = :2379" | grep -q "$MASTER:2379" || fail "etcd does not listen on $MASTER:2379"
ss -Hltnp "sport = :2379" | grep "127.0.0.1:2379" | grep -q "pid=$(etcd_pid)," && fail "the testbed's etcd listens on 127.0.0.1"
# Its process name is not "etcd": every host sees the machine's processes, and a worker
# must not look like a member of a cluster to the fact script.
[ "$(cat "/proc/$(etcd_pid)/comm")" = tb-etcd ] || fail "etcd's process name: $(cat "/proc/$(etcd_pid)/comm")"
"$TESTBED" snapshot "$RUN" inited
pass "kubeadm init runs etcd from its manifest with kubeadm's certificates; the API server's objects are in it"

# Objects made with the real kubectl are etcd's keys, in kube-apiserver's layout.
on tb-master "$K apply -f -" > "$TMP/apply" 2>&1 <<'EOF' || { cat "$TMP/apply"; fail "kubectl apply"; }
apiVersion: v1
kind: Namespace
metadata:
  name: keep
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: keep
data:
  mode: fast
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: keep
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      tolerations: [{operator: Exists}]
      containers: [{name: web, image: nginx}]
EOF
on tb-master "$ETCDCTL get /registry --prefix --keys-only" | grep -v '^$' > "$TMP/keys"
for k in /registry/namespaces/keep /registry/configmaps/keep/settings /registry/deployments/keep/web /registry/minions/tb-master \
         /registry/services/specs/default/kubernetes; do
  grep -qx "$k" "$TMP/keys" || fail "no key $k in etcd: $(cat "$TMP/keys")"
done
[ "$(on tb-master "$ETCDCTL get /registry/configmaps/keep/settings --print-value-only" | "$PYTHON3" -c 'import json,sys; print(json.load(sys.stdin)["data"]["mode"])')" = fast ] \
  || fail "the ConfigMap's value in etcd"
on tb-master "$ETCDCTL endpoint health" > "$TMP/health" 2>&1 || { cat "$TMP/health"; fail "etcdctl endpoint health"; }
grep -q "https://$MASTER:2379 is healthy" "$TMP/health" || fail "endpoint health: $(cat "$TMP/health")"
pass "kubectl's objects are etcd keys under /registry (etcdctl get), etcd is healthy"

# Backup, a deliberate loss, and the restore kubeadm's documentation describes.
on tb-master "$ETCDCTL snapshot save /root/backup.db" > "$TMP/save" 2>&1 || { cat "$TMP/save"; fail "etcdctl snapshot save"; }
on tb-master "$K delete namespace keep" > /dev/null || fail "kubectl delete"
on tb-master "$K get configmaps -A -o name" | grep -q settings && fail "the ConfigMap outlived its namespace"
on tb-master "$ETCDCTL get /registry/configmaps/keep/settings --keys-only" | grep -q settings && fail "the deleted ConfigMap is still in etcd"
on tb-master "ETCDCTL_API=3 etcdctl snapshot restore /root/backup.db --data-dir /var/lib/etcd-restore --name tb-master \
    --initial-cluster tb-master=https://$MASTER:2380 --initial-advertise-peer-urls https://$MASTER:2380" > "$TMP/restore" 2>&1 \
  || { cat "$TMP/restore"; fail "etcdctl snapshot restore"; }
P=$(etcd_pid)
A=$(cat "$RUN/hosts/tb-master/state/apiserver/pid")
on tb-master 'mkdir -p /etc/kubernetes/manifests.off && mv /etc/kubernetes/manifests/etcd.yaml /etc/kubernetes/manifests/kube-apiserver.yaml /etc/kubernetes/manifests.off/'
until_true '! runs "$P" && ! runs "$A"' "etcd and the API server still run 1.5 s after their manifests were moved out" 15
state
expect '[m["etcd"], m["apiserver"], m["etcd_members"], s["cluster"]]' '["stopped", "stopped", null, null]'
on tb-master 'mv /var/lib/etcd /var/lib/etcd.before-restore && mv /var/lib/etcd-restore /var/lib/etcd && mv /etc/kubernetes/manifests.off/* /etc/kubernetes/manifests/'
until_true 'runs "$(etcd_pid)" && [ "$(etcd_pid)" != "$P" ]' "etcd did not start again from its manifest"
until_true 'on tb-master "$K get configmap settings -n keep -o jsonpath={.data.mode}" 2>/dev/null | grep -qx fast' \
  "the restored ConfigMap is not what kubectl sees: $(on tb-master "$K get configmaps -A" 2>&1)"
[ "$(cat "$RUN/hosts/tb-master/state/apiserver/pid")" != "$A" ] || fail "the API server was not restarted"
on tb-master "$K get deployment web -n keep -o name" | grep -qx deployment.apps/web || fail "the restored Deployment"
on tb-master "$ETCDCTL endpoint health 2>&1" | grep -q "is healthy" || fail "etcd is not healthy after the restore"
state
expect 'm["etcd"]' '"running"'
expect '"ConfigMap/keep/settings" in s["cluster"]["objects"]' 'true'
pass "snapshot save, objects deleted, snapshot restored into a new data directory and swapped in: kubectl sees them again"

# A changed manifest (another data directory) starts etcd again with it.
P=$(etcd_pid)
on tb-master "sed -i 's|path: /var/lib/etcd\$|path: /var/lib/etcd.before-restore|' /etc/kubernetes/manifests/etcd.yaml"
until_true 'runs "$(etcd_pid)" && [ "$(etcd_pid)" != "$P" ]' "etcd did not start again when its manifest changed"
until_true 'on tb-master "$ETCDCTL endpoint health" >/dev/null 2>&1' "etcd on the other data directory is not healthy"
on tb-master "$ETCDCTL get /registry/configmaps/keep/settings --keys-only" | grep -q settings && fail "etcd does not run on the data directory its manifest names"
tr '\0' ' ' < "/proc/$(etcd_pid)/cmdline" | grep -q -- "--data-dir=/var/lib/etcd.before-restore " || fail "etcd's command line: $(tr '\0' ' ' < "/proc/$(etcd_pid)/cmdline")"
# The API server notices an etcd of another cluster under it (the restored one was a new
# cluster), exits, and the kubelet starts it again on what etcd now holds.
until_true '! on tb-master "$K get namespace keep" >/dev/null 2>&1' "kubectl still sees the namespace after etcd's data directory changed" 100
pass "a changed etcd manifest restarts etcd on the data directory its etcd-data hostPath names; kubectl sees that data"

# testbed.sh restore: etcd's data as the snapshot had it, etcd running again.
"$TESTBED" restore "$RUN" inited
until_true 'on tb-master "$ETCDCTL endpoint health" >/dev/null 2>&1' "etcd does not run after testbed.sh restore" 100
on tb-master "$ETCDCTL get /registry/namespaces/kube-system --keys-only" | grep -q kube-system || fail "the snapshot's etcd data"
on tb-master "$ETCDCTL get /registry/namespaces/keep --keys-only" | grep -q keep && fail "testbed.sh restore kept etcd data made after the snapshot"
pass "testbed.sh snapshot|restore keep etcd's data directory"

# kubeadm reset: no etcd left, its data gone.
P=$(etcd_pid)
on tb-master 'kubeadm reset -f' > "$TMP/reset" 2>&1 || { cat "$TMP/reset"; fail "kubeadm reset"; }
grep -q 'Deleted contents of the etcd data directory: /var/lib/etcd' "$TMP/reset" || fail "reset: $(cat "$TMP/reset")"
runs "$P" && fail "etcd still runs after kubeadm reset"
pgrep -f "/tb-etcd .*$MASTER:2379" > /dev/null && fail "an etcd of $MASTER still runs: $(pgrep -af "$MASTER:2379")"
state
expect '[m["etcd"], m["apiserver"], s["cluster"]]' '[null, null, null]'
[ -z "$(ls -A "$RUN/hosts/tb-master/fs/var/lib/etcd")" ] || fail "kubeadm reset left $(ls -A "$RUN/hosts/tb-master/fs/var/lib/etcd")"
pass "kubeadm reset stops etcd and empties /var/lib/etcd"
echo "ok: the testbed's etcd: kubeadm's static pod, kubectl's objects in it, a real snapshot restore"
