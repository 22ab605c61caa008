#!/bin/sh
# paictl's main job on the bundled examples, from a fresh Debian machine:
# installs the packages, builds paictl, then runs it on examples/.
# BUILD=DIR uses a build tree that already has paictl and the test servers
# (tests on) instead: nothing is installed or built.
set -eu
cd "$(dirname "$0")/.."
if [ -n "${BUILD:-}" ]; then
  PAICTL=$BUILD/paictl
  [ -x "$PAICTL" ] || { echo "demo: no $PAICTL (BUILD=$BUILD)" >&2; exit 2; }
else
  scripts/install-deps.sh
  # Only what the demo runs: paictl and the HiveD test server (not the tests).
  PAI_BUILD_TARGETS="paictl hived_test_server" scripts/build.sh
  PAICTL=./build/paictl
fi
HIVED_SERVER=${BUILD:-build}/tests/integration/hived/hived_test_server
HIVED_PID=""
status=0

DEMO_NAME=demo
. scripts/demo-lib.sh

# Everything the demo writes goes to one temporary directory (OUT=DIR keeps it).
if [ -n "${OUT:-}" ]; then
  RUN=$OUT; mkdir -p "$RUN"
  cleanup() {
    python3 tests/integration/rest/rest_fixture.py stop "$RUN/servers" >/dev/null 2>&1 || true
    [ -z "$HIVED_PID" ] || kill "$HIVED_PID" 2>/dev/null || true
  }
else
  RUN=$(mktemp -d "${TMPDIR:-/tmp}/paictl-demo.XXXXXX")
  cleanup() {
    python3 tests/integration/rest/rest_fixture.py stop "$RUN/servers" >/dev/null 2>&1 || true
    [ -z "$HIVED_PID" ] || kill "$HIVED_PID" 2>/dev/null || true
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
step "Start two local OpenPAI REST v2 test servers (lab: on-prem, cloud: on Azure) and lab's HiveD"
# lab also runs bob's 8-GPU job in research, which has run for 30 minutes; bob's
# previous one ran 3 hours.
python3 - "$RUN/lab.json" <<'PY'
import json, sys
s = json.load(open("tests/integration/rest/scenarios/lab.json"))
s["jobs"] += [{"user": "bob", "name": "train_big", "vc": "research", "plan": ["RUNNING"], "gpus": 8, "ageSeconds": 1800},
              {"user": "bob", "name": "train_prev", "vc": "research", "plan": ["SUCCEEDED"], "gpus": 8,
               "ageSeconds": 90000, "runMs": 3 * 3600 * 1000}]
json.dump(s, open(sys.argv[1], "w"))
PY
python3 tests/integration/rest/rest_fixture.py start "$RUN/servers" \
  lab="$RUN/lab.json" cloud=tests/integration/rest/scenarios/cloud.json
. "$RUN/servers/env.sh"
# lab's HiveD scheduler: the project's HiveD inspect API test server, its state
# made by lib/scheduler (tests/integration/hived/scenarios/demo-lab.json: VC
# research has two 8-GPU nodes, bob~train_big runs on one).
"$HIVED_SERVER" tests/integration/hived/scenarios/demo-lab.json "$RUN/hived.port" >"$RUN/hived.log" 2>&1 &
HIVED_PID=$!
i=0
while [ ! -s "$RUN/hived.port" ]; do
  i=$((i + 1)); [ "$i" -lt 200 ] || { cat "$RUN/hived.log" >&2; echo "demo: the HiveD test server did not start" >&2; exit 1; }
  sleep 0.05
done
LAB_HIVED="http://127.0.0.1:$(cat "$RUN/hived.port")"
export XDG_CONFIG_HOME="$RUN/config"   # the demo's own cluster registry
step "Register both clusters (the password is read from stdin and never stored)"
echo "$ echo ... | paictl cluster add lab --uri $LAB_URI --user alice --password-stdin --hived $LAB_HIVED"
set +e; echo alice-pass-1 | $PAICTL cluster add lab --uri "$LAB_URI" --user alice --password-stdin --hived "$LAB_HIVED"; rc=$?; set -e
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
step "With HiveD's cells: 2 x 8 GPUs in research; only lab has research, and there the job waits for bob~train_big"
sed 's/^name: pytorch_mnist$/name: mnist_2x8/; s/^    instances: 1$/    instances: 2/; s/^      gpu: 1$/      gpu: 8/;
     s/^      cpu: 4$/      cpu: 32/; s/^      memoryMB: 8192$/      memoryMB: 131072/; s/^  virtualCluster: default$/  virtualCluster: research/' \
  examples/jobs/pytorch-mnist.yaml >"$RUN/mnist-2x8.yaml"
expect 0 $PAICTL job submit "$RUN/mnist-2x8.yaml" --cluster auto --explain
step "Why it waits on lab: the reason code, and wouldFit, the moment and the event that let it run (bob~train_big's launch + bob's median run time)"
DEMO_CAPTURE=$RUN/last
expect 0 $PAICTL hived why mnist_2x8 --cluster lab
shows "alice~mnist_2x8/default waits" "  reason: VCQuotaExhausted (tier 5, " \
  "  wouldFit: needs 1 more GPU-NODE cell(s) in chain GPU-NODE; frees about " "UTC when bob~train_big/default ends"
unset DEMO_CAPTURE
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
kill "$HIVED_PID" 2>/dev/null || true
HIVED_PID=""
unset XDG_CONFIG_HOME

# --- hived ------------------------------------------------------------------------------
# A running HiveD scheduler, played by the project's HiveD inspect API test server on
# loopback (state made by lib/scheduler); no root needed.
step "HiveD: what the scheduler holds, why a group waits, what a config change would do"
set +e; BUILD=${BUILD:-build} PAICTL=$PAICTL sh scripts/demo-hived.sh; rc=$?; set -e
[ "$rc" -eq 0 ] || { echo "demo: scripts/demo-hived.sh exited $rc" >&2; status=1; }

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

# --- Azure and hybrid --------------------------------------------------------------
# An on-prem part and an Azure pool in one cluster, against the project's ARM test
# server (HTTPS on loopback) and a 4-host testbed; needs root like the above.
step "A hybrid cluster: on-prem hosts and an Azure pool, grown and shrunk, then the Azure part deleted"
set +e; PAICTL=$PAICTL sh scripts/demo-azure.sh; rc=$?; set -e
[ "$rc" -eq 0 ] || { echo "demo: scripts/demo-azure.sh exited $rc" >&2; status=1; }

# --- a highly available control plane --------------------------------------------------
# Three masters behind a real HAProxy, a master lost and replaced, an upgrade one master
# at a time (scripts/testbed.sh --masters 3); needs root, etcd-server and haproxy.
step "A control plane of three masters: install, a master lost and replaced, an upgrade one master at a time"
set +e; PAICTL=$PAICTL sh scripts/demo-ha.sh; rc=$?; set -e
[ "$rc" -eq 0 ] || { echo "demo: scripts/demo-ha.sh exited $rc" >&2; status=1; }

if [ "$status" -eq 0 ]; then step "demo finished: every step behaved as expected"; fi
exit $status
