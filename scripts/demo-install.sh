#!/bin/sh
# `paictl install` end to end on the testbed (scripts/testbed.sh, docs/testbed.md):
# 3 fresh hosts on 127.0.21.x (a master, two 4-GPU workers) with stateful fakes of
# apt, systemd, containerd, kubeadm and a fake API server the real kubectl talks
# to. The plan, the install (Kubernetes, flannel, the device plugin, HiveD, the
# OpenPAI services), a second run with nothing to do, config diff, then reset.
#
#   scripts/demo-install.sh          (PAICTL=path to use another binary than build/paictl)
#
# It needs root, sshd and mount namespaces; elsewhere it says so in one sentence
# and exits 0 (DEMO_STRICT=1: 77).
set -eu
cd "$(dirname "$0")/.."
PAICTL=${PAICTL:-./build/paictl}
TESTBED=scripts/testbed.sh
status=0
DEMO_NAME=demo-install
. scripts/demo-lib.sh
if ! reason=$("$TESTBED" can-run 2>&1); then
  echo "install demo skipped: ${reason#testbed: }; run this as root on a machine with openssh-server to see paictl install a 3-host testbed."
  [ "${DEMO_STRICT:-0}" = 1 ] && exit 77
  exit 0
fi
BED=$(mktemp -d "${TMPDIR:-/tmp}/paictl-demo-install.XXXXXX")
trap '"$TESTBED" down "$BED" >/dev/null 2>&1 || true; rm -rf "$BED"' EXIT INT TERM
PAICTL_TEMPLATES=${PAICTL_TEMPLATES:-$(pwd)/templates}
export PAICTL_TEMPLATES
"$TESTBED" up 3 "$BED" --base 127.0.21 --rollout-delay 0.2 >/dev/null
C="$BED/cluster"
# The testbed machine has fewer CPUs than the SKUs say and no DNS: two check errors ignored on purpose.
A="--ssh-config $BED/ssh_config --ignore-check-errors CPU,DNS,DiskFree"
step "The plan on 3 fresh hosts (nothing changes): exit 2 = changes to make"
expect 2 $PAICTL install "$C" $A --dry-run --detailed-exitcode
step "Install: Kubernetes, flannel, the device plugin, HiveD and the OpenPAI services"
expect 0 $PAICTL install "$C" $A --yes
step "Again: nothing to do (exit 0 with --detailed-exitcode)"
expect 0 $PAICTL install "$C" $A --yes --detailed-exitcode
step "The cluster files on the cluster are the local ones"
expect 0 $PAICTL config diff "$C" --ssh-config "$BED/ssh_config"
step "Reset: the hosts back to their fresh state"
expect 0 $PAICTL reset "$C" --ssh-config "$BED/ssh_config" --yes
exit $status
