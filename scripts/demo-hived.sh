#!/bin/sh
# `paictl hived` against a running HiveD: the HiveD inspect API test server
# (tests/integration/hived/hived_test_server.cc) serves a lab whose state
# lib/scheduler made by replaying a request stream
# (tests/integration/hived/scenarios/lab.json): two racks of four 8-GPU V100
# nodes and two 4-GPU K80 nodes, VCs prod and research; node v7 is bad and
# doomed to research, infer-c was lazily preempted by urgent, big-wait waits
# (its reason code and wouldFit), as would two pods of 8 in research (v7's
# doomed cell first).
# Then a config change that moves one of prod's node cells to research: the
# diff shows urgent would be lazily preempted, and apply refuses it.
#
#   scripts/demo-hived.sh    (PAICTL=path to another paictl; BUILD=dir holding
#                             tests/integration/hived/hived_test_server, default build)
#
# Needs no root; everything it starts listens on 127.0.0.1 and is stopped at the end.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PAICTL=${PAICTL:-$BUILD/paictl}
SERVER=$BUILD/tests/integration/hived/hived_test_server
[ -x "$PAICTL" ] || { echo "demo-hived: no $PAICTL (build it, or set PAICTL=path)" >&2; exit 2; }
[ -x "$SERVER" ] || { echo "demo-hived: no $SERVER (ninja -C $BUILD hived_test_server, or set BUILD=dir)" >&2; exit 2; }
SCEN=tests/integration/hived/scenarios
status=0
DEMO_NAME=demo-hived
. scripts/demo-lib.sh
RUN=$(mktemp -d "${TMPDIR:-/tmp}/paictl-demo-hived.XXXXXX")
# Each command's output is kept for `shows`: the demo checks what the commands
# print (the lab's state as tests/integration/hived/scenarios/lab.json makes it),
# not only their exit codes.
DEMO_CAPTURE=$RUN/last
PID=""
cleanup() {
  [ -z "$PID" ] || kill "$PID" 2>/dev/null || true
  [ -z "$PID" ] || wait "$PID" 2>/dev/null || true
  rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$SERVER" "$SCEN/lab.json" "$RUN/port" >"$RUN/server.log" 2>&1 &
PID=$!
i=0
while [ ! -s "$RUN/port" ]; do
  i=$((i + 1))
  [ "$i" -lt 200 ] || { cat "$RUN/server.log" >&2; echo "demo-hived: the HiveD test server did not start" >&2; exit 1; }
  sleep 0.05
done
H="--hived http://127.0.0.1:$(cat "$RUN/port")"
OLD=$SCEN/lab-hived.yaml
NEW=$SCEN/lab-moved.yaml

step "Cells per chain and level (v7 bad and doomed), each VC's guarantee per SKU, the nodes in use"
expect 0 $PAICTL hived status $H -o wide
shows "V100-RACK      2  V100-NODE      8     7     1         0    1       1" \
  "v7    V100  Bad         8     0    0  -" \
  "10 nodes (1 bad), 8 affinity groups (0 preempting, 1 lazily preempted)"
step "The cell trees: physical cells with their leaves' groups, each VC's virtual cells and bindings"
expect 0 $PAICTL hived cells --tree $H
shows "1/v7  V100-NODE  Free  vc research  -> research/0 BAD DOOMED" "prod/3  V100-NODE  Used priority 200  -> 0/v3"
step "The same as an SVG, coloured by VC, bad cells outlined, doomed ones crossed"
expect 0 $PAICTL hived cells $H --diagram "$RUN/cells.svg"
shows "wrote $RUN/cells.svg" "research  research/0    V100-NODE  V100  1/v7      Free          -          0/8  bad, doomed"
[ "$(grep -c '<rect' "$RUN/cells.svg")" -gt 50 ] || { echo "demo-hived: the SVG has too few boxes" >&2; status=1; }
echo "($(grep -c '<rect' "$RUN/cells.svg") boxes in $RUN/cells.svg)"
step "The affinity groups, by VC and priority"
expect 0 $PAICTL hived groups $H
shows "infer-c  prod            10  Allocated (lazily preempted)     4  v4[0-3]" "opp-1    research        -1  Allocated                        4  v4[4-7]"
step "Why does big-wait wait? Its request run through the HiveD algorithm on the live state: the reason code, its hint, and wouldFit (the event that would let it run)"
expect 0 $PAICTL hived why big-wait $H --config "$OLD" --vc prod --priority 100 --gpus 8 --leaf-type V100
shows "big-wait waits: insufficient capacity when scheduling in VC prod (chain V100-RACK)" "are bad: v7" \
  "  reason: VCQuotaExhausted (tier 5, the VC's guaranteed cells are bound to running groups): " \
  "  wouldFit: needs 1 more V100-NODE cell(s) in chain V100-RACK; unknown: no running group has an expected end"
step "Two pods of 8 in research wait first for v7, bad, where one of research's cells is doomed: wouldFit names the repair"
expect 0 $PAICTL hived why two $H --config "$OLD" --vc research --priority 50 --pods 2 --gpus 8 --leaf-type V100
shows "  reason: BadCellsDoomed (tier 3, the VC's cells are doomed on bad nodes): " "  also:   VCQuotaExhausted (tier 5, " \
  "  wouldFit: needs 1 more V100-NODE cell(s) in chain V100-RACK; fits when v7 is healthy again"
step "And a running group: where, at which priority, lazily preempted by whom"
expect 0 $PAICTL hived why infer-c $H
shows "infer-c is Allocated in VC prod at priority 10, on 4 GPUs: v4[0-3]" "lazily preempted by urgent"
step "A config change: one of prod's node cells moves to research (exit 2 = changes)"
expect 2 $PAICTL hived diff "$OLD" "$NEW" --live $H --detailed-exitcode
shows "prod      V100-NODE  V100       4      3      -1    32 -> 24" "urgent  prod       200     8  lazily preempted"
step "apply refuses it: a running guaranteed group would be lazily preempted (exit 1)"
expect 1 $PAICTL hived apply "$NEW" --current "$OLD" $H --yes
shows "refusing: 1 running guaranteed group(s) would be lazily preempted: urgent"
step "Drift: the live cluster against the config, and against the hosts' facts (v3 lost a GPU)"
mkdir -p "$RUN/facts"
for n in 1 2 3 4 5 6 7 8; do
  gpus=8; [ "$n" = 3 ] && gpus=7
  {
    printf '{"schema": "paictl.facts/v1", "name": "v%s", "hostname": "v%s", "gpus": [' "$n" "$n"
    g=0
    while [ "$g" -lt "$gpus" ]; do
      [ "$g" = 0 ] || printf ', '
      printf '{"index": %s, "name": "Tesla V100-SXM2-32GB"}' "$g"
      g=$((g + 1))
    done
    printf ']}\n'
  } >"$RUN/facts/v$n.json"
done
expect 1 $PAICTL hived drift "$OLD" $H --facts "$RUN/facts" -o wide
shows "v7    bad" "v3    gpusDropped  7 GPUs found, its cells have 8 leaf cells" "facts of 8 hosts: 2 finding(s)"
exit $status
