# paictl plan end to end: plan the bundled facts, check what it writes with
# paictl check config, dry runs, bad input, profiles. POSIX sh.
set -eu
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
FACTS=$PAI_SOURCE_DIR/examples/facts
export PAICTL_LAYOUTS=$PAI_SOURCE_DIR/layouts
C=$TMP/cluster

# --- the main job: facts -> files -> check config ----------------------------------
run plan "$FACTS" --vc research=60% --vc prod=40% --out "$C" --diagram "$C/plan.svg"
expect_rc 0 "plan the bundled facts"
expect_out "A100-NUMA x2 > A100-SOCKET x2 > A100-NODE x2 > A100-RACK x2" "the A100 cell levels are in the summary"
expect_out "t4-04: 3 GPUs instead of 4 -> SKU t4-04" "the odd host is reported"
expect_out "research a100: 60% of 32 = 19.20, rounded down to 19 A100" "rounding is explained"
expect_err "warning[P103]" "the odd host is a warning"
for f in layout.yaml hivedscheduler.yaml services-configuration.yaml plan.svg; do
  if [ -s "$C/$f" ]; then pass "wrote $f"; else fail "$f missing"; fi
done
run check config "$C"
expect_rc 0 "check config passes on what plan wrote"
expect_out "0 errors, 0 warnings in 4 files" "no finding at all (plan --out wrote a config.yaml too)"
if grep -q '<svg' "$C/plan.svg" && grep -q 'research (21 GPUs, 36 CPUs)' "$C/plan.svg"; then pass "diagram is an SVG with the VC legend"; else fail "diagram"; fi

# --- ... -> simulate: the planned cluster runs in the simulator --------------------------
TRACE=$PAI_SOURCE_DIR/examples/traces/philly-small.json
run simulate --config "$C" --trace "$TRACE" --policy hived,quota
expect_rc 0 "simulate runs on what plan wrote"
expect_out "47 GPUs, 9 nodes" "the simulator sees the planned GPUs and worker nodes"
expect_out "research" "the simulator sees the planned VCs"

# --- the same with --facts, and a facts directory after a --vc is not taken for a VC -----
run plan --vc research=60% "$FACTS" --vc prod=40% --out "$TMP/same" -q
expect_rc 0 "positional facts directory between options"
if cmp -s "$C/hivedscheduler.yaml" "$TMP/same/hivedscheduler.yaml"; then pass "DIR and --facts DIR plan the same"; else fail "DIR vs --facts DIR"; fi
run plan "$FACTS" --facts "$FACTS"
expect_rc 0 "a facts directory given twice"
expect_err "warning[P010]" "the repeated directory is read once, with a warning"

# --- every machine profile: plan, check config, simulate -------------------------------
for dir in "$PAI_SOURCE_DIR"/layouts/*/; do
  prof=$(basename "$dir")
  run plan --profile "$prof" --count 4 --racks 2 --vc a=50% --vc b=25% --out "$TMP/prof-$prof" -q
  expect_rc 0 "plan profile $prof"
  run check config "$TMP/prof-$prof"
  expect_rc 0 "$prof: check config passes"
  expect_out "0 errors, 0 warnings" "$prof: no finding at all"
  run simulate --config "$TMP/prof-$prof" --trace "$TRACE" --policy hived --limit 300
  expect_rc 0 "$prof: simulate runs on the plan"
  expect_out ", 4 nodes, 3 virtual clusters" "$prof: the simulator sees 4 workers and VCs a, b, default"
done

# --- mixed: collected facts and machines not bought yet in one plan ----------------------
run plan "$FACTS" --profile hgx-h100 --count 2 --racks 1 --vc research=60% --out "$TMP/mixed"
expect_rc 0 "facts and a profile in one plan"
expect_out "HGX-H100-SOCKET x4 > HGX-H100-NODE x2" "the profile's SKU is planned next to the facts' SKUs"
expect_out "A100-NUMA x2 > A100-SOCKET x2 > A100-NODE x2 > A100-RACK x2" "the facts' SKUs are still there"
expect_err "2 hosts planned from machine profiles have placeholder names and addresses (hgx-h100-001" "the profile hosts' placeholder names are reported"
if grep -q 'hgx-h100-001' "$TMP/mixed/layout.yaml" && grep -q 'dgx-01' "$TMP/mixed/layout.yaml"; then
  pass "layout.yaml has both kinds of hosts"
else
  fail "mixed layout.yaml"
fi
run check config "$TMP/mixed"
expect_rc 0 "the mixed plan passes check config"
run simulate --config "$TMP/mixed" --trace "$TRACE" --policy hived
expect_rc 0 "the mixed plan runs in simulate"
expect_out "63 GPUs, 11 nodes" "the simulator sees the facts' and the profile's GPUs"

# --- whole cells of one level: a VC's node cell beside a GPU cell can be blocked -------
run plan --profile hgx-h100 --count 2 --racks 1 --vc research=60%
expect_rc 0 "research=60% of two H100 nodes"
expect_out "rounded down to 9 H100 -> 1 HGX-H100-NODE (whole cells of one level: 1 H100 GPU fewer)" "the share becomes one whole node, and the table says what that cost"
if grep -q "P115" "$ERR"; then fail "no VC can be blocked"; else pass "no VC can be blocked"; fi
run plan --profile hgx-h100 --count 2 --racks 1 --vc research=60% --vc-cells any --out "$TMP/any"
expect_rc 0 "--vc-cells any keeps the largest cells that fit"
expect_err "warning[P115]: virtual cluster research holds 1 HGX-H100-NODE beside smaller cells" "and warns which VC can be blocked"
expect_err "a job of 8 H100 can wait" "with the job size"
run check config "$TMP/any"
expect_out "warning[H027]" "check config finds the VC in the written config"
run plan --profile hgx-h100 --count 2 --racks 1 --vc-cells nodes
expect_rc 2 "an unknown --vc-cells"

# --- dry run and --detailed-exitcode ---------------------------------------------------
run plan --facts "$FACTS" --vc research=60% --vc prod=40% --out "$C" --dry-run --detailed-exitcode
expect_rc 0 "dry run: nothing changes"
expect_err "up to date" "dry run says the files are up to date"
cp "$C/layout.yaml" "$TMP/layout.before"
run plan --facts "$FACTS" --vc research=50% --out "$C" --dry-run --detailed-exitcode
expect_rc 2 "dry run: changes give exit 2 with --detailed-exitcode"
expect_out "+++ $C/hivedscheduler.yaml" "the diff names the file"
expect_out "-  prod:" "the diff removes VC prod"
if cmp -s "$C/layout.yaml" "$TMP/layout.before"; then pass "dry run wrote nothing"; else fail "dry run changed layout.yaml"; fi
run plan --facts "$FACTS" --dry-run
expect_rc 2 "--dry-run needs --out"

# --- services-configuration.yaml keeps the rest of the file ------------------------------
S=$TMP/svc
mkdir -p "$S"
printf 'cluster:\n  common:\n    cluster-id: mycluster\nhivedscheduler:\n  config: |\n    old: config\nrest-server:\n  server-port: 9186\n' >"$S/services-configuration.yaml"
run plan --facts "$FACTS" --out "$S"
expect_rc 0 "plan into a directory with a services-configuration.yaml"
if grep -q 'cluster-id: mycluster' "$S/services-configuration.yaml" && grep -q 'server-port: 9186' "$S/services-configuration.yaml" \
  && ! grep -q 'old: config' "$S/services-configuration.yaml"; then
  pass "only hivedscheduler.config was replaced"
else
  fail "services-configuration.yaml merge"; sed 's/^/  | /' "$S/services-configuration.yaml" >&2
fi
run check config "$S"
expect_rc 0 "the merged directory passes check config"

# --- odd hosts excluded -----------------------------------------------------------------
run plan --facts "$FACTS" --odd-hosts exclude --out "$TMP/ex"
expect_rc 0 "--odd-hosts exclude"
if grep -q 't4-04' "$TMP/ex/layout.yaml"; then fail "t4-04 still in layout.yaml"; else pass "t4-04 left out of layout.yaml"; fi
expect_err "left out of the plan" "exclusion is reported"

# --- json / yaml -------------------------------------------------------------------------
run plan --facts "$FACTS" --vc research=60% -o json
expect_rc 0 "-o json"
expect_out '"schema": "paictl.plan/v1"' "json schema"
expect_out '"leaf_type": "A100"' "json has the SKUs"
run plan --facts "$FACTS" -o yaml
expect_rc 0 "-o yaml"
expect_out "schema: paictl.plan/v1" "yaml schema"

# --- bad input: nothing written, exit 2, positions -------------------------------------
run plan --facts "$FACTS" --vc a=70% --vc b=40% --out "$TMP/bad"
expect_rc 2 "VCs that do not fit"
expect_err "error[P106]" "infeasible VC is P106"
if [ -e "$TMP/bad" ]; then fail "files written despite errors"; else pass "nothing written on error"; fi
run plan --facts "$FACTS" --vc a=a1000:4
expect_rc 2 "unknown SKU in --vc"
expect_err 'did you mean "a100"?' "did-you-mean for the SKU"
cp -r "$FACTS" "$TMP/facts"
printf '\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tQPI\t0-7\nGPU1\tPHB\t X \t0-7\n' >"$TMP/facts/t4-01/topo.txt"
run plan --facts "$TMP/facts"
expect_rc 2 "a corrupt topo.txt"
expect_err "t4-01/topo.txt:2:10: error[T105]" "file:line:col of the bad link"
rm -rf "$TMP/facts"
# Numbers too large for a double, in a facts JSON and in an lscpu -J capture: input errors with
# the position of the number, never an abort.
mkdir -p "$TMP/huge/big-01" "$TMP/huge2/big-02"
printf '{\n  "schema": "paictl.facts/v1",\n  "name": "big-00",\n  "x": 1e400\n}\n' >"$TMP/huge/big-00.json"
run plan --facts "$TMP/huge"
expect_rc 2 "a facts JSON with 1e400"
expect_err "big-00.json:4:8: error[P005]" "file:line:col of the huge number"
printf '{"lscpu": [{"field": "CPU(s):", "data": 9e616}]}\n' >"$TMP/huge2/big-02/lscpu.txt"
run plan --facts "$TMP/huge2"
expect_rc 2 "an lscpu -J capture with 9e616"
expect_err "big-02/lscpu.txt:1:41: error[T131]" "file:line:col of the huge number in lscpu.txt"
rm -rf "$TMP/huge" "$TMP/huge2"
run plan --facts "$TMP/nope"
expect_rc 2 "missing facts directory"
run plan
expect_rc 2 "nothing to plan"
run plan --count 3
expect_rc 2 "--count without --profile"

# --- profiles ---------------------------------------------------------------------------
run plan --list-profiles
expect_rc 0 "--list-profiles"
expect_out "dgx1-v100" "the catalogue lists DGX-1"
run plan --profile dgx-a100 --count 16 --racks 2 --profile t4-2socket --count 3 --vc a=50% --vc b=dgx-a100:4nodes --out "$TMP/p"
expect_rc 0 "plan profiles for hardware not bought yet"
expect_err "placeholder master" "the placeholder master is a warning"
run check config "$TMP/p"
expect_rc 0 "profile plan passes check config"
run plan --profile dgx-a10O --count 2
expect_rc 2 "unknown profile"
expect_err 'did you mean "dgx-a100"?' "did-you-mean for the profile"

run plan --help
expect_rc 0 "--help"
expect_out "EXAMPLES:" "--help ends with examples"
finish
