#!/bin/sh
# The machine's real kubectl against the fake API server over TLS (client
# certificate from the master's admin.conf): apply, re-apply "unchanged",
# server-side apply with field managers, rollout status, wait, nodes with GPUs.
. "$(dirname "$0")/lib.sh"
[ -n "$KUBECTL" ] || skip_test "testbed: no kubectl on this machine (scripts/install-deps.sh installs kubernetes-client)"
M=$TB_DIR/manifests
export KUBECONFIG
KUBECONFIG=$(kubeconfig)
k() { "$KUBECTL" --request-timeout 20s "$@"; }

k get nodes -o json > "$TMP/nodes.json"
"$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); r=sorted(n["metadata"]["name"] for n in d["items"] if any(c["type"]=="Ready" and c["status"]=="True" for c in n["status"]["conditions"])); sys.exit(0 if r==["tb-master","tb-worker1","tb-worker2"] else "ready nodes: %s" % r)' "$TMP/nodes.json"

# Client-side apply, then the same again: every object unchanged.
k apply -f "$M/app.yaml" > "$TMP/a1" 2>&1 || { cat "$TMP/a1"; fail "apply"; }
[ "$(grep -c ' created$' "$TMP/a1")" -eq 9 ] || { cat "$TMP/a1"; fail "apply did not create 9 objects"; }
k apply -f "$M/app.yaml" > "$TMP/a2" 2>&1 || { cat "$TMP/a2"; fail "re-apply"; }
[ "$(grep -c ' unchanged$' "$TMP/a2")" -eq 9 ] || { cat "$TMP/a2"; fail "re-apply was not unchanged"; }
# A change is applied as a patch, and only that object changes.
sed 's/mode: "fast"/mode: "safe"/' "$M/app.yaml" > "$TMP/app2.yaml"
k apply -f "$TMP/app2.yaml" > "$TMP/a3" 2>&1 || { cat "$TMP/a3"; fail "apply of a change"; }
grep -q 'configmap/settings configured' "$TMP/a3" || { cat "$TMP/a3"; fail "the change was not configured"; }
[ "$(grep -c ' unchanged$' "$TMP/a3")" -eq 8 ] || { cat "$TMP/a3"; fail "apply of one change touched others"; }
[ "$(k get configmap settings -n demo -o jsonpath='{.data.mode}')" = safe ] || fail "patched value"
[ "$(k get secret creds -n demo -o jsonpath='{.data.password}' | base64 -d)" = not-a-real-password ] || fail "secret data"
# stringData is stored as data, as the real API server does.
printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: str\n  namespace: demo\nstringData:\n  token: abc\n' | k create -f - > /dev/null
[ "$(k get secret str -n demo -o jsonpath='{.data.token}' | base64 -d)" = abc ] || fail "stringData"

k rollout status deployment/web -n demo --timeout 20s > "$TMP/r1" 2>&1 || { cat "$TMP/r1"; fail "rollout status"; }
grep -q 'successfully rolled out' "$TMP/r1" || fail "rollout: $(cat "$TMP/r1")"
k wait --for=condition=Available deployment/web -n demo --timeout 20s > /dev/null || fail "wait Available"
k wait --for=condition=Established crd/frameworks.frameworkcontroller.microsoft.com --timeout 10s > /dev/null || fail "wait Established"
k wait --for=condition=Ready pod -l app=web -n demo --timeout 20s > /dev/null || fail "wait pods Ready"
[ "$(k get pods -n demo -l app=web -o name | wc -l)" -eq 2 ] || fail "two pods"
# The master is tainted: no pod of the Deployment runs there.
k get pods -n demo -o jsonpath='{.items[*].spec.nodeName}' | grep -q tb-master && fail "a pod on the tainted master"
# A custom resource of the CRD.
printf 'apiVersion: frameworkcontroller.microsoft.com/v1\nkind: Framework\nmetadata:\n  name: fw1\n  namespace: demo\nspec:\n  executionType: Start\n' > "$TMP/fw.yaml"
k apply -f "$TMP/fw.yaml" | grep -q 'framework.frameworkcontroller.microsoft.com/fw1 created' || fail "custom resource"

# Server-side apply: applied, and applying the same again changes nothing (same resourceVersion).
k apply --server-side -f "$M/device-plugin.yaml" > "$TMP/s1" 2>&1 || { cat "$TMP/s1"; fail "server-side apply"; }
grep -q 'daemonset.apps/nvidia-device-plugin-daemonset serverside-applied' "$TMP/s1" || { cat "$TMP/s1"; fail "ssa output"; }
rv1=$(k get configmap hived-config -n kube-system -o jsonpath='{.metadata.resourceVersion}')
k apply --server-side -f "$M/device-plugin.yaml" > /dev/null 2>&1 || fail "server-side re-apply"
rv2=$(k get configmap hived-config -n kube-system -o jsonpath='{.metadata.resourceVersion}')
[ "$rv1" = "$rv2" ] || fail "a server-side re-apply changed the object ($rv1 -> $rv2)"
k get configmap hived-config -n kube-system -o jsonpath='{.metadata.managedFields[*].manager}' | grep -q kubectl || fail "field manager"
# Another manager changing a field the first one owns conflicts, unless forced.
sed 's/physicalCluster: {}/physicalCluster: {x: 1}/' "$M/device-plugin.yaml" > "$TMP/dp2.yaml"
k apply --server-side --field-manager other -f "$TMP/dp2.yaml" > "$TMP/s3" 2>&1 && fail "a conflicting server-side apply succeeded"
grep -qi 'conflict' "$TMP/s3" || { cat "$TMP/s3"; fail "no conflict reported"; }
k apply --server-side --field-manager other --force-conflicts -f "$TMP/dp2.yaml" > /dev/null 2>&1 || fail "forced apply"
k get configmap hived-config -n kube-system -o jsonpath='{.data.config\.yaml}' | grep -q 'x: 1' || fail "forced value"

# The device plugin runs on every node; the GPU workers then have their 4 GPUs allocatable.
k rollout status daemonset/nvidia-device-plugin-daemonset -n kube-system --timeout 20s > /dev/null || fail "ds rollout"
n=0
until [ "$(k get node tb-worker1 -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')" = 4 ]; do
  n=$((n + 1)); [ $n -lt 50 ] || fail "tb-worker1 has no nvidia.com/gpu"; sleep 0.1
done
[ -z "$(k get node tb-master -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')" ] || fail "the master has GPUs"
state
expect 's["cluster"]["objects"]["Deployment/demo/web"]["available"]' 'true'
expect '[s["cluster"]["objects"]["Node/" + n]["allocatable_gpus"] for n in ("tb-master", "tb-worker1", "tb-worker2")]' '[0, 4, 4]'
expect 's["cluster"]["objects"]["Secret/demo/creds"]["data"]' '["password"]'

# kubectl on the master itself, over SSH, as an installer runs it.
on tb-master 'kubectl --kubeconfig /etc/kubernetes/admin.conf get namespace demo -o name' | grep -q namespace/demo || fail "kubectl on the master"
# Deleting the namespace deletes what is in it.
k delete namespace demo > /dev/null
state
expect '[k for k in s["cluster"]["objects"] if "/demo/" in k]' '[]'
echo "ok: kubectl"
