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

# --- check config ----------------------------------------------------------------
step "Validate the OpenPAI quick-start cluster (1 master, 2x 4-GPU K80 workers)"
expect 0 $PAICTL check config examples/clusters/quickstart
step "Validate a heterogeneous cluster (V100 racks, T4 nodes, a CPU node, three VCs)"
expect 0 $PAICTL -v check config examples/clusters/heterogeneous
step "A cluster with typical mistakes: every finding in one pass, exit code 1"
expect 1 $PAICTL check config examples/clusters/broken

# --- more steps are added here as commands land ------------------------------------

if [ "$status" -eq 0 ]; then step "demo finished: every step behaved as expected"; fi
exit $status
