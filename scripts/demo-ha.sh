#!/bin/sh
# A highly available control plane on the testbed (scripts/testbed.sh, docs/testbed.md):
# three masters and a GPU worker on 127.0.22.x, a real HAProxy on 127.0.22.250:6443 in
# front of the masters' API servers, whose objects live in a real etcd cluster of three
# members. check config, the plan, install, kubectl through the load balancer, a
# master lost (install names it, exit 3; removing a second master is refused: etcd
# would lose its quorum), the lost master removed, a fresh machine in its place
# joined with node add, then an upgrade to Kubernetes 1.31, one master at a time.
#
#   scripts/demo-ha.sh          (PAICTL=path to use another binary than build/paictl)
#
# It needs root, sshd, mount namespaces, etcd and haproxy; elsewhere it says so in
# one sentence and exits 0 (DEMO_STRICT=1: 77).
set -eu
cd "$(dirname "$0")/.."
PAICTL=${PAICTL:-./build/paictl}
TESTBED=scripts/testbed.sh
status=0
DEMO_NAME=demo-ha
. scripts/demo-lib.sh
skip() {
  echo "HA demo skipped: $1; run this as root with openssh-server, etcd-server and haproxy (scripts/install-deps.sh) to see a 3-master install."
  [ "${DEMO_STRICT:-0}" = 1 ] && exit 77
  exit 0
}
if ! reason=$("$TESTBED" can-run 2>&1); then skip "${reason#testbed: }"; fi
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || skip "no haproxy"
[ -x /usr/bin/etcd ] || skip "no etcd (etcd-server)"
BED=$(mktemp -d "${TMPDIR:-/tmp}/paictl-demo-ha.XXXXXX")
trap '"$TESTBED" down "$BED" >/dev/null 2>&1 || true; rm -rf "$BED"' EXIT INT TERM
PAICTL_TEMPLATES=${PAICTL_TEMPLATES:-$(pwd)/templates}
export PAICTL_TEMPLATES
HIVED_SERVER=${HIVED_SERVER:-$(dirname "$PAICTL")/tests/integration/hived/hived_test_server}
"$TESTBED" up 4 "$BED" --base 127.0.22 --masters 3 --rollout-delay 0.1 --hived-server "$HIVED_SERVER" >/dev/null
C=$BED/cluster
A="--ssh-config $BED/ssh_config --ignore-check-errors CPU,DNS,DiskFree,RunningKubernetes"
# run TEXT COMMAND...: a command that is not paictl's, shown and run; a failure sets status=1.
run() {
  echo "\$ $1"; shift
  "$@" || { echo "$DEMO_NAME: failed: $*" >&2; status=1; }
}
step "Three masters and a worker; config.yaml names the load balancer in front of the masters"
run "grep -n 'pai-master\|kube_control_plane_endpoint' layout.yaml config.yaml" \
  grep -n 'pai-master\|kube_control_plane_endpoint' "$C/layout.yaml" "$C/config.yaml"
expect 0 $PAICTL check config "$C"
step "The plan: kubeadm init --upload-certs on tb-master, the two others joined as control-plane nodes (exit 2: changes to make)"
expect 2 $PAICTL install "$C" $A --dry-run --detailed-exitcode
step "Install: three etcd members, all healthy; the worker joined through the endpoint"
expect 0 $PAICTL install "$C" $A --wait 90 --yes
KUBECTL=$(command -v kubectl || true)
KC=$("$TESTBED" kubeconfig "$BED")
if [ -n "$KUBECTL" ]; then
  step "kubectl through HAProxy"
  run "kubectl get nodes   (server: https://127.0.22.250:6443)" "$KUBECTL" --kubeconfig "$KC" get nodes
fi
step "A master lost: install names it, exits 3 and changes nothing"
"$TESTBED" stop-host "$BED" tb-master3 >/dev/null
[ -z "$KUBECTL" ] || run "kubectl get nodes   (tb-master3 lost, the endpoint still answers)" "$KUBECTL" --kubeconfig "$KC" get nodes
expect 3 $PAICTL install "$C" $A --wait 30 --connect-timeout 3 --yes
step "Removing a second master is refused: etcd would lose its quorum (exit 2)"
expect 2 $PAICTL node remove "$C" tb-master2 --ssh-config "$BED/ssh_config" --yes
step "An upgrade is refused too while an etcd member does not answer (exit 2)"
expect 2 $PAICTL upgrade "$C" --ssh-config "$BED/ssh_config" --to 1.31 --dry-run
step "The lost master leaves: its etcd member removed through a master that stays, its Node deleted"
cp "$C/layout.yaml" "$BED/layout.with-master3"
expect 0 $PAICTL node remove "$C" tb-master3 --ssh-config "$BED/ssh_config" --yes
step "A fresh machine in its place, back in layout.yaml: node add joins it to the control plane"
"$TESTBED" start-host "$BED" tb-master3 >/dev/null
cp "$BED/layout.with-master3" "$C/layout.yaml"
expect 0 $PAICTL node add "$C" tb-master3 $A --wait 90 --yes
step "Upgrade to Kubernetes 1.31: kubeadm upgrade apply on tb-master, kubeadm upgrade node on the other masters one at a time (etcd healthy between them), then the worker"
expect 0 $PAICTL upgrade "$C" --ssh-config "$BED/ssh_config" --to 1.31 --yes
[ -z "$KUBECTL" ] || run "kubectl get nodes" "$KUBECTL" --kubeconfig "$KC" get nodes
exit $status
