#!/bin/sh
# `paictl simulate sweep --cluster`: the points as one OpenPAI job with one task
# per shard on the REST test server, which really runs the tasks here (its
# opt-in run-tasks mode); results come back through the tasks' logs, match a
# local run of the same spec, and a re-run submits only what is missing.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$PAI_SOURCE_DIR"
HET=$PAI_SOURCE_DIR/examples/clusters/heterogeneous

ctl "$LAB_URI" POST /__control/run-tasks '{"enabled": true}' >/dev/null
set +e
echo alice-pass-1 | "$PAICTL" cluster add lab --uri "$LAB_URI" --user alice --password-stdin >"$TMP/out" 2>"$TMP/err"
RC=$?
set -e
expect_rc 0 "cluster add lab"

cat >"$TMP/grid.yaml" <<EOF
configs: [{name: het, path: $HET}]
traces: [{name: gen, generate: {jobs: 200, load: 0.9}}]
policies: [hived, quota]
load: [1, 2]
seeds: [1, 2]
EOF
SWEEP="simulate sweep $TMP/grid.yaml --cluster lab --vc research --paictl $PAICTL --poll 0.1"

# --- one job, three tasks, eight points ----------------------------------------------------
reset_requests "$LAB_URI"
run $SWEEP --shards 3 --out "$TMP/remote"
expect_rc 0 "a sweep as a job on lab"
expect_err "8 points: 0 stored" "nothing stored at first"
expect_err "8 points in 3 tasks" "one job with three tasks"
expect_err "8 of 8 results gathered from the tasks' logs" "every result came back through the logs"
expect_err "8 ran, 0 stored, 0 failed" "every point has a result"
check_requests "$LAB_URI" "len([r for r in reqs if r['method'] == 'POST' and r['path'].endswith('/api/v2/jobs')]) == 1 and any('instances: 3' in r['body'] and 'virtualCluster: research' in r['body'] for r in reqs if r['method'] == 'POST')" \
  "exactly one job submitted, three instances in VC research"
check_requests "$LAB_URI" "len(set(r['path'] for r in reqs if '/log-manager/' in r['path'])) == 3" "the three tasks' logs were read"
if [ "$(grep -c ' ran$' "$OUT")" -eq 8 ]; then pass "the table has the 8 points"; else fail "table rows"; sed 's/^/  | /' "$OUT" >&2; fi

# The same spec locally gives the same results, point by point.
run simulate sweep "$TMP/grid.yaml" -j 2 --out "$TMP/local"
expect_rc 0 "the same sweep locally"
"$PY" - "$TMP/remote/sweep.json" "$TMP/local/sweep.json" <<'PY' && pass "the cluster's results equal the local ones" || fail "cluster and local results differ"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
ra = {i["key"]: i["result"] for i in a["items"]}
rb = {i["key"]: i["result"] for i in b["items"]}
assert len(ra) == 8 and ra == rb
assert a["cluster"] == "lab" and a["job"].startswith("alice~paictl-sweep-")
PY
run simulate sweep "$TMP/grid.yaml" --out "$TMP/remote" -o json
schema_check simulationSweep "a cluster sweep's document"

# --- resumable: a re-run gathers the recorded job instead of submitting again --------------
rm "$TMP/remote/points/$(ls "$TMP/remote/points" | head -1)"
reset_requests "$LAB_URI"
run $SWEEP --out "$TMP/remote"
expect_rc 0 "re-run with one result lost"
expect_err "8 points: 7 stored" "seven points are stored"
expect_err "was submitted for 1 of the missing points: gathering it" "the earlier job is gathered again"
expect_err "1 ran, 7 stored, 0 failed" "only the lost point comes back"
check_requests "$LAB_URI" "not any(r['method'] == 'POST' and r['path'].endswith('/api/v2/jobs') for r in reqs)" "nothing submitted again"

# A grown spec: only the new points go into a new job.
sed -i 's/^load: \[1, 2\]/load: [1, 2, 3]/' "$TMP/grid.yaml"
reset_requests "$LAB_URI"
run $SWEEP --out "$TMP/remote"
expect_rc 0 "a grown spec"
expect_err "12 points: 8 stored" "the old points are stored"
expect_err "4 points in 4 tasks" "a new job for the 4 new points only"
expect_err "4 ran, 8 stored, 0 failed" "the new points ran"
check_requests "$LAB_URI" "len([r for r in reqs if r['method'] == 'POST' and r['path'].endswith('/api/v2/jobs')]) == 1" "one new job"

# --- tasks that fail: their points are failed, the exit status says so ------------------------
sed -i 's/^seeds: \[1, 2\]/seeds: [1, 2, 3]/' "$TMP/grid.yaml"
run simulate sweep "$TMP/grid.yaml" --cluster lab --paictl /bin/false --poll 0.1 --out "$TMP/remote"
expect_rc 2 "a sweep whose tasks fail"
expect_err "0 of 6 results gathered" "no result from failing tasks"
expect_err "0 ran, 12 stored, 6 failed" "the missing points are failed"

# --- bad usage ------------------------------------------------------------------------------
run simulate sweep "$TMP/grid.yaml" --cluster nowhere --out "$TMP/remote"
expect_rc 2 "an unknown cluster"
expect_err "no cluster named \"nowhere\"" "says which cluster is unknown"
run simulate sweep "$TMP/grid.yaml" --cluster lab -j 2
expect_rc 2 "-j with --cluster"

finish
