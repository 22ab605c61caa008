#!/bin/sh
# The whole catalogue cluster in one run: exit code, summary, cross-host
# checks, --ignore-check-errors, --fail-on-warn, JUnit and SARIF reports.
. "$(dirname "$0")/lib.sh"

# The strict view (--for running): swap-on's swap is a failure in every report.
# shellcheck disable=SC2046
run_paictl 3 check hosts "$RUN/cluster" $(host_flags) --for running -o json --junit "$TMP/hosts.xml" --sarif "$TMP/hosts.sarif"
cp "$TMP/out" "$TMP/all.json"
$ASSERT summary "$TMP/all.json" hosts=14 unreachable=4 exit_code=3
# Cross-host checks: every reachable host has its own name and machine; one driver odd.
$ASSERT results "$TMP/all.json" odd-one DriverVersion=fail OSFamily=warn OS=warn
$ASSERT message "$TMP/all.json" odd-one DriverVersion "535.104.05"
$ASSERT results "$TMP/all.json" gpu-ok UniqueHostname=pass UniqueMachine=pass ClockSkew=pass DriverVersion=pass OSFamily=pass
$ASSERT results "$TMP/all.json" slow Reachable=fail UniqueHostname=pass ClockSkew=pass
$ASSERT host "$TMP/all.json" silent reached=false failure=connect-timeout
$ASSERT host "$TMP/all.json" key-changed reached=false failure=host-key-changed
$ASSERT host "$TMP/all.json" wrong-key reached=false failure=auth
$ASSERT host "$TMP/all.json" slow reached=true failure=command-timeout stuck_in=nvidia
$ASSERT host "$TMP/all.json" gpu-ok reached=true facts_complete=true privilege=root

# JUnit: a testsuite per host, failures where checks failed.
python3 - "$TMP/hosts.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = {s.get("name"): s for s in root.findall("testsuite")}
assert len(suites) == 14, sorted(suites)
swap = suites["swap-on"]
failed = [c.get("name") for c in swap.findall("testcase") if c.find("failure") is not None]
assert failed == ["Swap"], failed
assert int(root.get("failures")) > 0
assert suites["silent"].find("testcase/skipped") is not None
PY
# SARIF: one result per finding, the host as logical location, layout.yaml's line.
python3 - "$TMP/hosts.sarif" "$RUN/cluster/layout.yaml" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
results = doc["runs"][0]["results"]
swap = [r for r in results if r["ruleId"] == "Swap"]
assert len(swap) == 1, swap
loc = swap[0]["locations"][0]
assert loc["logicalLocations"][0]["name"] == "swap-on", loc
line = loc["physicalLocation"]["region"]["startLine"]
text = open(sys.argv[2]).read().splitlines()
assert "swap-on" in text[line - 1], (line, text[line - 1])
rules = {r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]}
assert {"Swap", "Port-10250", "Reachable"} <= rules, rules
PY

# The default view of these fresh hosts: what install sets up is "install" in
# every report, neither a failure nor a warning.
# shellcheck disable=SC2046
run_paictl 3 check hosts "$RUN/cluster" $(host_flags) -o json --junit "$TMP/fresh.xml" --sarif "$TMP/fresh.sarif"
$ASSERT results "$TMP/out" swap-on Swap=install
$ASSERT results "$TMP/out" runtime-nodefault DefaultRuntime=install
$ASSERT results "$TMP/out" etcd-leftover LeftoverEtcd=fail
python3 - "$TMP/out" "$TMP/fresh.xml" "$TMP/fresh.sarif" <<'PY'
import json, sys, xml.etree.ElementTree as ET
doc = json.load(open(sys.argv[1]))
assert doc["summary"]["install"] > 0, doc["summary"]
swap = [r for r in doc["results"] if r["host"] == "swap-on" and r["check"] == "Swap"][0]
assert "turns swap off" in swap["hint"], swap
suites = {s.get("name"): s for s in ET.parse(sys.argv[2]).getroot().findall("testsuite")}
cases = {c.get("name"): c for c in suites["swap-on"].findall("testcase")}
assert cases["Swap"].find("failure") is None
assert cases["Swap"].find("system-out").text.startswith("install will do this: swap is on"), cases["Swap"].find("system-out").text
sarif = json.load(open(sys.argv[3]))
notes = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "Swap"]
assert len(notes) == 1 and notes[0]["level"] == "note", notes
PY
# --ignore-check-errors demotes (the checks still run); names are case-insensitive.
# shellcheck disable=SC2046
run_paictl 0 check hosts "$RUN/cluster" $(host_flags) --for running --limit gpu-count,swap-on --ignore-check-errors gpucount,Swap -o json
$ASSERT results "$TMP/out" gpu-count GPUCount=warn
$ASSERT results "$TMP/out" swap-on Swap=warn
grep -q '"demoted": true' "$TMP/out" || fail "demoted results are not marked"
# An unknown name is bad usage, with a suggestion.
# shellcheck disable=SC2046
run_paictl 2 check hosts "$RUN/cluster" $(host_flags) --ignore-check-errors GPUCont
grep -q 'did you mean "GPUCount"' "$TMP/err" || fail "no suggestion for GPUCont"
# --fail-on-warn turns the old Docker's warning into exit 1.
# shellcheck disable=SC2046
run_paictl 1 check hosts "$RUN/cluster" $(host_flags) --for running --limit docker-old --fail-on-warn
# -q prints only failures.
# shellcheck disable=SC2046
run_paictl 3 check hosts "$RUN/cluster" $(host_flags) --for running -q --no-color
grep -q "FAIL  Swap" "$TMP/out" || fail "-q lost a failure"
if grep -q "WARN" "$TMP/out"; then fail "-q printed warnings"; fi
# The secret of config.yaml never shows, even with -v.
# shellcheck disable=SC2046
run_paictl 3 check hosts "$RUN/cluster" $(host_flags) -v --no-color
if grep -qF "$(cat "$RUN/password")" "$TMP/out" "$TMP/err"; then fail "the password appeared in the output"; fi
# --dry-run contacts nobody and shows no secret.
run_paictl 0 check hosts "$RUN/cluster" --ssh-config "$RUN/ssh_config" --dry-run
grep -q "password (config.yaml)" "$TMP/out" || fail "dry run does not say where the password comes from"
if grep -qF "$(cat "$RUN/password")" "$TMP/out" "$TMP/err"; then fail "the password appeared in the dry run"; fi
echo "ok: cluster"
