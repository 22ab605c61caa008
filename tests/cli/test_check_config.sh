#!/bin/sh
# End to end: `paictl check config` through the real binary.
set -eu
. "$(dirname "$0")/lib.sh"
EX="$PAI_SOURCE_DIR/examples/clusters"
CASES="$PAI_SOURCE_DIR/tests/data/config/cases"
cd "$PAI_SOURCE_DIR"

run --version
expect_rc 0 "--version"
expect_out "paictl " "--version prints the name"

run --help
expect_rc 0 "--help"
expect_out "check config" "--help lists check config"
expect_out "EXAMPLES:" "--help has examples"

run check config --help
expect_rc 0 "check config --help"
expect_out "--sarif" "check config --help lists --sarif"
expect_out "EXAMPLES:" "check config --help has examples"

run no-such-command
expect_rc 2 "unknown command"
expect_err 'unknown command "no-such-command" for "paictl"' "unknown command message"

run check config
expect_rc 2 "check config without a path"

run check config "$EX/quickstart"
expect_rc 0 "quick-start example is valid"
expect_out "0 errors, 0 warnings in 3 files" "quick-start summary"

run check config "$EX/heterogeneous"
expect_rc 0 "heterogeneous example is valid"

run check config examples/clusters/broken
expect_rc 1 "broken example has errors"
expect_out "examples/clusters/broken/layout.yaml:28:19: error[L005]: machine-type \"gpu-machin\" is not defined in machine-sku" "L005 text with file:line:col"
expect_out "hint: did you mean \"gpu-machine\"?" "did-you-mean hint"
expect_out "examples/clusters/broken/services-configuration.yaml:39:26: error[H004]" "embedded HiveD finding reports the outer line"
expect_out " 39 |           - cellAddress: two" "source snippet"
expect_no_out "$(printf '\033[')" "no colour when stdout is not a TTY"

# JSON: the documented shape, every finding.
run check config -o json examples/clusters/broken
expect_rc 1 "json exit code"
python3 - "$OUT" <<'PY' && pass "json shape" || fail "json shape"
import json, sys
j = json.load(open(sys.argv[1]))
assert set(j) >= {"diagnostics", "summary"}
assert set(j["summary"]) >= {"errors", "warnings", "files"}
assert j["summary"]["files"] == 3
for d in j["diagnostics"]:
    assert set(d) >= {"file", "line", "column", "severity", "code", "message", "hint"}, d
    assert d["severity"] in ("error", "warning", "info")
codes = {d["code"] for d in j["diagnostics"]}
assert {"L001", "L005", "H005", "H007", "X001"} <= codes, codes
assert j["summary"]["errors"] == sum(d["severity"] == "error" for d in j["diagnostics"])
PY

# JUnit and SARIF files, written atomically next to the text output.
run check config --junit "$TMP/report.xml" --sarif "$TMP/report.sarif" examples/clusters/broken
expect_rc 1 "reports written"
python3 - "$TMP/report.xml" "$TMP/report.sarif" <<'PY' && pass "junit and sarif parse" || fail "junit and sarif parse"
import json, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites"
suites = root.findall("testsuite")
assert len(suites) == 3, len(suites)
assert int(root.get("failures")) > 0
s = json.load(open(sys.argv[2]))
assert s["version"] == "2.1.0"
run = s["runs"][0]
ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
for res in run["results"]:
    assert ids[res["ruleIndex"]] == res["ruleId"]
    region = res["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] >= 1 and region["startColumn"] >= 1
PY

# --fail-on-warn turns warnings into exit 1.
run check config "$CASES/L013-unused-sku"
expect_rc 0 "warnings alone exit 0"
run check config --fail-on-warn "$CASES/L013-unused-sku"
expect_rc 1 "--fail-on-warn"

# Single files are checked together (cross-file rules apply).
run check config "$CASES/X001-node-not-in-layout/layout.yaml" "$CASES/X001-node-not-in-layout/hivedscheduler.yaml"
expect_rc 1 "files given one by one are one cluster"
expect_out "error[X001]" "cross-file check on loose files"

# Unreadable path: exit 2, with a diagnostic.
run check config "$TMP/does-not-exist.yaml"
expect_rc 2 "missing file"
expect_out "error[F008]" "missing file diagnostic"
mkdir "$TMP/empty-dir"
run check config "$TMP/empty-dir"
expect_rc 2 "directory without cluster files"
expect_out "error[F010]" "empty directory diagnostic"

# Bad input never crashes: binary garbage, a huge line, deep nesting.
head -c 4096 /dev/urandom > "$TMP/layout.yaml"
run check config "$TMP/layout.yaml"
[ "$RC" -eq 1 ] && pass "binary garbage is a finding" || fail "binary garbage: exit $RC"
mkdir -p "$TMP/deep"
python3 -c "print('machine-list: ' + '[' * 50000)" > "$TMP/deep/layout.yaml"
run check config "$TMP/deep/layout.yaml"
expect_rc 1 "deep nesting"
expect_out "nesting is deeper than" "deep nesting message"

# Invalid UTF-8 copied into messages still gives valid JSON (it once aborted).
mkdir -p "$TMP/latin1"
printf 'machine-list:\n  - hostname: caf\351\n' > "$TMP/latin1/layout.yaml"
run check config -o json "$TMP/latin1"
expect_rc 1 "latin-1 layout"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$OUT" && pass "latin-1 gives valid JSON" || fail "latin-1 JSON"

# --quiet prints errors only, without the summary; -v adds info findings.
run -q check config "$CASES/H024-unassigned-capacity"
expect_rc 0 "quiet"
[ ! -s "$OUT" ] && pass "quiet prints nothing when clean" || fail "quiet printed output"
run -v check config "$CASES/H024-unassigned-capacity"
expect_out "info[H024]" "verbose shows info findings"

# Every rule is documented with an example.
run check config --list-rules -o json
expect_rc 0 "--list-rules"
python3 - "$OUT" "$PAI_SOURCE_DIR/docs/check-config.md" <<'PY' && pass "every code has a section in docs/check-config.md" || fail "undocumented codes"
import json, sys
rules = json.load(open(sys.argv[1]))["items"]
doc = open(sys.argv[2]).read()
missing = [r["code"] for r in rules if "### %s %s" % (r["code"], r["name"]) not in doc]
assert len(rules) > 60 and not missing, missing
PY

# Secrets are never echoed.
run check config -o json "$CASES/valid"
expect_no_out "secret-pw" "password not in output"

finish
