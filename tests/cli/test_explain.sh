# paictl explain: every code of the catalogue (lib/diag/codes*.cc), one in full or
# all in a table, -o json, "did you mean" for an unknown code; every code the real
# commands report is one explain knows; the docs made from the catalogue are
# current. POSIX sh.
set -eu
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
cd "$PAI_SOURCE_DIR"

run explain L001
expect_rc 0 "explain L001"
expect_out "L001 invalid-hostname (error)" "explain: code, name and severity"
expect_out "hostname is not a lower-case RFC 1123 name" "explain: the title"
expect_out "Reported by: paictl check config" "explain: which command reports it"
expect_out "What it means:" "explain: what it means"
expect_out "How to fix it:" "explain: how to fix it"
expect_out "Example:" "explain: an example"
expect_out "error[L001]" "explain: the example shows what paictl says"
# A warning of check config: the flag that makes it an exit 1 is the front end's word
# (the catalogue in libpai names no flag of paictl); an error has none.
run explain F006 -o json
expect_rc 0 "explain F006 -o json"
expect_out "works, but not as it reads. --fail-on-warn makes it an exit 1." "explain F006: check config's --fail-on-warn"
run explain F012
expect_rc 0 "explain F012"
expect_out "makes it an exit 1." "explain F012: check config's --fail-on-warn in the text too"
run explain L001 -o json
expect_no_out "fail-on-warn" "explain L001: an error needs no --fail-on-warn"
run explain l001
expect_rc 0 "explain: codes in lower case"
expect_out "L001 invalid-hostname" "explain l001 is L001"
run explain SSH002
expect_rc 0 "explain SSH002 (a three-letter family)"
run explain J021 -o json
expect_rc 0 "explain -o json"
if python3 - "$OUT" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["apiVersion"] == "paictl.code/v1", d
assert d["code"] == "J021" and d["name"] == "memory-instead-of-memoryMB", d
assert d["severity"] == "error", d
for k in ("title", "meaning", "fix", "example", "reportedBy"):
    assert d[k], k
PY
then pass "explain -o json: every field"; else fail "explain -o json"; fi

# --- unknown codes: exit 2 with the closest ones ---------------------------------------
run explain L01
expect_rc 2 "explain L01"
expect_err 'unknown code "L01"' "explain L01: names the code"
expect_err "did you mean L001" "explain L01: did you mean L001"
run explain H0005
expect_rc 2 "explain H0005"
expect_err "did you mean H005" "explain H0005: did you mean H005"
run explain invalid-hostnam
expect_rc 2 "explain a mistyped name"
run explain NOTHING-LIKE-A-CODE
expect_rc 2 "explain of nothing like a code"
expect_err "'paictl explain' lists every code" "explain: no near code: where the list is"

# --- the list ------------------------------------------------------------------------------
run explain
expect_rc 0 "explain with no code"
expect_out "CODE" "explain: the list has a header"
rows=$(($(wc -l <"$OUT") - 1))
if [ "$rows" -ge 150 ]; then pass "explain lists $rows codes"; else fail "explain lists $rows codes, expected 150 or more"; fi
for family in F001 L016 C008 A006 S004 H026 X007 J067 I005 SSH003 T144 P120 R003 G010; do
  if grep -q "^$family " "$OUT"; then pass "the list has $family"; else fail "the list lacks $family"; fi
done
run explain -o json
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["apiVersion"]=="paictl.codeList/v1"; assert len(d["items"])>=150' "$OUT"
then pass "explain -o json: the list"; else fail "explain -o json: the list"; fi

# --- every code the commands really report has an entry --------------------------------
codes_of() { python3 -c 'import json,sys; print("\n".join(sorted({d["code"] for d in json.load(open(sys.argv[1]))["diagnostics"]})))' "$1"; }
"$PAICTL" check config examples/clusters/broken -o json >"$TMP/broken.json" || true
"$PAICTL" job validate examples/jobs/broken.yaml -o json >"$TMP/job.json" || true
n=0
for c in $(codes_of "$TMP/broken.json") $(codes_of "$TMP/job.json"); do
  n=$((n + 1))
  if "$PAICTL" explain "$c" >/dev/null 2>&1; then :; else fail "explain $c: a code check config or job validate reported"; fi
done
if [ "$n" -ge 5 ]; then pass "explain knows the $n codes of the broken examples"; else fail "only $n codes in the broken examples"; fi

# --- the docs made from the catalogue are current --------------------------------------
if python3 scripts/gen-docs-check-config.py --check "$PAICTL" >"$TMP/gen" 2>&1; then
  pass "docs/check-config.md and docs/explain.md are generated from the current catalogue"
else
  fail "stale docs (run scripts/gen-docs-check-config.py build/paictl)"
  sed 's/^/  | /' "$TMP/gen" >&2
fi
finish
