#!/bin/sh
# paictl install from an offline bundle on hosts without a network (its own
# testbed on 127.0.62.x: a master and a GPU worker whose apt cannot reach any
# repository and whose containerd cannot pull: knobs `apt-get fetch fail` and
# `containerd pull fail`). The bundle is written here in paictl's format
# (make_bundle.py: the testbed's .debs, a tiny OCI archive per image the
# install deploys, manifest.json with sizes and sha256s).
#  1. a bundle with a changed file, a missing file, an unlisted file: install
#     refuses each before reaching any host (exit 2, the file named), the
#     hosts' state unchanged;
#  2. a bundle of another OS: check hosts fails OfflineBundle (N001) on both
#     hosts, install stops at its checks, nothing changed;
#  3. --dry-run lists the copies and imports; install completes from the
#     bundle: each host has the images of its roles imported (the master 15,
#     the GPU worker 6), no repository
#     was fetched nor any image pulled; a second dry run has nothing to copy;
#  4. a workload whose image is not imported stays in ImagePullBackOff there.
set -eu
export TESTBED_STATE_NETWORK=1  # the state shows what each host fetched
: "${RUN:?}" "${PAICTL:?}" "${TESTBED:?}" "${PYTHON3:?}" "${HIVED_SERVER:?}" "${PAICTL_TEMPLATES:?}"
# shellcheck disable=SC2034 # read by lib.sh: this test starts its own testbed
TB_OWN=1
. "$(dirname "$0")/lib.sh"
need_kubectl
HERE=$(cd "$(dirname "$0")" && pwd)

"$TESTBED" up 2 "$RUN" --base 127.0.62 --rollout-delay 0.1 --hived-server "$HIVED_SERVER" > "$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; fail "testbed up"; }
C=$RUN/cluster
SSH="--ssh-config $RUN/ssh_config"
IGNORE="--ignore-check-errors CPU,DNS,DiskFree,RunningKubernetes"
for h in tb-master tb-worker1; do
  "$TESTBED" knob "$RUN" $h 'apt-get fetch fail' 'containerd pull fail' >/dev/null
done
# state_to FILE: the testbed's state into FILE; py_run FILE 'PYTHON': runs the code with s = FILE's JSON.
state_to() { "$TESTBED" state "$RUN" > "$1"; }
py_run() { "$PYTHON3" -c "import json, sys; s = json.load(open(sys.argv[1])); $2" "$1"; }
# bundle DIR PLATFORM: a bundle of the testbed's .debs and every image install deploys.
bundle() {
  "$PYTHON3" "$HERE/make_bundle.py" "$1" --debs "$RUN/bundle" --platform "$2" --driver 535 \
    --templates "$PAICTL_TEMPLATES/install" --tag v1.8.0 --kube-version 1.30.10
}
use_bundle() {
  grep -v '^kube_offline_bundle:' "$C/config.yaml" > "$TMP/config.yaml"
  echo "kube_offline_bundle: $1" >> "$TMP/config.yaml"
  cp "$TMP/config.yaml" "$C/config.yaml"
}
# install_refused NAME WANT-RC: runs install, which must exit WANT-RC.
install_refused() {
  set +e
  "$PAICTL" install "$C" $SSH $IGNORE --wait 60 --yes > "$TMP/$1.out" 2> "$TMP/$1.err"
  rc=$?
  set -e
  [ $rc -eq "$2" ] || { cat "$TMP/$1.out" "$TMP/$1.err"; fail "$1: install exited $rc, want $2"; }
}
bundle "$TMP/good" ubuntu-22.04-amd64
state_to "$TMP/fresh.json"
logs_fresh=$(cat "$RUN"/hosts/*/invocations.jsonl | wc -l)

# 1. A changed file (same size), a missing one, an unlisted one: refused before any host.
cp -r "$TMP/good" "$TMP/tampered"
"$PYTHON3" -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[-1] ^= 1; open(p, "wb").write(b)' \
  "$TMP/tampered/images/registry.k8s.io_pause_3.9.tar"
use_bundle "$TMP/tampered"
install_refused tampered 2
grep -q "images/registry.k8s.io_pause_3.9.tar has SHA-256 .*; the manifest says" "$TMP/tampered.err" ||
  { cat "$TMP/tampered.err"; fail "the changed archive is not named"; }
cp -r "$TMP/good" "$TMP/missing"
rm "$TMP/missing/debs/ubuntu-22.04-amd64/kubeadm_1.30.10-1.1_amd64.deb"
use_bundle "$TMP/missing"
install_refused missing 2
grep -q "debs/ubuntu-22.04-amd64/kubeadm_1.30.10-1.1_amd64.deb is missing" "$TMP/missing.err" ||
  { cat "$TMP/missing.err"; fail "the missing .deb is not named"; }
cp -r "$TMP/good" "$TMP/unlisted"
echo extra > "$TMP/unlisted/images/extra.tar"
use_bundle "$TMP/unlisted"
install_refused unlisted 2
grep -q "images/extra.tar is not in the bundle's manifest" "$TMP/unlisted.err" ||
  { cat "$TMP/unlisted.err"; fail "the unlisted file is not named"; }
state_to "$TMP/after-refused.json"
cmp -s "$TMP/fresh.json" "$TMP/after-refused.json" || { diff "$TMP/fresh.json" "$TMP/after-refused.json" | head; fail "a refused bundle changed a host"; }
[ "$(cat "$RUN"/hosts/*/invocations.jsonl | wc -l)" -eq "$logs_fresh" ] || fail "a refused bundle ran a tool on a host"
pass "changed, missing and unlisted files refused before any host was reached (exit 2, named)"

# 2. A bundle of another OS: check hosts and install refuse it.
bundle "$TMP/focal" ubuntu-20.04-amd64
use_bundle "$TMP/focal"
set +e
"$PAICTL" check hosts "$C" $SSH $IGNORE -o json > "$TMP/check-focal.json" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || { cat "$TMP/check-focal.json"; fail "check hosts of a bundle of another OS exited $rc, want 1"; }
py_run "$TMP/check-focal.json" '
r = sorted(x["host"] for x in s["results"] if x["check"] == "OfflineBundle" and x["status"] == "fail"
           and x["message"] == "[N001] the offline bundle carries ubuntu-20.04-amd64, not this host'"'"'s ubuntu-22.04-amd64")
assert r == ["tb-master", "tb-worker1"], r' || { cat "$TMP/check-focal.json"; fail "check hosts: want N001 on both hosts"; }
install_refused focal 1
grep -qF "[N001] the offline bundle carries ubuntu-20.04-amd64" "$TMP/focal.err" "$TMP/focal.out" ||
  { cat "$TMP/focal.out" "$TMP/focal.err"; fail "install does not say the bundle is of another OS"; }
state_to "$TMP/after-focal.json"
py_run "$TMP/after-focal.json" 'sys.exit(0 if all(not h["packages"].get("kubeadm") and not h["images"] and not h["files"] for h in s["hosts"].values()) else "a host changed: %s" % s["hosts"])' ||
  fail "install of a bundle of another OS changed a host"
pass "a bundle of another OS: check hosts N001 on each host, install stops before any change"

# 3. The good bundle: a dry run, then the install.
use_bundle "$TMP/good"
"$PAICTL" install "$C" $SSH $IGNORE --dry-run > "$TMP/dry.out" 2>&1 || { cat "$TMP/dry.out"; fail "install --dry-run"; }
grep -q "copy 15 image archive(s)" "$TMP/dry.out" || { cat "$TMP/dry.out"; fail "the dry run does not list the master's 15 archives"; }
grep -q "import 6 image(s) into containerd (ctr -n k8s.io images import)" "$TMP/dry.out" ||
  { cat "$TMP/dry.out"; fail "the dry run does not list the worker's 6 imports"; }
grep -q "copy 10 .deb file(s) of ubuntu-22.04-amd64" "$TMP/dry.out" || { cat "$TMP/dry.out"; fail "the dry run does not list the GPU worker's .debs"; }
grep -q "copy 6 .deb file(s) of ubuntu-22.04-amd64" "$TMP/dry.out" || { cat "$TMP/dry.out"; fail "the dry run does not list the master's .debs (no NVIDIA ones)"; }
start=$(date +%s.%N)
"$PAICTL" install "$C" $SSH $IGNORE --wait 60 --yes > "$TMP/install.out" 2>&1 || { cat "$TMP/install.out"; fail "install from the bundle"; }
end=$(date +%s.%N)
state_to "$TMP/installed.json"
py_run "$TMP/installed.json" '
h = s["hosts"]
m, w = h["tb-master"]["images"], h["tb-worker1"]["images"]
assert len(m) == 15 and "nvcr.io/nvidia/k8s-device-plugin:v0.17.0" not in m, m
assert w == sorted(["registry.k8s.io/pause:3.9", "registry.k8s.io/kube-proxy:v1.30.10", "registry.k8s.io/coredns/coredns:v1.11.1",
                    "docker.io/flannel/flannel:v0.26.4", "docker.io/flannel/flannel-cni-plugin:v1.6.2-flannel1",
                    "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"]), w
assert "docker.io/openpai/rest-server:v1.8.0" in m and "registry.k8s.io/kube-apiserver:v1.30.10" in m, m
for n, x in h.items():
    assert x["network"] == {}, (n, x["network"])
    assert x["packages"]["kubeadm"] == "1.30.10-1.1" and "kubeadm" in x["held"], (n, x["packages"], x["held"])
    assert "containerd.io" in x["packages"], n
    assert ("nvidia-container-toolkit" in x["packages"]) == (n == "tb-worker1"), (n, x["packages"])
    assert x["kubeadm"]["init" if n == "tb-master" else "join"] == 1, (n, x["kubeadm"])
' || fail "the hosts after the install from the bundle"
"$TESTBED" log "$RUN" > "$TMP/log.jsonl"
! grep -q '"tool": "apt-get", "argv": \["update"' "$TMP/log.jsonl" || fail "apt-get update ran"
[ "$(grep -c '"argv": \["-n", "k8s.io", "images", "import"' "$TMP/log.jsonl")" -eq 21 ] || fail "want 21 ctr imports (15 + 6)"
"$PAICTL" install "$C" $SSH $IGNORE --dry-run > "$TMP/dry2.out" 2>&1 || { cat "$TMP/dry2.out"; fail "the second dry run"; }
! grep -Eq "image archive|into containerd|\.deb file" "$TMP/dry2.out" || { cat "$TMP/dry2.out"; fail "a second run would copy or import again"; }
pass "install from the bundle: $("$PYTHON3" -c "print(round($end - $start, 1))") s; 15 images on the master, 6 on the GPU worker, no fetch, no pull; a re-run copies nothing"

# 4. A workload whose image is not on the node, and pulls fail: ImagePullBackOff.
KUBECTL="$KUBECTL --kubeconfig $(kubeconfig)"
cat > "$TMP/ds.yaml" <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: offline-probe, namespace: default}
spec:
  selector: {matchLabels: {app: offline-probe}}
  template:
    metadata: {labels: {app: offline-probe}}
    spec:
      containers: [{name: probe, image: "docker.io/library/busybox:1.36"}]
EOF
$KUBECTL apply -f "$TMP/ds.yaml" > /dev/null
n=0
until $KUBECTL get pods -n default -o jsonpath='{.items[*].status.containerStatuses[0].state.waiting.reason}' 2>/dev/null | grep -q ImagePullBackOff; do
  n=$((n + 1)); [ $n -lt 50 ] || fail "no pod in ImagePullBackOff after 10 s"; sleep 0.2
done
pass "an image not imported on a node that cannot pull: ImagePullBackOff"
