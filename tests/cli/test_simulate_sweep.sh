#!/bin/sh
# End to end: `paictl simulate sweep` runs a small grid on a local process pool,
# stores each point, and a re-run after a kill runs only the points that are missing;
# suggested node sets (fractions, seeds) are grid dimensions.
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
grep -E '^het +gen +all +3 +2 +1 +- +quota ' "$OUT" >/dev/null && pass "a row per coordinate" || fail "no row for load 3 seed 2 quota"
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

# --- Kubernetes' suggested node sets as grid dimensions -------------------------------------
cat >"$TMP/sugg.yaml" <<EOF
configs: [{name: het, path: $HET}]
traces: [{name: gen, generate: {jobs: 200, load: 0.9}}]
policies: [hived, quota]
EOF
run simulate sweep "$TMP/sugg.yaml" -j 2 --out "$TMP/sugg"
expect_rc 0 "a grid without suggested sets"
expect_err "2 ran, 0 stored, 0 failed" "two points"
# Grown by two dimensions: fraction 1 keeps its points (and keys), 0.5 adds 2 seeds x 2 policies.
printf 'suggested-fraction: [1, 0.5]\nsuggested-seed: [1, 2]\n' >>"$TMP/sugg.yaml"
run simulate sweep "$TMP/sugg.yaml" -j 2 --out "$TMP/sugg"
expect_rc 0 "a grid of suggested fractions and seeds"
expect_err "6 points: 2 stored" "the points with fraction 1 are the stored ones"
expect_err "4 ran, 2 stored, 0 failed" "only the points with suggested sets run"
expect_err "quota het gen seed=1 suggested=0.5 suggested-seed=2: done" "progress names the suggested coordinates"
grep -E '^het +gen +all +1 +1 +1 +- +hived .* stored$' "$OUT" >/dev/null && pass "fraction 1: no suggested seed, stored" || { fail "no stored row for fraction 1"; sed 's/^/  | /' "$OUT" >&2; }
grep -E '^het +gen +all +1 +1 +0\.5 +2 +quota .* ran$' "$OUT" >/dev/null && pass "a row per suggested fraction and seed" || { fail "no row for fraction 0.5 seed 2"; sed 's/^/  | /' "$OUT" >&2; }
python3 - "$TMP/sugg/sweep.json" <<'PY' && pass "suggested sets change every policy's run" || fail "suggested sets have no effect"
import json, sys
d = json.load(open(sys.argv[1]))
r = {(i["suggested_fraction"], i["suggested_seed"], i["policy"]): i["result"]["result"] for i in d["items"]}
assert len(r) == 6 and (1, None, "hived") in r, sorted(r, key=str)
for pol in ("hived", "quota"):
    # Half the nodes filtered out at each attempt: other decisions, other sets per seed.
    for seed in (1, 2):
        assert r[(0.5, seed, pol)]["decisions"] != r[(1, None, pol)]["decisions"], (pol, seed)
    assert r[(0.5, 1, pol)] != r[(0.5, 2, pol)], pol
PY
python3 - "$PAI_SOURCE_DIR/docs/schemas/simulationSweep.schema.json" "$TMP/sugg/sweep.json" <<'PY' && pass "sweep.json with suggested sets matches its schema" || fail "schema"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])), cls=jsonschema.Draft202012Validator)
PY
if grep -q "Against suggested fraction" "$TMP/sugg/report.html" && grep -q ">suggested_seed<" "$TMP/sugg/report.html"; then
  pass "report.html charts against the suggested fraction"
else
  fail "report.html lacks the suggested axes"
fi
run simulate sweep "$TMP/sugg.yaml" --out "$TMP/sugg"
expect_err "6 points: 6 stored" "a finished grid of suggested sets is not run again"
cat >"$TMP/sugg-bad.yaml" <<EOF
configs: [{name: het, path: $HET}]
traces: [{name: gen, generate: {jobs: 30}}]
suggested-fraction: [1, 1.5]
EOF
run simulate sweep "$TMP/sugg-bad.yaml"
expect_rc 2 "a suggested fraction above 1"
expect_err "sugg-bad.yaml:3:25: error[G009]: a suggested fraction must be a number in 0..1" "the bad fraction at its position"
printf 'configs: [{name: het, path: %s}]\ntraces: [{name: gen, generate: {jobs: 30}}]\nsuggested-seed: [1, 2]\n' "$HET" >"$TMP/sugg-bad.yaml"
run simulate sweep "$TMP/sugg-bad.yaml"
expect_rc 2 "suggested seeds without a fraction below 1"
expect_err "sugg-bad.yaml:3:17: error[G010]: suggested seeds change nothing here" "useless suggested seeds at their position"

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
