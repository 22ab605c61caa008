# paictl hived cells and hived drift against the lab scenario: v7 is bad and
# doomed to research (its V100-NODE virtual cell is bound to the bad node),
# train-a (prod) runs on v5 and v6, prod has four node cells and a pinned one.
. "$PAI_SOURCE_DIR/tests/integration/hived/lib.sh"
start_server lab
CFG="$SCEN/lab-hived.yaml"

# --- cells ---------------------------------------------------------------------------
run hived cells --hived "$URL" --vc research -o json
expect_rc 0 "cells --vc research -o json"
schema_check hivedCells "hived cells -o json"
json_check "[r['boundTo'].split('/')[-1] for r in d['virtualCells'] if r['doomed']] == ['v7']" "research's doomed cell is bound to v7"
json_check "{r['vc'] for r in d['virtualCells']} == {'research'}" "--vc keeps research's cells only"
run hived cells --hived "$URL" --vc prod -o json
json_check "len([r for r in d['virtualCells'] if not r['opportunistic']]) == 5 and all(r['cellType'] == 'V100-NODE' for r in d['virtualCells'] if not r['opportunistic'])" "prod: four node cells and the pinned one"
run hived cells --hived "$URL"
expect_rc 0 "cells table"
expect_out "bad, doomed" "the table marks the doomed cell"
run hived cells --hived "$URL" --tree
expect_rc 0 "cells --tree"
expect_out "1/v7  V100-NODE" "the tree lists v7"
if grep "1/v7  V100-NODE" "$OUT" | grep -q "\[0-7 doomed\]"; then pass "v7's leaves are doomed"; else fail "v7's leaves"; fi
if grep "1/v7  V100-NODE" "$OUT" | grep -q "BAD DOOMED"; then pass "v7 is bad and doomed in the tree"; else fail "v7 not marked"; fi
if grep "1/v5  V100-NODE" "$OUT" | grep -q "0-7 train-a"; then pass "v5's leaves are train-a's"; else fail "v5's leaves"; grep v5 "$OUT" >&2; fi
run hived cells --hived "$URL" --vc nope
expect_rc 2 "an unknown VC"

run hived cells --hived "$URL" --diagram "$TMP/cells.svg"
expect_rc 0 "cells --diagram"
if "$PY" - "$TMP/cells.svg" <<'PY'; then pass "the SVG: prod's leaves in prod's colour, v7's 8 leaves bad and crossed"; else fail "the SVG"; fi
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
leaves = [(r, r.find("s:title", ns).text) for r in root.iter("{http://www.w3.org/2000/svg}rect")
          if r.find("s:title", ns) is not None and r.get("width") == "14"]
prod = [r for r, t in leaves if ", vc prod" in t]
assert prod and all(r.get("fill") == "#4e79a7" for r in prod), "prod colour"
bad = [t for r, t in leaves if t.endswith("bad, doomed")]
assert len(bad) == 8 and all("/v7/" in t for t in bad), bad
free = [r for r, t in leaves if " Free" in t and ", vc " not in t]
assert free and all(r.get("fill") == "#ffffff" for r in free), "free leaves are white"
crosses = [l for l in root.iter("{http://www.w3.org/2000/svg}line")]
assert len(crosses) >= 16, len(crosses)
PY

# --- drift ---------------------------------------------------------------------------
run hived drift "$CFG" --hived "$URL" -o json
expect_rc 1 "drift: the bad node is a finding"
schema_check hivedDrift "hived drift -o json"
json_check "[(f['kind'], f['node']) for f in d['findings']] == [('bad', 'v7')]" "only v7, bad"
if requests_seen | tail -n 1 | grep -qx "GET /v1/inspect/clusterstatus/physicalcluster"; then pass "drift reads HiveD's physical cluster only"; else fail "drift's request"; requests_seen | tail -n 3 >&2; fi

# The config without k2 and with a node HiveD does not have.
sed -e '/cellAddress: k2}/d' -e 's/{cellAddress: v4}\]/{cellAddress: v4}, {cellAddress: v9}]/' "$CFG" >"$TMP/other.yaml"
sed -i 's/cellChildren: \[{cellAddress: v1}, /cellChildren: [/' "$TMP/other.yaml"
run hived drift "$TMP/other.yaml" --hived "$URL" -o json
json_check "sorted((f['kind'], f['node']) for f in d['findings']) == [('bad', 'v7'), ('missing', 'v9'), ('unexpected', 'k2'), ('unexpected', 'v1')]" "missing v9, unexpected k2 and v1, bad v7"

# Facts: v3 lost a GPU, k1 is as configured.
mkdir -p "$TMP/facts"
"$PY" - "$TMP/facts" <<'PY'
import json, sys
for name, n in (("v3", 7), ("k1", 4)):
    json.dump({"schema": "paictl.facts/v1", "name": name, "hostname": name,
               "gpus": [{"index": i, "name": "Tesla V100-SXM2-32GB"} for i in range(n)]},
              open("%s/%s.json" % (sys.argv[1], name), "w"))
PY
run hived drift "$CFG" --hived "$URL" --facts "$TMP/facts" -o json
expect_rc 1 "drift with facts"
json_check "[(f['kind'], f['node']) for f in d['findings'] if f['kind'].startswith('gpus')] == [('gpusDropped', 'v3')]" "v3 lost a GPU, k1 did not"
json_check "['--odd-hosts split' in f['hint'] for f in d['findings'] if f['kind'] == 'gpusDropped'] == [True]" "the hint is the planner's odd-host split"
run hived drift "$CFG" --hived "$URL" --facts "$TMP/facts"
expect_out "v3    gpusDropped  7 GPUs found, its cells have 8 leaf cells" "the table says 7 of 8"
run hived drift "$CFG" --hived "$URL" --facts "$TMP/nowhere"
expect_rc 2 "facts that are not there"

# --- every command in every output format ------------------------------------------------
# -o yaml: the same document as -o json; -o wide: what the table leaves out.
# (hivedWhy is at v2: reason codes, docs/hived.md#reason-codes.)
WHY="--config $CFG --vc prod --priority 100 --gpus 8 --leaf-type V100"
for c in "status hivedStatus" "groups hivedGroup" "cells hivedCells" "why:infer-c hivedWhy" \
         "why:big-wait hivedWhy" "drift:$CFG hivedDrift" "diff:$CFG:$SCEN/lab-moved.yaml hivedDiff"; do
  cmd=${c%% *} kind=${c#* }
  set -- $(echo "$cmd" | tr ':' ' ')
  extra=""
  [ "$cmd" = "why:big-wait" ] && extra=$WHY
  [ "$1" = diff ] && extra="--live"
  run hived "$@" --hived "$URL" $extra -o yaml
  if [ "$RC" -le 1 ] && "$PY" -c "
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
sys.exit(0 if d['apiVersion'] == 'paictl.' + sys.argv[2] + ('/v2' if sys.argv[2] == 'hivedWhy' else '/v1') else 1)
" "$OUT" "$kind"; then pass "hived $* -o yaml: a $kind document"; else fail "hived $* -o yaml"; sed 's/^/  | /' "$OUT" "$ERR" >&2; fi
done
run hived status --hived "$URL" -o wide
expect_out "k2    K80   Healthy     4     0    0  -" "status -o wide: the idle healthy k2 too"
run hived groups --hived "$URL" -o wide
expect_out "LAZY PREEMPTED BY" "groups -o wide: who lazily preempted a group"
run hived cells --hived "$URL" -o wide
expect_out "0/v4/4-opp" "cells -o wide: the opportunistic cells"
run hived drift "$CFG" --hived "$URL" -o wide
expect_out "kubectl describe node v7" "drift -o wide: the hints"
run hived diff "$CFG" "$SCEN/lab-moved.yaml" --live --hived "$URL" -o wide
expect_out "train-a  prod           300    16  keeps running" "diff -o wide: the groups that keep running too"
expect_out "prod-pin     prod  1/v8     unchanged" "diff -o wide: the unchanged pinned cells"
finish
