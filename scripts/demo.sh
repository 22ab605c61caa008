#!/bin/sh
# paictl's main job on the bundled examples, from a fresh Debian machine:
# installs the packages, builds paictl, then runs it on examples/.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
PAICTL=./build/paictl
status=0

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
# expect CODE COMMAND...: runs the command and checks its exit code.
expect() {
  want=$1; shift
  echo "\$ paictl ${*#"$PAICTL" }"
  set +e; "$@"; got=$?; set -e
  if [ "$got" -ne "$want" ]; then
    echo "demo: expected exit $want, got $got" >&2
    status=1
  fi
}

# Everything the demo writes goes to one temporary directory (OUT=DIR keeps it).
if [ -n "${OUT:-}" ]; then
  RUN=$OUT; mkdir -p "$RUN"
  cleanup() { python3 tests/integration/rest/rest_fixture.py stop "$RUN/servers" >/dev/null 2>&1 || true; }
else
  RUN=$(mktemp -d "${TMPDIR:-/tmp}/paictl-demo.XXXXXX")
  cleanup() {
    python3 tests/integration/rest/rest_fixture.py stop "$RUN/servers" >/dev/null 2>&1 || true
    rm -rf "$RUN"
  }
fi
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- plan -----------------------------------------------------------------------------
step "Plan a cluster from hardware facts: SKUs, layout.yaml, HiveD cells, two VCs, a diagram"
expect 0 $PAICTL plan --facts examples/facts --vc research=60% --vc prod=40% \
  --out "$RUN/plan" --diagram "$RUN/plan/cluster.svg"
step "What the planner wrote passes check config with no errors"
expect 0 $PAICTL check config "$RUN/plan"
step "And runs in the simulator: a trace shaped for its VCs, HiveD against quota sharing"
expect 0 $PAICTL simulate generate --config "$RUN/plan" --jobs 2000 --seed 7 --opportunistic 0.2 \
  --format csv --out "$RUN/plan-trace.csv"
expect 0 $PAICTL simulate --config "$RUN/plan" --trace "$RUN/plan-trace.csv" --policy hived,quota

# --- check config ----------------------------------------------------------------
step "Validate the OpenPAI quick-start cluster (1 master, 2x 4-GPU K80 workers)"
expect 0 $PAICTL check config examples/clusters/quickstart
step "Validate a heterogeneous cluster (V100 racks, T4 nodes, a CPU node, three VCs)"
expect 0 $PAICTL -v check config examples/clusters/heterogeneous
step "A cluster with typical mistakes: every finding in one pass, exit code 1"
expect 1 $PAICTL check config examples/clusters/broken

# --- simulate ---------------------------------------------------------------------------
step "The sharing anomaly: quota sharing makes an in-quota 8-GPU job wait; HiveD starts it at once"
expect 0 $PAICTL simulate --config examples/clusters/heterogeneous --trace examples/traces/sharing-anomaly.csv \
  --policy hived,quota --report "$RUN/report"
echo "report: $RUN/report/report.html (kept with OUT=DIR scripts/demo.sh)"

# --- jobs, offline ------------------------------------------------------------------
step "Check job files (OpenPAI job protocol v2) the way the rest-server will"
expect 0 $PAICTL check job examples/jobs/pytorch-mnist.yaml examples/jobs/distributed-tensorflow.yaml \
  examples/jobs/private-registry.yaml
step "A job file with typical mistakes: every finding with its line, exit code 1"
expect 1 $PAICTL job validate examples/jobs/broken.yaml
step "Render a job: the exact commands that will run, with parameters exported"
expect 0 $PAICTL job render examples/jobs/pytorch-mnist.yaml --param epochs=20 --export-params
step "Secrets stay unrendered and masked"
expect 0 $PAICTL job render examples/jobs/private-registry.yaml

# --- clusters and jobs against two local OpenPAI REST test servers -------------------
# The two "clusters" are the project's REST v2 test servers on loopback
# (tests/integration/rest/), which follow OpenPAI's documented contract; they are
# test doubles, not OpenPAI clusters.
step "Start two local OpenPAI REST v2 test servers (lab: on-prem, cloud: on Azure)"
python3 tests/integration/rest/rest_fixture.py start "$RUN/servers" \
  lab=tests/integration/rest/scenarios/lab.json cloud=tests/integration/rest/scenarios/cloud.json
. "$RUN/servers/env.sh"
export XDG_CONFIG_HOME="$RUN/config"   # the demo's own cluster registry
step "Register both clusters (the password is read from stdin and never stored)"
echo "$ echo ... | paictl cluster add lab --uri $LAB_URI --user alice --password-stdin"
set +e; echo alice-pass-1 | $PAICTL cluster add lab --uri "$LAB_URI" --user alice --password-stdin; rc=$?; set -e
[ "$rc" -eq 0 ] || { echo "demo: expected exit 0, got $rc" >&2; status=1; }
echo "$ echo ... | paictl cluster add cloud --uri $CLOUD_URI --user alice --password-stdin"
set +e; echo cloud-pass-1 | $PAICTL cluster add cloud --uri "$CLOUD_URI" --user alice --password-stdin; rc=$?; set -e
[ "$rc" -eq 0 ] || { echo "demo: expected exit 0, got $rc" >&2; status=1; }
expect 0 $PAICTL cluster list
step "Capacity of every cluster, per virtual cluster"
expect 0 $PAICTL cluster status --all
step "Submit a job to one cluster"
expect 0 $PAICTL job submit examples/jobs/pytorch-mnist.yaml --cluster lab
step "Let paictl choose the cluster: the decision, then the submission"
expect 0 $PAICTL job submit examples/jobs/distributed-tensorflow.yaml --cluster auto --dry-run
expect 0 $PAICTL job submit examples/jobs/distributed-tensorflow.yaml --cluster auto
step "Follow the jobs"
expect 0 $PAICTL job list --all-clusters
expect 0 $PAICTL job status pytorch_mnist --cluster lab
expect 0 $PAICTL job wait pytorch_mnist --cluster lab --interval 1
expect 0 $PAICTL job logs pytorch_mnist --cluster lab --tail
step "Follow a log to the end, see the job's events, tag it and find it by its tag"
expect 0 $PAICTL job logs pytorch_mnist --cluster lab -f --interval 0.5
expect 0 $PAICTL job events pytorch_mnist --cluster lab
expect 0 $PAICTL job tag add pytorch_mnist baseline --cluster lab
expect 0 $PAICTL job list --all-clusters --tag baseline
step "Stop a job and wait until it has stopped"
expect 0 $PAICTL job stop tf_distributed_cifar10 --cluster cloud --wait --wait-interval 1
python3 tests/integration/rest/rest_fixture.py stop "$RUN/servers"
unset XDG_CONFIG_HOME

# --- check hosts ----------------------------------------------------------------------
# Real sshd processes on 127.0.20.x, each in its own mount namespace; needs root,
# sshd and unshare, and says so and skips where the machine lacks them.
step "check hosts over SSH against local sshd test hosts"
set +e; PAICTL=$PAICTL sh scripts/demo-hosts.sh; rc=$?; set -e
[ "$rc" -eq 0 ] || { echo "demo: scripts/demo-hosts.sh exited $rc" >&2; status=1; }

# --- install ---------------------------------------------------------------------------
# paictl install on a 3-host testbed (scripts/testbed.sh); needs root like the above.
step "install a cluster on a 3-host testbed: plan, install, nothing to do, reset"
set +e; PAICTL=$PAICTL sh scripts/demo-install.sh; rc=$?; set -e
[ "$rc" -eq 0 ] || { echo "demo: scripts/demo-install.sh exited $rc" >&2; status=1; }

if [ "$status" -eq 0 ]; then step "demo finished: every step behaved as expected"; fi
exit $status
