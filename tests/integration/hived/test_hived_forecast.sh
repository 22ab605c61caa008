# simulate --from-live --report: the forecast of docs/simulate.md on the HiveD
# test server's lab (scenarios/forecast-lab.json: eight running groups, v7 bad)
# with the REST test server's job list (forecast-lab-rest.json: each user's
# median run time, two jobs waiting), lab-moved.yaml as the proposed config and
# 40 arrivals (forecast-lab-arrivals.csv). Worked out by hand: alice~big-wait
# waits for alice~train-a (launched 1 h ago, alice's median 3 h: 2 h from now),
# bob~k-wait for research's K80 cell, which bob~k-1 holds for bob's median, 6 h.
# The report: report.html and forecast.svg, a well-formed SVG naming every VC.
. "$PAI_SOURCE_DIR/tests/integration/hived/lib.sh"
start_server forecast-lab
REST="$TMP/rest"
"$PY" "$PAI_SOURCE_DIR/tests/integration/rest/rest_fixture.py" start "$REST" \
  lab="$SCEN/forecast-lab-rest.json" || exit $?
for p in "$REST"/*.pid; do SERVER_PIDS="$SERVER_PIDS $(cat "$p")"; done
. "$REST/env.sh"
set +e
echo root-pass-1 | "$PAICTL" cluster add lab --uri "$LAB_URI" --user root --password-stdin --hived "$URL" >"$TMP/out" 2>"$TMP/err"
RC=$?
set -e
OUT="$TMP/out" ERR="$TMP/err"
expect_rc 0 "cluster add lab --hived"
ARR="$SCEN/forecast-lab-arrivals.csv"
NEW="$SCEN/lab-moved.yaml"

run simulate --from-live lab --config "$NEW" --arrivals "$ARR" --report "$TMP/rep"
expect_rc 0 "forecast with a report"
expect_out "8 running group(s), 2 waiting, 1 bad node(s); 40 arrival(s)" "the start and the arrivals"
expect_out "alice~big-wait/default       2.0h" "big-wait starts when train-a ends"
expect_out "bob~k-wait/default           6.0h" "k-wait starts when k-1 ends"
expect_out "dave~urgent/default is lazily preempted on proposed" "the proposed config's lazy preemption"
expect_err "report: $TMP/rep/report.html (report.html " "the report's files are named"
if "$PY" - "$TMP/rep/forecast.svg" <<'PY'; then pass "forecast.svg is well-formed XML naming every VC"; else fail "forecast.svg"; fi
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
text = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
for want in ("VC prod: GPUs in use", "VC prod: jobs waiting", "VC research: GPUs in use",
             "VC research: jobs waiting", "current", "proposed"):
    assert want in text, want
PY
if grep -q "<svg" "$TMP/rep/report.html" && ! grep -q "<script" "$TMP/rep/report.html" &&
  grep -qF '<td class="l">prod</td>' "$TMP/rep/report.html"; then
  pass "report.html has the table and SVG charts, no scripts"
else
  fail "report.html"
fi

run simulate --from-live lab --config "$NEW" --arrivals "$ARR" -o json
expect_rc 0 "forecast -o json"
schema_check simulationForecast "simulate --from-live -o json with the series"
json_check "all(len(v['usedGpus']) == 96 and len(v['waitingJobs']) == 96 for c in d['configs'] for v in c['series']['vcs'])" "96 steps per VC and config"
json_check "[v['usedGpus'][0] for v in d['configs'][0]['series']['vcs']] == [38, 16]" "now: the running groups' GPUs (prod 38, research 16)"

# A report to a file, or under one: exit 2 before anything is read; nothing written.
echo keep >"$TMP/file"
run simulate --from-live lab --arrivals "$ARR" --report "$TMP/file"
expect_rc 2 "--report to a file"
expect_err "is not a directory" "says why"
if [ "$(cat "$TMP/file")" = keep ] && [ ! -s "$OUT" ]; then pass "the file is left alone, no forecast printed"; else fail "the file was touched"; fi
run simulate --from-live lab --arrivals "$ARR" --report "$TMP/file/sub"
expect_rc 2 "--report under a file"
finish
