# paictl hived diff and snapshot against the reconf scenario: groups a-train and
# a-big (VC a, 100) on two V100 nodes, b-1 (b, 50) on a third, b-pin (b, 50) in
# the pinned cell n4, a-k (a, 10) on a K80 node, opp (b, -1) on the other.
# Each new config's outcome follows HiveD's restart rules (docs/hived.md):
#  * VC a shrunk to one V100 node: a-train keeps a's one cell, a-big finds no
#    free virtual cell at its preassigned level and is lazily preempted;
#  * a's K80 cell moved to b: a-k's VC has no K80 cell, lazily preempted;
#  * pinned cell b-pin removed: b-pin is lazily preempted;
#  * b-1's node removed: b-1 runs on cells HiveD no longer has.
. "$PAI_SOURCE_DIR/tests/integration/hived/lib.sh"
start_server reconf
OLD="$SCEN/reconf-hived.yaml"

# effects: the groups' effects as "name=effect,..." in listing order.
effects() { "$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
print(','.join(g['name'] + '=' + g['effect'] for g in d['groups']))
" "$OUT"; }
expect_effects() {
  got=$(effects)
  if [ "$got" = "$1" ]; then pass "$2"; else fail "$2: $got, expected $1"; fi
}
ALL_KEEP="a-train=keeps,a-big=keeps,b-1=keeps,b-pin=keeps,a-k=keeps,opp=keeps"

run hived diff "$OLD" "$OLD" --live --hived "$URL" -o json --detailed-exitcode
expect_rc 0 "the same config: no changes (detailed exit code 0)"
expect_effects "$ALL_KEEP" "a restart on the same config keeps every group"
schema_check hivedDiff "hived diff -o json"
json_check "d['apiVersion'] == 'paictl.hivedDiff/v1' and d['changes'] == False and d['groupSource'] == 'live'" "no changes, groups from the live HiveD"

run hived diff "$OLD" "$SCEN/reconf-shrunk.yaml" --live --hived "$URL" -o json --detailed-exitcode
expect_rc 2 "VC shrunk: changes (detailed exit code 2)"
expect_effects "a-train=keeps,a-big=lazilyPreempted,b-1=keeps,b-pin=keeps,a-k=keeps,opp=keeps" "VC shrunk: only a-big is lazily preempted"
json_check "[(v['vc'], v['before'], v['after']) for v in d['virtualClusters'] if v['cellType'] == 'V100-NODE'] == [('a', 2, 1), ('b', 1, 2)]" "VC shrunk: a 2 -> 1 V100-NODE, b 1 -> 2"
json_check "d['summary'] == {'groups': 6, 'keep': 5, 'lazilyPreempted': 1, 'onRemovedCells': 0, 'guaranteedPreempted': 1}" "VC shrunk: the summary counts"
json_check "[g['reason'] for g in d['groups'] if g['name'] == 'a-big'] == ['insufficient free cell in the VC at the preassigned level (2)']" "VC shrunk: HiveD's reason"

run hived diff "$OLD" "$SCEN/reconf-shrunk.yaml" --live --hived "$URL"
expect_rc 0 "VC shrunk: table (exit 0 without --detailed-exitcode)"
expect_out "a-big" "the table names the preempted group"
expect_out "lazily preempted" "the table says lazily preempted"
expect_no_out "a-train" "the table leaves out the groups that keep running"
expect_out "5 of 6 groups keep running" "the table's summary"

run hived diff "$OLD" "$SCEN/reconf-moved.yaml" --live --hived "$URL" -o json
expect_rc 0 "cell moved"
expect_effects "a-train=keeps,a-big=keeps,b-1=keeps,b-pin=keeps,a-k=lazilyPreempted,opp=keeps" "cell moved: only a-k is lazily preempted"
json_check "[(v['vc'], v['before'], v['after']) for v in d['virtualClusters'] if v['cellType'] == 'K80-NODE'] == [('a', 1, 0), ('b', 1, 2)]" "cell moved: a's K80 cell is b's"

run hived diff "$OLD" "$SCEN/reconf-unpinned.yaml" --live --hived "$URL" -o json
expect_rc 0 "pinned cell removed"
expect_effects "a-train=keeps,a-big=keeps,b-1=keeps,b-pin=lazilyPreempted,a-k=keeps,opp=keeps" "pinned cell removed: only b-pin is lazily preempted"
json_check "[(p['id'], p['change'], p['vcBefore']) for p in d['pinnedCells']] == [('b-pin', 'removed', 'b')]" "pinned cell removed: b-pin of b is gone"

# The node b-1 runs on, as HiveD reports it, removed from the config.
run hived groups --hived "$URL" -o json
NODE=$("$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
print([list(g['physicalPlacement'])[0] for g in d['items'] if g['name'] == 'b-1'][0])
" "$OUT")
grep -v "cellAddress: $NODE}" "$OLD" >"$TMP/no-node.yaml"
run hived diff "$OLD" "$TMP/no-node.yaml" --live --hived "$URL" -o json
expect_rc 0 "node removed ($NODE)"
expect_effects "a-train=keeps,a-big=keeps,b-1=onRemovedCells,b-pin=keeps,a-k=keeps,opp=keeps" "node removed: only b-1 is left on removed cells"
json_check "d['nodesRemoved'] == ['$NODE'] and [len(g['removedLeafCells']) for g in d['groups'] if g['name'] == 'b-1'] == [8]" "node removed: its 8 leaf cells"

# Offline: the same answer from a snapshot; none without one.
run hived snapshot --hived "$URL" --out "$TMP/snap.json"
expect_rc 0 "snapshot"
cp "$TMP/snap.json" "$OUT"
schema_check hivedSnapshot "hived snapshot"
run hived snapshot --hived "$URL" -o yaml
expect_rc 0 "snapshot -o yaml"
expect_out "apiVersion: paictl.hivedSnapshot/v1" "the snapshot as YAML on stdout"
run hived diff "$OLD" "$SCEN/reconf-shrunk.yaml" --snapshot "$TMP/snap.json" -o json
expect_rc 0 "diff from a snapshot"
expect_effects "a-train=keeps,a-big=lazilyPreempted,b-1=keeps,b-pin=keeps,a-k=keeps,opp=keeps" "the snapshot gives the live answer"
run hived diff "$OLD" "$SCEN/reconf-shrunk.yaml" -o json --detailed-exitcode
expect_rc 2 "diff without groups still sees the cell changes"
json_check "d['groupSource'] == 'none' and d['groups'] == []" "no groups without --live or --snapshot"
run hived diff "$OLD" "$SCEN/reconf-shrunk.yaml"
expect_out "No running groups were considered" "the table says no group was considered"

# Bad input.
run hived diff "$OLD" "$SCEN/reconf-broken.yaml" --live --hived "$URL"
expect_rc 1 "a new config with errors stops the diff"
expect_err "reconf-broken.yaml:" "its errors have file:line:col"
run hived diff "$OLD" "$SCEN/reconf-broken.yaml" --detailed-exitcode
expect_rc 1 "errors are 1 under --detailed-exitcode too"
printf '{"clusterStatus": {"physicalCluster": 3}}' >"$TMP/bad-snap.json"
run hived diff "$OLD" "$OLD" --snapshot "$TMP/bad-snap.json"
expect_rc 2 "a bad snapshot is bad input"
expect_err "physicalCluster" "the snapshot error names the field"
run hived diff "$OLD" "$OLD" --live --hived "http://127.0.0.1:1"
expect_rc 3 "an unreachable HiveD is a remote failure"
finish
