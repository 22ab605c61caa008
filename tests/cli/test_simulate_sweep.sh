#!/bin/sh
# End to end: `paictl simulate sweep` runs a small grid on a local process pool,
# stores each point, and a re-run after a kill runs only the points that are missing.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$PAI_SOURCE_DIR"
HET=$PAI_SOURCE_DIR/examples/clusters/heterogeneous

cat >"$TMP/grid.yaml" <<EOF
configs: [{name: het, path: $HET}]
traces:
  - {name: gen, generate: {jobs: 300, load: 0.9}}
policies: [hived, quota]
load: [1, 3]
seeds: [1, 2]
options: {overflow: true}
EOF

# --- a small grid: 2 loads x 2 seeds x 2 policies ----------------------------------------
run simulate sweep "$TMP/grid.yaml" -j 2 --out "$TMP/res"
expect_rc 0 "a small grid runs"
expect_err "8 points: 0 stored" "nothing stored at first"
expect_err "8 ran, 0 stored, 0 failed" "every point ran"
if [ "$(ls "$TMP/res/points" | wc -l)" -eq 8 ]; then pass "one stored result per point"; else fail "stored results: $(ls "$TMP/res/points" | wc -l)"; fi
if [ "$(grep -c ' ran$' "$OUT")" -eq 8 ]; then pass "the table has the 8 points"; else fail "table rows"; sed 's/^/  | /' "$OUT" >&2; fi
grep -E '^het +gen +all +3 +2 +quota ' "$OUT" >/dev/null && pass "a row per coordinate" || fail "no row for load 3 seed 2 quota"
if grep -q "<svg" "$TMP/res/report.html" && grep -q "Against load factor" "$TMP/res/report.html" && ! grep -q "<script" "$TMP/res/report.html"; then
  pass "report.html charts the metrics against the load"
else
  fail "report.html lacks its charts"
fi
# Load 3 makes arrivals three times as dense: queueing grows (mean delay, hived, seed 1).
python3 - "$TMP/res/sweep.json" <<'PY' && pass "denser arrivals wait longer" || fail "load scaling has no effect"
import json, sys
d = json.load(open(sys.argv[1]))
m = {(i["load"], i["seed"], i["policy"]): i["result"]["result"]["overall"]["queue_delay_s"]["mean"] for i in d["items"]}
assert m[(3, 1, "hived")] > m[(1, 1, "hived")], m
assert d["ran"] == 8 and d["stored"] == 0
PY

python3 - "$PAI_SOURCE_DIR/docs/schemas/simulationSweep.schema.json" "$TMP/res/sweep.json" <<'PY' && pass "sweep.json matches its schema" || fail "sweep.json does not match docs/schemas/simulationSweep.schema.json"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])), cls=jsonschema.Draft202012Validator)
PY

# --- a second run runs nothing, and says so ------------------------------------------------
cp "$OUT" "$TMP/first-table"
run simulate sweep "$TMP/grid.yaml" --out "$TMP/res" -o json
expect_rc 0 "re-run"
expect_err "8 points: 8 stored" "a finished sweep is not run again"
expect_out '"stored": 8' "JSON counts the stored points"
expect_out '"ran": 0' "JSON: nothing ran"

# --- a kill in the middle, then a re-run runs only what is missing ---------------------------
cat >"$TMP/big.yaml" <<EOF
configs: [{name: het, path: $HET}]
traces: [{name: gen, generate: {jobs: 3000, load: 1.2}}]
policies: [hived, quota]
load: [1, 2, 3]
seeds: [1, 2]
EOF
# Stored results are KEY.json; a write the kill interrupts leaves only its temporary file.
stored() { ls "$TMP/big/points" 2>/dev/null | grep -c '^[0-9a-f]*\.json$' || true; }
"$PAICTL" simulate sweep "$TMP/big.yaml" -j 1 --out "$TMP/big" >/dev/null 2>"$TMP/kill.err" &
PID=$!
i=0
while [ "$(stored)" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
kill "$PID" 2>/dev/null || true
wait "$PID" 2>/dev/null || true
sleep 0.3  # a point's process still running finishes into a closed pipe and stores nothing
HAVE=$(stored)
if [ "$HAVE" -ge 2 ] && [ "$HAVE" -lt 12 ]; then pass "killed with $HAVE of 12 points stored"; else fail "kill: $HAVE points stored"; fi
run simulate sweep "$TMP/big.yaml" -j 2 --out "$TMP/big"
expect_rc 0 "re-run after the kill"
MISSING=$((12 - HAVE))
expect_err "12 points: $HAVE stored" "the re-run finds the stored points"
expect_err "$MISSING ran, $HAVE stored, 0 failed" "the re-run runs only the $MISSING missing points"
if [ "$(grep -c ' stored$' "$OUT")" -eq "$HAVE" ] && [ "$(grep -c ' ran$' "$OUT")" -eq "$MISSING" ]; then
  pass "the table says which points were stored and which ran"
else
  fail "table status column"
fi

# --- a bad spec: file:line:col -------------------------------------------------------------
cat >"$TMP/bad.yaml" <<EOF
configs: [{name: het, path: $HET}]
traces: [{name: gen, generate: {jobs: 30}}]
policies: [hived, qouta]
load: [0]
windows: [7d-1d]
EOF
run simulate sweep "$TMP/bad.yaml"
expect_rc 2 "a bad spec"
expect_err "bad.yaml:3:19: error" "unknown policy at its line and column"
expect_err "did you mean \"quota\"" "did-you-mean hint"
expect_err "bad.yaml:4:8: error" "bad load factor at its position"
expect_err "bad.yaml:5:11: error" "a window that ends before it starts"
[ ! -e "$TMP/bad.sweep" ] && pass "a bad spec writes nothing" || fail "a bad spec wrote results"

printf 'configs: [a\n' >"$TMP/syntax.yaml"
run simulate sweep "$TMP/syntax.yaml"
expect_rc 2 "YAML syntax error"
expect_err "syntax.yaml:" "syntax error names the file"

run simulate sweep "$TMP/none.yaml"
expect_rc 2 "a missing spec"

finish
