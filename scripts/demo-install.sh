#!/bin/sh
# The journey of a new operator on the testbed (scripts/testbed.sh, docs/testbed.md),
# from bare hosts to a job that ran, with no file written by hand: 3 fresh hosts on
# 127.0.21.x (a master, two 4-GPU workers) with stateful fakes of apt, systemd,
# containerd, kubeadm and a fake API server the real kubectl talks to, and the test
# doubles of the gateway and HiveD that install leaves there. facts collect, init,
# check config, check hosts, the plan, install --register, a second run with nothing
# to do, hived status, job submit, job logs -f, an upgrade to Kubernetes 1.31 that
# waits for a running gang, a worker's GPU gone bad (hived health finds it,
# quarantine shows its effect on the VC's cells, then cordons it; release undoes
# it), config diff, then reset.
#
#   scripts/demo-install.sh          (PAICTL=path to use another binary than build/paictl;
#                                     DEMO_BASE=127.0.N to put the hosts on another address base)
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
# The demo's own registry of clusters.
export XDG_CONFIG_HOME="$BED/config"
HIVED_SERVER=${HIVED_SERVER:-$(dirname "$PAICTL")/tests/integration/hived/hived_test_server}
BASE=${DEMO_BASE:-127.0.21}
"$TESTBED" up 3 "$BED" --base "$BASE" --rollout-delay 0.2 --hived-server "$HIVED_SERVER" >/dev/null
MASTER=$BASE.2
C="$BED/site"  # (the testbed keeps a cluster directory of its own in $BED/cluster)
step "Bare hosts: their facts over SSH, named by their own host names, the master marked"
expect 0 $PAICTL facts collect --hosts-file "$BED/hosts.list" --ssh-config "$BED/ssh_config" \
  --master $MASTER --out "$BED/facts"
step "init writes the cluster directory (the testbed's hosts report this machine's few CPUs, no DNS and little disk: this site ignores those checks, once, in config.yaml)"
expect 0 $PAICTL init "$C" --facts "$BED/facts" --ssh-config "$BED/ssh_config" \
  --reserve-cpu 0 --reserve-memory 1Gi --ignore-check-errors CPU,DNS,DiskFree
step "What init wrote passes check config"
expect 0 $PAICTL check config "$C"
step "check hosts judges for install: what install sets up itself is INST, not an error (no SSH flag: config.yaml has the settings)"
expect 0 $PAICTL check hosts "$C"
step "The plan on 3 fresh hosts (nothing changes): exit 2 = changes to make"
expect 2 $PAICTL install "$C" --dry-run --detailed-exitcode
step "Install: Kubernetes, flannel, the device plugin, HiveD and the OpenPAI services; registered as 'bed' with a token"
expect 0 $PAICTL install "$C" --yes --register bed
step "Again: nothing to do (exit 0 with --detailed-exitcode)"
expect 0 $PAICTL install "$C" --yes --detailed-exitcode
step "The installed HiveD: its cells, every node healthy"
expect 0 $PAICTL hived status --cluster bed
step "A job submitted to the installed cluster, its log followed to the end"
cat > "$BED/job.yaml" <<'EOF'
protocolVersion: 2
name: hello
type: job
prerequisites:
  - name: image
    type: dockerimage
    uri: openpai/standard:python_3.6-pytorch_1.2.0-gpu
taskRoles:
  train:
    instances: 1
    dockerImage: image
    resourcePerInstance: {cpu: 1, memoryMB: 2048, gpu: 2}
    commands:
      - sleep 2
defaults:
  virtualCluster: default
EOF
expect 0 $PAICTL job submit "$BED/job.yaml" --cluster bed
expect 0 $PAICTL job logs -f admin~hello --cluster bed
step "A gang of 2 x 2 GPUs runs on a worker; the upgrade to Kubernetes 1.31 plans around it: the idle worker first, the busy one last, waited for (HiveD's live state, the job's expected end)"
sed -e 's/^name: hello/name: gang/' -e 's/instances: 1/instances: 2/' -e 's/sleep 2/sleep 15/' "$BED/job.yaml" > "$BED/gang.yaml"
expect 0 $PAICTL job submit "$BED/gang.yaml" --cluster bed
expect 0 $PAICTL upgrade "$C" --to 1.31 --hived http://$MASTER:30096 --dry-run
step "The upgrade: the control plane (kubeadm upgrade apply), then each worker cordoned, upgraded, verified and uncordoned; the busy worker waits for the gang to end"
expect 0 $PAICTL upgrade "$C" --to 1.31 --hived http://$MASTER:30096 --yes
# What these print is checked too (demo-lib.sh: shows).
DEMO_CAPTURE=$BED/last
step "A GPU goes bad on tb-worker1 (its nvidia-smi lists 3 of 4 GPUs, two uncorrectable ECC errors, an Xid 79 in its kernel log): hived health finds it (exit 1 = candidates)"
"$TESTBED" gpu-fault "$BED" tb-worker1 --gpus 3 --ecc 2 --xid 79
expect 1 $PAICTL hived health "$C" --collect
shows "[N010] gpusDropped" "nvidia-smi lists 3 of the SKU's 4 GPUs" "[N011] eccUncorrectable" "[N013] xid" "1 quarantine candidate"
step "Its quarantine, the effect first (dry run): VC default's cell on tb-worker1 doomed, no running group there"
expect 0 $PAICTL hived quarantine "$C" tb-worker1 --reason "ECC errors" --hived http://$MASTER:30096 --dry-run
shows "default  V100-NODE  V100-NODE  0 -> 1  0 -> 4" "No running group on tb-worker1." "dry run: no node was changed"
step "The quarantine: tb-worker1 annotated (who, when, why) and cordoned; HiveD counts it bad, default's cell doomed"
expect 0 $PAICTL hived quarantine "$C" tb-worker1 --reason "ECC errors" --hived http://$MASTER:30096
shows "quarantined tb-worker1"
expect 0 $PAICTL hived status --cluster bed
shows "tb-worker1  V100  Bad" "2 nodes (1 bad)"
step "The GPU replaced: release undoes exactly what the quarantine did; every node healthy again"
"$TESTBED" gpu-fault "$BED" tb-worker1 --clear
expect 0 $PAICTL hived release "$C" tb-worker1 --hived http://$MASTER:30096
shows "default  V100-NODE  V100-NODE  1 -> 0  4 -> 0" "released tb-worker1"
expect 0 $PAICTL hived status --cluster bed
shows "2 nodes (0 bad)"
unset DEMO_CAPTURE
step "The cluster files on the cluster are the local ones"
expect 0 $PAICTL config diff "$C"
step "Reset: the hosts back to their fresh state"
expect 0 $PAICTL reset "$C" --yes
exit $status
