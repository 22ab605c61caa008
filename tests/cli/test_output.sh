# The output layer: -o means the same in every command, JSON documents carry
# apiVersion and match their JSON Schema in docs/schemas/, integers are integers.
# POSIX sh; python3 with jsonschema (scripts/install-deps.sh).
set -eu
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
export PAICTL_LAYOUTS=$PAI_SOURCE_DIR/layouts
own_home
EX=$PAI_SOURCE_DIR/examples
SCHEMAS=$PAI_SOURCE_DIR/docs/schemas

# valid KIND FILE: FILE is JSON (or YAML with yaml=1) of paictl.KIND/v1 and matches docs/schemas/KIND.schema.json.
valid() {
  if python3 - "$SCHEMAS/$1.schema.json" "$2" "$1" <<'PY'
import json, re, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
doc = json.loads(text)
assert doc.get("apiVersion") == "paictl.%s/v1" % sys.argv[3], doc.get("apiVersion")
jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
# Whole numbers are printed as integers ("32", never "32.0").
bad = re.findall(r'": -?\d+\.0\b', text)
assert not bad, bad[:3]
PY
  then pass "$3: paictl.$1/v1 matches its schema"; else fail "$3: does not match docs/schemas/$1.schema.json"; fi
}

run version -o json;                                         valid version "$OUT" "version -o json"
run check config -o json "$EX/clusters/broken";              valid diagnostics "$OUT" "check config -o json"
run check config --list-rules -o json;                       valid ruleList "$OUT" "check config --list-rules -o json"
run check job -o json "$EX/jobs/pytorch-mnist.yaml";         valid diagnostics "$OUT" "check job -o json"
run job validate -o json "$EX/jobs/pytorch-mnist.yaml";      valid diagnostics "$OUT" "job validate -o json"
run job render -o json "$EX/jobs/pytorch-mnist.yaml";        valid jobRender "$OUT" "job render -o json"
run check hosts --list-checks -o json;                       valid checkList "$OUT" "check hosts --list-checks -o json"
run check hosts --hosts 127.0.0.1,10.0.0.6:2222 --dry-run -o json; valid hostsDryRun "$OUT" "check hosts --dry-run -o json"
run plan --profile dgx-a100 --count 4 --vc a=50% -o json;    valid plan "$OUT" "plan -o json"
run plan --list-profiles -o json;                            valid profileList "$OUT" "plan --list-profiles -o json"
run simulate --config "$EX/clusters/heterogeneous" --trace "$EX/traces/philly-small.json" --policy hived,quota -o json
valid simulation "$OUT" "simulate -o json"

# A registry written by hand: cluster list and prefer need no server with --no-probe.
REG="$XDG_CONFIG_HOME/paictl/clusters.yaml"
mkdir -p "$(dirname "$REG")"
printf 'apiVersion: paictl/v1\nkind: ClusterRegistry\ncurrent: lab\npreference: [lab]\nclusters:\n- name: lab\n  uri: https://pai.lab.example.com\n  user: alice\n  token: secret-token-1\n' >"$REG"
chmod 600 "$REG"
run cluster list --no-probe -o json;                         valid clusterList "$OUT" "cluster list -o json"
expect_no_out "secret-token-1" "cluster list -o json shows no token"
run cluster prefer -o json;                                  valid clusterPreference "$OUT" "cluster prefer -o json"

# --- -o yaml is the same document ------------------------------------------------------
run check config -o yaml "$EX/clusters/broken"
expect_rc 1 "check config -o yaml (it was refused)"
expect_out "apiVersion: paictl.diagnostics/v1" "check config -o yaml is the document"
run plan --list-profiles -o yaml
expect_out "apiVersion: paictl.profileList/v1" "plan --list-profiles -o yaml"
run plan --list-profiles -o json
expect_out '"name": "dgx-a100"' "plan --list-profiles -o json is JSON (it printed text)"

# --- table, text and wide ---------------------------------------------------------------
run cluster list --no-probe
expect_out "CURRENT  NAME" "cluster list: a table"
expect_no_out "REST SERVER" "cluster list: no wide columns by default"
run cluster list --no-probe -o wide
expect_out "REST SERVER" "cluster list -o wide: more columns"
expect_out "SOURCE" "cluster list -o wide: the registry file"
run -o wide cluster list --no-probe
expect_out "REST SERVER" "the global -o wide before the command"
run check config -o text "$EX/clusters/quickstart"
expect_out "0 errors, 0 warnings" "check config -o text"
run check config -o table "$EX/clusters/quickstart"
expect_out "0 errors, 0 warnings" "check config -o table is its text"
run check config -o wide "$EX/clusters/quickstart"
expect_out "0 errors, 0 warnings" "check config -o wide is its text"
run plan --list-profiles -o table
expect_out "NAME" "plan --list-profiles: a table with a header"
run cluster list -o xml
expect_rc 2 "-o xml"
expect_err "formats: table, wide, json, yaml" "-o xml lists the formats"

# --- -o name: one name a line where a command lists named things, refused elsewhere -------
printf -- '- name: cloud\n  uri: https://pai.cloud.example.com\n  user: bob\n  token: secret-token-2\n' >>"$REG"
run cluster list -o name
expect_rc 0 "cluster list -o name"
if [ "$(cat "$OUT")" = "$(printf 'lab\ncloud')" ]; then pass "cluster list -o name: one cluster name a line"; else fail "cluster list -o name printed: $(cat "$OUT")"; fi
run -o name cluster list
if [ "$(cat "$OUT")" = "$(printf 'lab\ncloud')" ]; then pass "the global -o name before cluster list"; else fail "paictl -o name cluster list printed: $(cat "$OUT")"; fi
run plan --list-profiles -o name
expect_rc 2 "plan refuses -o name"
expect_err "-o name: paictl plan lists no names" "the refusal names the command"
expect_err "hint: -o name prints one name a line for commands that list named things" "the refusal has a hint"
run -o name check config "$EX/clusters/quickstart"
expect_rc 2 "the global -o name is refused by check config"
run -o name cluster prefer
expect_rc 2 "cluster prefer refuses -o name"
run -o json cluster list --no-probe
expect_rc 0 "the global -o json still works"

# One wording of -o in every command's help.
for cmd in "cluster list" "job list" "hived groups" "job tag list"; do
  run $cmd --help
  expect_out "Output format: " "$cmd --help: -o's wording"
  expect_out "or name (" "$cmd --help offers -o name"
done
for cmd in "plan" "check config" "hived status" "job status" "simulate"; do
  run $cmd --help
  if grep -qE "Output format: (table|text) \(default\), (wide, )?json or yaml" "$OUT"; then pass "$cmd --help: -o's wording"; else fail "$cmd --help: -o's wording differs"; grep -e "--output" "$OUT" >&2; fi
done
finish
